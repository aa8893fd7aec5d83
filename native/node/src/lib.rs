//! portico-node: thin napi-rs bindings over portico-core. No logic lives here: every
//! function converts arguments (zero-copy slices of Buffers / Uint32Arrays), calls the
//! core, and maps `CoreError` to a thrown JS Error. The per-choice Sequence (called once
//! per streamed token) is written directly against Node-API instead (sequence.rs, raw.rs):
//! napi-rs's per-call glue cost more than the detokenization.

mod chat_args;
mod choice;
mod detokenizer;
mod errors;
mod image_parts;
mod model;
mod output_flags;
mod parsers;
mod raw;
mod sequence;
mod sequence_fast;
mod vision;

pub use detokenizer::Detokenizer;
pub use model::{EncodeChatTask, EncodeTask, Model, ModelInfo, PrefixCacheStats};
pub use choice::choice_output_class;
pub use sequence::sequence_class;
pub use image_parts::{chat_images, ChatImagePart, ChatImagesResult, ChatImagesTask};
pub use vision::{ImageProcessor, ProcessTask, ProcessedImage};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

extern "C" {
    // mimalloc's own API (the static library the allocator above links in).
    fn mi_collect(force: bool);
}

/// Hands the pages this thread's heap no longer uses back to the OS. Loading a model frees
/// a few hundred MB of parse temporaries (tokenizer.json and friends) that mimalloc would
/// otherwise keep resident until the thread allocates again later, so a freshly started
/// server showed about twice its working set in RSS.
pub(crate) fn release_free_memory() {
    // SAFETY: mi_collect takes no pointers; it only walks this thread's heap.
    unsafe { mi_collect(true) }
}

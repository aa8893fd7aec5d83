//! portico-node: thin napi-rs bindings over portico-core. No logic lives here: every
//! function converts arguments (zero-copy slices of Buffers / Uint32Arrays), calls the
//! core, and maps `CoreError` to a thrown JS Error. The per-choice Sequence (called once
//! per streamed token) is written directly against Node-API instead (sequence.rs, raw.rs):
//! napi-rs's per-call glue cost more than the detokenization.

mod chat_args;
mod detokenizer;
mod errors;
mod model;
mod output_flags;
mod parsers;
mod raw;
mod sequence;
mod sequence_fast;

pub use detokenizer::Detokenizer;
pub use model::{EncodeChatTask, EncodeTask, Model, ModelInfo, PrefixCacheStats};
pub use sequence::sequence_class;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

//! portico-node: thin napi-rs bindings over portico-core. No logic lives here: every
//! function converts arguments (zero-copy slices of Buffers / Uint32Arrays), calls the
//! core, and maps `CoreError` to a thrown JS Error.

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

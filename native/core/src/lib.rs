//! Portico native core: everything between request bytes and token ids, and back.
//! Plain Rust (no N-API); `portico-node` is a thin binding over this crate.

pub mod byte_table;
pub mod chat_template;
pub mod choice;
pub mod content_format;
pub mod detokenizer;
pub mod error;
pub mod fast_encode;
pub mod image_parts;
pub mod message_shape;
pub mod messages;
pub mod messages_cache;
pub mod model;
pub mod model_card;
pub mod parsers;
pub mod prefix_cache;
pub mod prompt_cache;
pub mod pyfmt;
pub mod raw_prompt;
pub mod sequence;
pub mod special_split;
pub mod stop;
pub mod template_value;
pub mod tokenizer;
pub mod tools_cache;
pub mod vision;

pub use choice::ChoiceOutput;
pub use detokenizer::Detokenizer;
pub use error::{CoreError, Result};
pub use model::{ChatRequest, Model, ModelInfo, SpecialToken};
pub use sequence::{FinishReason, MatchedStop, Sequence, SequenceOptions};

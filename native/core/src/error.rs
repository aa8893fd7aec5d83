//! One error type for portico-core. Every fallible public function returns `Result<T>`;
//! nothing in this crate panics on user input.

use std::fmt;
use std::path::PathBuf;

/// What went wrong, grouped the way the HTTP layer maps it: `is_client_error()` ⇒ 400.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreError {
    /// The folder has no tokenizer.json (or does not exist).
    NotAModel { path: PathBuf, reason: String },
    /// A model file exists but cannot be read or parsed.
    ModelFile { path: PathBuf, reason: String },
    /// The tokenizer itself failed (rare: bad ids are mapped, not failed).
    Tokenizer(String),
    /// The messages / tools / kwargs JSON is malformed or has the wrong shape.
    InvalidMessages(String),
    /// A message member has the wrong shape; `path` names it (`messages[2].tool_calls`).
    MessageShape { path: String, reason: String },
    /// The kwargs object given to the template is malformed.
    InvalidKwargs(String),
    /// The model has no chat template.
    NoChatTemplate,
    /// The template failed to compile or raised while rendering.
    ChatTemplate(String),
}

impl CoreError {
    /// Stable machine-readable code, used as the JS `Error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            CoreError::NotAModel { .. } => "ERR_NOT_A_MODEL",
            CoreError::ModelFile { .. } => "ERR_MODEL_FILE",
            CoreError::Tokenizer(_) => "ERR_TOKENIZER",
            CoreError::InvalidMessages(_) => "ERR_INVALID_MESSAGES",
            CoreError::MessageShape { .. } => "ERR_MESSAGE_SHAPE",
            CoreError::InvalidKwargs(_) => "ERR_INVALID_KWARGS",
            CoreError::NoChatTemplate => "ERR_NO_CHAT_TEMPLATE",
            CoreError::ChatTemplate(_) => "ERR_CHAT_TEMPLATE",
        }
    }

    /// True when the request (not the server) is at fault: maps to HTTP 400.
    pub fn is_client_error(&self) -> bool {
        matches!(
            self,
            CoreError::InvalidMessages(_)
                | CoreError::MessageShape { .. }
                | CoreError::InvalidKwargs(_)
                | CoreError::ChatTemplate(_)
                | CoreError::NoChatTemplate
        )
    }
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoreError::NotAModel { path, reason } => write!(
                f,
                "not a model folder: {} ({reason})",
                path.display()
            ),
            CoreError::ModelFile { path, reason } => {
                write!(f, "cannot load {}: {reason}", path.display())
            }
            CoreError::Tokenizer(m) => write!(f, "tokenizer error: {m}"),
            CoreError::InvalidMessages(m) => write!(f, "invalid messages JSON: {m}"),
            CoreError::MessageShape { path, reason } => write!(f, "`{path}` {reason}"),
            CoreError::InvalidKwargs(m) => write!(f, "invalid chat template kwargs: {m}"),
            CoreError::NoChatTemplate => write!(
                f,
                "chat template error: this model has no chat template (tokenizer_config.json chat_template or chat_template.jinja)"
            ),
            CoreError::ChatTemplate(m) => write!(f, "chat template error: {m}"),
        }
    }
}

impl std::error::Error for CoreError {}

pub type Result<T> = std::result::Result<T, CoreError>;

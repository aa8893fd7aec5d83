//! A loaded model folder: tokenizer + model card + compiled chat template.

use std::path::Path;
use std::sync::Arc;

use crate::chat_template::{ChatTemplate, RenderInput};
use crate::detokenizer::Detokenizer;
use crate::error::{CoreError, Result};
use crate::messages::{normalise_for_template, parse_array, parse_messages};
use crate::model_card::ModelCard;
use crate::raw_prompt::raw_prompt_text;
use crate::sequence::{Sequence, SequenceOptions};
use crate::tokenizer::Tokenizer;

/// What the serving layer needs to know about a model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    pub context_length: Option<u64>,
    pub eos_token_ids: Vec<u32>,
    pub bos_token: Option<String>,
    pub eos_token: Option<String>,
    pub vocab_size: usize,
    pub has_chat_template: bool,
}

/// A chat request as spans of the body: messages (required), tools (optional).
pub struct ChatRequest<'a> {
    pub messages_json: &'a [u8],
    pub tools_json: Option<&'a [u8]>,
    pub add_generation_prompt: bool,
    /// A JSON object of extra template kwargs (e.g. `{"enable_thinking": false}`).
    pub kwargs_json: Option<&'a str>,
}

pub struct Model {
    card: ModelCard,
    tokenizer: Arc<Tokenizer>,
    template: Option<ChatTemplate>,
    /// transformers uses the `tool_use` named template when tools are given and it exists.
    tool_use_template: Option<ChatTemplate>,
    eos_token_ids: Vec<u32>,
}

impl Model {
    /// Loads a Hugging Face model folder (tokenizer.json required; see `ModelCard`).
    pub fn load(dir: impl AsRef<Path>) -> Result<Model> {
        let dir = dir.as_ref();
        let tok_path = dir.join("tokenizer.json");
        let bytes = std::fs::read(&tok_path).map_err(|e| {
            let reason = if !dir.exists() {
                "no such directory".to_owned()
            } else if !dir.is_dir() {
                "not a directory".to_owned()
            } else if e.kind() == std::io::ErrorKind::NotFound {
                "no tokenizer.json in it".to_owned()
            } else {
                format!("cannot read tokenizer.json: {e}")
            };
            CoreError::NotAModel {
                path: dir.to_path_buf(),
                reason,
            }
        })?;
        let mut tokenizer = Tokenizer::from_json_bytes(&bytes, &tok_path)?;
        let card = ModelCard::load(dir)?;

        let bos_id = card
            .bos_token
            .as_deref()
            .and_then(|t| tokenizer.token_to_id(t));
        if card.add_bos_token == Some(true) {
            // Only when the post-processor does not already add it (checked on empty text).
            let adds_bos =
                bos_id.is_some() && tokenizer.encode("", true)?.first().copied() == bos_id;
            if !adds_bos {
                tokenizer.set_ensure_bos(bos_id);
            }
        }

        let mut eos_token_ids = card.config_eos_token_ids.clone();
        if let Some(id) = card
            .eos_token
            .as_deref()
            .and_then(|t| tokenizer.token_to_id(t))
        {
            if !eos_token_ids.contains(&id) {
                eos_token_ids.push(id);
            }
        }

        let template = match card.chat_template.as_deref() {
            Some(src) => Some(ChatTemplate::compile(src)?),
            None => None,
        };
        let tool_use_template = match card.tool_use_template.as_deref() {
            Some(src) => Some(ChatTemplate::compile(src)?),
            None => None,
        };
        Ok(Model {
            card,
            tokenizer: Arc::new(tokenizer),
            template,
            tool_use_template,
            eos_token_ids,
        })
    }

    pub fn info(&self) -> ModelInfo {
        ModelInfo {
            context_length: self.card.context_length,
            eos_token_ids: self.eos_token_ids.clone(),
            bos_token: self.card.bos_token.clone(),
            eos_token: self.card.eos_token.clone(),
            vocab_size: self.tokenizer.vocab_size(),
            has_chat_template: self.template.is_some() || self.tool_use_template.is_some(),
        }
    }

    pub fn card(&self) -> &ModelCard {
        &self.card
    }

    pub fn tokenizer(&self) -> &Arc<Tokenizer> {
        &self.tokenizer
    }

    pub fn encode(&self, text: &str, add_special_tokens: bool) -> Result<Vec<u32>> {
        self.tokenizer.encode(text, add_special_tokens)
    }

    pub fn encode_batch(&self, texts: &[&str], add_special_tokens: bool) -> Result<Vec<Vec<u32>>> {
        self.tokenizer.encode_batch(texts, add_special_tokens)
    }

    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String> {
        self.tokenizer.decode(ids, skip_special_tokens)
    }

    pub fn detokenizer(&self, skip_special_tokens: bool) -> Detokenizer {
        Detokenizer::new(Arc::clone(&self.tokenizer), skip_special_tokens)
    }

    /// A per-choice stream decoder with the request's stop conditions.
    pub fn sequence(&self, opts: SequenceOptions) -> Sequence {
        Sequence::new(
            self.detokenizer(opts.skip_special_tokens),
            &self.eos_token_ids,
            opts,
        )
    }

    /// Renders the chat template over the request's messages/tools spans.
    /// `continue_final_message: true` in the kwargs leaves the final message open (as the
    /// apply_chat_template argument of that name; vLLM passes it through the same way).
    pub fn render_chat(&self, req: &ChatRequest<'_>) -> Result<String> {
        let tools = parse_array(req.tools_json, "tools")?;
        let template = match (&tools, &self.tool_use_template) {
            (Some(_), Some(t)) => Some(t),
            _ => self.template.as_ref().or(self.tool_use_template.as_ref()),
        }
        .ok_or(CoreError::NoChatTemplate)?;
        let messages =
            normalise_for_template(parse_messages(req.messages_json)?, template.content_format())?;
        let mut kwargs = match req.kwargs_json {
            None => None,
            Some(s) => match serde_json::from_str::<serde_json::Value>(s) {
                Ok(serde_json::Value::Object(map)) => Some(map),
                Ok(serde_json::Value::Null) => None,
                Ok(_) => return Err(CoreError::InvalidKwargs("expected a JSON object".into())),
                Err(e) => return Err(CoreError::InvalidKwargs(e.to_string())),
            },
        };
        let continue_final_message = kwargs
            .as_mut()
            .and_then(|k| k.remove("continue_final_message"))
            .is_some_and(|v| v.as_bool() == Some(true));
        template.render(RenderInput {
            messages: serde_json::Value::Array(messages),
            tools,
            add_generation_prompt: req.add_generation_prompt,
            special_tokens: self.card.special_tokens.clone(),
            continue_final_message,
            kwargs,
        })
    }

    /// Render + encode without adding special tokens (the template writes BOS itself),
    /// as vLLM does for chat.
    pub fn encode_chat(&self, req: &ChatRequest<'_>) -> Result<Vec<u32>> {
        let prompt = self.render_chat(req)?;
        self.tokenizer.encode_cached(&prompt)
    }

    /// The messages' text concatenated, tokenized without special tokens.
    pub fn encode_raw_messages(&self, messages_json: &[u8]) -> Result<Vec<u32>> {
        let text = raw_prompt_text(messages_json)?;
        self.tokenizer.encode(&text, false)
    }
}

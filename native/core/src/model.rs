//! A loaded model folder: tokenizer + model card + compiled chat template.

use std::path::Path;
use std::sync::Arc;

use crate::chat_template::{ChatTemplate, Messages, RenderInput};
use crate::content_format::ContentFormat;
use crate::messages_cache::MessagesCache;
use crate::tools_cache::ToolsCache;
use crate::detokenizer::Detokenizer;
use crate::error::{CoreError, Result};
use crate::messages::{normalise_for_template, parse_messages};
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
    pub pad_token: Option<String>,
    pub unk_token: Option<String>,
    /// Ids of bos/eos/pad/unk_token (None when the token is unset or not in the vocabulary).
    pub bos_token_id: Option<u32>,
    pub eos_token_id: Option<u32>,
    pub pad_token_id: Option<u32>,
    pub unk_token_id: Option<u32>,
    /// Every named special token of tokenizer_config.json (`*_token` keys and
    /// `extra_special_tokens`, as the chat template sees them), with its id.
    pub special_tokens: Vec<SpecialToken>,
    /// tokenizer_config.json `additional_special_tokens`, with ids.
    pub additional_special_tokens: Vec<SpecialToken>,
    /// The `content` shape the default template expects: "openai" (a list of parts; image
    /// parts stay `{"type": "image"}`) or "string" (text only). None without a template.
    pub content_format: Option<&'static str>,
}

/// A special token: its name (`bos_token`, `image_token`, ...; for additional special
/// tokens the content itself), its text and its id in the vocabulary.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecialToken {
    pub name: String,
    pub content: String,
    pub id: Option<u32>,
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
    tools_cache: ToolsCache,
    messages_cache: MessagesCache,
}

/// Bytes of parsed messages kept (see `messages_cache`).
const MESSAGES_CACHE_BYTES: usize = 32 << 20;

impl Model {
    /// Loads a Hugging Face model folder (tokenizer.json required; see `ModelCard`).
    pub fn load(dir: impl AsRef<Path>) -> Result<Model> {
        Model::load_with_template(dir, None)
    }

    /// `load`, with the chat template given instead of the folder's (vLLM's `--chat-template`):
    /// `template_json` is the JSON text of a `chat_template` value (a template string, or a
    /// list of named templates, as tokenizer_config.json holds it). It wins over every
    /// template file in the folder.
    pub fn load_with_template(dir: impl AsRef<Path>, template_json: Option<&str>) -> Result<Model> {
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
        let mut card = ModelCard::load(dir)?;
        if let Some(t) = template_json {
            card.override_template(t)?;
        }

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
            tools_cache: ToolsCache::default(),
            messages_cache: MessagesCache::new(MESSAGES_CACHE_BYTES),
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
            pad_token: self.card.pad_token.clone(),
            unk_token: self.card.unk_token.clone(),
            bos_token_id: self.id_of(self.card.bos_token.as_deref()),
            eos_token_id: self.id_of(self.card.eos_token.as_deref()),
            pad_token_id: self.id_of(self.card.pad_token.as_deref()),
            unk_token_id: self.id_of(self.card.unk_token.as_deref()),
            special_tokens: self
                .card
                .special_tokens
                .iter()
                .map(|(name, content)| SpecialToken {
                    name: name.clone(),
                    content: content.clone(),
                    id: self.id_of(Some(content)),
                })
                .collect(),
            additional_special_tokens: self
                .card
                .additional_special_tokens
                .iter()
                .map(|content| SpecialToken {
                    name: content.clone(),
                    content: content.clone(),
                    id: self.id_of(Some(content)),
                })
                .collect(),
            content_format: self.template.as_ref().or(self.tool_use_template.as_ref()).map(|t| match t.content_format() {
                ContentFormat::String => "string",
                ContentFormat::OpenAi => "openai",
            }),
        }
    }

    fn id_of(&self, token: Option<&str>) -> Option<u32> {
        self.tokenizer.token_to_id(token?)
    }

    pub fn card(&self) -> &ModelCard {
        &self.card
    }

    pub fn tokenizer(&self) -> &Arc<Tokenizer> {
        &self.tokenizer
    }

    /// Empties the tokenizer's prefix caches and the parsed-messages cache (a cold start).
    pub fn clear_caches(&self) {
        self.tokenizer.clear_prefix_cache();
        self.messages_cache.clear();
    }

    /// Counters of the parsed-messages cache (see `messages_cache`).
    pub fn messages_cache_stats(&self) -> crate::messages_cache::MessagesCacheStats {
        self.messages_cache.stats()
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
        let (template, input) = self.render_input(req)?;
        template.render(input)
    }

    /// The template for the request and its render input.
    fn render_input(&self, req: &ChatRequest<'_>) -> Result<(&ChatTemplate, RenderInput)> {
        let tools = self.tools_cache.get(req.tools_json)?;
        let template = match (&tools, &self.tool_use_template) {
            (Some(_), Some(t)) => Some(t),
            _ => self.template.as_ref().or(self.tool_use_template.as_ref()),
        }
        .ok_or(CoreError::NoChatTemplate)?;
        let kwargs = match req.kwargs_json {
            None => Ok(None),
            Some(s) => match serde_json::from_str::<serde_json::Value>(s) {
                Ok(serde_json::Value::Object(map)) => Ok(Some(map)),
                Ok(serde_json::Value::Null) => Ok(None),
                Ok(_) => Err(CoreError::InvalidKwargs("expected a JSON object".into())),
                Err(e) => Err(CoreError::InvalidKwargs(e.to_string())),
            },
        };
        let continue_final_message = matches!(&kwargs, Ok(Some(k))
            if k.get("continue_final_message").and_then(serde_json::Value::as_bool) == Some(true));
        // Messages are checked before kwargs (their errors come first). continue_final_message
        // edits the JSON of the last message, so it takes the uncached path.
        let format = template.content_format();
        let messages = if continue_final_message {
            Messages::Json(serde_json::Value::Array(normalise_for_template(
                parse_messages(req.messages_json)?,
                format,
            )?))
        } else {
            Messages::Value(self.messages_cache.messages(req.messages_json, format)?)
        };
        let mut kwargs = kwargs?;
        if let Some(k) = kwargs.as_mut() {
            k.remove("continue_final_message");
        }
        let input = RenderInput {
            messages,
            tools,
            add_generation_prompt: req.add_generation_prompt,
            special_tokens: self.card.special_tokens.clone(),
            continue_final_message,
            kwargs,
        };
        Ok((template, input))
    }

    /// Render + encode without adding special tokens (the template writes BOS itself),
    /// as vLLM does for chat. The prompt is rendered into a per-thread buffer that is kept
    /// between calls: a long prompt costs no fresh allocation (and no page faults).
    pub fn encode_chat(&self, req: &ChatRequest<'_>) -> Result<Vec<u32>> {
        thread_local! {
            static PROMPT: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
        }
        /// Buffers larger than this are freed after the call rather than kept.
        const KEEP_BYTES: usize = 8 << 20;
        let mut buf = PROMPT.with(std::cell::Cell::take);
        buf.clear();
        let result = self.render_input(req).and_then(|(template, input)| {
            template.render_to(input, &mut buf)?;
            let prompt = std::str::from_utf8(&buf)
                .map_err(|e| CoreError::ChatTemplate(format!("render is not UTF-8: {e}")))?;
            self.tokenizer.encode_cached(prompt)
        });
        if buf.capacity() <= KEEP_BYTES {
            PROMPT.with(|c| c.set(buf));
        }
        result
    }

    /// The messages' text concatenated, tokenized without special tokens.
    pub fn encode_raw_messages(&self, messages_json: &[u8]) -> Result<Vec<u32>> {
        let text = raw_prompt_text(messages_json)?;
        self.tokenizer.encode(&text, false)
    }
}

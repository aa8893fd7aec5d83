//! The Model class: load, info, encode/decode, chat rendering over body spans.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::SystemTime;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::chat_args::ChatSpans;
use crate::errors::to_napi;

/// `use_nullable`: absent values are `null` (always present), not omitted.
#[napi(object, use_nullable = true)]
pub struct ModelInfo {
    pub context_length: Option<f64>,
    pub eos_token_ids: Vec<u32>,
    pub bos_token: Option<String>,
    pub eos_token: Option<String>,
    pub vocab_size: u32,
    pub has_chat_template: bool,
    pub pad_token: Option<String>,
    pub unk_token: Option<String>,
    pub bos_token_id: Option<u32>,
    pub eos_token_id: Option<u32>,
    pub pad_token_id: Option<u32>,
    pub unk_token_id: Option<u32>,
    /// Named special tokens of tokenizer_config.json (`*_token`, `extra_special_tokens`).
    pub special_tokens: Vec<SpecialToken>,
    /// tokenizer_config.json `additional_special_tokens`.
    pub additional_special_tokens: Vec<SpecialToken>,
    /// "openai" or "string": the `content` shape the chat template expects; null without one.
    pub content_format: Option<String>,
}

#[napi(object, use_nullable = true)]
pub struct SpecialToken {
    pub name: String,
    pub content: String,
    /// Null when the token is not in the vocabulary.
    pub id: Option<u32>,
}

fn special(t: portico_core::SpecialToken) -> SpecialToken {
    SpecialToken {
        name: t.name,
        content: t.content,
        id: t.id,
    }
}

#[napi]
pub struct Model {
    inner: Arc<portico_core::Model>,
}

/// The models loaded in this process and still held by some thread, by what they were
/// loaded from. Every method of a core model takes `&self` and its caches lock (they were
/// already used from the libuv pool threads), so one model serves several JS threads.
static LOADED: Mutex<Vec<(LoadKey, Weak<portico_core::Model>)>> = Mutex::new(Vec::new());

/// What a load read: the folder, the template override, and each file in the folder with
/// its size and modification time, so a folder changed on disk is loaded afresh.
#[derive(PartialEq, Eq)]
struct LoadKey {
    dir: PathBuf,
    template: Option<String>,
    files: Vec<(OsString, u64, Option<SystemTime>)>,
}

/// None when the folder cannot be listed (the load then fails with its own error, or is not shared).
fn load_key(dir: &str, template: Option<&str>) -> Option<LoadKey> {
    let dir = std::fs::canonicalize(dir).ok()?;
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).ok()? {
        let entry = entry.ok()?;
        // (metadata follows symlinks: a folder of links to the files is keyed by the files.)
        let Ok(meta) = std::fs::metadata(entry.path()) else { continue };
        if meta.is_file() {
            files.push((entry.file_name(), meta.len(), meta.modified().ok()));
        }
    }
    files.sort();
    Some(LoadKey {
        dir,
        template: template.map(str::to_owned),
        files,
    })
}

impl Model {
    pub(crate) fn core(&self) -> &portico_core::Model {
        &self.inner
    }
}

#[napi]
impl Model {
    /// Loads a Hugging Face model folder (tokenizer.json required).
    #[napi(factory)]
    /// `chat_template_json`: the JSON text of a `chat_template` value that replaces the
    /// folder's templates (`--chat-template`), or null.
    ///
    /// One load per process: a folder already loaded (by this thread or another, e.g. the
    /// shard threads, which each load every served model) and still alive is shared, not
    /// loaded again (a Qwen3 tokenizer is ~45 MB). See `LOADED`.
    pub fn load(dir: String, chat_template_json: Option<String>) -> Result<Model> {
        let key = load_key(&dir, chat_template_json.as_deref());
        // Held while loading: a second thread asking for the same folder waits and shares.
        let mut loaded = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
        loaded.retain(|(_, m)| m.strong_count() > 0);
        if let Some(key) = &key {
            if let Some(inner) = loaded.iter().find(|(k, _)| k == key).and_then(|(_, m)| m.upgrade()) {
                return Ok(Model { inner });
            }
        }
        let inner = Arc::new(portico_core::Model::load_with_template(&dir, chat_template_json.as_deref()).map_err(to_napi)?);
        if let Some(key) = key {
            loaded.push((key, Arc::downgrade(&inner)));
        }
        drop(loaded);
        crate::release_free_memory();
        Ok(Model { inner })
    }

    #[napi]
    pub fn info(&self) -> ModelInfo {
        let i = self.inner.info();
        ModelInfo {
            context_length: i.context_length.map(|n| n as f64),
            eos_token_ids: i.eos_token_ids,
            bos_token: i.bos_token,
            eos_token: i.eos_token,
            vocab_size: i.vocab_size as u32,
            has_chat_template: i.has_chat_template,
            pad_token: i.pad_token,
            unk_token: i.unk_token,
            bos_token_id: i.bos_token_id,
            eos_token_id: i.eos_token_id,
            pad_token_id: i.pad_token_id,
            unk_token_id: i.unk_token_id,
            special_tokens: i.special_tokens.into_iter().map(special).collect(),
            additional_special_tokens: i.additional_special_tokens.into_iter().map(special).collect(),
            content_format: i.content_format.map(str::to_owned),
        }
    }

    #[napi(ts_return_type = "Uint32Array")]
    pub fn encode<'env>(&self, env: &'env Env, text: String, add_special_tokens: bool) -> Result<Uint32ArraySlice<'env>> {
        let ids = self
            .inner
            .encode(&text, add_special_tokens)
            .map_err(to_napi)?;
        ids_array(env, &ids)
    }

    /// `encode` on the libuv thread pool (for long texts).
    #[napi(ts_return_type = "Promise<Uint32Array>")]
    pub fn encode_async(&self, text: String, add_special_tokens: bool) -> AsyncTask<EncodeTask> {
        AsyncTask::new(EncodeTask {
            model: Arc::clone(&self.inner),
            text,
            add_special_tokens,
        })
    }

    /// Several texts at once (the tokenizer's thread pool), one Uint32Array each.
    #[napi]
    pub fn encode_batch(&self, texts: Vec<String>, add_special_tokens: bool) -> Result<Vec<Uint32Array>> {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let all = self
            .inner
            .encode_batch(&refs, add_special_tokens)
            .map_err(to_napi)?;
        Ok(all.into_iter().map(Uint32Array::new).collect())
    }

    /// Prefix-cache counters (encodeChat serves long pieces between special tokens from it).
    #[napi]
    pub fn prefix_cache_stats(&self) -> PrefixCacheStats {
        let t = self.inner.tokenizer();
        let s = t.prefix_cache_stats();
        PrefixCacheStats {
            enabled: t.has_prefix_cache(),
            entries: s.entries as u32,
            bytes: s.bytes as f64,
            hits: s.hits as f64,
            misses: s.misses as f64,
        }
    }

    /// Empties the prefix caches and the parsed-messages cache (the next call is cold).
    #[napi]
    pub fn clear_prefix_cache(&self) {
        self.inner.clear_caches()
    }

    #[napi]
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String> {
        self.inner.decode(ids, skip_special_tokens).map_err(to_napi)
    }

    #[napi(ts_return_type = "number | null")]
    pub fn token_to_id(&self, token: String) -> Option<u32> {
        self.inner.tokenizer().token_to_id(&token)
    }

    #[napi(ts_return_type = "string | null")]
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.tokenizer().id_to_token(id)
    }

    /// Renders the chat template. `body` is the HTTP body; `[msgStart, msgEnd)` the byte span
    /// of the messages array; tools span or -1/-1; `kwargsJson` a JSON object or null.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn render_chat(
        &self,
        body: &[u8],
        msg_start: i64,
        msg_end: i64,
        tools_start: i64,
        tools_end: i64,
        add_generation_prompt: bool,
        kwargs_json: Option<String>,
    ) -> Result<String> {
        let spans = ChatSpans::new(body, (msg_start, msg_end), (tools_start, tools_end))?;
        let req = spans.request(add_generation_prompt, kwargs_json.as_deref());
        self.inner.render_chat(&req).map_err(to_napi)
    }

    /// Render + encode (no special tokens added: the template writes them). The ids are
    /// copied into a V8-allocated array (`ids_array`): this is the short-prompt path.
    #[napi(ts_return_type = "Uint32Array")]
    #[allow(clippy::too_many_arguments)]
    pub fn encode_chat<'env>(
        &self,
        env: &'env Env,
        body: &[u8],
        msg_start: i64,
        msg_end: i64,
        tools_start: i64,
        tools_end: i64,
        add_generation_prompt: bool,
        kwargs_json: Option<String>,
    ) -> Result<Uint32ArraySlice<'env>> {
        let spans = ChatSpans::new(body, (msg_start, msg_end), (tools_start, tools_end))?;
        let req = spans.request(add_generation_prompt, kwargs_json.as_deref());
        ids_array(env, &self.inner.encode_chat(&req).map_err(to_napi)?)
    }

    /// The same as `encodeChat`, on the libuv thread pool (for long prompts). The spans are
    /// copied once (a memcpy) so the work never reads JS memory off the main thread.
    #[napi(ts_return_type = "Promise<Uint32Array>")]
    #[allow(clippy::too_many_arguments)]
    pub fn encode_chat_async(
        &self,
        body: &[u8],
        msg_start: i64,
        msg_end: i64,
        tools_start: i64,
        tools_end: i64,
        add_generation_prompt: bool,
        kwargs_json: Option<String>,
    ) -> Result<AsyncTask<EncodeChatTask>> {
        let spans = ChatSpans::new(body, (msg_start, msg_end), (tools_start, tools_end))?;
        Ok(AsyncTask::new(EncodeChatTask {
            model: Arc::clone(&self.inner),
            messages: spans.messages.to_vec(),
            tools: spans.tools.map(<[u8]>::to_vec),
            add_generation_prompt,
            kwargs_json,
        }))
    }

    /// The messages' text concatenated (no template, no special tokens), tokenized.
    #[napi(ts_return_type = "Uint32Array")]
    pub fn encode_raw_messages<'env>(
        &self,
        env: &'env Env,
        body: &[u8],
        msg_start: i64,
        msg_end: i64,
    ) -> Result<Uint32ArraySlice<'env>> {
        let spans = ChatSpans::new(body, (msg_start, msg_end), (-1, -1))?;
        ids_array(env, &self.inner.encode_raw_messages(spans.messages).map_err(to_napi)?)
    }
}

/// Ids as a Uint32Array that V8 allocates, the ids copied in. `Uint32Array::new(vec)` hands
/// the Vec over as an external backing store instead: no copy, but a finalizer and a weak
/// handle per array, which for a short prompt's ids cost more than the copy
/// (bench/encode-chat.bench.ts; figures in bench/RESULTS.md, "Prompt ids copied").
fn ids_array<'env>(env: &'env Env, ids: &[u32]) -> Result<Uint32ArraySlice<'env>> {
    Uint32ArraySlice::copy_from(env, ids)
}

#[napi(object)]
pub struct PrefixCacheStats {
    pub enabled: bool,
    pub entries: u32,
    pub bytes: f64,
    pub hits: f64,
    pub misses: f64,
}

pub struct EncodeTask {
    model: Arc<portico_core::Model>,
    text: String,
    add_special_tokens: bool,
}

impl Task for EncodeTask {
    type Output = Vec<u32>;
    type JsValue = Uint32Array;

    fn compute(&mut self) -> Result<Vec<u32>> {
        self.model
            .encode(&self.text, self.add_special_tokens)
            .map_err(to_napi)
    }

    fn resolve(&mut self, _env: Env, ids: Vec<u32>) -> Result<Uint32Array> {
        Ok(Uint32Array::new(ids))
    }
}

pub struct EncodeChatTask {
    model: Arc<portico_core::Model>,
    messages: Vec<u8>,
    tools: Option<Vec<u8>>,
    add_generation_prompt: bool,
    kwargs_json: Option<String>,
}

impl Task for EncodeChatTask {
    type Output = Vec<u32>;
    type JsValue = Uint32Array;

    fn compute(&mut self) -> Result<Vec<u32>> {
        let req = portico_core::ChatRequest {
            messages_json: &self.messages,
            tools_json: self.tools.as_deref(),
            add_generation_prompt: self.add_generation_prompt,
            kwargs_json: self.kwargs_json.as_deref(),
        };
        self.model.encode_chat(&req).map_err(to_napi)
    }

    fn resolve(&mut self, _env: Env, ids: Vec<u32>) -> Result<Uint32Array> {
        Ok(Uint32Array::new(ids))
    }
}

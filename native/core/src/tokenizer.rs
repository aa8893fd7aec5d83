//! The vocabulary: a thin wrapper over the Hugging Face `tokenizers` crate that adds the
//! set of special ids (for O(1) skipping in the detokenizer) and BOS handling from
//! tokenizer_config.json.

use std::collections::HashSet;
use std::path::Path;

use crate::byte_table::ByteTable;
use crate::error::{CoreError, Result};
use crate::fast_encode::FastEncoder;
use crate::prefix_cache::{CacheStats, PrefixCache, MIN_PIECE_BYTES};
use crate::prompt_cache::{Entry, PromptCache, MIN_PROMPT_BYTES};
use crate::special_split::{Piece, SpecialSplitter};

/// Memory for cached piece ids (text + ids), per model.
const PREFIX_CACHE_BYTES: usize = 64 << 20;
/// Memory for whole recent prompts (text + ids), per model.
const PROMPT_CACHE_BYTES: usize = 32 << 20;

pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    /// Splits at added tokens exactly as `inner` does (None if that is not exact).
    splitter: Option<SpecialSplitter>,
    cache: PrefixCache,
    /// Whole recent prompts, for a shared prefix reused without a pass over it.
    prompts: PromptCache,
    /// The longest added token the splitter matches (bytes).
    max_token_len: usize,
    /// Byte-level tokenizers: each id's bytes (fast streaming decode).
    byte_table: Option<ByteTable>,
    special_ids: HashSet<u32>,
    /// `add_bos_token: true` in tokenizer_config.json with a BOS the post-processor does not add.
    ensure_bos: Option<u32>,
    /// The hand-written pipeline for Qwen2/3 and Llama 3 shaped tokenizers (see `fast_encode`).
    fast: Option<FastEncoder>,
    /// What the post-processor puts around the ids with `add_special_tokens` (probed at
    /// load), when that is a fixed prefix and suffix; else such encodes go to `tokenizers`.
    post: Option<(Vec<u32>, Vec<u32>)>,
}

impl Tokenizer {
    /// Parses a tokenizer.json document.
    pub fn from_json_bytes(bytes: &[u8], path: &Path) -> Result<Tokenizer> {
        let inner = tokenizers::Tokenizer::from_bytes(bytes).map_err(|e| CoreError::ModelFile {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let special_ids = inner
            .get_added_tokens_decoder()
            .into_iter()
            .filter(|(_, tok)| tok.special)
            .map(|(id, _)| id)
            .collect();
        let splitter = SpecialSplitter::new(&inner, bytes);
        let max_token_len = splitter.as_ref().map_or(0, SpecialSplitter::max_token_len);
        let byte_table = ByteTable::new(&inner, bytes);
        let fast = if std::env::var_os("PORTICO_NO_FAST_ENCODE").is_some() {
            None
        } else {
            FastEncoder::new(bytes, splitter.as_ref(), &inner)
        };
        let mut tok = Tokenizer {
            byte_table,
            inner,
            splitter,
            cache: PrefixCache::new(PREFIX_CACHE_BYTES),
            prompts: PromptCache::new(PROMPT_CACHE_BYTES),
            max_token_len,
            special_ids,
            ensure_bos: None,
            fast,
            post: None,
        };
        tok.post = tok.probe_post_processor();
        Ok(tok)
    }

    /// The fixed prefix and suffix that `encode(_, true)` adds around `encode(_, false)`,
    /// when three probes agree on one.
    fn probe_post_processor(&self) -> Option<(Vec<u32>, Vec<u32>)> {
        self.fast.as_ref()?;
        let hf = |t: &str, add: bool| -> Option<Vec<u32>> {
            Some(self.inner.encode_fast(t, add).ok()?.get_ids().to_vec())
        };
        let with = hf("a", true)?;
        let core = hf("a", false)?;
        let k = (0..=with.len().checked_sub(core.len())?).find(|&k| with[k..].starts_with(&core))?;
        let (prefix, suffix) = (with[..k].to_vec(), with[k + core.len()..].to_vec());
        for probe in ["", "Hello world, 12 345!\n"] {
            let mut expect = prefix.clone();
            expect.extend(hf(probe, false)?);
            expect.extend_from_slice(&suffix);
            if hf(probe, true)? != expect {
                return None;
            }
        }
        Some((prefix, suffix))
    }

    /// True when encodes take the hand-written pipeline (`fast_encode`).
    pub fn has_fast_encoder(&self) -> bool {
        self.fast.is_some()
    }

    /// The hand-written pipeline, if this tokenizer has one (tests, tools).
    pub fn fast_encoder(&self) -> Option<&FastEncoder> {
        self.fast.as_ref()
    }

    /// Mutable access for tests (e.g. the parallel threshold).
    pub fn fast_encoder_mut(&mut self) -> Option<&mut FastEncoder> {
        self.fast.as_mut()
    }

    /// Encodes with the `tokenizers` pipeline only (the reference for the fast path).
    pub fn encode_reference(&self, text: &str, add_special_tokens: bool) -> Result<Vec<u32>> {
        let enc = self
            .inner
            .encode_fast(text, add_special_tokens)
            .map_err(|e| CoreError::Tokenizer(e.to_string()))?;
        Ok(self.with_bos(enc.get_ids(), add_special_tokens))
    }

    fn with_bos(&self, ids: &[u32], add_special_tokens: bool) -> Vec<u32> {
        match self.ensure_bos {
            Some(bos) if add_special_tokens && ids.first() != Some(&bos) => {
                let mut out = Vec::with_capacity(ids.len() + 1);
                out.push(bos);
                out.extend_from_slice(ids);
                out
            }
            _ => ids.to_vec(),
        }
    }

    /// Makes `encode(_, true)` start with `bos_id` when the tokenizer.json post-processor
    /// does not already add it (tokenizer_config.json `add_bos_token: true`).
    pub(crate) fn set_ensure_bos(&mut self, bos_id: Option<u32>) {
        self.ensure_bos = bos_id;
    }

    pub fn encode(&self, text: &str, add_special_tokens: bool) -> Result<Vec<u32>> {
        if let (Some(fast), Some(splitter)) = (&self.fast, &self.splitter) {
            if !add_special_tokens {
                return Ok(fast.encode(splitter, text));
            }
            if let Some((prefix, suffix)) = &self.post {
                let ids = fast.encode(splitter, text);
                let mut out = Vec::with_capacity(prefix.len() + ids.len() + suffix.len());
                out.extend_from_slice(prefix);
                out.extend_from_slice(&ids);
                out.extend_from_slice(suffix);
                return Ok(self.with_bos_owned(out));
            }
        }
        self.encode_reference(text, add_special_tokens)
    }

    fn with_bos_owned(&self, ids: Vec<u32>) -> Vec<u32> {
        match self.ensure_bos {
            Some(bos) if ids.first() != Some(&bos) => self.with_bos(&ids, true),
            _ => ids,
        }
    }

    /// `encode(text, false)`, with the ids of a prefix shared with a recent prompt reused
    /// (see `prompt_cache`) and long pieces between added tokens served from the piece cache.
    /// Ids are identical to a full encode (see `special_split`).
    pub fn encode_cached(&self, text: &str) -> Result<Vec<u32>> {
        let Some(splitter) = &self.splitter else {
            return self.encode(text, false);
        };
        if text.len() < MIN_PIECE_BYTES {
            return self.encode(text, false);
        }
        let reuse = if text.len() >= MIN_PROMPT_BYTES && text.len() < u32::MAX as usize {
            self.prompts.find(text, self.max_token_len)
        } else {
            None
        };
        let start = reuse.as_ref().map_or(0, |r| r.bytes);
        let fresh = text.len() - start;
        let mut out = Vec::with_capacity(reuse.as_ref().map_or(0, |r| r.ids_len) + fresh / 3 + 16);
        if let Some(r) = &reuse {
            out.extend_from_slice(r.ids());
        }
        // A new entry when nothing was reused or the new part is large enough to be worth a
        // copy of the whole prompt (a hit with a new short turn stores nothing).
        let store = text.len() >= MIN_PROMPT_BYTES
            && text.len() < u32::MAX as usize
            && (reuse.is_none() || fresh >= (text.len() / 16).max(1024));
        let mut bounds: Vec<(u32, u32)> = match (&reuse, store) {
            (Some(r), true) => r.bounds().collect(),
            _ => Vec::new(),
        };
        let mut err = None;
        splitter.scan(&text[start..], |piece, end| {
            if err.is_some() {
                return;
            }
            match piece {
                Piece::Added(id) => {
                    out.push(id);
                    if store {
                        bounds.push(((start + end) as u32, out.len() as u32));
                    }
                }
                Piece::Text(t) => {
                    if let Err(e) = self.encode_piece(t, &mut out) {
                        err = Some(e);
                    }
                }
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        if store {
            let replaces = reuse.as_ref().filter(|r| r.covers_entry).map(|r| &r.entry);
            self.prompts.insert(Entry::new(text, &out, bounds), replaces);
        }
        Ok(out)
    }

    /// Appends the ids of one piece without added tokens (long ones through the piece cache).
    fn encode_piece(&self, t: &str, out: &mut Vec<u32>) -> Result<()> {
        if t.len() < MIN_PIECE_BYTES {
            out.extend(self.encode(t, false)?);
            return Ok(());
        }
        let key = PrefixCache::key(t);
        if let Some(ids) = self.cache.get(key, t) {
            out.extend_from_slice(&ids);
        } else {
            let ids = self.encode(t, false)?;
            out.extend_from_slice(&ids);
            self.cache.insert(key, t, ids.into());
        }
        Ok(())
    }

    /// Several texts at once, on the tokenizer's thread pool.
    pub fn encode_batch(&self, texts: &[&str], add_special_tokens: bool) -> Result<Vec<Vec<u32>>> {
        if self.fast.is_some() || (self.ensure_bos.is_some() && add_special_tokens) {
            use rayon::prelude::*;
            return texts.par_iter().map(|t| self.encode(t, add_special_tokens)).collect();
        }
        let encs = self
            .inner
            .encode_batch_fast(texts.to_vec(), add_special_tokens)
            .map_err(|e| CoreError::Tokenizer(e.to_string()))?;
        Ok(encs.into_iter().map(|e| e.get_ids().to_vec()).collect())
    }

    /// The underlying Hugging Face tokenizer (profiling, advanced use).
    pub fn hf(&self) -> &tokenizers::Tokenizer {
        &self.inner
    }

    pub fn byte_table(&self) -> Option<&ByteTable> {
        self.byte_table.as_ref()
    }

    /// True when `encode_cached` can split and cache (see `special_split`).
    pub fn has_prefix_cache(&self) -> bool {
        self.splitter.is_some()
    }

    /// Piece-cache counters plus the prompt cache's (a prompt that reused a cached prefix
    /// counts as one hit).
    pub fn prefix_cache_stats(&self) -> CacheStats {
        let s = self.cache.stats();
        let (entries, bytes, hits) = self.prompts.stats();
        CacheStats {
            entries: s.entries + entries,
            bytes: s.bytes + bytes,
            hits: s.hits + hits,
            misses: s.misses,
        }
    }

    pub fn clear_prefix_cache(&self) {
        self.cache.clear();
        self.prompts.clear();
    }

    /// Decodes `ids`; unknown ids are ignored (as the `tokenizers` crate does).
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String> {
        self.inner
            .decode(ids, skip_special_tokens)
            .map_err(|e| CoreError::Tokenizer(e.to_string()))
    }

    /// Vocabulary size including added tokens.
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    pub fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id)
    }

    pub fn is_special(&self, id: u32) -> bool {
        self.special_ids.contains(&id)
    }
}

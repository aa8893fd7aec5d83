//! The vocabulary: a thin wrapper over the Hugging Face `tokenizers` crate that adds the
//! set of special ids (for O(1) skipping in the detokenizer) and BOS handling from
//! tokenizer_config.json.

use std::collections::HashSet;
use std::path::Path;

use crate::byte_table::ByteTable;
use crate::error::{CoreError, Result};
use crate::prefix_cache::{CacheStats, PrefixCache, MIN_PIECE_BYTES};
use crate::special_split::{Piece, SpecialSplitter};

/// Memory for cached piece ids (text + ids), per model.
const PREFIX_CACHE_BYTES: usize = 64 << 20;

pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    /// Splits at added tokens exactly as `inner` does (None if that is not exact).
    splitter: Option<SpecialSplitter>,
    cache: PrefixCache,
    /// Byte-level tokenizers: each id's bytes (fast streaming decode).
    byte_table: Option<ByteTable>,
    special_ids: HashSet<u32>,
    /// `add_bos_token: true` in tokenizer_config.json with a BOS the post-processor does not add.
    ensure_bos: Option<u32>,
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
        let byte_table = ByteTable::new(&inner, bytes);
        Ok(Tokenizer {
            byte_table,
            inner,
            splitter,
            cache: PrefixCache::new(PREFIX_CACHE_BYTES),
            special_ids,
            ensure_bos: None,
        })
    }

    /// Makes `encode(_, true)` start with `bos_id` when the tokenizer.json post-processor
    /// does not already add it (tokenizer_config.json `add_bos_token: true`).
    pub(crate) fn set_ensure_bos(&mut self, bos_id: Option<u32>) {
        self.ensure_bos = bos_id;
    }

    pub fn encode(&self, text: &str, add_special_tokens: bool) -> Result<Vec<u32>> {
        let enc = self
            .inner
            .encode_fast(text, add_special_tokens)
            .map_err(|e| CoreError::Tokenizer(e.to_string()))?;
        let ids = enc.get_ids();
        match self.ensure_bos {
            Some(bos) if add_special_tokens && ids.first() != Some(&bos) => {
                let mut out = Vec::with_capacity(ids.len() + 1);
                out.push(bos);
                out.extend_from_slice(ids);
                Ok(out)
            }
            _ => Ok(ids.to_vec()),
        }
    }

    /// `encode(text, false)`, with long pieces between added tokens served from the prefix
    /// cache. Ids are identical to a full encode (see `special_split`).
    pub fn encode_cached(&self, text: &str) -> Result<Vec<u32>> {
        let Some(splitter) = &self.splitter else {
            return self.encode(text, false);
        };
        if text.len() < MIN_PIECE_BYTES {
            return self.encode(text, false);
        }
        let mut out = Vec::with_capacity(text.len() / 3);
        for piece in splitter.split(text) {
            match piece {
                Piece::Added(id) => out.push(id),
                Piece::Text(t) if t.len() < MIN_PIECE_BYTES => out.extend(self.encode(t, false)?),
                Piece::Text(t) => {
                    let key = PrefixCache::key(t);
                    if let Some(ids) = self.cache.get(key, t) {
                        out.extend_from_slice(&ids);
                    } else {
                        let ids = self.encode(t, false)?;
                        out.extend_from_slice(&ids);
                        self.cache.insert(key, t, ids.into());
                    }
                }
            }
        }
        Ok(out)
    }

    /// Several texts at once, on the tokenizer's thread pool.
    pub fn encode_batch(&self, texts: &[&str], add_special_tokens: bool) -> Result<Vec<Vec<u32>>> {
        if self.ensure_bos.is_some() && add_special_tokens {
            return texts.iter().map(|t| self.encode(t, true)).collect();
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

    pub fn prefix_cache_stats(&self) -> CacheStats {
        self.cache.stats()
    }

    pub fn clear_prefix_cache(&self) {
        self.cache.clear()
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

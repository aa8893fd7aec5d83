//! The vocabulary: a thin wrapper over the Hugging Face `tokenizers` crate that adds the
//! set of special ids (for O(1) skipping in the detokenizer) and BOS handling from
//! tokenizer_config.json.

use std::collections::HashSet;
use std::path::Path;

use crate::error::{CoreError, Result};

pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
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
        Ok(Tokenizer {
            inner,
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

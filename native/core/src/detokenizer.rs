//! Incremental detokenizer: one per generated sequence.
//!
//! Keeps a small window of ids `[prefix..]` and two offsets into it:
//! `prefix` — where the context used for decoding starts, `read` — the end of what was
//! already emitted. On each push the window is decoded twice (`[prefix..read]` and
//! `[prefix..]`); the difference is new text, released only when it does not end in an
//! incomplete character (U+FFFD). Decoding with a little left context keeps decoders
//! that treat the first token specially (SentencePiece's leading space) correct, and
//! the window is trimmed after each release, so a push costs O(new tokens).
//!
//! Byte-level BPE tokenizers take a faster path: each token's bytes come from a table
//! (see `byte_table`), are appended to a small buffer, and the longest valid UTF-8 prefix
//! is released (an invalid sequence becomes U+FFFD exactly as a lossy full decode makes it).
//!
//! Invariant: the concatenation of every `push` result and `finish()` equals
//! `tokenizer.decode(all_ids, skip_special_tokens)`.

use std::sync::Arc;

use crate::error::Result;
use crate::tokenizer::Tokenizer;

const REPLACEMENT: char = '\u{FFFD}';

pub struct Detokenizer {
    tokenizer: Arc<Tokenizer>,
    skip_special_tokens: bool,
    /// Byte-level fast path: bytes not yet released (an incomplete character).
    bytes_mode: bool,
    pending: Vec<u8>,
    window: Vec<u32>,
    prefix: usize,
    read: usize,
}

impl Detokenizer {
    pub fn new(tokenizer: Arc<Tokenizer>, skip_special_tokens: bool) -> Detokenizer {
        Detokenizer {
            bytes_mode: tokenizer.byte_table().is_some(),
            tokenizer,
            skip_special_tokens,
            pending: Vec::new(),
            window: Vec::new(),
            prefix: 0,
            read: 0,
        }
    }

    /// Adds generated ids; returns the text that became final (possibly empty).
    pub fn push(&mut self, ids: &[u32]) -> Result<String> {
        if self.bytes_mode {
            return Ok(self.push_bytes(ids));
        }
        let before = self.window.len();
        if self.skip_special_tokens {
            // decode() drops these before the decoder runs, so dropping them here is exact.
            let tok = &self.tokenizer;
            self.window
                .extend(ids.iter().copied().filter(|&id| !tok.is_special(id)));
        } else {
            self.window.extend_from_slice(ids);
        }
        if self.window.len() == before {
            return Ok(String::new());
        }
        let (done, text) = self.pending_text()?;
        if done {
            self.advance();
            Ok(text)
        } else {
            Ok(String::new())
        }
    }

    /// Flushes whatever is left (an incomplete character becomes U+FFFD, as decode does).
    pub fn finish(&mut self) -> Result<String> {
        if self.bytes_mode {
            let out = String::from_utf8_lossy(&self.pending).into_owned();
            self.pending.clear();
            return Ok(out);
        }
        if self.read == self.window.len() {
            return Ok(String::new());
        }
        let (_, text) = self.pending_text()?;
        self.advance();
        Ok(text)
    }

    /// Number of ids held in the window (for tests: stays small).
    pub fn window_len(&self) -> usize {
        self.window.len() + self.pending.len()
    }

    fn push_bytes(&mut self, ids: &[u32]) -> String {
        let tok = &*self.tokenizer;
        let Some(table) = tok.byte_table() else {
            return String::new();
        };
        for &id in ids {
            if self.skip_special_tokens && tok.is_special(id) {
                continue;
            }
            if let Some(b) = table.get(id) {
                self.pending.extend_from_slice(b);
            }
        }
        let mut out = String::new();
        let mut pos = 0;
        loop {
            match std::str::from_utf8(&self.pending[pos..]) {
                Ok(s) => {
                    out.push_str(s);
                    pos = self.pending.len();
                    break;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    // SAFETY-free: from_utf8 validated these bytes just now.
                    out.push_str(std::str::from_utf8(&self.pending[pos..pos + valid]).unwrap_or(""));
                    match e.error_len() {
                        Some(bad) => {
                            out.push(REPLACEMENT);
                            pos += valid + bad;
                        }
                        None => {
                            pos += valid;
                            break;
                        }
                    }
                }
            }
        }
        self.pending.drain(..pos);
        out
    }

    /// (is the new text complete?, the new text).
    fn pending_text(&self) -> Result<(bool, String)> {
        let tok = &self.tokenizer;
        let skip = self.skip_special_tokens;
        let seen = tok.decode(&self.window[self.prefix..self.read], skip)?;
        let full = tok.decode(&self.window[self.prefix..], skip)?;
        let new = if full.starts_with(&seen) {
            &full[seen.len()..]
        } else {
            // A decoder rewrote the boundary; release from the longest common prefix.
            &full[common_prefix_len(&seen, &full)..]
        };
        let complete = full.len() > seen.len() && !full.ends_with(REPLACEMENT);
        Ok((complete, new.to_owned()))
    }

    fn advance(&mut self) {
        self.prefix = self.read;
        self.read = self.window.len();
        self.window.drain(..self.prefix);
        self.read -= self.prefix;
        self.prefix = 0;
    }
}

fn common_prefix_len(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .find(|((_, ca), cb)| ca != cb)
        .map(|((i, _), _)| i)
        .unwrap_or_else(|| a.len().min(b.len()))
}

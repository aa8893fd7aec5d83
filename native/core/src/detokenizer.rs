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
//! Invariant: the concatenation of every `push` result and `finish()` equals
//! `tokenizer.decode(all_ids, skip_special_tokens)`.

use std::sync::Arc;

use crate::error::Result;
use crate::tokenizer::Tokenizer;

const REPLACEMENT: char = '\u{FFFD}';

pub struct Detokenizer {
    tokenizer: Arc<Tokenizer>,
    skip_special_tokens: bool,
    window: Vec<u32>,
    prefix: usize,
    read: usize,
}

impl Detokenizer {
    pub fn new(tokenizer: Arc<Tokenizer>, skip_special_tokens: bool) -> Detokenizer {
        Detokenizer {
            tokenizer,
            skip_special_tokens,
            window: Vec::new(),
            prefix: 0,
            read: 0,
        }
    }

    /// Adds generated ids; returns the text that became final (possibly empty).
    pub fn push(&mut self, ids: &[u32]) -> Result<String> {
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
        if self.read == self.window.len() {
            return Ok(String::new());
        }
        let (_, text) = self.pending_text()?;
        self.advance();
        Ok(text)
    }

    /// Number of ids held in the window (for tests: stays small).
    pub fn window_len(&self) -> usize {
        self.window.len()
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

//! Splits text at added tokens exactly where the `tokenizers` crate does before anything
//! else runs (leftmost-longest match over the non-normalized added tokens). BPE never
//! merges across such a split and each piece is normalized and pre-tokenized on its own,
//! so encoding the pieces separately and concatenating gives the ids of a full encode —
//! which lets long pieces (a system prompt, earlier turns) be cached.
//!
//! Only built when that equivalence holds for the tokenizer: no added token with
//! lstrip/rstrip/single_word (they eat neighbouring whitespace), no Metaspace pre-tokenizer
//! (its "first piece only" prefix depends on the piece's offset) and no post-processor
//! effect (callers encode without special tokens).

use std::collections::HashMap;

pub struct SpecialSplitter {
    /// By first byte: (token bytes, id), longest first.
    by_first: HashMap<u8, Vec<(Box<[u8]>, u32)>>,
    is_first: [bool; 256],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    Text(&'a str),
    Added(u32),
}

impl SpecialSplitter {
    /// `None` when splitting would not be exact for this tokenizer.
    pub fn new(tok: &tokenizers::Tokenizer, tokenizer_json: &[u8]) -> Option<SpecialSplitter> {
        if contains(tokenizer_json, b"\"Metaspace\"") {
            return None;
        }
        Self::build(tok, false)
    }

    /// The splitter for the `normalized: true` added tokens, which `tokenizers` matches in
    /// each piece after normalizing it (the second split of `fast_encode`, for tokenizers
    /// without a normalizer). None under the same conditions as `new`, or when there are
    /// no such tokens.
    pub fn for_normalized(tok: &tokenizers::Tokenizer) -> Option<SpecialSplitter> {
        let s = Self::build(tok, true)?;
        (!s.by_first.is_empty()).then_some(s)
    }

    fn build(tok: &tokenizers::Tokenizer, normalized: bool) -> Option<SpecialSplitter> {
        let mut by_first: HashMap<u8, Vec<(Box<[u8]>, u32)>> = HashMap::new();
        let mut is_first = [false; 256];
        for (id, t) in tok.get_added_tokens_decoder() {
            if t.lstrip || t.rstrip || t.single_word {
                return None;
            }
            if t.normalized != normalized || t.content.is_empty() {
                continue; // matched later, inside a piece, by the tokenizer itself
            }
            let bytes: Box<[u8]> = t.content.as_bytes().into();
            is_first[bytes[0] as usize] = true;
            by_first.entry(bytes[0]).or_default().push((bytes, id));
        }
        for list in by_first.values_mut() {
            list.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.1.cmp(&b.1)));
        }
        Some(SpecialSplitter { by_first, is_first })
    }

    /// The longest added token, in bytes (how far `split` looks ahead of a position).
    pub fn max_token_len(&self) -> usize {
        self.by_first
            .values()
            .flat_map(|list| list.iter().map(|(t, _)| t.len()))
            .max()
            .unwrap_or(0)
    }

    /// The pieces of `text`, in order (empty text pieces are omitted).
    pub fn split<'a>(&self, text: &'a str) -> Vec<Piece<'a>> {
        let mut out = Vec::new();
        self.scan(text, |p, _| out.push(p));
        out
    }

    /// Calls `f` with each piece of `text` in order and the byte offset where it ends.
    pub fn scan<'a>(&self, text: &'a str, mut f: impl FnMut(Piece<'a>, usize)) {
        let bytes = text.as_bytes();
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            if self.is_first[bytes[i] as usize] {
                if let Some((len, id)) = self.match_at(&bytes[i..], bytes[i]) {
                    if i > start {
                        f(Piece::Text(&text[start..i]), i);
                    }
                    i += len;
                    f(Piece::Added(id), i);
                    start = i;
                    continue;
                }
            }
            i += 1;
        }
        if start < bytes.len() {
            f(Piece::Text(&text[start..]), bytes.len());
        }
    }

    fn match_at(&self, rest: &[u8], first: u8) -> Option<(usize, u32)> {
        self.by_first
            .get(&first)?
            .iter()
            .find(|(tok, _)| rest.starts_with(tok))
            .map(|(tok, id)| (tok.len(), *id))
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

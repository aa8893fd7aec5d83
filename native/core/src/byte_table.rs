//! For byte-level BPE tokenizers (decoder `ByteLevel`: GPT-2, Qwen, Llama 3, DeepSeek):
//! the raw bytes of every token, precomputed, so that decoding a token is a table lookup.
//! `tokenizers`' ByteLevel decoder maps each character of a token back to a byte through
//! the GPT-2 byte↔char table (a token with any unmapped character contributes its UTF-8
//! bytes as they are) and decodes the concatenation lossily; the table reproduces exactly
//! that, and is checked against the real decoder at load.

use std::collections::HashMap;

pub struct ByteTable {
    bytes: Vec<u8>,
    /// `offsets[id]..offsets[id + 1]` is the token's bytes; `u32::MAX` start = unknown id.
    offsets: Vec<(u32, u32)>,
}

impl ByteTable {
    /// Built only when the tokenizer's decoder is exactly `ByteLevel`.
    pub fn new(tok: &tokenizers::Tokenizer, tokenizer_json: &[u8]) -> Option<ByteTable> {
        #[derive(serde::Deserialize)]
        struct Head {
            decoder: Option<Decoder>,
        }
        #[derive(serde::Deserialize)]
        struct Decoder {
            #[serde(rename = "type")]
            kind: String,
        }
        let head: Head = serde_json::from_slice(tokenizer_json).ok()?;
        if head.decoder?.kind != "ByteLevel" {
            return None;
        }
        let char_bytes = char_to_byte();
        let n = tok.get_vocab_size(true);
        let mut bytes = Vec::with_capacity(n * 6);
        let mut offsets = Vec::with_capacity(n);
        let max_id = tok
            .get_added_tokens_decoder()
            .keys()
            .copied()
            .max()
            .map_or(n, |m| (m as usize + 1).max(n));
        for id in 0..max_id as u32 {
            match tok.id_to_token(id) {
                None => offsets.push((u32::MAX, 0)),
                Some(t) => {
                    let start = bytes.len() as u32;
                    let mapped: Option<Vec<u8>> =
                        t.chars().map(|c| char_bytes.get(&c).copied()).collect();
                    match mapped {
                        Some(b) => bytes.extend_from_slice(&b),
                        None => bytes.extend_from_slice(t.as_bytes()),
                    }
                    offsets.push((start, bytes.len() as u32));
                }
            }
        }
        let table = ByteTable { bytes, offsets };
        table.agrees_with(tok).then_some(table)
    }

    /// The bytes of `id`, or None for an id outside the vocabulary (decode drops those).
    #[inline]
    pub fn get(&self, id: u32) -> Option<&[u8]> {
        let &(s, e) = self.offsets.get(id as usize)?;
        if s == u32::MAX {
            return None;
        }
        Some(&self.bytes[s as usize..e as usize])
    }

    /// Spot check against the real decoder (every 61st id and the last 2,000 ids).
    fn agrees_with(&self, tok: &tokenizers::Tokenizer) -> bool {
        let n = self.offsets.len() as u32;
        let ids = (0..n).step_by(61).chain(n.saturating_sub(2000)..n);
        for id in ids {
            let Some(b) = self.get(id) else { continue };
            match tok.decode(&[id], false) {
                Ok(s) if s == String::from_utf8_lossy(b) => {}
                _ => return false,
            }
        }
        true
    }
}

/// GPT-2's byte → printable char table, inverted.
pub(crate) fn char_to_byte() -> HashMap<char, u8> {
    let mut printable: Vec<u8> = (b'!'..=b'~').collect();
    printable.extend(0xA1u8..=0xAC);
    printable.extend(0xAEu8..=0xFF);
    let mut map = HashMap::with_capacity(256);
    let mut extra = 0u32;
    for b in 0u8..=255 {
        let c = if printable.contains(&b) {
            char::from(b)
        } else {
            extra += 1;
            char::from_u32(255 + extra).unwrap_or('\u{FFFD}')
        };
        map.insert(c, b);
    }
    map
}

//! A faster encoder for the byte-level BPE tokenizers of Qwen2/Qwen3 and Llama 3, used
//! only when tokenizer.json is exactly of that shape (else `tokenizers` does the work):
//!
//! - normalizer: none, an empty Sequence, or NFC;
//! - pre-tokenizer: `Sequence[Split(<one of the patterns in pretokenize>, Isolated),
//!   ByteLevel(add_prefix_space: false, use_regex: false)]`;
//! - model: BPE without dropout, unk token, byte fallback, subword prefix or suffix;
//! - added tokens: none normalized and none with lstrip/rstrip/single_word (the
//!   `SpecialSplitter` cuts them out exactly as `tokenizers` does).
//!
//! The pipeline is the same as `tokenizers`' (split at added tokens, NFC each segment,
//! pre-tokenize, BPE each piece), with a hand-written scanner instead of the regex, BPE on
//! raw bytes, a per-call word cache and a bounded one across calls (short pieces: common
//! words are merged once per encoder, not once per request), and long texts cut in two at a
//! place where the pattern is guaranteed to end a match and encoded on two threads.

pub mod bpe;
pub mod classes;
pub mod deepseek;
pub mod pretokenize;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;
use unicode_normalization_alignments::{is_nfc_quick, IsNormalized, UnicodeNormalization};

use crate::special_split::{Piece, SpecialSplitter};
use bpe::{ByteBpe, FxMap, Scratch};
use deepseek::DeepSeekSplit;
use pretokenize::{is_safe_cut, Gpt4Split};

/// One call's handle on the cross-call word cache (None: another call holds it).
struct Words<'a>(Option<&'a mut WordCache>);

impl Words<'_> {
    /// Appends the cached ids of `w` to `out`; false when not cached.
    #[inline]
    fn get(&mut self, w: &[u8], out: &mut Vec<u32>) -> bool {
        match self.0.as_deref_mut() {
            Some(c) if w.len() <= WORD_CACHE_MAX_BYTES => match c.ids.get(w) {
                Some(e) => {
                    out.extend_from_slice(&e.ids[..e.n as usize]);
                    true
                }
                None => false,
            },
            _ => false,
        }
    }

    #[inline]
    fn put(&mut self, w: &[u8], ids: &[u32]) {
        if let Some(c) = self.0.as_deref_mut() {
            if w.len() > WORD_CACHE_MAX_BYTES || ids.len() > WORD_IDS_MAX {
                return;
            }
            if c.ids.len() >= WORD_CACHE_ENTRIES {
                c.ids.clear();
            }
            let mut e = WordIds { n: ids.len() as u8, ids: [0; WORD_IDS_MAX] };
            e.ids[..ids.len()].copy_from_slice(ids);
            c.ids.insert(w.into(), e);
        }
    }
}

/// The pre-tokenizers with a hand-written scanner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreTok {
    /// Qwen2/Qwen3 and Llama 3 (one Split).
    Gpt4(Gpt4Split),
    /// DeepSeek V3 (three Splits).
    DeepSeek(DeepSeekSplit),
}

impl PreTok {
    #[inline]
    pub fn split<'a>(&self, text: &'a str, f: impl FnMut(&'a str)) {
        match self {
            PreTok::Gpt4(s) => s.split(text, f),
            PreTok::DeepSeek(s) => s.split(text, f),
        }
    }

    pub fn pieces<'a>(&self, text: &'a str) -> Vec<&'a str> {
        let mut v = Vec::new();
        self.split(text, |p| v.push(p));
        v
    }
}

/// Texts at least this long are cut in two and encoded on two threads.
pub const PARALLEL_MIN_BYTES: usize = 48 << 10;

/// Pieces the cross-call word cache holds before it starts over (`tokenizers`' BPE keeps a
/// word cache of 10 000 too). About 0.5 MiB when full.
const WORD_CACHE_ENTRIES: usize = 10_000;
/// Longer pieces are not kept across calls (rare repeats; the per-call cache has them).
const WORD_CACHE_MAX_BYTES: usize = 32;
/// Word caches per encoder (see `WordCache`): up to this many calls at once get one.
const WORD_CACHES: usize = 4;

/// Ids of pieces seen by earlier calls: common words are merged once per encoder, not once
/// per request. Taken with `try_lock` once per call, so a call that finds it busy (the other
/// half of a parallel encode, a pool thread) just goes without it. An encoder has
/// `WORD_CACHES` of them, tried in order: a model shared by several shard threads (see the
/// binding's `Model.load`) gives each thread that encodes at the same time a cache of its
/// own, and a lone caller always finds the first one, the warmest.
#[derive(Default)]
struct WordCache {
    ids: FxMap<Box<[u8]>, WordIds>,
}

/// A cached piece's ids, inline (one allocation per entry, its key): pieces of more ids
/// than this are rare and not kept.
#[derive(Clone, Copy)]
struct WordIds {
    n: u8,
    ids: [u32; WORD_IDS_MAX],
}
const WORD_IDS_MAX: usize = 4;

pub struct FastEncoder {
    split: PreTok,
    /// `normalized: true` added tokens, split out of each segment (identity normalizer only).
    normalized_tokens: Option<SpecialSplitter>,
    nfc: bool,
    bpe: ByteBpe,
    parallel_min_bytes: usize,
    words: [Mutex<WordCache>; WORD_CACHES],
}

impl FastEncoder {
    /// Built when tokenizer.json has exactly the supported shape (see the module doc).
    pub fn new(
        tokenizer_json: &[u8],
        splitter: Option<&SpecialSplitter>,
        hf: &tokenizers::Tokenizer,
    ) -> Option<FastEncoder> {
        splitter?;
        let v: Value = serde_json::from_slice(tokenizer_json).ok()?;
        let nfc = match &v["normalizer"] {
            Value::Null => false,
            n if n["type"] == "NFC" => true,
            n if n["type"] == "Sequence" && n["normalizers"].as_array()?.is_empty() => false,
            _ => return None,
        };
        let split = supported_pre_tokenizer(&v["pre_tokenizer"])?;
        for t in v["added_tokens"].as_array()? {
            if t["lstrip"] != false || t["rstrip"] != false || t["single_word"] != false {
                return None;
            }
        }
        let has_normalized = v["added_tokens"].as_array()?.iter().any(|t| t["normalized"] != false);
        let normalized_tokens = if has_normalized {
            if nfc {
                return None; // they would be matched on the NFC text: not reproduced here
            }
            Some(SpecialSplitter::for_normalized(hf)?)
        } else {
            None
        };
        let m = &v["model"];
        let empty_or_null = |x: &Value| x.is_null() || x == "";
        if m["type"] != "BPE"
            || !m["dropout"].is_null()
            || !m["unk_token"].is_null()
            || m["byte_fallback"] == true
            || m["fuse_unk"] == true
            || !empty_or_null(&m["continuing_subword_prefix"])
            || !empty_or_null(&m["end_of_word_suffix"])
        {
            return None;
        }
        let vocab: HashMap<String, u32> = serde_json::from_value(m["vocab"].clone()).ok()?;
        let merges: Vec<(String, String)> = m["merges"]
            .as_array()?
            .iter()
            .map(|x| match x {
                Value::String(s) => {
                    let (a, b) = s.split_once(' ')?;
                    Some((a.to_owned(), b.to_owned()))
                }
                Value::Array(p) if p.len() == 2 => {
                    Some((p[0].as_str()?.to_owned(), p[1].as_str()?.to_owned()))
                }
                _ => None,
            })
            .collect::<Option<_>>()?;
        let bpe = ByteBpe::new(&vocab, &merges, m["ignore_merges"] == true)?;
        Some(FastEncoder {
            split,
            normalized_tokens,
            nfc,
            bpe,
            parallel_min_bytes: PARALLEL_MIN_BYTES,
            words: Default::default(),
        })
    }

    /// Changes the length from which texts are encoded on two threads (tests use small
    /// values to exercise the cut on small texts).
    pub fn set_parallel_min_bytes(&mut self, n: usize) {
        self.parallel_min_bytes = n.max(2);
    }

    pub fn pre_tokenizer(&self) -> PreTok {
        self.split
    }

    /// Ids of `text`, without post-processing (as `encode(text, false)`).
    pub fn encode(&self, splitter: &SpecialSplitter, text: &str) -> Vec<u32> {
        let pieces = splitter.split(text);
        if text.len() >= self.parallel_min_bytes {
            if let Some((left, right)) = self.cut(text, &pieces) {
                let (mut a, b) = rayon::join(
                    || self.encode_pieces(&left),
                    || self.encode_pieces(&right),
                );
                a.extend_from_slice(&b);
                return a;
            }
        }
        self.encode_pieces(&pieces)
    }

    /// The pre-tokenized pieces of one segment without added tokens, after normalization
    /// (for identity tests against `tokenizers`).
    pub fn pieces(&self, segment: &str) -> Vec<String> {
        let s = self.normalize(segment);
        self.split.pieces(&s).into_iter().map(str::to_owned).collect()
    }

    fn encode_pieces(&self, pieces: &[Piece<'_>]) -> Vec<u32> {
        let bytes: usize = pieces
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.len(),
                Piece::Added(_) => 8,
            })
            .sum();
        let mut out = Vec::with_capacity(bytes / 3 + 8);
        let mut cache = FxMap::default();
        let mut scratch = Scratch::default();
        let mut guard = self.words.iter().find_map(|w| w.try_lock().ok());
        let mut w = Words(guard.as_deref_mut());
        for p in pieces {
            match *p {
                Piece::Added(id) => out.push(id),
                Piece::Text(t) => match (self.normalize(t), &self.normalized_tokens) {
                    (Cow::Borrowed(t), None) => {
                        self.encode_segment(t, &mut out, &mut cache, &mut scratch, &mut w)
                    }
                    (Cow::Borrowed(t), Some(second)) => {
                        for p in second.split(t) {
                            match p {
                                Piece::Added(id) => out.push(id),
                                Piece::Text(t) => {
                                    self.encode_segment(t, &mut out, &mut cache, &mut scratch, &mut w)
                                }
                            }
                        }
                    }
                    (Cow::Owned(s), _) => {
                        let mut own = FxMap::default();
                        self.encode_segment(&s, &mut out, &mut own, &mut scratch, &mut w)
                    }
                },
            }
        }
        out
    }

    /// Pre-tokenizes and BPE-encodes one normalized segment. `cache` maps a piece to where
    /// its ids already are in `out`.
    fn encode_segment<'t>(
        &self,
        text: &'t str,
        out: &mut Vec<u32>,
        cache: &mut FxMap<&'t [u8], (u32, u32)>,
        scratch: &mut Scratch,
        words: &mut Words<'_>,
    ) {
        self.split.split(text, |piece| {
            let w = piece.as_bytes();
            if w.len() <= 2 {
                // Cheaper to merge than to hash.
                self.bpe.encode_word(w, out, scratch);
                return;
            }
            if let Some(&(s, n)) = cache.get(w) {
                out.extend_from_within(s as usize..(s + n) as usize);
                return;
            }
            let s = out.len();
            if !words.get(w, out) {
                self.bpe.encode_word(w, out, scratch);
                words.put(w, &out[s..]);
            }
            cache.insert(w, (s as u32, (out.len() - s) as u32));
        });
    }

    /// Pieces in the cross-call word caches, each counted per cache (tests).
    pub fn cached_words(&self) -> usize {
        self.words.iter().map(|w| w.lock().map(|w| w.ids.len()).unwrap_or(0)).sum()
    }

    fn normalize<'t>(&self, t: &'t str) -> Cow<'t, str> {
        if !self.nfc || t.is_ascii() || is_nfc_quick(t.chars()) == IsNormalized::Yes {
            return Cow::Borrowed(t);
        }
        Cow::Owned(t.nfc().map(|(c, _)| c).collect())
    }

    /// Two halves of `pieces` that encode independently: cut between pieces, or inside the
    /// text piece holding the middle at a safe place (see `is_safe_cut`) when that piece
    /// needs no normalization.
    fn cut<'t>(&self, text: &'t str, pieces: &[Piece<'t>]) -> Option<(Vec<Piece<'t>>, Vec<Piece<'t>>)> {
        let mid = text.len() / 2;
        let base = text.as_ptr() as usize;
        let (k, t, at) = pieces.iter().enumerate().find_map(|(k, p)| match *p {
            Piece::Text(t) if t.as_ptr() as usize - base + t.len() > mid => {
                Some((k, t, t.as_ptr() as usize - base))
            }
            _ => None,
        })?;
        if at >= mid {
            // The middle is in an added token (or at a piece start): cut before piece k.
            return (k > 0).then(|| (pieces[..k].to_vec(), pieces[k..].to_vec()));
        }
        if self.nfc && !t.is_ascii() && is_nfc_quick(t.chars()) != IsNormalized::Yes {
            return None;
        }
        let local = mid - at;
        let found = (local..t.len().min(local + 4096))
            .chain((local.saturating_sub(4096)..local).rev())
            .find(|&c| is_safe_cut(t, c) && self.outside_normalized_tokens(t, c))?;
        let mut left = pieces[..k].to_vec();
        left.push(Piece::Text(&t[..found]));
        let mut right = vec![Piece::Text(&t[found..])];
        right.extend_from_slice(&pieces[k + 1..]);
        Some((left, right))
    }
}

impl FastEncoder {
    /// True when byte `c` of `t` is not inside a `normalized: true` added token.
    fn outside_normalized_tokens(&self, t: &str, c: usize) -> bool {
        let Some(second) = &self.normalized_tokens else {
            return true;
        };
        let base = t.as_ptr() as usize;
        second.split(t).iter().any(|p| match p {
            Piece::Text(q) => {
                let s = q.as_ptr() as usize - base;
                s <= c && c <= s + q.len()
            }
            Piece::Added(_) => false,
        })
    }
}

fn supported_pre_tokenizer(p: &Value) -> Option<PreTok> {
    if p["type"] != "Sequence" {
        return None;
    }
    let steps = p["pretokenizers"].as_array()?;
    let (bl, splits) = steps.split_last()?;
    if bl["type"] != "ByteLevel" || bl["add_prefix_space"] != false || bl["use_regex"] != false {
        return None;
    }
    let patterns: Vec<&str> = splits
        .iter()
        .map(|s| {
            let isolated =
                s["type"] == "Split" && s["behavior"] == "Isolated" && s["invert"] == false;
            isolated.then(|| s["pattern"]["Regex"].as_str()).flatten()
        })
        .collect::<Option<_>>()?;
    match patterns.as_slice() {
        [one] => Gpt4Split::for_pattern(one).map(PreTok::Gpt4),
        [deepseek::DIGITS, deepseek::CJK, deepseek::MAIN] => Some(PreTok::DeepSeek(DeepSeekSplit)),
        _ => None,
    }
}

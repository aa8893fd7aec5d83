//! A hand-written scanner for DeepSeek V3's pre-tokenizer: three `Split`s (Isolated) in a
//! row, each applied to every piece the previous one made (unmatched stretches are pieces
//! too):
//!
//! 1. `\p{N}{1,3}` — numbers, in groups of up to three;
//! 2. `[一-龥぀-ゟ゠-ヿ]+` — runs of CJK ideographs (U+4E00–9FA5), hiragana, katakana;
//! 3. ``[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+``
//!    where, at each position, the alternatives are tried in order:
//!    an ASCII punctuation character followed by ASCII letters; a run of letters/marks,
//!    optionally after one character that is not CR, LF, letter, punctuation or symbol;
//!    an optional U+0020, punctuation/symbols, then CR/LF; then the same white-space
//!    rules as the Qwen/Llama pattern (see `pretokenize`). A position where nothing
//!    matches (a lone number, a control or format character) is left to the gap.

use super::classes::{decode, table, L, M, N, P, S, WS};
use super::pretokenize::whitespace_end;

/// The three patterns, as tokenizer.json spells them.
pub const DIGITS: &str = r"\p{N}{1,3}";
pub const CJK: &str = "[\u{4e00}-\u{9fa5}\u{3040}-\u{309f}\u{30a0}-\u{30ff}]+";
pub const MAIN: &str = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeepSeekSplit;

impl DeepSeekSplit {
    pub fn split<'a>(&self, text: &'a str, mut f: impl FnMut(&'a str)) {
        let t = table();
        isolated(text, |s, i| digits_end(s, t, i), &mut |p1| {
            isolated(p1, |s, i| cjk_end(s, i), &mut |p2| {
                isolated(p2, |s, i| main_end(s, t, i), &mut f)
            })
        })
    }
}

/// `Split(pattern, Isolated)`: every match and every stretch between matches is a piece.
/// `match_at(bytes, i)` is the end of the pattern's match starting at `i`, if any.
#[inline(always)]
fn isolated<'a>(
    text: &'a str,
    match_at: impl Fn(&[u8], usize) -> Option<usize>,
    f: &mut impl FnMut(&'a str),
) {
    let b = text.as_bytes();
    let mut gap = 0;
    let mut i = 0;
    while i < b.len() {
        if let Some(e) = match_at(b, i) {
            if gap < i {
                f(&text[gap..i]);
            }
            f(&text[i..e]);
            i = e;
            gap = e;
        } else {
            i += utf8_len(b[i]);
        }
    }
    if gap < b.len() {
        f(&text[gap..]);
    }
}

#[inline(always)]
fn utf8_len(x: u8) -> usize {
    match x {
        0..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

#[inline(always)]
fn digits_end(b: &[u8], t: &[u8], i: usize) -> Option<usize> {
    let mut e = i;
    for _ in 0..3 {
        if e >= b.len() {
            break;
        }
        let (c, l) = decode(b, e);
        if t[c as usize] & N == 0 {
            break;
        }
        e += l;
    }
    (e > i).then_some(e)
}

#[inline(always)]
fn is_cjk(c: u32) -> bool {
    (0x4E00..=0x9FA5).contains(&c) || (0x3040..=0x30FF).contains(&c)
}

#[inline(always)]
fn cjk_end(b: &[u8], i: usize) -> Option<usize> {
    let mut e = i;
    while e < b.len() {
        let (c, l) = decode(b, e);
        if !is_cjk(c) {
            break;
        }
        e += l;
    }
    (e > i).then_some(e)
}

#[inline(always)]
fn run(b: &[u8], t: &[u8], mut i: usize, mask: u8) -> usize {
    while i < b.len() {
        let (c, l) = decode(b, i);
        if t[c as usize] & mask == 0 {
            break;
        }
        i += l;
    }
    i
}

fn main_end(b: &[u8], t: &[u8], i: usize) -> Option<usize> {
    let n = b.len();
    let (c0, l0) = decode(b, i);
    // 1. ASCII punctuation then ASCII letters.
    if c0 < 0x80 && (c0 as u8).is_ascii_punctuation() && i + 1 < n && b[i + 1].is_ascii_alphabetic() {
        let mut e = i + 1;
        while e < n && b[e].is_ascii_alphabetic() {
            e += 1;
        }
        return Some(e);
    }
    let k0 = t[c0 as usize];
    // 2. letters/marks, optionally after one non-CR/LF, non-L/P/S character.
    if k0 & (L | M) != 0 {
        return Some(run(b, t, i, L | M));
    }
    if c0 != '\r' as u32 && c0 != '\n' as u32 && k0 & (L | P | S) == 0 && i + l0 < n {
        let (c1, _) = decode(b, i + l0);
        if t[c1 as usize] & (L | M) != 0 {
            return Some(run(b, t, i + l0, L | M));
        }
    }
    // 3. optional space, punctuation/symbols, CR/LF.
    let start = if c0 == ' ' as u32 { i + 1 } else { i };
    let e = run(b, t, start, P | S);
    if e > start {
        let mut e = e;
        while e < n && (b[e] == b'\r' || b[e] == b'\n') {
            e += 1;
        }
        return Some(e);
    }
    if k0 & WS == 0 {
        return None;
    }
    // 4-6. white space, as in `pretokenize`.
    Some(whitespace_end(b, t, i))
}

//! A hand-written scanner that yields exactly the pieces of the Qwen2/Qwen3 and Llama 3
//! pre-tokenizer pattern (`Split` with `Isolated` behaviour):
//!
//! ```text
//! (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,D}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//! ```
//!
//! with D = 1 (Qwen) or 3 (Llama 3). The regex is evaluated leftmost-first, and every
//! character starts a match of some alternative (letters: 2nd, numbers: 3rd, other
//! non-space: 4th, white space: 7th), so the matches tile the text and each match is
//! decided by the alternatives in order at its start:
//! 1. `'` followed by s/t/re/ve/m/ll/d in any case (`(?i)` folds `ſ` U+017F to `s`);
//! 2. a letter run, optionally after one character that is not CR, LF, letter or number;
//! 3. up to D numbers;
//! 4. an optional U+0020, then a run of "other" characters (not space, letter, number),
//!    then any CR/LF run;
//! 5. a white-space run that contains CR or LF: `\s*` backtracks to the last CR/LF of the
//!    maximal white-space run, so the match ends just after it;
//! 6. a white-space run not followed by a non-space: the whole run at the end of the
//!    text, else the run minus its last character when that leaves at least one;
//! 7. otherwise the single white-space character.
//!
//! Identity with the regex is checked against `tokenizers` on corpora and random text
//! (tests/fast_encode.rs).

use super::classes::{decode, table, L, N, WS};

/// The two pattern strings this scanner reproduces, as tokenizer.json spells them.
pub const QWEN2_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
pub const LLAMA3_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gpt4Split {
    /// D in `\p{N}{1,D}`.
    pub max_digits: usize,
}

impl Gpt4Split {
    /// The scanner for a Split pattern, if it is one of the patterns above exactly.
    pub fn for_pattern(pattern: &str) -> Option<Gpt4Split> {
        match pattern {
            QWEN2_PATTERN => Some(Gpt4Split { max_digits: 1 }),
            LLAMA3_PATTERN => Some(Gpt4Split { max_digits: 3 }),
            _ => None,
        }
    }

    /// Calls `f` with each piece of `text`, in order.
    #[inline]
    pub fn split<'a>(&self, text: &'a str, mut f: impl FnMut(&'a str)) {
        let b = text.as_bytes();
        let t = table();
        let mut i = 0;
        while i < b.len() {
            let e = self.match_end(b, t, i);
            f(&text[i..e]);
            i = e;
        }
    }

    /// The pieces of `text` (for tests and tools).
    pub fn pieces<'a>(&self, text: &'a str) -> Vec<&'a str> {
        let mut v = Vec::new();
        self.split(text, |p| v.push(p));
        v
    }

    /// End of the match that starts at `i` (< len).
    #[inline(always)]
    fn match_end(&self, b: &[u8], t: &[u8], i: usize) -> usize {
        let n = b.len();
        let (c0, l0) = decode(b, i);
        if c0 == '\'' as u32 {
            if let Some(e) = contraction(b, i + 1) {
                return e;
            }
        }
        let k0 = t[c0 as usize];
        // 2. letters, optionally after one non-CR/LF non-letter non-number character.
        if k0 & L != 0 {
            return run(b, t, i + l0, L);
        }
        let is_nl = c0 == '\r' as u32 || c0 == '\n' as u32;
        if !is_nl && k0 & N == 0 && i + l0 < n {
            let (c1, l1) = decode(b, i + l0);
            if t[c1 as usize] & L != 0 {
                return run(b, t, i + l0 + l1, L);
            }
        }
        // 3. numbers.
        if k0 & N != 0 {
            let mut e = i + l0;
            for _ in 1..self.max_digits {
                if e >= n {
                    break;
                }
                let (c, l) = decode(b, e);
                if t[c as usize] & N == 0 {
                    break;
                }
                e += l;
            }
            return e;
        }
        // 4. optional space, "other" run, CR/LF run.
        let start = if c0 == ' ' as u32 { i + 1 } else { i };
        let e = run_other(b, t, start);
        if e > start {
            let mut e = e;
            while e < n && (b[e] == b'\r' || b[e] == b'\n') {
                e += 1;
            }
            return e;
        }
        // c0 is white space from here on.
        debug_assert!(k0 & WS != 0);
        whitespace_end(b, t, i)
    }
}

/// End of the white-space alternatives shared by the Qwen2 / Llama 3 and DeepSeek patterns,
/// `\s*[\r\n]+|\s+(?!\S)|\s+`, for a run starting at `i` (a white-space character).
#[inline]
pub(super) fn whitespace_end(b: &[u8], t: &[u8], i: usize) -> usize {
    let n = b.len();
    let mut j = i;
    let mut last_nl_end = None;
    let mut last_start = i;
    let mut count = 0usize;
    while j < n {
        let (c, l) = decode(b, j);
        if t[c as usize] & WS == 0 {
            break;
        }
        if c == '\r' as u32 || c == '\n' as u32 {
            last_nl_end = Some(j + l);
        }
        last_start = j;
        j += l;
        count += 1;
    }
    // Up to the last CR/LF of the run.
    if let Some(e) = last_nl_end {
        return e;
    }
    // The run at the end of the text, or the run minus its last character.
    if j == n {
        return j;
    }
    if count >= 2 {
        return last_start;
    }
    // The single white-space character.
    j
}

/// End of `(?i:s|t|re|ve|m|ll|d)` at `i` (after the apostrophe), if it matches.
#[inline]
fn contraction(b: &[u8], i: usize) -> Option<usize> {
    let at = |k: usize| b.get(k).map(|x| x.to_ascii_lowercase());
    match at(i)? {
        b's' | b't' | b'm' | b'd' => Some(i + 1),
        b'r' | b'v' if at(i + 1) == Some(b'e') => Some(i + 2),
        b'l' if at(i + 1) == Some(b'l') => Some(i + 2),
        // U+017F LATIN SMALL LETTER LONG S case-folds to `s`.
        0xC5 if b.get(i + 1) == Some(&0xBF) => Some(i + 2),
        _ => None,
    }
}

/// End of the run of characters with class `mask` starting at `i`.
#[inline(always)]
fn run(b: &[u8], t: &[u8], mut i: usize, mask: u8) -> usize {
    while i < b.len() {
        let x = b[i];
        if x < 0x80 {
            if t[x as usize] & mask == 0 {
                break;
            }
            i += 1;
            continue;
        }
        let (c, l) = decode(b, i);
        if t[c as usize] & mask == 0 {
            break;
        }
        i += l;
    }
    i
}

/// End of the run of characters that are not white space, letters or numbers.
#[inline(always)]
fn run_other(b: &[u8], t: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        let (c, l) = decode(b, i);
        if t[c as usize] & (L | N | WS) != 0 {
            break;
        }
        i += l;
    }
    i
}

/// True when a match of the pattern is guaranteed to end at byte `p` of `text` and the
/// rest can be scanned on its own: the character before `p` is a letter (so the match
/// covering it is a contraction or letter run, which ends where letters end, without any
/// look-ahead) and the character at `p` is an ASCII non-letter (also a safe NFC cut: an
/// ASCII character never composes with what precedes it).
pub fn is_safe_cut(text: &str, p: usize) -> bool {
    let b = text.as_bytes();
    if p == 0 || p >= b.len() || !text.is_char_boundary(p) {
        return false;
    }
    let x = b[p];
    if x >= 0x80 || x.is_ascii_alphabetic() {
        return false;
    }
    let mut s = p - 1;
    while !text.is_char_boundary(s) {
        s -= 1;
    }
    let (c, _) = decode(b, s);
    table()[c as usize] & L != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_of_a_sentence() {
        let q = Gpt4Split { max_digits: 1 };
        assert_eq!(
            q.pieces("Hello world's 123 !!\n\n  x  \t"),
            ["Hello", " world", "'s", " ", "1", "2", "3", " !!\n\n", " ", " x", "  \t"]
        );
        let l = Gpt4Split { max_digits: 3 };
        assert_eq!(l.pieces("12345 ab"), ["123", "45", " ab"]);
        assert_eq!(l.pieces("a \n b"), ["a", " \n", " b"]);
        assert_eq!(l.pieces("'ſa 'LL"), ["'ſ", "a", " '", "LL"]);
    }
}

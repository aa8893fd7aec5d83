//! Unicode classes of every code point, from the same tables the `regex` crate (and so
//! `fancy-regex`, which the `tokenizers` crate uses for pre-tokenizer patterns) compiles
//! `\p{L}`, `\p{N}`, `\s`, ... from: `regex-syntax` parses each class and the ranges it
//! yields fill a one-byte-per-code-point table. Using the same tables (not another Unicode
//! crate of a possibly different Unicode version) is what keeps the scanner's pieces
//! identical to the regex's.

use std::sync::OnceLock;

use regex_syntax::hir::{Class, HirKind};

/// `\p{L}` (letters).
pub const L: u8 = 1;
/// `\p{N}` (numbers).
pub const N: u8 = 2;
/// `\s` (Unicode White_Space).
pub const WS: u8 = 4;
/// `\p{P}` (punctuation).
pub const P: u8 = 8;
/// `\p{S}` (symbols).
pub const S: u8 = 16;
/// `\p{M}` (marks).
pub const M: u8 = 32;

const SIZE: usize = 0x11_0000;

/// The class bits of every code point (index = code point).
pub fn table() -> &'static [u8] {
    static TABLE: OnceLock<Box<[u8]>> = OnceLock::new();
    TABLE.get_or_init(build)
}

fn build() -> Box<[u8]> {
    let mut t = vec![0u8; SIZE].into_boxed_slice();
    for (bit, pattern) in [
        (L, r"\p{L}"),
        (N, r"\p{N}"),
        (WS, r"\s"),
        (P, r"\p{P}"),
        (S, r"\p{S}"),
        (M, r"\p{M}"),
    ] {
        let hir = regex_syntax::parse(pattern).expect("a Unicode class");
        let HirKind::Class(Class::Unicode(class)) = hir.kind() else {
            unreachable!("{pattern} parses to a Unicode class")
        };
        for r in class.ranges() {
            for cp in r.start() as usize..=r.end() as usize {
                t[cp] |= bit;
            }
        }
    }
    t
}

/// The code point at byte `i` of valid UTF-8 and its length in bytes.
#[inline(always)]
pub fn decode(b: &[u8], i: usize) -> (u32, usize) {
    let x = b[i];
    if x < 0x80 {
        (x as u32, 1)
    } else if x < 0xE0 {
        ((((x & 0x1F) as u32) << 6) | (b[i + 1] & 0x3F) as u32, 2)
    } else if x < 0xF0 {
        (
            (((x & 0x0F) as u32) << 12)
                | (((b[i + 1] & 0x3F) as u32) << 6)
                | (b[i + 2] & 0x3F) as u32,
            3,
        )
    } else {
        (
            (((x & 0x07) as u32) << 18)
                | (((b[i + 1] & 0x3F) as u32) << 12)
                | (((b[i + 2] & 0x3F) as u32) << 6)
                | (b[i + 3] & 0x3F) as u32,
            4,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_of_known_code_points() {
        let t = table();
        assert_eq!(t['a' as usize], L);
        assert_eq!(t['東' as usize], L);
        assert_eq!(t['7' as usize], N);
        assert_eq!(t['½' as usize], N);
        assert_eq!(t[' ' as usize], WS);
        assert_eq!(t['\u{3000}' as usize], WS);
        assert_eq!(t['\u{85}' as usize], WS);
        assert_eq!(t[',' as usize], P);
        assert_eq!(t['$' as usize], S);
        assert_eq!(t['\u{301}' as usize], M);
        assert_eq!(t['\u{200d}' as usize], 0); // ZWJ is Cf
    }

    #[test]
    fn decode_matches_std() {
        let s = "aé東🚀";
        let mut i = 0;
        for c in s.chars() {
            let (cp, len) = decode(s.as_bytes(), i);
            assert_eq!((cp, len), (c as u32, c.len_utf8()));
            i += len;
        }
    }
}

//! An incremental JSON validator: bytes are fed as they arrive (any chunking), and it says
//! where the value being read ends, or where it stopped being JSON. It keeps O(depth)
//! state, so streaming a long arguments object costs one pass over its bytes.
//!
//! Used to stream tool-call arguments: every byte it accepts inside an open object belongs
//! to that object (an end marker or wrapper brace can never be accepted, since it is not a
//! JSON continuation), so accepted bytes are emitted at once and nothing is held back.

/// Result of feeding bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feed {
    /// The value ends at this byte offset (exclusive); later bytes were not read.
    Complete(usize),
    /// Every byte up to the end was valid; the value is not finished.
    More,
    /// The byte at this offset cannot continue the value.
    Bad(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Value,
    ObjKeyOrEnd,
    ObjKey,
    Colon,
    CommaOrEnd,
    ArrValueOrEnd,
    /// Inside a string; `esc`: 0 = plain, 1 = after `\`, 2..=5 = hex digits of `\u` left + 1.
    Str { esc: u8 },
    Lit { word: &'static [u8], at: u8 },
    Num(Num),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Num {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    E,
    ESign,
    Exp,
}

/// One JSON value being read.
#[derive(Debug, Clone)]
pub struct JsonStream {
    /// Open containers: `}` or `]`.
    stack: Vec<u8>,
    st: St,
    /// The current string is an object key (next: colon).
    key: bool,
}

impl Default for JsonStream {
    fn default() -> Self {
        JsonStream::new()
    }
}

impl JsonStream {
    /// Reads one value from its first byte (whitespace before it is accepted).
    pub fn new() -> JsonStream {
        JsonStream { stack: Vec::with_capacity(8), st: St::Value, key: false }
    }

    /// Reads the rest of an object whose last member's value has just been read
    /// (expects `,` or `}`).
    pub fn after_member() -> JsonStream {
        let mut s = JsonStream::new();
        s.stack.push(b'}');
        s.st = St::CommaOrEnd;
        s
    }

    /// Feeds `b[from..]`; offsets in the result index `b`.
    pub fn feed(&mut self, b: &[u8], from: usize) -> Feed {
        let mut i = from;
        while i < b.len() {
            let c = b[i];
            match self.st {
                St::Str { esc } => {
                    // fast path through plain string bytes
                    if esc == 0 {
                        let mut j = i;
                        while j < b.len() && b[j] != b'"' && b[j] != b'\\' && b[j] >= 0x20 {
                            j += 1;
                        }
                        if j == b.len() {
                            return Feed::More;
                        }
                        i = j;
                        match b[i] {
                            b'"' => {
                                if self.key {
                                    self.key = false;
                                    self.st = St::Colon;
                                } else if let Some(f) = self.value_done(i + 1) {
                                    return f;
                                }
                            }
                            b'\\' => self.st = St::Str { esc: 1 },
                            _ => return Feed::Bad(i),
                        }
                    } else if esc == 1 {
                        match c {
                            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.st = St::Str { esc: 0 },
                            b'u' => self.st = St::Str { esc: 5 },
                            _ => return Feed::Bad(i),
                        }
                    } else {
                        if !c.is_ascii_hexdigit() {
                            return Feed::Bad(i);
                        }
                        self.st = St::Str { esc: if esc == 2 { 0 } else { esc - 1 } };
                    }
                    i += 1;
                }
                St::Lit { word, at } => {
                    if c != word[at as usize] {
                        return Feed::Bad(i);
                    }
                    if at as usize + 1 == word.len() {
                        if let Some(f) = self.value_done(i + 1) {
                            return f;
                        }
                    } else {
                        self.st = St::Lit { word, at: at + 1 };
                    }
                    i += 1;
                }
                St::Num(n) => {
                    let next = match (n, c) {
                        (Num::Minus, b'0') => Some(Num::Zero),
                        (Num::Minus, b'1'..=b'9') => Some(Num::Int),
                        (Num::Int, b'0'..=b'9') => Some(Num::Int),
                        (Num::Zero | Num::Int, b'.') => Some(Num::Dot),
                        (Num::Dot | Num::Frac, b'0'..=b'9') => Some(Num::Frac),
                        (Num::Zero | Num::Int | Num::Frac, b'e' | b'E') => Some(Num::E),
                        (Num::E, b'+' | b'-') => Some(Num::ESign),
                        (Num::E | Num::ESign | Num::Exp, b'0'..=b'9') => Some(Num::Exp),
                        _ => None,
                    };
                    match next {
                        Some(n2) => {
                            self.st = St::Num(n2);
                            i += 1;
                        }
                        None => {
                            if !matches!(n, Num::Zero | Num::Int | Num::Frac | Num::Exp) {
                                return Feed::Bad(i);
                            }
                            // the number ended before this byte: read it again
                            if let Some(f) = self.value_done(i) {
                                return f;
                            }
                        }
                    }
                }
                _ if matches!(c, b' ' | b'\t' | b'\n' | b'\r') => i += 1,
                St::Value | St::ArrValueOrEnd => {
                    if c == b']' && self.st == St::ArrValueOrEnd {
                        self.stack.pop();
                        if let Some(f) = self.value_done(i + 1) {
                            return f;
                        }
                        i += 1;
                        continue;
                    }
                    self.st = match c {
                        b'{' => {
                            self.stack.push(b'}');
                            St::ObjKeyOrEnd
                        }
                        b'[' => {
                            self.stack.push(b']');
                            St::ArrValueOrEnd
                        }
                        b'"' => St::Str { esc: 0 },
                        b't' => St::Lit { word: b"true", at: 1 },
                        b'f' => St::Lit { word: b"false", at: 1 },
                        b'n' => St::Lit { word: b"null", at: 1 },
                        b'-' => St::Num(Num::Minus),
                        b'0' => St::Num(Num::Zero),
                        b'1'..=b'9' => St::Num(Num::Int),
                        _ => return Feed::Bad(i),
                    };
                    i += 1;
                }
                St::ObjKeyOrEnd | St::ObjKey => {
                    if c == b'"' {
                        self.key = true;
                        self.st = St::Str { esc: 0 };
                    } else if c == b'}' && self.st == St::ObjKeyOrEnd {
                        self.stack.pop();
                        if let Some(f) = self.value_done(i + 1) {
                            return f;
                        }
                    } else {
                        return Feed::Bad(i);
                    }
                    i += 1;
                }
                St::Colon => {
                    if c != b':' {
                        return Feed::Bad(i);
                    }
                    self.st = St::Value;
                    i += 1;
                }
                St::CommaOrEnd => {
                    let top = *self.stack.last().unwrap_or(&0);
                    if c == b',' {
                        self.st = if top == b'}' { St::ObjKey } else { St::Value };
                    } else if c == top {
                        self.stack.pop();
                        if let Some(f) = self.value_done(i + 1) {
                            return f;
                        }
                    } else {
                        return Feed::Bad(i);
                    }
                    i += 1;
                }
            }
        }
        Feed::More
    }

    /// A value ended at `end`: the whole value is complete when no container is open.
    #[inline]
    fn value_done(&mut self, end: usize) -> Option<Feed> {
        if self.stack.is_empty() {
            self.st = St::CommaOrEnd;
            Some(Feed::Complete(end))
        } else {
            self.st = St::CommaOrEnd;
            None
        }
    }
}

/// Where the value starting at or after `b[from]` ends (whitespace first is allowed).
pub fn value_end(b: &[u8], from: usize) -> Feed {
    JsonStream::new().feed(b, from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(s: &str) -> Feed {
        value_end(s.as_bytes(), 0)
    }

    #[test]
    fn validates_like_a_parser_at_every_split() {
        let good = [
            r#"{"a": [1, -2.5e+3, 0, true, false, null, "x\"\\\u00e9"], "b": {}}"#,
            r#"[]"#,
            r#"{"big": 12345678901234567890123, "f": 1.0, "s": "日本 🦀"}"#,
            r#""str""#,
        ];
        for g in good {
            assert_eq!(whole(g), Feed::Complete(g.len()), "{g}");
            for i in 0..g.len() {
                let mut s = JsonStream::new();
                let b = g.as_bytes();
                assert_eq!(s.feed(&b[..i], 0), Feed::More, "{g} at {i}");
                assert_eq!(s.feed(b, i), Feed::Complete(g.len()), "{g} from {i}");
            }
        }
        assert_eq!(whole(r#"{"a": }"#), Feed::Bad(6));
        assert_eq!(whole(r#"{"a": 01}"#), Feed::Bad(7));
        assert_eq!(whole(r#"{"a": 1.}"#), Feed::Bad(8));
        assert_eq!(whole(r#"{"a": 1</tool_call>"#), Feed::Bad(7));
        assert_eq!(whole(r#"{"a": "\q"}"#), Feed::Bad(8));
        assert_eq!(whole(r#"{"a": 1} trailing"#), Feed::Complete(8));
        assert_eq!(whole("{\"a\": \"x\ny\"}"), Feed::Bad(8));
        assert_eq!(whole("  {}"), Feed::Complete(4));
        assert_eq!(whole("12 "), Feed::Complete(2));
        assert_eq!(whole("12"), Feed::More);
        let mut t = JsonStream::after_member();
        assert_eq!(t.feed(b" , \"k\": 2 }x", 0), Feed::Complete(11));
    }
}

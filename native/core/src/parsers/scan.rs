//! Marker search over a growing buffer, chunk-independent: a marker that may still be
//! completed by the next chunk is reported as `Partial` so the caller holds it back.

/// A set of literal markers with a first-byte filter for the fast path.
#[derive(Debug, Clone)]
pub struct Markers {
    list: Vec<&'static str>,
    first: [bool; 256],
}

/// Result of a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    /// `list[idx]` matches at byte `pos` (the longest marker matching there).
    Full { pos: usize, len: usize, idx: usize },
    /// From `pos` to the end, the buffer is a proper prefix of some marker (or a shorter
    /// marker matches but a longer one still might): hold `buf[pos..]` back.
    Partial { pos: usize },
    None,
}

impl Markers {
    pub fn new(list: &[&'static str]) -> Markers {
        let mut first = [false; 256];
        let mut v = Vec::new();
        for m in list {
            if !m.is_empty() {
                first[m.as_bytes()[0] as usize] = true;
                v.push(*m);
            }
        }
        Markers { list: v, first }
    }

    /// True when no byte of `s` can begin a marker (the common plain-text case).
    #[inline]
    pub fn none_can_start(&self, s: &str) -> bool {
        !s.as_bytes().iter().any(|b| self.first[*b as usize])
    }

    /// Earliest marker in `s[from..]`. With `eof`, partial matches are not reported.
    pub fn find(&self, s: &str, from: usize, eof: bool) -> Hit {
        let b = s.as_bytes();
        let mut i = from;
        while i < b.len() {
            if self.first[b[i] as usize] {
                let rest = &b[i..];
                let mut best: Option<(usize, usize)> = None;
                let mut partial = false;
                for (k, m) in self.list.iter().enumerate() {
                    let mb = m.as_bytes();
                    if rest.len() >= mb.len() {
                        if &rest[..mb.len()] == mb && best.is_none_or(|(_, l)| mb.len() > l) {
                            best = Some((k, mb.len()));
                        }
                    } else if !eof && mb.starts_with(rest) {
                        partial = true;
                    }
                }
                if partial {
                    return Hit::Partial { pos: i };
                }
                if let Some((idx, len)) = best {
                    return Hit::Full { pos: i, len, idx };
                }
            }
            i += 1;
        }
        Hit::None
    }
}

/// End of a bracketed value starting at `s[start]` (`{` or `[`), honouring JSON strings.
/// `Ok(Some(end))` = exclusive end; `Ok(None)` = not closed yet; `Err(())` = mismatched.
pub fn balanced_end(s: &str, start: usize, python: bool) -> Result<Option<usize>, ()> {
    let b = s.as_bytes();
    let mut stack: Vec<u8> = Vec::with_capacity(8);
    let mut i = start;
    let mut in_str: u8 = 0;
    while i < b.len() {
        let c = b[i];
        if in_str != 0 {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == in_str {
                in_str = 0;
            }
        } else {
            match c {
                b'"' => in_str = b'"',
                b'\'' if python => in_str = b'\'',
                b'{' => stack.push(b'}'),
                b'[' => stack.push(b']'),
                b'(' if python => stack.push(b')'),
                b'}' | b']' | b')' => {
                    if c == b')' && !python {
                        // plain char in JSON context (outside strings it is invalid anyway)
                    } else if stack.pop() != Some(c) {
                        return Err(());
                    } else if stack.is_empty() {
                        return Ok(Some(i + 1));
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    Ok(None)
}

/// Index of the first non-whitespace byte at or after `from`.
pub fn skip_ws(s: &str, from: usize) -> usize {
    let b = s.as_bytes();
    let mut i = from;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_and_full() {
        let m = Markers::new(&["<tool_call>", "<tool_calls>"]);
        assert_eq!(m.find("ab<tool", 0, false), Hit::Partial { pos: 2 });
        assert_eq!(m.find("ab<tool", 0, true), Hit::None);
        assert_eq!(m.find("ab<tool_call>", 0, false), Hit::Full { pos: 2, len: 11, idx: 0 });
        let m2 = Markers::new(&["<|channel>thought", "<|channel>thought\n"]);
        assert_eq!(m2.find("x<|channel>thought", 0, false), Hit::Partial { pos: 1 });
        assert_eq!(m.find("ab<tool_call>x", 0, false), Hit::Full { pos: 2, len: 11, idx: 0 });
        assert_eq!(m.find("<tool_calls>", 0, false), Hit::Full { pos: 0, len: 12, idx: 1 });
        assert_eq!(balanced_end("{\"a\":\"}\"}x", 0, false), Ok(Some(9)));
        assert_eq!(balanced_end("[f(a=')')]", 0, true), Ok(Some(10)));
    }
}

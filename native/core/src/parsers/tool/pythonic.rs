//! Pythonic: a Python list of calls, `[get_weather(city="Paris", days=3), other()]`, as the
//! whole answer (Llama 3.2 / Llama 4 / Olmo). llama4_pythonic also accepts it between
//! `<|python_start|>` and `<|python_end|>`. Python literals become JSON: strings (either
//! quote, escapes decoded), ints and floats (JSON-valid number text kept as written),
//! True/False/None, lists, tuples, dicts with string keys. Positional arguments are not
//! part of the format: such a list is content.
//!
//! End of stream: an unclosed list is content.

use super::{after_balanced, until_marker, Ctx, Format, RegionEnd};
use crate::parsers::values::{is_number, json_string, ArgsBuilder};
use crate::parsers::Call;

pub struct Pythonic {
    pub llama4: bool,
}

const START: &str = "<|python_start|>";
const END: &str = "<|python_end|>";

impl Format for Pythonic {
    fn starts(&self) -> &'static [&'static str] {
        if self.llama4 {
            &[START]
        } else {
            &[]
        }
    }
    fn bare(&self) -> &'static [u8] {
        b"["
    }
    fn region_end(&self, buf: &str, marker: Option<usize>) -> RegionEnd {
        match marker {
            None => after_balanced(buf, 0, true),
            Some(_) => until_marker(buf, START.len(), END),
        }
    }
    fn parse(&self, region: &str, marker: Option<usize>, _eof: bool, _cx: &Ctx) -> Option<Vec<Call>> {
        let body = match marker {
            None => region,
            Some(_) => {
                let b = &region[START.len()..];
                b.strip_suffix(END).unwrap_or(b)
            }
        };
        let mut p = Py { s: body.as_bytes(), src: body, i: 0 };
        let calls = p.call_list()?;
        p.ws();
        if p.i != p.s.len() || calls.is_empty() {
            return None;
        }
        Some(calls)
    }
}

/// A Python literal (string, number, True/False/None, list, tuple, dict) as JSON text, when
/// `s` is exactly one.
pub fn python_literal(s: &str) -> Option<String> {
    let mut p = Py { s: s.as_bytes(), src: s, i: 0 };
    let v = p.value(0)?;
    p.ws();
    (p.i == p.s.len()).then_some(v)
}

struct Py<'a> {
    s: &'a [u8],
    src: &'a str,
    i: usize,
}

impl<'a> Py<'a> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn ident(&mut self) -> Option<&'a str> {
        self.ws();
        let st = self.i;
        while self.i < self.s.len() && (self.s[self.i].is_ascii_alphanumeric() || matches!(self.s[self.i], b'_' | b'.' | b'-')) {
            self.i += 1;
        }
        if self.i == st || self.s[st].is_ascii_digit() {
            return None;
        }
        Some(&self.src[st..self.i])
    }
    fn call_list(&mut self) -> Option<Vec<Call>> {
        if !self.eat(b'[') {
            return None;
        }
        let mut calls = Vec::new();
        if self.eat(b']') {
            return Some(calls);
        }
        loop {
            let name = self.ident()?;
            if !self.eat(b'(') {
                return None;
            }
            let mut a = ArgsBuilder::default();
            if !self.eat(b')') {
                loop {
                    let k = self.ident()?;
                    if !self.eat(b'=') {
                        return None;
                    }
                    let v = self.value(0)?;
                    a.push(k, &v);
                    if self.eat(b')') {
                        break;
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                    if self.eat(b')') {
                        break;
                    }
                }
            }
            calls.push(Call { name: name.to_string(), args: a.finish(), id: None });
            if self.eat(b']') {
                return Some(calls);
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }
    fn value(&mut self, depth: u32) -> Option<String> {
        if depth > 64 {
            return None;
        }
        self.ws();
        let c = *self.s.get(self.i)?;
        match c {
            b'"' | b'\'' => self.string(c),
            b'[' | b'(' => {
                let close = if c == b'[' { b']' } else { b')' };
                self.i += 1;
                let mut out = String::from("[");
                let mut first = true;
                loop {
                    if self.eat(close) {
                        break;
                    }
                    if !first && !self.eat(b',') {
                        return None;
                    }
                    if self.eat(close) {
                        break;
                    }
                    if !first {
                        out.push(',');
                    }
                    out.push_str(&self.value(depth + 1)?);
                    first = false;
                }
                out.push(']');
                Some(out)
            }
            b'{' => {
                self.i += 1;
                let mut out = String::from("{");
                let mut first = true;
                loop {
                    if self.eat(b'}') {
                        break;
                    }
                    if !first && !self.eat(b',') {
                        return None;
                    }
                    if self.eat(b'}') {
                        break;
                    }
                    let k = self.value(depth + 1)?;
                    if !k.starts_with('"') || !self.eat(b':') {
                        return None;
                    }
                    if !first {
                        out.push(',');
                    }
                    out.push_str(&k);
                    out.push(':');
                    out.push_str(&self.value(depth + 1)?);
                    first = false;
                }
                out.push('}');
                Some(out)
            }
            _ => {
                let st = self.i;
                while self.i < self.s.len() && (self.s[self.i].is_ascii_alphanumeric() || matches!(self.s[self.i], b'.' | b'-' | b'+' | b'_')) {
                    self.i += 1;
                }
                let w = &self.src[st..self.i];
                match w {
                    "True" | "true" => Some("true".into()),
                    "False" | "false" => Some("false".into()),
                    "None" | "null" => Some("null".into()),
                    _ if is_number(w) => Some(w.to_string()),
                    _ => {
                        let clean: String = w.chars().filter(|c| *c != '_').collect();
                        if let Ok(n) = clean.parse::<i128>() {
                            Some(n.to_string())
                        } else {
                            match clean.parse::<f64>() {
                                Ok(f) if f.is_finite() && w.bytes().any(|b| b.is_ascii_digit()) => {
                                    serde_json::Number::from_f64(f).map(|n| n.to_string())
                                }
                                _ => None,
                            }
                        }
                    }
                }
            }
        }
    }
    fn string(&mut self, q: u8) -> Option<String> {
        self.i += 1;
        let mut out = String::new();
        loop {
            let c = *self.s.get(self.i)?;
            if c == q {
                self.i += 1;
                return Some(json_string(&out));
            }
            if c == b'\\' {
                let e = *self.s.get(self.i + 1)?;
                self.i += 2;
                match e {
                    b'n' => out.push('\n'),
                    b't' => out.push('\t'),
                    b'r' => out.push('\r'),
                    b'0' => out.push('\0'),
                    b'\\' => out.push('\\'),
                    b'\'' => out.push('\''),
                    b'"' => out.push('"'),
                    b'u' => {
                        let h = self.src.get(self.i..self.i + 4)?;
                        let cp = u32::from_str_radix(h, 16).ok()?;
                        out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                        self.i += 4;
                    }
                    _ => {
                        out.push('\\');
                        self.i -= 1;
                    }
                }
                continue;
            }
            // copy one UTF-8 char
            let st = self.i;
            self.i += 1;
            while self.i < self.s.len() && (self.s[self.i] & 0xC0) == 0x80 {
                self.i += 1;
            }
            out.push_str(&self.src[st..self.i]);
        }
    }
}

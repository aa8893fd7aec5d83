//! Gemma 4: `<|tool_call>call:get_weather{location:<|"|>Tokyo<|"|>,days:3}<tool_call|>`:
//! bare keys, strings between `<|"|>` delimiters, numbers / true / false / null, nested
//! `{..}` objects and `[..]` arrays. Several `call:` entries may follow each other inside
//! one region.
//!
//! End of stream: a call without `<tool_call|>` is recovered when its `{..}` closed.

use super::{until_marker, Ctx, Format, RegionEnd};
use crate::parsers::values::{is_number, json_string, ArgsBuilder};
use crate::parsers::Call;

pub struct Gemma4;

const START: &str = "<|tool_call>";
const END: &str = "<tool_call|>";
const Q: &str = "<|\"|>";

impl Format for Gemma4 {
    fn starts(&self) -> &'static [&'static str] {
        &[START]
    }
    fn region_end(&self, buf: &str, _m: Option<usize>) -> RegionEnd {
        until_marker(buf, START.len(), END)
    }
    fn parse(&self, region: &str, _m: Option<usize>, _eof: bool, _cx: &Ctx) -> Option<Vec<Call>> {
        let body = &region[START.len()..];
        let body = body.strip_suffix(END).unwrap_or(body);
        let mut g = G { s: body, i: 0 };
        let mut calls = Vec::new();
        loop {
            g.ws();
            if g.i >= body.len() {
                break;
            }
            if !g.rest().starts_with("call:") {
                return None;
            }
            g.i += 5;
            let n0 = g.i;
            while g.i < body.len() && !matches!(body.as_bytes()[g.i], b'{') {
                g.i += 1;
            }
            let name = body[n0..g.i].trim();
            if name.is_empty() || name.contains(char::is_whitespace) {
                return None;
            }
            let args = g.object(0)?;
            calls.push(Call { name: name.to_string(), args, id: None });
        }
        if calls.is_empty() {
            None
        } else {
            Some(calls)
        }
    }
}

struct G<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> G<'a> {
    fn rest(&self) -> &'a str {
        &self.s[self.i..]
    }
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s.as_bytes()[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.as_bytes().get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn object(&mut self, depth: u32) -> Option<String> {
        if depth > 64 || !self.eat(b'{') {
            return None;
        }
        let mut a = ArgsBuilder::default();
        if self.eat(b'}') {
            return Some(a.finish());
        }
        loop {
            self.ws();
            let k0 = self.i;
            let key = if self.rest().starts_with(Q) {
                self.i += Q.len();
                let e = self.rest().find(Q)?;
                let k = &self.s[self.i..self.i + e];
                self.i += e + Q.len();
                k
            } else {
                while self.i < self.s.len() && self.s.as_bytes()[self.i] != b':' {
                    self.i += 1;
                }
                self.s[k0..self.i].trim()
            };
            if key.is_empty() || !self.eat(b':') {
                return None;
            }
            let v = self.value(depth)?;
            a.push(key, &v);
            if self.eat(b'}') {
                return Some(a.finish());
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }
    fn value(&mut self, depth: u32) -> Option<String> {
        self.ws();
        if self.rest().starts_with(Q) {
            self.i += Q.len();
            let e = self.rest().find(Q)?;
            let v = json_string(&self.s[self.i..self.i + e]);
            self.i += e + Q.len();
            return Some(v);
        }
        match self.s.as_bytes().get(self.i)? {
            b'{' => self.object(depth + 1),
            b'[' => {
                self.i += 1;
                let mut out = String::from("[");
                if self.eat(b']') {
                    return Some("[]".into());
                }
                loop {
                    out.push_str(&self.value(depth + 1)?);
                    if self.eat(b']') {
                        out.push(']');
                        return Some(out);
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                    out.push(',');
                }
            }
            _ => {
                let st = self.i;
                while self.i < self.s.len() && !matches!(self.s.as_bytes()[self.i], b',' | b'}' | b']') {
                    self.i += 1;
                }
                let w = self.s[st..self.i].trim();
                Some(match w {
                    "true" | "false" | "null" => w.to_string(),
                    _ if is_number(w) => w.to_string(),
                    _ => json_string(w),
                })
            }
        }
    }
}

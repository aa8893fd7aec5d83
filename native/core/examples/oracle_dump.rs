//! Dev tool for comparing portico-core with the Python reference implementation
//! (tokenizers + jinja2 as transformers sets it up):
//!   cargo run --release --example oracle_dump -- encode DIR < texts.json   (JSON array of strings)
//!   cargo run --release --example oracle_dump -- render DIR < cases.json   (JSON array of
//!     {"messages": [...], "tools": [...]|null, "add_generation_prompt": bool, "kwargs": {...}|null})
//! Prints one JSON array: ids per text, or {"ok": text} / {"err": message} per case.

use std::io::Read;

use portico_core::{ChatRequest, Model};
use serde_json::{json, Value};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (mode, dir) = match args.as_slice() {
        [_, mode, dir] => (mode.as_str(), dir.as_str()),
        _ => {
            eprintln!("usage: oracle_dump encode|render MODEL_DIR < input.json");
            std::process::exit(2);
        }
    };
    let model = Model::load(dir).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1);
    });
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).expect("stdin");
    let items: Vec<Value> = serde_json::from_str(&input).expect("input JSON array");
    let out: Vec<Value> = items
        .iter()
        .map(|item| match mode {
            "encode" => json!(model
                .encode(item.as_str().unwrap_or_default(), false)
                .unwrap()),
            _ => {
                let messages = item["messages"].to_string();
                let tools = item
                    .get("tools")
                    .filter(|t| !t.is_null())
                    .map(Value::to_string);
                let kwargs = item
                    .get("kwargs")
                    .filter(|t| !t.is_null())
                    .map(Value::to_string);
                let req = ChatRequest {
                    messages_json: messages.as_bytes(),
                    tools_json: tools.as_deref().map(str::as_bytes),
                    add_generation_prompt: item["add_generation_prompt"].as_bool().unwrap_or(false),
                    kwargs_json: kwargs.as_deref(),
                };
                match model.render_chat(&req) {
                    Ok(text) => json!({ "ok": text }),
                    Err(e) => json!({ "err": e.to_string() }),
                }
            }
        })
        .collect();
    println!("{}", Value::Array(out));
}

//! Rough timings of the hot calls (render, encode) on a model folder (system allocator;
//! the Node addon uses mimalloc):
//!   cargo run --release --example timing -- MODEL_DIR
use std::time::Instant;

use portico_core::{ChatRequest, Model};

fn per_call(n: u32, mut f: impl FnMut()) -> f64 {
    for _ in 0..n.min(50) {
        f();
    }
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed().as_secs_f64() * 1e6 / n as f64
}

fn main() {
    let dir = std::env::args().nth(1).expect("usage: timing MODEL_DIR");
    let m = Model::load(&dir).expect("load");
    let msgs = br#"[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello! How are you today? Tell me a story about a fox."}]"#;
    let req = ChatRequest {
        messages_json: msgs,
        tools_json: None,
        add_generation_prompt: true,
        kwargs_json: None,
    };
    let prompt = m.render_chat(&req).unwrap();
    println!(
        "render_chat short: {:.1} µs",
        per_call(2000, || drop(m.render_chat(&req).unwrap()))
    );
    println!(
        "encode short ({} B): {:.1} µs",
        prompt.len(),
        per_call(2000, || drop(m.encode(&prompt, false).unwrap()))
    );
    // The bench's Qwen3 case: 8 messages + 4 tools (bench/tokenize.bench.ts).
    let tool = |name: &str, props: &str, req: &str| {
        format!(r#"{{"type":"function","function":{{"name":"{name}","description":"The {name} tool.","parameters":{{"type":"object","properties":{props},"required":["{req}"]}}}}}}"#)
    };
    let tools = format!(
        "[{},{},{},{}]",
        tool("get_weather", r#"{"city":{"type":"string"},"unit":{"type":"string","enum":["c","f"]}}"#, "city"),
        tool("web_search", r#"{"query":{"type":"string"},"limit":{"type":"integer"}}"#, "query"),
        tool("calculate", r#"{"expression":{"type":"string"}}"#, "expression"),
        tool("send_email", r#"{"to":{"type":"array","items":{"type":"string"}},"subject":{"type":"string"}}"#, "to"),
    );
    let msgs8 = r#"[{"role":"system","content":"You are a helpful assistant. Use tools when they help."},{"role":"user","content":"What is the weather in Paris?"},{"role":"assistant","content":"","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},{"role":"tool","content":"{\"temp_c\": 21, \"sky\": \"clear\"}"},{"role":"assistant","content":"It is 21 °C and clear in Paris."},{"role":"user","content":"Search the web for the Louvre opening hours."},{"role":"assistant","content":"The Louvre opens at 9:00 and closes at 18:00, except Tuesdays."},{"role":"user","content":"Thanks! Email that to alice@example.org."}]"#;
    let req8 = ChatRequest {
        messages_json: msgs8.as_bytes(),
        tools_json: Some(tools.as_bytes()),
        add_generation_prompt: true,
        kwargs_json: None,
    };
    let n = std::env::var("RENDER_N").ok().and_then(|s| s.parse().ok()).unwrap_or(5000);
    println!(
        "render_chat 8 messages + 4 tools ({} chars): {:.1} µs",
        m.render_chat(&req8).unwrap().len(),
        per_call(n, || drop(m.render_chat(&req8).unwrap()))
    );
    if std::env::var_os("RENDER_ONLY").is_some() {
        return;
    }
    // ENCODE_FILES=a.txt,b.txt: best of 20 encodes of each file (no special tokens).
    if let Ok(files) = std::env::var("ENCODE_FILES") {
        for f in files.split(',') {
            let text = std::fs::read_to_string(f).expect("read");
            let n = m.encode(&text, false).unwrap().len();
            let mut best = f64::MAX;
            for _ in 0..20 {
                let t = Instant::now();
                drop(m.encode(&text, false).unwrap());
                best = best.min(t.elapsed().as_secs_f64());
            }
            println!("encode {f} ({} B, {n} tokens): best {:.2} ms", text.len(), best * 1e3);
        }
        return;
    }
    let long = "The quick brown fox 🦊 jumps over the lazy dog. 日本語のテキスト。".repeat(300);
    println!(
        "encode long ({} B): {:.0} µs",
        long.len(),
        per_call(20, || drop(m.encode(&long, false).unwrap()))
    );
    let code =
        "fn main() {\n    let x = vec![1, 2, 3];\n    println!(\"{:?}\", x);\n}\n".repeat(300);
    println!(
        "encode code ({} B): {:.0} µs",
        code.len(),
        per_call(20, || drop(m.encode(&code, false).unwrap()))
    );
}

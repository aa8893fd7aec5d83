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

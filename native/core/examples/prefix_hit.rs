//! Where a prefix-cache hit of `encode_chat` spends its time: a long system prompt (a file)
//! with a new user turn per call, phase by phase, against a cold call (caches cleared).
//!   cargo run --release --example prefix_hit -- MODEL_DIR SYSTEM_TXT [calls=2000]
use std::time::Instant;

use portico_core::content_format::ContentFormat;
use portico_core::messages_cache::{messages_value, MessagesCache};
use portico_core::{ChatRequest, Model};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn per_call(n: usize, mut f: impl FnMut(usize)) -> f64 {
    for i in 0..n.min(20) {
        f(i);
    }
    let t = Instant::now();
    for i in 0..n {
        f(i);
    }
    t.elapsed().as_secs_f64() * 1e6 / n as f64
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("usage: prefix_hit MODEL_DIR SYSTEM_TXT [calls]");
    let system = std::fs::read_to_string(args.next().expect("SYSTEM_TXT")).expect("read");
    let n: usize = args.next().map(|s| s.parse().expect("calls")).unwrap_or(2000);
    let m = Model::load(&dir).expect("load");
    let bodies: Vec<Vec<u8>> = (0..22)
        .map(|i| {
            serde_json::to_vec(&serde_json::json!([
                {"role": "system", "content": system},
                {"role": "user", "content": format!("Question {i}: what is the first error?")},
            ]))
            .unwrap()
        })
        .collect();
    let req = |i: usize| ChatRequest {
        messages_json: &bodies[i % bodies.len()],
        tools_json: None,
        add_generation_prompt: true,
        kwargs_json: None,
    };
    let tok = m.tokenizer();
    let prompt = m.render_chat(&req(0)).unwrap();
    assert_eq!(m.encode_chat(&req(1)).unwrap(), tok.encode(&m.render_chat(&req(1)).unwrap(), false).unwrap());
    if std::env::var_os("HIT_ONLY").is_some() {
        per_call(n, |i| drop(m.encode_chat(&req(i)).unwrap()));
        return;
    }
    let cold = per_call(n / 20 + 1, |i| {
        m.clear_caches();
        drop(m.encode_chat(&req(i)).unwrap())
    });
    m.encode_chat(&req(0)).unwrap();
    let hit = per_call(n, |i| drop(m.encode_chat(&req(i)).unwrap()));
    if std::env::var_os("HIT_ONLY").is_some() {
        return;
    }
    println!("{} B prompt; encode_chat cold {cold:.0} µs, hit {hit:.0} µs ({:.1}%)", prompt.len(), hit / cold * 100.0);
    let parse = per_call(n, |i| drop(messages_value(&bodies[i % bodies.len()], ContentFormat::String).unwrap()));
    let cache = MessagesCache::new(32 << 20);
    let cached = per_call(n, |i| drop(cache.messages(&bodies[i % bodies.len()], ContentFormat::String).unwrap()));
    let render = per_call(n, |i| drop(m.render_chat(&req(i)).unwrap()));
    let prompts: Vec<String> = (0..22).map(|i| m.render_chat(&req(i)).unwrap()).collect();
    let enc = per_call(n, |i| drop(tok.encode_cached(&prompts[i % 22]).unwrap()));
    let utf8 = per_call(n, |i| { let _ = std::str::from_utf8(prompts[i % 22].as_bytes()).unwrap(); });
    println!("  messages parsed whole {parse:.0} µs, from the messages cache {cached:.0} µs; render_chat {render:.0} µs; encode_cached {enc:.0} µs; from_utf8 {utf8:.0} µs");
}

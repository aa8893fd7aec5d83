//! Where the time goes, printed (run: `cargo test --release -p portico-core --test suite perf
//! -- --nocapture`). Asserts only gross bounds, so a loaded CI machine does not fail it.

use std::time::Instant;

use portico_core::SequenceOptions;
use tokenizers::PreTokenizer;

use crate::common::qwen3;

fn long_text(bytes: usize) -> String {
    let para = "Summarize the report: 1,024 requests/s for 3 hours; p99 was 412 ms.\n\
                def handler(req):\n    return {\"status\": 200}\nÜnïcödé: café, 東京, 🚀 — keep. ";
    para.repeat(bytes / para.len() + 1)
}

#[test]
fn perf_detokenize_and_encode_breakdown() {
    let Some(m) = qwen3() else { return };
    let text = long_text(200_000);
    let ids = m.encode(&text, false).unwrap();

    // Detokenize: one push per token, natively (no N-API).
    let t = Instant::now();
    let mut seq = m.sequence(SequenceOptions {
        skip_special_tokens: true,
        ..SequenceOptions::default()
    });
    let mut n = 0usize;
    for id in &ids {
        n += seq.push(std::slice::from_ref(id)).unwrap().len();
    }
    n += seq.finish().unwrap().len();
    let per_token = t.elapsed().as_secs_f64() * 1e6 / ids.len() as f64;
    println!("detokenize (Sequence.push per token, native): {per_token:.3} µs/token over {} tokens ({n} bytes)", ids.len());
    let t = Instant::now();
    let mut seq = m.sequence(SequenceOptions {
        stop: vec!["</answer>".into(), "Observation:".into()],
        ..SequenceOptions::default()
    });
    for id in &ids {
        let _ = seq.push(std::slice::from_ref(id)).unwrap();
    }
    let per_token_stops = t.elapsed().as_secs_f64() * 1e6 / ids.len() as f64;
    println!("detokenize with 2 stop strings: {per_token_stops:.3} µs/token");
    assert!(per_token < 50.0);

    // Encode: the whole pipeline vs the pre-tokenizer alone (regex split).
    let hf = m.tokenizer().hf();
    let t = Instant::now();
    let _ = m.encode(&text, false).unwrap();
    let full = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut pre = tokenizers::PreTokenizedString::from(text.as_str());
    if let Some(p) = hf.get_pre_tokenizer() {
        p.pre_tokenize(&mut pre).unwrap();
    }
    let pre_t = t.elapsed().as_secs_f64();
    println!(
        "encode {} B -> {} tokens: {:.1} ms ({:.3} µs/byte); pre-tokenizer alone {:.1} ms ({:.0}%)",
        text.len(),
        ids.len(),
        full * 1e3,
        full * 1e6 / text.len() as f64,
        pre_t * 1e3,
        100.0 * pre_t / full
    );
}

//! Per-token cost of the streaming parsers, natively (no N-API crossing): pushes one
//! token-sized piece at a time and reports ns per push, against a baseline measured in
//! the same run (an OutputParser with no parsers: the cost of the push machinery alone).
//!
//!   cargo run --release -q -p portico-core --example parser_tokens
//!
//! Rows: plain content through a tool parser; reasoning; and *inside a streamed tool call's
//! arguments* (the incremental JSON reader emits a fragment per push), for hermes, kimi_k2,
//! harmony and tool_choice required. The argument tokens include `}` / `]` (nested values),
//! which a reader that rescans the whole region on each push would pay for.

use portico_core::parsers::{OutputParser, ParserOptions, Sink, ToolChoice};
use std::time::Instant;

const N: usize = 400_000;

fn run(label: &str, tool: Option<&str>, reasoning: Option<&str>, opts: &ParserOptions, prefix: &str, tokens: &[&str], base: Option<f64>) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..3 {
        let mut p = OutputParser::new(tool, reasoning, opts).unwrap();
        let mut sink = Sink::default();
        p.push_into(prefix, &mut sink);
        let t0 = Instant::now();
        for i in 0..N {
            p.push_into(tokens[i % tokens.len()], &mut sink);
            sink.out.clear(); // the deltas of one push are handed over (N-API: converted)
        }
        let ns = t0.elapsed().as_nanos() as f64 / N as f64;
        best = best.min(ns);
    }
    match base {
        Some(b) => println!("| {label} | {best:.0} | {:.1}x |", best / b),
        None => println!("| {label} | {best:.0} | 1.0x |"),
    }
    best
}

fn main() {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load {}", load.split_whitespace().next().unwrap_or("?"));
    println!("| per push ({N} pushes, best of 3) | ns/token | vs baseline |");
    println!("|---|---:|---:|");
    let o = ParserOptions { id_seed: Some(1), ..Default::default() };
    let text: &[&str] = &[" token"];
    let b = run("baseline: no parsers (content)", None, None, &o, "", text, None);
    run("hermes, content", Some("hermes"), None, &o, "", text, Some(b));
    run("qwen3 + hermes, inside reasoning", Some("hermes"), Some("qwen3"), &o, "<think>", text, Some(b));
    // argument tokens: strings, numbers, nested objects and arrays (closing bytes included)
    let args: &[&str] = &[" \"k", "ey\"", ": ", "[1", ", {\"", "a\": ", "2.5", "}], ", "\"s\": \"", "some", " text", "\", "];
    run("hermes, inside streamed arguments", Some("hermes"), None, &o, "<tool_call>\n{\"name\": \"f\", \"arguments\": {", args, Some(b));
    run("kimi_k2, inside streamed arguments", Some("kimi_k2"), None, &o, "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{", args, Some(b));
    run("harmony, inside streamed arguments", Some("harmony"), None, &o, "<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{", args, Some(b));
    let xml: &[&str] = &["<parameter=", "k", ">\n", "some", " text", " here", "\n</parameter>\n"];
    run("qwen3_coder, inside streamed parameters", Some("qwen3_coder"), None, &o, "<tool_call>\n<function=f>\n", xml, Some(b));
        let req = ParserOptions { tool_choice: ToolChoice::Required, ..o.clone() };
    run("tool_choice required, inside streamed arguments", None, None, &req, "[{\"name\": \"f\", \"parameters\": {", args, Some(b));
}

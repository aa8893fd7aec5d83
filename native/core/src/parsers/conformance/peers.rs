//! Cases from vLLM's and SGLang's own parser tests (test/fixtures/parser-peers/*.json,
//! format in its README): every case must give its `expect`, in one piece and split at
//! every boundary (`check_splits`). A case whose `differs` is set documents a deliberate
//! difference from the peers; it still asserts Portico's own result.

use super::*;
use serde_json::Value;
use std::path::PathBuf;

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../test/fixtures/parser-peers")
}

fn files() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(fixtures_dir()).expect("fixtures dir").map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    paths.sort();
    for p in paths {
        let text = std::fs::read_to_string(&p).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        out.push((p.file_name().unwrap().to_string_lossy().into_owned(), v));
    }
    out
}

fn str_or_none(v: &Value) -> Option<&str> {
    v.as_str()
}

/// The request's tools as JSON text: given, or one open-schema function per expected call.
fn tools_json(case: &Value) -> Option<String> {
    if let Some(t) = case.get("tools") {
        return Some(t.to_string());
    }
    let calls = case["expect"]["calls"].as_array()?;
    let mut names: Vec<&str> = calls.iter().filter_map(|c| c["name"].as_str()).collect();
    names.dedup();
    let tools: Vec<Value> = names.iter().map(|n| serde_json::json!({"type": "function", "function": {"name": n, "parameters": {"type": "object"}}})).collect();
    Some(Value::Array(tools).to_string())
}

pub fn case_options(case: &Value) -> ParserOptions {
    let mut o = opts(tools_json(case));
    let r = &case["request"];
    o.prompt_injected_reasoning = r["prompt_injected_reasoning"].as_bool().unwrap_or(false);
    o.prompt_closed_reasoning = r["prompt_closed_reasoning"].as_bool().unwrap_or(false);
    o.reasoning_disabled = r["reasoning_disabled"].as_bool().unwrap_or(false);
    o.tool_choice = match r["tool_choice"].as_str() {
        Some("none") => ToolChoice::None,
        Some("required") => ToolChoice::Required,
        _ => ToolChoice::Auto,
    };
    o.only_offered_functions = true;
    o
}

fn check_case(file: &str, case: &Value) {
    let name = case["name"].as_str().unwrap_or("?");
    let what = format!("{file}: {name}");
    let tool = str_or_none(&case["tool_parser"]);
    let reasoning = str_or_none(&case["reasoning_parser"]);
    let text = case["text"].as_str().unwrap_or_else(|| panic!("{what}: no text"));
    let o = case_options(case);
    let got = check_splits(tool, reasoning, &o, text);
    let e = &case["expect"];
    assert_eq!(got.content, e["content"].as_str().unwrap_or(""), "{what}: content");
    assert_eq!(got.reasoning, e["reasoning"].as_str().unwrap_or(""), "{what}: reasoning");
    let want: &[Value] = e["calls"].as_array().map(|v| v.as_slice()).unwrap_or(&[]);
    assert_eq!(got.calls.len(), want.len(), "{what}: calls {:?}", got.calls);
    for (i, (g, w)) in got.calls.iter().zip(want).enumerate() {
        assert_eq!(g.2, w["name"].as_str().unwrap(), "{what}: name of call {i}");
        if let Some(exact) = w["arguments_text"].as_str() {
            assert_eq!(g.3, exact, "{what}: arguments text of call {i}");
        } else {
            let got_args: Value = serde_json::from_str(&g.3).unwrap_or_else(|e| panic!("{what}: call {i} arguments are not JSON ({e}): {}", g.3));
            assert_eq!(got_args, w["arguments"], "{what}: arguments of call {i}");
        }
    }
    if !case["differs"].is_null() {
        assert!(case["differs"].as_str().is_some_and(|s| !s.is_empty()), "{what}: `differs` must give the reason");
    }
}

#[test]
fn peer_cases_give_what_vllm_and_sglang_give() {
    let mut n = 0;
    for (file, v) in files() {
        for case in v["cases"].as_array().unwrap_or_else(|| panic!("{file}: no cases")) {
            check_case(&file, case);
            n += 1;
        }
    }
    eprintln!("parser peer cases: {n}");
}

#[test]
fn every_peer_case_names_registered_parsers_and_its_source() {
    for (file, v) in files() {
        for case in v["cases"].as_array().unwrap() {
            let name = case["name"].as_str().unwrap_or("?");
            assert!(case["source"].as_str().is_some_and(|s| !s.is_empty()), "{file}: {name}: no source");
            if let Some(t) = case["tool_parser"].as_str() {
                assert!(tool_parser_names().contains(&t), "{file}: {name}: unknown tool parser {t}");
            }
            if let Some(r) = case["reasoning_parser"].as_str() {
                assert!(reasoning_parser_names().contains(&r), "{file}: {name}: unknown reasoning parser {r}");
            }
        }
    }
}

//! The tool-calling case catalogue over every registered tool parser, and format variants.

use super::fixtures::*;
use super::*;

struct Tally {
    run: usize,
    skipped: Vec<String>,
}

fn expect_calls(fx: &Fx, calls: &[(&str, &str)], got: &Merged, case: &str) {
    assert_eq!(got.calls.len(), calls.len(), "{}: {case}: calls {got:?}", fx.name);
    for (i, ((n, a), g)) in calls.iter().zip(&got.calls).enumerate() {
        assert_eq!(g.2, *n, "{}: {case}: name", fx.name);
        assert_eq!(g.3, expected_args(fx.mode, a), "{}: {case}: args of call {i}", fx.name);
        assert!(serde_json::from_str::<serde_json::Value>(&g.3).is_ok(), "{}: {case}: args are JSON", fx.name);
        if fx.native_ids {
            assert_eq!(g.1, format!("functions.{n}:{i}"), "{}: native id", fx.name);
        } else {
            assert!(g.1.starts_with("call_") && g.1.len() == 29, "{}: id {}", fx.name, g.1);
        }
    }
    let mut ids: Vec<&String> = got.calls.iter().map(|c| &c.1).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), got.calls.len(), "{}: {case}: ids are distinct", fx.name);
}

fn run_case(fx: &Fx, t: &mut Tally, case: &str, text: &str, calls: &[(&str, &str)], content: &str) {
    let o = opts(Some(tools_for(calls)));
    let got = check_splits(Some(fx.name), None, &o, text);
    expect_calls(fx, calls, &got, case);
    assert_eq!(got.content, content, "{}: {case}: content", fx.name);
    assert_eq!(got.reasoning, "", "{}: {case}", fx.name);
    t.run += 1;
}

#[test]
fn every_tool_parser_passes_the_conformance_suite() {
    let fxs = fixtures();
    // the fixture list covers every registered name (aliases included)
    for n in tool_parser_names() {
        assert!(fxs.iter().any(|f| f.name == n), "no conformance fixture for tool parser {n}");
    }
    let mut t = Tally { run: 0, skipped: Vec::new() };
    for fx in &fxs {
        let r = fx.render;
        // plain text and empty input
        let plain = "Hello, world! 你好 🦀 — no calls here; a < b and c > d.";
        run_case(fx, &mut t, "plain text", plain, &[], plain);
        run_case(fx, &mut t, "empty input", "", &[], "");
        // single call, parallel calls, duplicate names, empty args, value types
        let one = [("get_weather", WEATHER)];
        run_case(fx, &mut t, "single call", &r(&one), &one, "");
        let two = [("get_weather", WEATHER), ("get_time", TIME)];
        run_case(fx, &mut t, "parallel calls", &r(&two), &two, "");
        let dup = [("get_weather", WEATHER), ("get_weather", r#"{"location": "Paris", "unit": "celsius"}"#)];
        run_case(fx, &mut t, "duplicate names", &r(&dup), &dup, "");
        let empty = [("ping", "{}")];
        run_case(fx, &mut t, "empty arguments", &r(&empty), &empty, "");
        let types = [("typed", TYPES)];
        run_case(fx, &mut t, "value types, escapes, unicode, big integers", &r(&types), &types, "");
        // narration around calls
        if fx.narration_before {
            let text = format!("Let me check that for you. {}", r(&one));
            run_case(fx, &mut t, "narration before", &text, &one, "Let me check that for you. ");
        } else {
            t.skipped.push(format!("{}: narration before: the format is a bare value that must start the output", fx.name));
        }
        let after = format!("{} Done.", r(&one));
        run_case(fx, &mut t, "text after", &after, &one, " Done.");
        // markers inside strings
        match fx.marker_in_string {
            Ok(m) => {
                let a = format!("{{\"text\": \"use {m} here\"}}");
                let c = [("echo", a.as_str())];
                run_case(fx, &mut t, "marker inside a string", &r(&c), &c, "");
            }
            Err(reason) => t.skipped.push(format!("{}: marker inside a string: {reason}", fx.name)),
        }
        // missing end markers
        match fx.unclosed {
            Some((end, recovers)) => {
                let full = r(&one);
                let text = full.strip_suffix(end).expect("fixture ends with its end marker").to_string();
                if recovers {
                    run_case(fx, &mut t, "missing end marker (recovered)", &text, &one, "");
                } else {
                    let content = strip_drops(&text, fx.drops);
                    run_case(fx, &mut t, "missing end marker (content)", &text, &[], &content);
                }
            }
            None => t.skipped.push(format!("{}: missing end marker: the format has no end marker (alias or value-delimited)", fx.name)),
        }
        // truncated inside the arguments: never a call with invalid JSON arguments (streaming
        // formats hold a call until its arguments close); the text is content, nothing lost
        let full = r(&one);
        let cut = full.find("Tokyo").unwrap() + 3;
        let text = &full[..cut];
        let o = opts(Some(tools_for(&one)));
        let got = check_splits(Some(fx.name), None, &o, text);
        assert!(got.calls.is_empty(), "{}: truncated args invent no call: {got:?}", fx.name);
        // (harmony never shows header markup: the message body is the text)
        let kept = if fx.name == "harmony" { &text[text.find("<|message|>").unwrap() + 11..] } else { text };
        assert_eq!(got.content, strip_drops(kept, fx.drops), "{}: truncated text is kept", fx.name);
        t.run += 1;
        // malformed input never panics, and streaming still equals batch
        for bad in [
            full.replace("Tokyo\"", "Tokyo"),
            full.replace(':', ""),
            full.replace("get_weather", ""),
            full.replace('{', "[").replace('}', "]"),
            format!("{full}{full}"),
            full.chars().rev().collect(),
        ] {
            check_splits(Some(fx.name), None, &o, &bad);
            t.run += 1;
        }
    }
    eprintln!("tool conformance: {} cases run; {} reasoned skips:", t.run, t.skipped.len());
    for s in &t.skipped {
        eprintln!("  skip {s}");
    }
}

// ------------------------------------------------------------------------------------
// format variants (family-specific shapes)

fn one_call(tool: &str, text: &str) -> Merged {
    check_splits(Some(tool), None, &opts(None), text)
}

#[test]
fn format_variants() {
    let m = one_call("mistral", r#"[TOOL_CALLS]get_weather[ARGS]{"location": "Tokyo"}"#);
    assert_eq!((m.calls[0].2.as_str(), m.calls[0].3.as_str()), ("get_weather", r#"{"location": "Tokyo"}"#));
    let m = one_call("mistral", r#"[TOOL_CALLS]a[ARGS]{"x": 1}[TOOL_CALLS]b[CALL_ID]abc123[ARGS]{}"#);
    assert_eq!(m.calls.len(), 2);
    assert_eq!(m.calls[1].2, "b");
    let m = one_call("llama3_json", r#"<|python_tag|>{"name": "f", "parameters": {"a": 1}}"#);
    assert_eq!(m.calls[0].3, r#"{"a": 1}"#);
    let m = one_call("llama3_json", r#"{"name": "f", "arguments": {"a": 1}}"#);
    assert_eq!(m.calls.len(), 1);
    // a JSON answer that is not a call stays content
    let m = one_call("llama3_json", r#"{"answer": 42}"#);
    assert_eq!((m.calls.len(), m.content.as_str()), (0, r#"{"answer": 42}"#));
    let m = one_call("pythonic", "[1, 2, 3] are numbers");
    assert_eq!((m.calls.len(), m.content.as_str()), (0, "[1, 2, 3] are numbers"));
    let m = one_call("pythonic", "[get_weather(city='San Francisco', days=3, ok=True, t=(1, 2))]");
    assert_eq!(m.calls[0].3, r#"{"city":"San Francisco","days":3,"ok":true,"t":[1,2]}"#);
    let m = one_call("llama4_pythonic", "<|python_start|>[f(a=1)]<|python_end|>");
    assert_eq!(m.calls[0].3, r#"{"a":1}"#);
    let m = one_call("kimi_k2", "<|tool_call_section_begin|><|tool_call_begin|>functions.f:3<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_call_section_end|>");
    assert_eq!((m.calls[0].1.as_str(), m.calls[0].2.as_str(), m.content.as_str()), ("functions.f:3", "f", ""));
    let m = one_call("granite", r#"<tool_call>[{"name": "f", "arguments": {"a": 1}}]"#);
    assert_eq!(m.calls[0].3, r#"{"a": 1}"#);
    let m = one_call("xlam", "```json\n[{\"name\": \"f\", \"arguments\": {\"a\": 1}}]\n```");
    assert_eq!(m.calls[0].3, r#"{"a": 1}"#);
    let m = one_call("hermes", r#"<tool_call>{"name": "f", "arguments": "{\"a\": 1}"}</tool_call>"#);
    assert_eq!(m.calls[0].3, r#"{"a": 1}"#, "stringified arguments are unwrapped");
    // each DSML generation reads only its own block (vLLM and SGLang agree): V4's block
    // under the V3.2 parser is text
    let v4_block = "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"n\" string=\"false\">5</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>";
    let m = check_splits(Some("deepseek_v3_2"), None, &opts(None), v4_block);
    assert!(m.calls.is_empty() && m.content == v4_block, "V4 block under deepseek_v3_2: {m:?}");
    let m = one_call("deepseek_v4", v4_block);
    assert_eq!(m.calls[0].3, r#"{"n":5}"#);
    // qwen3_coder without schema: values are strings (vLLM and SGLang agree: an undeclared
    // parameter is returned as its text)
    let m = one_call("qwen3_coder", "<tool_call>\n<function=f>\n<parameter=zip>\n02134\n</parameter>\n<parameter=n>\n12\n</parameter>\n</function>\n</tool_call>");
    assert_eq!(m.calls[0].3, r#"{"zip":"02134","n":"12"}"#);
    // with schema: declared string stays a string
    let tools = r#"[{"type":"function","function":{"name":"f","parameters":{"properties":{"n":{"type":"string"}}}}}]"#;
    let m = check_splits(Some("qwen3_coder"), None, &opts(Some(tools.into())), "<function=f>\n<parameter=n>\n12\n</parameter>\n</function>");
    assert_eq!(m.calls[0].3, r#"{"n":"12"}"#);
    // hermes: whitespace between and after calls is syntax; narration between calls is kept
    let m = one_call("hermes", "<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>\n\n<tool_call>{\"name\":\"b\",\"arguments\":{}}</tool_call>\n");
    assert_eq!((m.calls.len(), m.content.as_str()), (2, ""));
    let m = one_call("hermes", "<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call> and then <tool_call>{\"name\":\"b\",\"arguments\":{}}</tool_call>");
    assert_eq!((m.calls.len(), m.content.as_str()), (2, " and then "));
    // unknown names list the valid ones
    let e = OutputParser::new(Some("nope"), None, &opts(None)).err().unwrap().to_string();
    assert!(e.contains("hermes") && e.contains("qwen3_coder"), "{e}");
    let e = OutputParser::new(None, Some("nope"), &opts(None)).err().unwrap().to_string();
    assert!(e.contains("deepseek_r1"), "{e}");
}


// ------------------------------------------------------------------------------------
// request contracts: parallel_tool_calls and the offered functions

#[test]
fn parallel_tool_calls_false_and_unoffered_functions() {
    let two = [("get_weather", WEATHER), ("get_time", TIME)];
    for fx in fixtures() {
        let text = (fx.render)(&two);
        // parallel_tool_calls: false keeps the first call only (vLLM), at every split point
        let o = ParserOptions { max_tool_calls: Some(1), ..opts(Some(tools_for(&two))) };
        let got = check_splits(Some(fx.name), None, &o, &text);
        assert_eq!(got.calls.len(), 1, "{}: at most one call: {got:?}", fx.name);
        assert_eq!(got.calls[0].2, "get_weather", "{}", fx.name);
        // a call to a function not in `tools` is not a tool call (SGLang): its text is content
        let one = [("get_weather", WEATHER)];
        let text = (fx.render)(&one);
        let o = ParserOptions { only_offered_functions: true, ..opts(Some(tools_for(&[("other", "{}")]))) };
        let got = check_splits(Some(fx.name), None, &o, &text);
        assert!(got.calls.is_empty(), "{}: unoffered function is no call: {got:?}", fx.name);
        assert!(got.content.contains("Tokyo"), "{}: its text is content: {got:?}", fx.name);
        // (the /parse endpoints do not restrict: the call is reported)
        let o = opts(Some(tools_for(&[("other", "{}")])));
        assert_eq!(check_splits(Some(fx.name), None, &o, &text).calls.len(), 1, "{}: unrestricted", fx.name);
    }
}

//! Reasoning parsers, reasoning then tool calls, harmony channels, PRE.3 / PRE.4 / PRE.6.

use super::*;

// ------------------------------------------------------------------------------------
// reasoning

fn wrap(name: &str, r: &str, c: &str) -> String {
    let (s, e) = match name {
        "kimi" => ("◁think▷", "◁/think▷"),
        "mistral" => ("[THINK]", "[/THINK]"),
        "granite" => ("Here is my thought process:", "Here is my response:"),
        "gemma4" => ("<|channel>thought\n", "<channel|>"),
        "minimax_m3" => ("<mm:think>", "</mm:think>"),
        "cohere_command" | "cohere" => ("<|START_THINKING|>", "<|END_THINKING|><|START_RESPONSE|>"),
        "gpt_oss" => ("<|channel|>analysis<|message|>", "<|end|><|start|>assistant<|channel|>final<|message|>"),
        _ => ("<think>", "</think>"),
    };
    format!("{s}{r}{e}{c}")
}

#[test]
fn every_reasoning_parser_passes_the_conformance_suite() {
    let mut run = 0;
    for name in reasoning_parser_names() {
        let o = opts(None);
        let entry = registry::reasoning_entry(name).unwrap();
        let (forced, pass) = match entry.spec {
            reasoning::Spec::Markers(m) => (m.forced, m.pass_through_prefix.is_some()),
            reasoning::Spec::Harmony => (false, false),
        };
        let r = "Let me think: 2 + 2 = 4 — 日本語 🦀 <b>not a marker</b>";
        let c = "The answer is 4.";
        let text = wrap(name, r, c);
        let got = check_splits(None, Some(name), &o, &text);
        if pass {
            assert_eq!(got.content, format!("<think>{text}"), "{name}: legacy pass-through");
            run += 1;
            continue;
        }
        assert_eq!((got.reasoning.as_str(), got.content.as_str()), (r, c), "{name}: reasoning then content");
        // plain text: content for optional parsers, reasoning for forced ones
        let plain = "Just an answer.";
        let got = check_splits(None, Some(name), &o, plain);
        let want = if forced { (plain, "") } else { ("", plain) };
        assert_eq!((got.reasoning.as_str(), got.content.as_str()), want, "{name}: plain text");
        // truncated inside reasoning: everything so far is reasoning
        let cut = &text[..text.find("2 + 2").unwrap()];
        let got = check_splits(None, Some(name), &o, cut);
        assert_eq!(got.content, "", "{name}: truncated");
        assert_eq!(got.reasoning, "Let me think: ", "{name}: truncated");
        // empty input
        assert_eq!(check_splits(None, Some(name), &o, ""), Merged::default());
        run += 4;
        // prompt-opened reasoning: an end marker nothing opened (qwen3's implicit start)
        if matches!(entry.spec, reasoning::Spec::Markers(m) if m.implicit_start) {
            let text = format!("{r}</think>{c}");
            let got = check_splits(None, Some(name), &o, &text);
            assert_eq!((got.reasoning.as_str(), got.content.as_str()), (r, c), "{name}: implicit start");
            // the prompt closed the block: no hold, a stray end marker is dropped
            let closed = ParserOptions { prompt_closed_reasoning: true, ..opts(None) };
            let got = check_splits(None, Some(name), &closed, &text);
            assert_eq!((got.reasoning.as_str(), got.content.as_str()), ("", format!("{r}{c}").as_str()), "{name}: closed");
            let mut p = OutputParser::new(None, Some(name), &closed).unwrap();
            assert_eq!(p.push("Hi"), vec![Delta::Content("Hi".into())], "{name}: closed prompt streams at once");
            // undecided: held until a marker or the end decides
            let mut p = OutputParser::new(None, Some(name), &o).unwrap();
            assert_eq!(p.push("Hi"), vec![], "{name}: held");
            assert_eq!(p.finish(), vec![Delta::Content("Hi".into())], "{name}: end decides content");
            run += 3;
        }
    }
    eprintln!("reasoning conformance: {run} cases run");
}

#[test]
fn prompt_injected_and_forced_reasoning() {
    // PRE.3: qwen3 with a template-injected <think>: starts in reasoning, no start marker
    let o = ParserOptions { prompt_injected_reasoning: true, ..opts(None) };
    let m = check_splits(None, Some("qwen3"), &o, "thinking...</think>\n\nAnswer");
    assert_eq!((m.reasoning.as_str(), m.content.as_str()), ("thinking...", "\n\nAnswer"));
    // forced parser and the model repeating <think>: the marker is dropped
    let m = check_splits(None, Some("deepseek_r1"), &opts(None), "<think>\nhmm</think>ok");
    assert_eq!((m.reasoning.as_str(), m.content.as_str()), ("\nhmm", "ok"));
    // a stray end marker in content never leaks
    let m = check_splits(None, Some("basic"), &opts(None), "a</think>b");
    assert_eq!(m.content, "ab");
}

#[test]
fn reasoning_then_tool_calls() {
    let o = opts(None);
    let text = "<think>I should call the tool.</think>Sure.<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>";
    let m = check_splits(Some("hermes"), Some("qwen3"), &o, text);
    assert_eq!(m.reasoning, "I should call the tool.");
    assert_eq!(m.content, "Sure.");
    assert_eq!(m.calls[0].3, r#"{"a": 1}"#);
    // a tool marker inside reasoning is reasoning, not a call
    let text = "<think>maybe <tool_call>{\"name\":\"x\",\"arguments\":{}}</tool_call>?</think>No call.";
    let m = check_splits(Some("hermes"), Some("qwen3"), &o, text);
    assert!(m.calls.is_empty());
    assert_eq!(m.content, "No call.");
    // DeepSeek R1 forced reasoning + V3 calls
    let text = "plan</think>\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": 1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    let m = check_splits(Some("deepseek_v3"), Some("deepseek_r1"), &o, text);
    assert_eq!((m.reasoning.as_str(), m.calls.len()), ("plan", 1));
    // minimax_m2 reasoning + tool
    let text = "ok</think>\n<minimax:tool_call>\n<invoke name=\"f\">\n<parameter name=\"a\">1</parameter>\n</invoke>\n</minimax:tool_call>";
    let m = check_splits(Some("minimax_m2"), Some("minimax_m2"), &o, text);
    assert_eq!((m.reasoning.as_str(), m.content.as_str(), m.calls[0].3.as_str()), ("ok", "\n", r#"{"a":1}"#));
}

#[test]
fn harmony_channels() {
    let o = opts(None);
    let text = "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\": \"Tokyo\"}<|call|>";
    let m = check_splits(Some("harmony"), Some("gpt_oss"), &o, text);
    assert_eq!(m.reasoning, "Need weather.");
    assert_eq!((m.calls[0].2.as_str(), m.calls[0].3.as_str()), ("get_weather", r#"{"location": "Tokyo"}"#));
    let text = "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Hello!<|return|>";
    let m = check_splits(None, Some("gpt_oss"), &o, text);
    assert_eq!((m.reasoning.as_str(), m.content.as_str()), ("Think.", "Hello!"));
    // markers stripped (skip_special_tokens=true): plain content, nothing lost
    let m = check_splits(Some("harmony"), Some("gpt_oss"), &o, "analysisThink.assistantfinalHello!");
    assert_eq!(m.content, "analysisThink.assistantfinalHello!");
}

#[test]
fn pre4_guided_json_and_pre6() {
    // required: bare array of calls
    let o = ParserOptions { tool_choice: ToolChoice::Required, ..opts(None) };
    let m = check_splits(Some("hermes"), None, &o, r#"[{"name": "f", "parameters": {"a": 1}}, {"name": "g", "parameters": {}}]"#);
    assert_eq!(m.calls.len(), 2);
    assert_eq!(m.calls[0].3, r#"{"a": 1}"#);
    // shape-aware reasoning: bare JSON is not reasoning; reasoning</think>JSON is split
    let m = check_splits(None, Some("nemotron_nano"), &o, r#" [{"name": "f", "parameters": {}}]"#);
    assert_eq!((m.reasoning.as_str(), m.calls.len()), ("", 1));
    let m = check_splits(None, Some("nemotron_nano"), &o, r#"think first</think>[{"name": "f", "parameters": {}}]"#);
    assert_eq!((m.reasoning.as_str(), m.calls.len()), ("think first", 1));
    // non-shape-aware forced parser is bypassed on guided JSON
    let m = check_splits(None, Some("deepseek_r1"), &o, r#"[{"name": "f", "parameters": {}}]"#);
    assert_eq!((m.reasoning.as_str(), m.calls.len()), ("", 1));
    // named: the output is the arguments object, streamed as it arrives
    let o = ParserOptions { tool_choice: ToolChoice::Named("get_weather".into()), ..opts(None) };
    let m = check_splits(Some("hermes"), None, &o, "  {\"location\": \"Tokyo\"}\n");
    assert_eq!((m.calls[0].2.as_str(), m.calls[0].3.as_str()), ("get_weather", r#"{"location": "Tokyo"}"#));
    let mut p = OutputParser::new(Some("hermes"), None, &o).unwrap();
    let d = p.push("{\"loc");
    assert!(matches!(&d[..], [Delta::ToolStart { .. }, Delta::ToolArgs { .. }]), "named args stream: {d:?}");
    // tool_choice none: markers are content
    let o = ParserOptions { tool_choice: ToolChoice::None, ..opts(None) };
    let t = "<tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call>";
    assert_eq!(check_splits(Some("hermes"), None, &o, t).content, t);
    // PRE.6: disabled Nemotron strips only a leading <think>, split prefixes included
    let o = ParserOptions { reasoning_disabled: true, ..opts(None) };
    let m = check_splits(None, Some("nemotron_nano"), &o, "<think>answer");
    assert_eq!((m.reasoning.as_str(), m.content.as_str()), ("", "answer"));
    let m = check_splits(None, Some("nemotron_v3"), &o, "<thx");
    assert_eq!(m.content, "<thx");
    // PRE.2 disabled (non-Nemotron): no reasoning parser runs
    let m = check_splits(None, Some("deepseek_r1"), &o, "<think>x</think>y");
    assert_eq!(m.content, "<think>x</think>y");
}


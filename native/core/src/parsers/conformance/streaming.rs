//! Calls go out whole: for every streaming format the reader reads a call region as it
//! arrives, but its calls (id, name and arguments) are released together when the region
//! closes and every call in it has one complete JSON arguments value (Dynamo's tool-call
//! jail emits whole calls too). A region whose arguments never complete, or stop being
//! JSON, is content byte for byte (vLLM's fallback), so no client ever receives a call with
//! invalid JSON arguments, streaming or unary (`check_splits` covers every split point).

use super::fixtures::*;
use super::*;

/// Feeds `text` one char at a time; returns, per call, the input offset at which its
/// `ToolStart` went out and, for every arguments byte, the input offset at which it went out.
fn timeline(tool: &str, o: &ParserOptions, text: &str) -> Vec<(usize, Vec<usize>)> {
    let mut p = OutputParser::new(Some(tool), None, o).unwrap();
    let mut calls: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut fed = 0;
    let note = |ds: Vec<Delta>, at: usize, calls: &mut Vec<(usize, Vec<usize>)>| {
        for d in ds {
            match d {
                Delta::ToolStart { index, .. } => {
                    assert_eq!(index as usize, calls.len());
                    calls.push((at, Vec::new()));
                }
                Delta::ToolArgs { index, text } => {
                    calls[index as usize].1.extend(std::iter::repeat_n(at, text.len()));
                }
                _ => {}
            }
        }
    };
    for ch in text.chars() {
        fed += ch.len_utf8();
        let ds = p.push(&text[fed - ch.len_utf8()..fed]);
        note(ds, fed, &mut calls);
    }
    let ds = p.finish();
    note(ds, usize::MAX, &mut calls);
    calls
}

#[test]
fn calls_go_out_whole_once_their_arguments_close_for_every_json_format() {
    let two = [("get_weather", r#"{"location": "Tokyo", "unit": "celsius"}"#), ("get_time", r#"{"tz": [1, {"k": "}"}], "n": 1.0}"#)];
    let mut checked = 0;
    for fx in fixtures() {
        if !fx.streams() || fx.streams_params() {
            continue;
        }
        let text = (fx.render)(&two);
        let o = opts(None);
        let want = check_splits(Some(fx.name), None, &o, &text);
        assert_eq!(want.calls.len(), 2, "{}", fx.name);
        let tl = timeline(fx.name, &o, &text);
        let mut from = 0;
        for (k, (name, args)) in two.iter().enumerate() {
            let at = from + text[from..].find(args).unwrap_or_else(|| panic!("{}: args in text", fx.name));
            let (start_at, bytes) = &tl[k];
            assert_eq!(want.calls[k].2, *name);
            assert_eq!(bytes.len(), args.len(), "{}: call {k} args length", fx.name);
            // nothing of the call goes out before its arguments closed; then all of it at once
            assert!(*start_at >= at + args.len(), "{}: call {k} started at {start_at}, args close at {}", fx.name, at + args.len());
            assert!(bytes.iter().all(|b| b == start_at), "{}: call {k} released in one piece", fx.name);
            from = at + args.len();
        }
        checked += 1;
    }
    assert!(checked >= 17, "every JSON-argument format checked, got {checked}");
}

#[test]
fn kimi_keeps_native_ids() {
    let text = "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|><|tool_calls_section_end|>";
    let mut p = OutputParser::new(Some("kimi_k2"), None, &opts(None)).unwrap();
    let cut = text.find("Par").unwrap();
    assert_eq!(p.push(&text[..cut]), vec![]);
    let mut d = p.push(&text[cut..]);
    d.extend(p.finish());
    assert_eq!(
        d,
        vec![
            Delta::ToolStart { index: 0, id: "functions.get_weather:0".into(), name: "get_weather".into() },
            Delta::ToolArgs { index: 0, text: "{\"city\": \"Paris\"}".into() },
        ]
    );
}

#[test]
fn streamed_calls_follow_the_written_rules() {
    // name after the arguments: cannot stream; read whole when the object closes
    let m = check_splits(Some("hermes"), None, &opts(None), r#"<tool_call>{"arguments": {"a": 1}, "name": "f"}</tool_call>"#);
    assert_eq!((m.calls[0].2.as_str(), m.calls[0].3.as_str()), ("f", r#"{"a": 1}"#));
    // arguments stop being JSON: no call, the region is content and what follows is kept
    let bad = r#"<tool_call>{"name": "f", "arguments": {"a": 1 2}}</tool_call>after"#;
    let m = check_splits(Some("hermes"), None, &opts(None), bad);
    assert_eq!((m.calls.len(), m.content.as_str()), (0, bad));
    // a later good call still is a call
    let two = format!("{bad} <tool_call>{{\"name\": \"g\", \"arguments\": {{}}}}</tool_call>");
    let m = check_splits(Some("hermes"), None, &opts(None), &two);
    assert_eq!((m.calls.len(), m.content.as_str()), (1, format!("{bad} ").as_str()));
    // the JSON never completes (max_tokens): content, streaming and batch alike
    let cut = r#"Sure. <tool_call>{"name": "f", "arguments": {"a": [1, 2"#;
    let m = check_splits(Some("hermes"), None, &opts(None), cut);
    assert_eq!((m.calls.len(), m.content.as_str()), (0, cut));
    // members after the arguments are read, not streamed; a later call in the array streams too
    let m = check_splits(Some("nemotron_deci"), None, &opts(None), r#"<TOOLCALL>[{"name": "f", "arguments": {}, "id": "x"}, {"name": "g", "parameters": {"b": [true]}}]</TOOLCALL>"#);
    assert_eq!(m.calls.iter().map(|c| (c.2.as_str(), c.3.as_str())).collect::<Vec<_>>(), vec![("f", "{}"), ("g", r#"{"b": [true]}"#)]);
    // guided required: the array's calls go out when it closes
    let o = ParserOptions { tool_choice: ToolChoice::Required, ..opts(None) };
    let mut p = OutputParser::new(None, None, &o).unwrap();
    assert_eq!(p.push(r#"[{"name": "f", "parameters": {"lo"#), vec![]);
    let d = p.push(r#"c": 1}}]"#);
    assert!(matches!(&d[..], [Delta::ToolStart { .. }, Delta::ToolArgs { text, .. }] if text == "{\"loc\": 1}"), "{d:?}");
}

#[test]
fn xml_parameters_stream_one_by_one() {
    let tools = r#"[{"type":"function","function":{"name":"f","parameters":{"properties":{"n":{"type":"string"}}}}}]"#;
let o = opts(Some(tools.into()));
    let text = "<tool_call>\n<function=f>\n<parameter=city>\nParis\n</parameter>\n<parameter=n>\n12\n</parameter>\n<parameter=city>\ndup\n</parameter>\n</function>\n<function=g>\n</function>\n</tool_call>";
    let want = check_splits(Some("qwen3_coder"), None, &o, text);
    assert_eq!(want.calls.iter().map(|c| (c.2.as_str(), c.3.as_str())).collect::<Vec<_>>(), vec![("f", r#"{"city":"Paris","n":"12"}"#), ("g", "{}")]);
    // nothing goes out before the region closes, then the calls in one piece
    let mut p = OutputParser::new(Some("qwen3_coder"), None, &o).unwrap();
    let last = text.len() - 1;
    assert_eq!(p.push(&text[..last]), vec![]);
    let d = p.push(&text[last..]);
    assert_eq!(d.iter().filter(|d| matches!(d, Delta::ToolStart { .. })).count(), 2, "{d:?}");
    // a call cut inside its parameters is content, not `{` plus what closed
    let cut = &text[..text.find("12").unwrap()];
    let m = check_splits(Some("qwen3_coder"), None, &o, cut);
    assert_eq!((m.calls.len(), m.content.as_str()), (0, cut));
}

#[test]
fn other_xml_like_formats_stream_parameters_one_by_one() {
    let tools = r#"[{"type":"function","function":{"name":"f","parameters":{"properties":{"n":{"type":"string"}}}}}]"#;
    let o = opts(Some(tools.into()));
    let ns = "]<]minimax[>[";
    let m3 = format!(
        "{ns}<tool_call>{ns}<invoke name=\"f\">\n{ns}<city>Paris{ns}</city>\n{ns}<n>12{ns}</n>\n{ns}</invoke>{ns}</tool_call>"
    );
    // (parser, text, end of the call head, end of the first parameter, arguments)
    let cases: Vec<(&str, String, &str, &str, &str)> = vec![
        ("minimax_m2", "<minimax:tool_call>\n<invoke name=\"f\">\n<parameter name=\"city\">Paris</parameter>\n<parameter name=\"n\">12</parameter>\n</invoke>\n</minimax:tool_call>".into(),
            "<invoke name=\"f\">", "Paris</parameter>", r#"{"city":"Paris","n":"12"}"#),
        ("minimax_m3", m3, "<invoke name=\"f\">", "Paris]<]minimax[>[</city>", r#"{"city":"Paris","n":"12"}"#),
        ("glm47", "<tool_call>f<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>n</arg_key><arg_value>12</arg_value></tool_call>".into(),
            "f<arg_key>", "Paris</arg_value>", r#"{"city":"Paris","n":"12"}"#),
        ("glm45", "<tool_call>f\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>n</arg_key>\n<arg_value>12</arg_value>\n</tool_call>".into(),
            "f\n<arg_key>", "Paris</arg_value>", r#"{"city":"Paris","n":"12"}"#),
        ("step3", "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"f\"><steptml:parameter name=\"city\">Paris</steptml:parameter><steptml:parameter name=\"n\">12</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>".into(),
            "<steptml:invoke name=\"f\">", "Paris</steptml:parameter>", r#"{"city":"Paris","n":"12"}"#),
        ("deepseek_v3_2", "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n<｜DSML｜parameter name=\"n\" string=\"false\">12</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>".into(),
            "<｜DSML｜invoke name=\"f\">", "Paris</｜DSML｜parameter>", r#"{"city":"Paris","n":12}"#),
    ];
    for (parser, text, head, first, args) in &cases {
        let want = check_splits(Some(parser), None, &o, text);
        assert_eq!(want.calls.iter().map(|c| (c.2.as_str(), c.3.as_str())).collect::<Vec<_>>(), vec![("f", *args)], "{parser}");
        assert_eq!(want.content, "", "{parser}");
        let at = |s: &str| text.find(s).unwrap() + s.len();
        // read as it arrives, released only when the call closed
        let mut p = OutputParser::new(Some(parser), None, &o).unwrap();
        let d = p.push(&text[..at(first)]);
        assert!(!d.iter().any(|d| matches!(d, Delta::ToolStart { .. })), "{parser}: {d:?}");
        let _ = head;
    }
}

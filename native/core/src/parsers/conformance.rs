//! The shared conformance suite: every registered parser runs every case family of the
//! tool-calling case catalogue, with explicit, reasoned skips. Every case is also run
//! split at every char boundary, at every byte (push_bytes), and at random multi-splits:
//! the merged result must equal the batch result.

use super::json;
use super::values::{json_string, ArgsBuilder};
use super::*;

// ------------------------------------------------------------------------------------
// merged view of a delta stream

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Merged {
    pub content: String,
    pub reasoning: String,
    /// (index, id, name, args)
    pub calls: Vec<(u32, String, String, String)>,
}

pub fn merge(ds: &[Delta]) -> Merged {
    let mut m = Merged::default();
    for d in ds {
        match d {
            Delta::Content(s) => m.content.push_str(s),
            Delta::Reasoning(s) => m.reasoning.push_str(s),
            Delta::ToolStart { index, id, name } => {
                assert_eq!(*index as usize, m.calls.len(), "indexes are dense and ordered");
                m.calls.push((*index, id.clone(), name.clone(), String::new()))
            }
            Delta::ToolArgs { index, text } => {
                let c = m.calls.iter_mut().find(|c| c.0 == *index).expect("args after start");
                c.3.push_str(text);
            }
        }
    }
    m
}

pub fn opts(tools_json: Option<String>) -> ParserOptions {
    ParserOptions { id_seed: Some(7), tools_json, ..Default::default() }
}

pub fn batch(tool: Option<&str>, reasoning: Option<&str>, o: &ParserOptions, text: &str) -> Merged {
    merge(&parse_all(tool, reasoning, o, text).unwrap())
}

fn run_chunks(tool: Option<&str>, reasoning: Option<&str>, o: &ParserOptions, chunks: &[&str]) -> Merged {
    let mut p = OutputParser::new(tool, reasoning, o).unwrap();
    let mut all = Vec::new();
    for c in chunks {
        all.extend(p.push(c));
    }
    all.extend(p.finish());
    merge(&all)
}

pub struct Rng(u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Batch == every single split point == every byte split == random multi-splits.
pub fn check_splits(tool: Option<&str>, reasoning: Option<&str>, o: &ParserOptions, text: &str) -> Merged {
    let want = batch(tool, reasoning, o, text);
    let bounds: Vec<usize> = (1..text.len()).filter(|i| text.is_char_boundary(*i)).collect();
    for &i in &bounds {
        let got = run_chunks(tool, reasoning, o, &[&text[..i], &text[i..]]);
        assert_eq!(got, want, "{tool:?}/{reasoning:?}: split at {i} of {text:?}");
    }
    // byte-level splits (inside multi-byte characters)
    for i in 1..text.len() {
        let mut p = OutputParser::new(tool, reasoning, o).unwrap();
        let mut all = p.push_bytes(&text.as_bytes()[..i]);
        all.extend(p.push_bytes(&text.as_bytes()[i..]));
        all.extend(p.finish());
        assert_eq!(merge(&all), want, "{tool:?}/{reasoning:?}: byte split at {i} of {text:?}");
    }
    // one char per push (token-like), and random multi-splits
    let chars: Vec<String> = text.chars().map(|c| c.to_string()).collect();
    let refs: Vec<&str> = chars.iter().map(|s| s.as_str()).collect();
    assert_eq!(run_chunks(tool, reasoning, o, &refs), want, "{tool:?}/{reasoning:?}: char by char {text:?}");
    let mut rng = Rng(0x9E37_79B9 ^ text.len() as u64);
    for _ in 0..20 {
        let mut cuts: Vec<usize> = (0..rng.below(6) + 1).map(|_| bounds.get(rng.below(bounds.len())).copied().unwrap_or(0)).collect();
        cuts.sort();
        cuts.dedup();
        let mut parts = Vec::new();
        let mut last = 0;
        for c in cuts {
            parts.push(&text[last..c]);
            last = c;
        }
        parts.push(&text[last..]);
        assert_eq!(run_chunks(tool, reasoning, o, &parts), want, "{tool:?}/{reasoning:?}: random split {parts:?}");
    }
    want
}

// ------------------------------------------------------------------------------------
// fixtures: how each tool format writes calls

/// How the expected arguments text relates to the JSON written in the case.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ArgsMode {
    /// JSON families: the bytes are forwarded exactly.
    Exact,
    /// XML families: top-level members rebuilt compactly, nested values verbatim.
    TopCompact,
    /// Converted formats (pythonic, gemma4): fully compact JSON, number text kept.
    FullCompact,
}

type Render = fn(&[(&str, &str)]) -> String;

struct Fx {
    name: &'static str,
    render: Render,
    mode: ArgsMode,
    /// Text may precede the first call (false: bare formats that must start the output).
    narration_before: bool,
    /// The final marker of the rendered text, and whether removing it (truncation right
    /// before the wrapper end) still yields the calls under the family's EOF rule.
    unclosed: Option<(&'static str, bool)>,
    /// The family's end marker, placed inside a JSON string value; None = skipped (reason).
    marker_in_string: Result<&'static str, &'static str>,
    /// Kimi keeps native ids.
    native_ids: bool,
    drops: &'static [&'static str],
}

fn json_calls(calls: &[(&str, &str)], args_key: &str) -> Vec<String> {
    calls.iter().map(|(n, a)| format!("{{\"name\": \"{n}\", \"{args_key}\": {a}}}")).collect()
}

/// Members of an args object: (key, raw value text, decoded string when it is a string).
fn members(a: &str) -> Vec<(String, String, Option<String>)> {
    json::members(a).unwrap().into_iter().map(|(k, v)| (k, v.to_string(), json::decode_str(v))).collect()
}

fn xml_value(v: &(String, String, Option<String>)) -> String {
    v.2.clone().unwrap_or_else(|| v.1.clone())
}

/// Re-renders a raw JSON value (number text kept) in another literal syntax.
/// style: 0 = canonical compact JSON, 1 = Python, 2 = Gemma 4.
fn render_raw(raw: &str, style: u8) -> String {
    let t = raw.trim();
    if t.starts_with('{') {
        let ms = json::members(t).unwrap();
        let items: Vec<String> = ms
            .iter()
            .map(|(k, v)| match style {
                2 => format!("{k}:{}", render_raw(v, style)),
                1 => format!("{}: {}", json_string(k), render_raw(v, style)),
                _ => format!("{}:{}", json_string(k), render_raw(v, style)),
            })
            .collect();
        return format!("{{{}}}", items.join(if style == 1 { ", " } else { "," }));
    }
    if t.starts_with('[') {
        let els: Vec<String> = json::elements(t).unwrap().iter().map(|e| render_raw(e, style)).collect();
        return format!("[{}]", els.join(if style == 1 { ", " } else { "," }));
    }
    if let Some(d) = json::decode_str(t) {
        return if style == 2 { format!("<|\"|>{d}<|\"|>") } else { json_string(&d) };
    }
    match (style, t) {
        (1, "true") => "True".into(),
        (1, "false") => "False".into(),
        (1, "null") => "None".into(),
        _ => t.to_string(),
    }
}

fn r_hermes(c: &[(&str, &str)]) -> String {
    json_calls(c, "arguments").iter().map(|j| format!("<tool_call>\n{j}\n</tool_call>")).collect::<Vec<_>>().join("\n")
}
fn r_nemotron_deci(c: &[(&str, &str)]) -> String {
    format!("<TOOLCALL>[{}]</TOOLCALL>", json_calls(c, "arguments").join(", "))
}
fn r_llama3(c: &[(&str, &str)]) -> String {
    json_calls(c, "parameters").join("; ")
}
fn r_mistral(c: &[(&str, &str)]) -> String {
    format!("[TOOL_CALLS][{}]", json_calls(c, "arguments").join(", "))
}
fn r_phi4(c: &[(&str, &str)]) -> String {
    format!("functools[{}]", json_calls(c, "arguments").join(", "))
}
fn r_jamba(c: &[(&str, &str)]) -> String {
    format!("<tool_calls>[{}]</tool_calls>", json_calls(c, "arguments").join(", "))
}
fn r_ds3(c: &[(&str, &str)]) -> String {
    let calls: String = c
        .iter()
        .map(|(n, a)| format!("<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n{a}\n```<｜tool▁call▁end｜>"))
        .collect();
    format!("<｜tool▁calls▁begin｜>{calls}<｜tool▁calls▁end｜>")
}
fn r_ds31(c: &[(&str, &str)]) -> String {
    let calls: String = c.iter().map(|(n, a)| format!("<｜tool▁call▁begin｜>{n}<｜tool▁sep｜>{a}<｜tool▁call▁end｜>")).collect();
    format!("<｜tool▁calls▁begin｜>{calls}<｜tool▁calls▁end｜>")
}
fn dsml(c: &[(&str, &str)], block: &str) -> String {
    let mut s = format!("<｜DSML｜{block}>\n");
    for (n, a) in c {
        s.push_str(&format!("<｜DSML｜invoke name=\"{n}\">\n"));
        for m in members(a) {
            let is_str = m.2.is_some();
            s.push_str(&format!(
                "<｜DSML｜parameter name=\"{}\" string=\"{}\">{}</｜DSML｜parameter>\n",
                m.0,
                is_str,
                xml_value(&m)
            ));
        }
        s.push_str("</｜DSML｜invoke>\n");
    }
    s.push_str(&format!("</｜DSML｜{block}>"));
    s
}
fn r_ds32(c: &[(&str, &str)]) -> String {
    dsml(c, "function_calls")
}
fn r_ds4(c: &[(&str, &str)]) -> String {
    dsml(c, "tool_calls")
}
fn qwen_fn(n: &str, a: &str) -> String {
    let mut s = format!("<function={n}>\n");
    for m in members(a) {
        s.push_str(&format!("<parameter={}>\n{}\n</parameter>\n", m.0, xml_value(&m)));
    }
    s.push_str("</function>");
    s
}
fn r_qwen3(c: &[(&str, &str)]) -> String {
    c.iter().map(|(n, a)| format!("<tool_call>\n{}\n</tool_call>", qwen_fn(n, a))).collect::<Vec<_>>().join("\n")
}
fn r_seed(c: &[(&str, &str)]) -> String {
    c.iter().map(|(n, a)| format!("<seed:tool_call>\n{}\n</seed:tool_call>", qwen_fn(n, a))).collect::<Vec<_>>().join("\n")
}
fn r_mm2(c: &[(&str, &str)]) -> String {
    let mut s = String::from("<minimax:tool_call>\n");
    for (n, a) in c {
        s.push_str(&format!("<invoke name=\"{n}\">\n"));
        for m in members(a) {
            s.push_str(&format!("<parameter name=\"{}\">{}</parameter>\n", m.0, xml_value(&m)));
        }
        s.push_str("</invoke>\n");
    }
    s.push_str("</minimax:tool_call>");
    s
}
fn r_mm3(c: &[(&str, &str)]) -> String {
    let ns = "]<]minimax[>[";
    let mut s = format!("{ns}<tool_call>\n");
    for (n, a) in c {
        s.push_str(&format!("{ns}<invoke name=\"{n}\">\n"));
        for m in members(a) {
            s.push_str(&format!("{ns}<{k}>{}{ns}</{k}>\n", xml_value(&m), k = m.0));
        }
        s.push_str(&format!("{ns}</invoke>\n"));
    }
    s.push_str(&format!("{ns}</tool_call>"));
    s
}
fn glm(c: &[(&str, &str)], nl: &str) -> String {
    c.iter()
        .map(|(n, a)| {
            let mut s = format!("<tool_call>{n}{nl}");
            for m in members(a) {
                s.push_str(&format!("<arg_key>{}</arg_key>{nl}<arg_value>{}</arg_value>{nl}", m.0, xml_value(&m)));
            }
            s.push_str("</tool_call>");
            s
        })
        .collect::<Vec<_>>()
        .join("\n")
}
fn r_glm47(c: &[(&str, &str)]) -> String {
    glm(c, "")
}
fn r_glm45(c: &[(&str, &str)]) -> String {
    glm(c, "\n")
}
fn r_kimi(c: &[(&str, &str)]) -> String {
    let calls: String = c
        .iter()
        .enumerate()
        .map(|(i, (n, a))| format!("<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{a}<|tool_call_end|>"))
        .collect();
    format!("<|tool_calls_section_begin|>{calls}<|tool_calls_section_end|>")
}
fn r_harmony(c: &[(&str, &str)]) -> String {
    c.iter()
        .map(|(n, a)| format!("<|start|>assistant<|channel|>commentary to=functions.{n} <|constrain|>json<|message|>{a}<|call|>"))
        .collect()
}
fn r_pythonic(c: &[(&str, &str)]) -> String {
    let calls: Vec<String> = c
        .iter()
        .map(|(n, a)| {
            let args: Vec<String> =
                json::members(a).unwrap().iter().map(|(k, v)| format!("{k}={}", render_raw(v, 1))).collect();
            format!("{n}({})", args.join(", "))
        })
        .collect();
    format!("[{}]", calls.join(", "))
}
fn r_gemma4(c: &[(&str, &str)]) -> String {
    c.iter().map(|(n, a)| format!("<|tool_call>call:{n}{}<tool_call|>", render_raw(a, 2))).collect()
}
fn r_default(c: &[(&str, &str)]) -> String {
    r_nemotron_deci(c)
}
fn r_xlam(c: &[(&str, &str)]) -> String {
    format!("[{}]", json_calls(c, "arguments").join(", "))
}
fn r_granite(c: &[(&str, &str)]) -> String {
    format!("<|tool_call|>[{}]", json_calls(c, "arguments").join(", "))
}
fn r_internlm(c: &[(&str, &str)]) -> String {
    json_calls(c, "parameters").iter().map(|j| format!("<|action_start|><|plugin|>\n{j}<|action_end|>")).collect()
}
fn r_step3(c: &[(&str, &str)]) -> String {
    let mut s = String::from("<｜tool_calls_begin｜>");
    for (n, a) in c {
        s.push_str(&format!("<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"{n}\">"));
        for m in members(a) {
            s.push_str(&format!("<steptml:parameter name=\"{}\">{}</steptml:parameter>", m.0, xml_value(&m)));
        }
        s.push_str("</steptml:invoke><｜tool_call_end｜>");
    }
    s.push_str("<｜tool_calls_end｜>");
    s
}
fn r_cohere(c: &[(&str, &str)]) -> String {
    let items: Vec<String> = c
        .iter()
        .enumerate()
        .map(|(i, (n, a))| format!("{{\"tool_call_id\": \"{i}\", \"tool_name\": \"{n}\", \"parameters\": {a}}}"))
        .collect();
    format!("<|START_ACTION|>[{}]<|END_ACTION|>", items.join(", "))
}

const XML_SKIP: &str = "XML formats carry raw text values: an end tag inside a value is indistinguishable from the real one";
const TOKEN_SKIP: &str = "the end marker is a special token the model cannot write inside a JSON string";

fn fixtures() -> Vec<Fx> {
    use ArgsMode::*;
    let fx = |name, render, mode, narration_before, unclosed, mis, drops| Fx {
        name,
        render,
        mode,
        narration_before,
        unclosed,
        marker_in_string: mis,
        native_ids: false,
        drops,
    };
    vec![
        fx("hermes", r_hermes as Render, Exact, true, Some(("</tool_call>", true)), Ok("</tool_call>"), &[]),
        fx("qwen25", r_hermes, Exact, true, Some(("</tool_call>", true)), Ok("</tool_call>"), &[]),
        fx("nemotron_deci", r_nemotron_deci, Exact, true, Some(("</TOOLCALL>", true)), Ok("</TOOLCALL>"), &[]),
        fx("llama3_json", r_llama3, Exact, false, None, Ok("}"), &[]),
        fx("mistral", r_mistral, Exact, true, None, Ok("]"), &[]),
        fx("phi4", r_phi4, Exact, true, None, Ok("]"), &[]),
        fx("jamba", r_jamba, Exact, true, Some(("</tool_calls>", true)), Ok("</tool_calls>"), &[]),
        fx("hunyuan_a13b", r_jamba, Exact, true, Some(("</tool_calls>", true)), Ok("</tool_calls>"), &[]),
        fx("deepseek_v3", r_ds3, Exact, true, Some(("<｜tool▁calls▁end｜>", true)), Err(TOKEN_SKIP),
           &["<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"]),
        fx("deepseek_v3_1", r_ds31, Exact, true, Some(("<｜tool▁calls▁end｜>", true)), Err(TOKEN_SKIP),
           &["<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"]),
        fx("deepseek_v3_2", r_ds32, TopCompact, true, Some(("</｜DSML｜function_calls>", true)), Err(XML_SKIP),
           &["<｜DSML｜function_calls>", "</｜DSML｜function_calls>"]),
        fx("deepseek_v4", r_ds4, TopCompact, true, Some(("</｜DSML｜tool_calls>", true)), Err(XML_SKIP),
           &["<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>"]),
        fx("deepseek-v4", r_ds4, TopCompact, true, None, Err(XML_SKIP), &["<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>"]),
        fx("deepseekv4", r_ds4, TopCompact, true, None, Err(XML_SKIP), &["<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>"]),
        fx("qwen3_coder", r_qwen3, TopCompact, true, Some(("</tool_call>", true)), Err(XML_SKIP), &[]),
        fx("nemotron_nano", r_qwen3, TopCompact, true, Some(("</tool_call>", true)), Err(XML_SKIP), &[]),
        fx("seed_oss", r_seed, TopCompact, true, Some(("</seed:tool_call>", true)), Err(XML_SKIP), &[]),
        fx("minimax_m2", r_mm2, TopCompact, true, Some(("</minimax:tool_call>", true)), Err(XML_SKIP),
           &["<minimax:tool_call>", "</minimax:tool_call>"]),
        fx("minimax_m3", r_mm3, TopCompact, true, Some(("]<]minimax[>[</tool_call>", true)), Err(XML_SKIP),
           &["]<]minimax[>[<tool_call>", "]<]minimax[>[</tool_call>"]),
        fx("glm47", r_glm47, TopCompact, true, Some(("</tool_call>", false)), Err(XML_SKIP), &[]),
        fx("glm45", r_glm45, TopCompact, true, Some(("</tool_call>", false)), Err(XML_SKIP), &[]),
        Fx { native_ids: true, ..fx("kimi_k2", r_kimi, Exact, true, Some(("<|tool_calls_section_end|>", true)), Err(TOKEN_SKIP),
           &["<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"]) },
        fx("harmony", r_harmony, Exact, true, Some(("<|call|>", true)), Err(TOKEN_SKIP), &[]),
        fx("pythonic", r_pythonic, FullCompact, false, None, Ok("]"), &[]),
        fx("llama4_pythonic", r_pythonic, FullCompact, false, None, Ok("]"), &[]),
        fx("gemma4", r_gemma4, FullCompact, true, Some(("<tool_call|>", true)), Err("gemma4 strings are delimited by the <|\"|> token; its end marker is a special token"), &[]),
        fx("gemma-4", r_gemma4, FullCompact, true, None, Err("alias of gemma4"), &[]),
        fx("default", r_default, Exact, true, Some(("</TOOLCALL>", true)), Ok("</TOOLCALL>"), &[]),
        fx("xlam", r_xlam, Exact, false, None, Ok("]"), &[]),
        fx("granite", r_granite, Exact, true, None, Ok("]"), &[]),
        fx("internlm", r_internlm, Exact, true, Some(("<|action_end|>", true)), Ok("<|action_end|>"), &[]),
        fx("step3", r_step3, TopCompact, true, Some(("<｜tool_calls_end｜>", true)), Err(XML_SKIP),
           &["<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"]),
        fx("cohere_command", r_cohere, Exact, true, Some(("<|END_ACTION|>", true)), Ok("<|END_ACTION|>"), &[]),
        fx("cohere", r_cohere, Exact, true, None, Ok("<|END_ACTION|>"), &[]),
    ]
}

fn expected_args(mode: ArgsMode, a: &str) -> String {
    match mode {
        ArgsMode::Exact => a.to_string(),
        ArgsMode::FullCompact => render_raw(a, 0),
        ArgsMode::TopCompact => {
            let mut b = ArgsBuilder::default();
            for m in members(a) {
                let v = match &m.2 {
                    Some(s) => json_string(s),
                    None => m.1.clone(),
                };
                b.push(&m.0, &v);
            }
            b.finish()
        }
    }
}

/// A tools array declaring the JSON type of every argument (XML formats type by schema).
fn tools_for(calls: &[(&str, &str)]) -> String {
    let mut tools = Vec::new();
    for (n, a) in calls {
        let mut props = serde_json::Map::new();
        for m in members(a) {
            let v: serde_json::Value = serde_json::from_str(&m.1).unwrap();
            let ty = match v {
                serde_json::Value::String(_) => "string",
                serde_json::Value::Number(_) => "number",
                serde_json::Value::Bool(_) => "boolean",
                serde_json::Value::Array(_) => "array",
                serde_json::Value::Object(_) => "object",
                serde_json::Value::Null => "null",
            };
            props.insert(m.0.clone(), serde_json::json!({ "type": ty }));
        }
        tools.push(serde_json::json!({"type":"function","function":{"name":n,"parameters":{"type":"object","properties":props}}}));
    }
    serde_json::Value::Array(tools).to_string()
}

fn strip_drops(s: &str, drops: &[&str]) -> String {
    let mut s = s.to_string();
    for d in drops {
        // whitespace right after a wrapper marker is syntax when a call region follows
        s = s.replace(&format!("{d}\n"), "").replace(d, "");
    }
    s
}

const WEATHER: &str = r#"{"location": "Tokyo", "unit": "celsius"}"#;
const TIME: &str = r#"{"timezone": "Europe/Paris"}"#;
const TYPES: &str = r#"{"s": "a \"quoted\" \\ back\\slash\ttab and line\nbreak", "n": 1.0, "big": 12345678901234567890123, "neg": -3e5, "b": true, "z": false, "nil": null, "arr": [1, "x", {"k": [2]}], "obj": {"k": "v", "n": 0.5}, "uni": "日本語 🦀 \u00e9"}"#;

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
        // truncated inside the arguments: never a call, no text lost
        let full = r(&one);
        let cut = full.find("Tokyo").unwrap() + 3;
        let text = &full[..cut];
        let o = opts(Some(tools_for(&one)));
        let got = check_splits(Some(fx.name), None, &o, text);
        assert!(got.calls.is_empty(), "{}: truncated args invent no call: {got:?}", fx.name);
        if fx.name != "harmony" {
            assert_eq!(got.content, strip_drops(text, fx.drops), "{}: truncated text is kept", fx.name);
        }
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
    let m = one_call("deepseek_v3_2", "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"n\" string=\"false\">5</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>");
    assert_eq!(m.calls[0].3, r#"{"n":5}"#, "both DSML block names");
    // qwen3_coder without schema: JSON-looking values keep their type, others are strings
    let m = one_call("qwen3_coder", "<tool_call>\n<function=f>\n<parameter=zip>\n02134\n</parameter>\n<parameter=n>\n12\n</parameter>\n</function>\n</tool_call>");
    assert_eq!(m.calls[0].3, r#"{"zip":"02134","n":12}"#);
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

// ------------------------------------------------------------------------------------
// fuzz: random text and random splits for every parser pair

const PIECES: &[&str] = &[
    "<tool_call>", "</tool_call>", "{\"name\": \"f\", \"arguments\": {\"a\": 1}}", "<think>", "</think>", "<|channel|>",
    "<|message|>", "<|call|>", "<|end|>", "[TOOL_CALLS]", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>",
    "<function=f>", "<parameter=a>", "</parameter>", "</function>", "<invoke name=\"f\">", "</invoke>", "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>", "<|tool_call_end|>", "[f(a=1)]", "<|tool_call>call:f{a:1}<tool_call|>", "{", "}", "[", "]",
    "\"", "\\", ":", ",", "<", "|", "◁think▷", "<｜DSML｜invoke name=\"f\">", "</｜DSML｜invoke>", "]<]minimax[>[", "functools",
    "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "é", "🦀", "日", " ", "\n", "text", "Here is my response:",
];

fn random_text(rng: &mut Rng) -> String {
    let n = rng.below(24);
    let mut s = String::new();
    for _ in 0..n {
        if rng.below(3) == 0 {
            let c = (rng.below(0x7E - 0x20) + 0x20) as u8 as char;
            s.push(c);
        } else {
            s.push_str(PIECES[rng.below(PIECES.len())]);
        }
    }
    s
}

#[test]
fn fuzz_random_text_and_splits_never_panic_and_agree() {
    let mut rng = Rng(0xDEAD_BEEF_CAFE_F00D);
    let tools = tool_parser_names();
    let reasonings = reasoning_parser_names();
    for round in 0..1500 {
        let text = random_text(&mut rng);
        let tool = if round % 5 == 0 { None } else { Some(tools[rng.below(tools.len())]) };
        let reasoning = if round % 3 == 0 { Some(reasonings[rng.below(reasonings.len())]) } else { None };
        let o = opts(None);
        let want = batch(tool, reasoning, &o, &text);
        let bounds: Vec<usize> = (0..=text.len()).filter(|i| text.is_char_boundary(*i)).collect();
        for _ in 0..8 {
            let mut cuts: Vec<usize> = (0..rng.below(8)).map(|_| bounds[rng.below(bounds.len())]).collect();
            cuts.sort();
            cuts.dedup();
            let mut parts = Vec::new();
            let mut last = 0;
            for c in cuts {
                parts.push(&text[last..c]);
                last = c;
            }
            parts.push(&text[last..]);
            assert_eq!(run_chunks(tool, reasoning, &o, &parts), want, "{tool:?}/{reasoning:?} {parts:?}");
        }
        // random raw bytes (invalid UTF-8 included) through push_bytes: no panic
        let bytes: Vec<u8> = (0..rng.below(64)).map(|_| rng.next() as u8).collect();
        let mut p = OutputParser::new(tool, reasoning, &o).unwrap();
        for ch in bytes.chunks(rng.below(7) + 1) {
            p.push_bytes(ch);
        }
        p.finish();
    }
}

#[test]
fn fuzz_no_text_lost_without_markers() {
    // text that cannot start any marker passes through unchanged (as content, or as
    // reasoning for forced parsers), whatever the chunking
    let alphabet: Vec<char> = "abcdegijklmnopqrstuvwxyz 0123456789.,!?éü日本🦀\n\t".chars().collect();
    let mut rng = Rng(42);
    for round in 0..400 {
        let text: String = (0..rng.below(80)).map(|_| alphabet[rng.below(alphabet.len())]).collect();
        for tool in tool_parser_names() {
            let m = check_splits_light(Some(tool), None, &text, &mut rng);
            assert_eq!(m.content, text, "{tool}: {text:?}");
        }
        if round % 4 == 0 {
            for r in reasoning_parser_names() {
                let m = check_splits_light(None, Some(r), &text, &mut rng);
                let all = format!("{}{}", m.reasoning, m.content);
                let want = if r == "minimax_append_think" { format!("<think>{text}") } else { text.clone() };
                assert_eq!(all, want, "{r}: {text:?}");
            }
        }
    }
}

fn check_splits_light(tool: Option<&str>, reasoning: Option<&str>, text: &str, rng: &mut Rng) -> Merged {
    let o = opts(None);
    let want = batch(tool, reasoning, &o, text);
    let bounds: Vec<usize> = (0..=text.len()).filter(|i| text.is_char_boundary(*i)).collect();
    let mut cuts: Vec<usize> = (0..rng.below(5)).map(|_| bounds[rng.below(bounds.len())]).collect();
    cuts.sort();
    cuts.dedup();
    let mut parts = Vec::new();
    let mut last = 0;
    for c in cuts {
        parts.push(&text[last..c]);
        last = c;
    }
    parts.push(&text[last..]);
    assert_eq!(run_chunks(tool, reasoning, &o, &parts), want);
    want
}

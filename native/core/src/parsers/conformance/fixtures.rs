//! How each tool format writes calls, for the conformance cases.

use super::super::json;
use super::super::values::{json_string, ArgsBuilder};

// ------------------------------------------------------------------------------------
// fixtures: how each tool format writes calls

/// How the expected arguments text relates to the JSON written in the case.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum ArgsMode {
    /// JSON families: the bytes are forwarded exactly.
    Exact,
    /// XML families: top-level members rebuilt compactly, nested values verbatim.
    TopCompact,
    /// Converted formats (pythonic, gemma4): fully compact JSON, number text kept.
    FullCompact,
}

pub(super) type Render = fn(&[(&str, &str)]) -> String;

pub(super) struct Fx {
    pub(super) name: &'static str,
    pub(super) render: Render,
    pub(super) mode: ArgsMode,
    /// Text may precede the first call (false: bare formats that must start the output).
    pub(super) narration_before: bool,
    /// The final marker of the rendered text, and whether removing it (truncation right
    /// before the wrapper end) still yields the calls under the family's EOF rule.
    pub(super) unclosed: Option<(&'static str, bool)>,
    /// The family's end marker, placed inside a JSON string value; None = skipped (reason).
    pub(super) marker_in_string: Result<&'static str, &'static str>,
    /// Kimi keeps native ids.
    pub(super) native_ids: bool,
    pub(super) drops: &'static [&'static str],
}

impl Fx {
    /// JSON-argument formats stream their arguments as they arrive (see `tool::stream`);
    /// XML-like formats (`<function=..>`, minimax, glm, DSML, step3) stream parameter by
    /// parameter; the others that convert (Python, Gemma 4) emit a call when it closes.
    pub(super) fn streams(&self) -> bool {
        self.mode == ArgsMode::Exact || self.streams_params()
    }
    pub(super) fn streams_params(&self) -> bool {
        matches!(
            self.name,
            "qwen3_coder"
                | "nemotron_nano"
                | "seed_oss"
                | "minimax_m2"
                | "minimax_m3"
                | "glm45"
                | "glm47"
                | "step3"
                | "deepseek_v3_2"
                | "deepseek_v4"
                | "deepseek-v4"
                | "deepseekv4"
        )
    }
}

pub(super) fn json_calls(calls: &[(&str, &str)], args_key: &str) -> Vec<String> {
    calls.iter().map(|(n, a)| format!("{{\"name\": \"{n}\", \"{args_key}\": {a}}}")).collect()
}

/// Members of an args object: (key, raw value text, decoded string when it is a string).
pub(super) fn members(a: &str) -> Vec<(String, String, Option<String>)> {
    json::members(a).unwrap().into_iter().map(|(k, v)| (k, v.to_string(), json::decode_str(v))).collect()
}

pub(super) fn xml_value(v: &(String, String, Option<String>)) -> String {
    v.2.clone().unwrap_or_else(|| v.1.clone())
}

/// Re-renders a raw JSON value (number text kept) in another literal syntax.
/// style: 0 = canonical compact JSON, 1 = Python, 2 = Gemma 4.
pub(super) fn render_raw(raw: &str, style: u8) -> String {
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

pub(super) fn r_hermes(c: &[(&str, &str)]) -> String {
    json_calls(c, "arguments").iter().map(|j| format!("<tool_call>\n{j}\n</tool_call>")).collect::<Vec<_>>().join("\n")
}
pub(super) fn r_nemotron_deci(c: &[(&str, &str)]) -> String {
    format!("<TOOLCALL>[{}]</TOOLCALL>", json_calls(c, "arguments").join(", "))
}
pub(super) fn r_llama3(c: &[(&str, &str)]) -> String {
    json_calls(c, "parameters").join("; ")
}
pub(super) fn r_mistral(c: &[(&str, &str)]) -> String {
    format!("[TOOL_CALLS][{}]", json_calls(c, "arguments").join(", "))
}
pub(super) fn r_phi4(c: &[(&str, &str)]) -> String {
    format!("functools[{}]", json_calls(c, "arguments").join(", "))
}
pub(super) fn r_jamba(c: &[(&str, &str)]) -> String {
    format!("<tool_calls>[{}]</tool_calls>", json_calls(c, "arguments").join(", "))
}
pub(super) fn r_ds3(c: &[(&str, &str)]) -> String {
    let calls: String = c
        .iter()
        .map(|(n, a)| format!("<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n{a}\n```<｜tool▁call▁end｜>"))
        .collect();
    format!("<｜tool▁calls▁begin｜>{calls}<｜tool▁calls▁end｜>")
}
pub(super) fn r_ds31(c: &[(&str, &str)]) -> String {
    let calls: String = c.iter().map(|(n, a)| format!("<｜tool▁call▁begin｜>{n}<｜tool▁sep｜>{a}<｜tool▁call▁end｜>")).collect();
    format!("<｜tool▁calls▁begin｜>{calls}<｜tool▁calls▁end｜>")
}
pub(super) fn dsml(c: &[(&str, &str)], block: &str) -> String {
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
pub(super) fn r_ds32(c: &[(&str, &str)]) -> String {
    dsml(c, "function_calls")
}
pub(super) fn r_ds4(c: &[(&str, &str)]) -> String {
    dsml(c, "tool_calls")
}
pub(super) fn qwen_fn(n: &str, a: &str) -> String {
    let mut s = format!("<function={n}>\n");
    for m in members(a) {
        s.push_str(&format!("<parameter={}>\n{}\n</parameter>\n", m.0, xml_value(&m)));
    }
    s.push_str("</function>");
    s
}
pub(super) fn r_qwen3(c: &[(&str, &str)]) -> String {
    c.iter().map(|(n, a)| format!("<tool_call>\n{}\n</tool_call>", qwen_fn(n, a))).collect::<Vec<_>>().join("\n")
}
pub(super) fn r_seed(c: &[(&str, &str)]) -> String {
    c.iter().map(|(n, a)| format!("<seed:tool_call>\n{}\n</seed:tool_call>", qwen_fn(n, a))).collect::<Vec<_>>().join("\n")
}
pub(super) fn r_mm2(c: &[(&str, &str)]) -> String {
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
pub(super) fn r_mm3(c: &[(&str, &str)]) -> String {
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
pub(super) fn glm(c: &[(&str, &str)], nl: &str) -> String {
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
pub(super) fn r_glm47(c: &[(&str, &str)]) -> String {
    glm(c, "")
}
pub(super) fn r_glm45(c: &[(&str, &str)]) -> String {
    glm(c, "\n")
}
pub(super) fn r_kimi(c: &[(&str, &str)]) -> String {
    let calls: String = c
        .iter()
        .enumerate()
        .map(|(i, (n, a))| format!("<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{a}<|tool_call_end|>"))
        .collect();
    format!("<|tool_calls_section_begin|>{calls}<|tool_calls_section_end|>")
}
pub(super) fn r_harmony(c: &[(&str, &str)]) -> String {
    c.iter()
        .map(|(n, a)| format!("<|start|>assistant<|channel|>commentary to=functions.{n} <|constrain|>json<|message|>{a}<|call|>"))
        .collect()
}
pub(super) fn r_pythonic(c: &[(&str, &str)]) -> String {
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
pub(super) fn r_gemma4(c: &[(&str, &str)]) -> String {
    c.iter().map(|(n, a)| format!("<|tool_call>call:{n}{}<tool_call|>", render_raw(a, 2))).collect()
}
pub(super) fn r_default(c: &[(&str, &str)]) -> String {
    r_nemotron_deci(c)
}
/// Dynamo's `default` also reads bare JSON: one call object, or an array of them.
pub(super) fn r_default_bare(c: &[(&str, &str)]) -> String {
    match c {
        [one] => json_calls(&[*one], "parameters").join(""),
        _ => format!("[{}]", json_calls(c, "arguments").join(", ")),
    }
}
/// Mistral with the optional `[/TOOL_CALLS]` end marker.
pub(super) fn r_mistral_closed(c: &[(&str, &str)]) -> String {
    format!("{}[/TOOL_CALLS]", r_mistral(c))
}
pub(super) fn r_xlam(c: &[(&str, &str)]) -> String {
    format!("[{}]", json_calls(c, "arguments").join(", "))
}
pub(super) fn r_granite(c: &[(&str, &str)]) -> String {
    format!("<|tool_call|>[{}]", json_calls(c, "arguments").join(", "))
}
pub(super) fn r_internlm(c: &[(&str, &str)]) -> String {
    json_calls(c, "parameters").iter().map(|j| format!("<|action_start|><|plugin|>\n{j}<|action_end|>")).collect()
}
pub(super) fn r_step3(c: &[(&str, &str)]) -> String {
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
pub(super) fn r_cohere(c: &[(&str, &str)]) -> String {
    let items: Vec<String> = c
        .iter()
        .enumerate()
        .map(|(i, (n, a))| format!("{{\"tool_call_id\": \"{i}\", \"tool_name\": \"{n}\", \"parameters\": {a}}}"))
        .collect();
    format!("<|START_ACTION|>[{}]<|END_ACTION|>", items.join(", "))
}

pub(super) const XML_SKIP: &str = "XML formats carry raw text values: an end tag inside a value is indistinguishable from the real one";
pub(super) const TOKEN_SKIP: &str = "the end marker is a special token the model cannot write inside a JSON string";

pub(super) fn fixtures() -> Vec<Fx> {
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
        fx("mistral", r_mistral_closed, Exact, true, Some(("[/TOOL_CALLS]", true)), Ok("[/TOOL_CALLS]"), &[]),
        fx("phi4", r_phi4, Exact, true, None, Ok("]"), &[]),
        fx("jamba", r_jamba, Exact, true, Some(("</tool_calls>", true)), Ok("</tool_calls>"), &[]),
        fx("hunyuan_a13b", r_jamba, Exact, true, Some(("</tool_calls>", true)), Ok("</tool_calls>"), &[]),
        fx("deepseek_v3", r_ds3, Exact, true, Some(("<｜tool▁calls▁end｜>", true)), Err(TOKEN_SKIP),
           &["<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"]),
        fx("deepseek_v3_1", r_ds31, Exact, true, Some(("<｜tool▁calls▁end｜>", true)), Err(TOKEN_SKIP),
           &["<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"]),
        // DSML: the block is the region (each generation reads only its own block, as vLLM
        // and SGLang do), so its markers are not dropped: a cut block is content verbatim
        fx("deepseek_v3_2", r_ds32, TopCompact, true, Some(("</｜DSML｜function_calls>", true)), Err(XML_SKIP), &[]),
        fx("deepseek_v4", r_ds4, TopCompact, true, Some(("</｜DSML｜tool_calls>", true)), Err(XML_SKIP), &[]),
        fx("deepseek-v4", r_ds4, TopCompact, true, None, Err(XML_SKIP), &[]),
        fx("deepseekv4", r_ds4, TopCompact, true, None, Err(XML_SKIP), &[]),
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
        fx("default", r_default_bare, Exact, false, None, Ok("]"), &[]),
        fx("xlam", r_xlam, Exact, false, None, Ok("]"), &[]),
        fx("granite", r_granite, Exact, true, None, Ok("]"), &[]),
        fx("internlm", r_internlm, Exact, true, Some(("<|action_end|>", true)), Ok("<|action_end|>"), &[]),
        fx("step3", r_step3, TopCompact, true, Some(("<｜tool_calls_end｜>", true)), Err(XML_SKIP),
           &["<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"]),
        fx("cohere_command", r_cohere, Exact, true, Some(("<|END_ACTION|>", true)), Ok("<|END_ACTION|>"), &[]),
        fx("cohere", r_cohere, Exact, true, None, Ok("<|END_ACTION|>"), &[]),
    ]
}

pub(super) fn expected_args(mode: ArgsMode, a: &str) -> String {
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
pub(super) fn tools_for(calls: &[(&str, &str)]) -> String {
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

pub(super) fn strip_drops(s: &str, drops: &[&str]) -> String {
    let mut s = s.to_string();
    for d in drops {
        // whitespace right after a wrapper marker is syntax when a call region follows
        s = s.replace(&format!("{d}\n"), "").replace(d, "");
    }
    s
}

pub(super) const WEATHER: &str = r#"{"location": "Tokyo", "unit": "celsius"}"#;
pub(super) const TIME: &str = r#"{"timezone": "Europe/Paris"}"#;
pub(super) const TYPES: &str = r#"{"s": "a \"quoted\" \\ back\\slash\ttab and line\nbreak", "n": 1.0, "big": 12345678901234567890123, "neg": -3e5, "b": true, "z": false, "nil": null, "arr": [1, "x", {"k": [2]}], "obj": {"k": "v", "n": 0.5}, "uni": "日本語 🦀 \u00e9"}"#;

//! The per-parser preprocessor decisions of spec 003 (PRE.1–PRE.6), one row per parser,
//! every column stated (`N/A` written, never omitted), and the functions the request path
//! calls to apply them. docs/parsers.md renders this table; a test keeps it complete.
//!
//! Columns: PRE.1 skip_special_tokens flips to false (markers are special tokens);
//! PRE.2 per-request reasoning gate (chat_template_args); PRE.3 forced / prompt-injected
//! reasoning incl. tool-continuation turns; PRE.4 tool_choice required/named (guided JSON);
//! PRE.5 ignore_eos (universal, not parser-specific); PRE.6 Nemotron leading `<think>` strip.

use serde::Serialize;
use serde_json::Value;

use super::registry;
use super::ParserError;

#[derive(Debug, Clone, Serialize)]
pub struct Decision {
    /// Canonical parser name.
    pub parser: &'static str,
    /// "tool" or "reasoning".
    pub kind: &'static str,
    pub aliases: Vec<&'static str>,
    /// PRE.1 as data: true ⇒ default skip_special_tokens to false.
    pub requires_special_tokens: bool,
    pub pre1: &'static str,
    pub pre2: &'static str,
    pub pre3: &'static str,
    pub pre4: &'static str,
    pub pre5: &'static str,
    pub pre6: &'static str,
    pub markers: &'static str,
}

const NA: &str = "N/A";
const PRE5: &str = "universal: ignore_eos=true ⇒ the model's EOS ids are not sent as stop ids";
const TOOL_PRE2: &str = "N/A (tool parser; gates apply to reasoning parsers)";
const TOOL_PRE3: &str = "N/A (tool parser)";
const TOOL_PRE4: &str = "required/named ⇒ guided JSON parsed by the guided parser instead of this format";
const QWEN3_PRE3: &str = "starts in reasoning when the prompt ends with <think>, in content when it ends with </think>; otherwise the start is held until <think>, </think> (what came before is reasoning) or the end of the stream (content) decides";
const OPT_PRE3: &str = "starts in content; starts in reasoning only when the prompt ends with the start marker (prompt_injected_reasoning)";
const FORCED_PRE3: &str = "forced: starts in reasoning (template injects the start marker), incl. after a tool result";
const BYPASS_PRE4: &str = "forced parser bypassed on required/named: bare JSON goes to the tool jail";
const SHAPE_PRE4: &str = "shape-aware: a leading `[`/`{` is guided JSON (content), otherwise reasoning until the end marker, then JSON";
const OPT_PRE4: &str = "runs unchanged (reasoning only if the model opens it)";

struct Row(&'static str, bool, &'static str, &'static str, &'static str, &'static str, &'static str, &'static str);

static TOOL_ROWS: &[Row] = &[
    Row("hermes", false, "NO (`<tool_call>` is plain text / non-special added token in Qwen tokenizers)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<tool_call>{\"name\":..,\"arguments\":..}</tool_call>"),
    Row("nemotron_deci", false, "NO (unverified: `<TOOLCALL>` treated as text)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<TOOLCALL>[{..}]</TOOLCALL>"),
    Row("llama3_json", true, "YES (unverified: `<|python_tag|>` is special token 128010 in Llama 3.1; not in the bundled tokenizer)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<|python_tag|>{..} or bare {..}; `;`-separated"),
    Row("mistral", true, "YES (`[TOOL_CALLS]` / `[ARGS]` are control tokens)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "[TOOL_CALLS][{..}] or [TOOL_CALLS]name[ARGS]{..}"),
    Row("phi4", false, "NO (`functools` is plain text)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "functools[{..}]"),
    Row("jamba", false, "NO (`<tool_calls>` plain text)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<tool_calls>[{..}]</tool_calls>"),
    Row("deepseek_v3", false, "NO (verified: `<｜tool▁calls▁begin｜>` etc. are added tokens with special=false in the bundled DeepSeek-V3 tokenizer, so they survive skip_special_tokens)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<｜tool▁call▁begin｜>function<｜tool▁sep｜>name\\n```json\\n{..}\\n```<｜tool▁call▁end｜>"),
    Row("deepseek_v3_1", false, "NO (verified as deepseek_v3: non-special added tokens)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<｜tool▁call▁begin｜>name<｜tool▁sep｜>{..}<｜tool▁call▁end｜>"),
    Row("deepseek_v3_2", true, "YES (unverified: DSML markers; kept YES as in Dynamo's table)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<｜DSML｜function_calls><｜DSML｜invoke name=..><｜DSML｜parameter name=.. string=..>"),
    Row("deepseek_v4", true, "YES (unverified: DSML markers; kept YES as in Dynamo's table)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<｜DSML｜tool_calls><｜DSML｜invoke name=..>..."),
    Row("qwen3_coder", false, "NO (plain XML)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<tool_call><function=f><parameter=k>v</parameter></function></tool_call>"),
    Row("nemotron_nano", false, "NO (unverified: qwen3_coder-style XML)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "as qwen3_coder"),
    Row("minimax_m2", false, "NO (plain XML)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<minimax:tool_call><invoke name=..><parameter name=..>v</parameter></invoke></minimax:tool_call>"),
    Row("minimax_m3", true, "YES (namespace token `]<]minimax[>[`)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "]<]minimax[>[<tool_call> ]<]minimax[>[<invoke name=..> ]<]minimax[>[<key>v]<]minimax[>[</key>"),
    Row("glm47", false, "NO (plain XML)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>"),
    Row("glm45", false, "NO (plain XML)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "as glm47 with newlines"),
    Row("kimi_k2", true, "YES (`<|tool_calls_section_begin|>` etc. are special tokens)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{..}<|tool_call_end|>"),
    Row("harmony", true, "YES (verified: `<|channel|>` 200005, `<|message|>` 200008, `<|call|>` 200012 are special in the bundled gpt-oss tokenizer)", TOOL_PRE2, TOOL_PRE3, "required/named ⇒ guided JSON parser (harmony engine not used)", NA, "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{..}<|call|>"),
    Row("pythonic", false, "NO (Python list literal)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "[f(a=1), g(b='x')]"),
    Row("llama4_pythonic", true, "YES (unverified: `<|python_start|>` is a special token in Llama 4)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "[f(a=1)] or <|python_start|>[..]<|python_end|>"),
    Row("gemma4", true, "YES (`<|tool_call>` / `<|\"|>` are special tokens)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<|tool_call>call:f{k:<|\"|>v<|\"|>}<tool_call|>"),
    Row("default", true, "YES (accepts `<|python_tag|>`)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<TOOLCALL>[..]</TOOLCALL> or <|python_tag|>{..}"),
    Row("xlam", false, "NO (plain JSON)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "bare [{..}], ```json [..]```, <tool_call>..</tool_call>, [TOOL_CALLS][..]"),
    Row("granite", true, "YES (unverified: `<|tool_call|>` is special in Granite 3.0)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<|tool_call|>[{..}] or <tool_call>[{..}]"),
    Row("internlm", true, "YES (unverified: `<|action_start|>` / `<|plugin|>` are special tokens)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<|action_start|><|plugin|>{..}<|action_end|>"),
    Row("hunyuan_a13b", false, "NO (unverified: `<tool_calls>` plain text)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<tool_calls>[{..}]</tool_calls>"),
    Row("seed_oss", true, "YES (unverified: `<seed:tool_call>` is an added special token)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<seed:tool_call><function=f><parameter=k>v</parameter></function></seed:tool_call>"),
    Row("step3", true, "YES (unverified: `<｜tool_calls_begin｜>` special)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=..>..."),
    Row("cohere_command", true, "YES (`<|START_ACTION|>` is a special token)", TOOL_PRE2, TOOL_PRE3, TOOL_PRE4, NA, "<|START_ACTION|>[{\"tool_call_id\":..,\"tool_name\":..,\"parameters\":..}]<|END_ACTION|>"),
];

static REASONING_ROWS: &[Row] = &[
    Row("basic", false, "NO (plain `<think>`)", NA, OPT_PRE3, OPT_PRE4, NA, "<think>..</think>"),
    Row("qwen3", false, "NO (verified: `<think>` is a non-special added token in the bundled Qwen3 tokenizer)", NA, QWEN3_PRE3, OPT_PRE4, NA, "<think>..</think>; `reasoning</think>answer` (prompt-opened) too; alias `qwen`"),
    Row("deepseek_r1", false, "NO (plain `<think>`)", "`thinking=false` OR `thinking_mode=\"chat\"`", FORCED_PRE3, BYPASS_PRE4, NA, "[<think>]..</think>"),
    Row("deepseek_v3", false, "NO (plain `<think>`)", "opt in: disabled unless `thinking` is true (normalized)", FORCED_PRE3, SHAPE_PRE4, NA, "[<think>]..</think>"),
    Row("deepseek_v3_1", false, "NO (plain `<think>`)", "opt in: disabled unless `thinking` is true (normalized)", FORCED_PRE3, SHAPE_PRE4, NA, "[<think>]..</think>"),
    Row("deepseek_v3_2", false, "NO (plain `<think>`)", "`thinking=false` OR `thinking_mode=\"chat\"`", "NEEDS ON: forced, incl. after a tool result (formatter seeds `<think>`)", BYPASS_PRE4, NA, "[<think>]..</think>"),
    Row("deepseek_v4", false, "NO (plain `<think>`)", "`thinking=false` OR `thinking_mode=\"chat\"`", "NEEDS ON even when the last message is a tool result (V4 formatter seeds `<think>`, dynamo#8901)", BYPASS_PRE4, NA, "[<think>]..</think>"),
    Row("nemotron_deci", false, "NO (plain `<think>`)", NA, OPT_PRE3, OPT_PRE4, NA, "<think>..</think>"),
    Row("nemotron_nano", false, "NO (plain `<think>`)", "`enable_thinking=false` OR `force_nonempty_content=true`", FORCED_PRE3, SHAPE_PRE4, "YES when PRE.2 disables reasoning: a leading `<think>` is stripped (split prefixes buffered), the rest is content", "[<think>]..</think>"),
    Row("nemotron3", false, "NO (plain `<think>`)", "`enable_thinking=false` OR `force_nonempty_content=true`", FORCED_PRE3, SHAPE_PRE4, "YES when PRE.2 disables reasoning", "[<think>]..</think>"),
    Row("nemotron_v3", false, "NO (plain `<think>`)", "`enable_thinking=false` OR `force_nonempty_content=true`", FORCED_PRE3, SHAPE_PRE4, "YES when PRE.2 disables reasoning (vLLM-compatible alias)", "[<think>]..</think>"),
    Row("glm45", false, "NO (plain `<think>`)", NA, OPT_PRE3, OPT_PRE4, NA, "<think>..</think>"),
    Row("step3", false, "NO (plain `<think>`)", NA, FORCED_PRE3, BYPASS_PRE4, NA, "[<think>]..</think>"),
    Row("kimi", true, "YES (unverified: `◁think▷` is a special token)", NA, OPT_PRE3, OPT_PRE4, NA, "◁think▷..◁/think▷"),
    Row("kimi_k25", true, "YES", "normalized `thinking=false` (or `enable_thinking=false`); omitted = enabled", "ON when thinking is enabled or omitted; OFF when disabled (a marker-free post-tool answer is classified as reasoning: known model deviation)", BYPASS_PRE4, NA, "[<think>]..</think>"),
    Row("mistral", true, "YES (`[THINK]` / `[/THINK]` are control tokens)", "disabled unless `reasoning_effort` is present and not `none`", OPT_PRE3, OPT_PRE4, NA, "[THINK]..[/THINK]"),
    Row("granite", false, "NO (plain-text headers)", NA, OPT_PRE3, OPT_PRE4, NA, "Here is my thought process: .. Here is my response:"),
    Row("gpt_oss", true, "YES (verified: harmony channel markers are special tokens)", NA, "N/A (channel-driven: analysis → reasoning)", "required/named ⇒ harmony engine not used; guided JSON parsed directly", NA, "<|channel|>analysis<|message|>..<|end|>"),
    Row("gemma4", true, "YES (`<|channel>` / `<channel|>` are special tokens)", "`enable_thinking=false`", OPT_PRE3, OPT_PRE4, NA, "<|channel>thought\\n..<channel|> (prompt trigger `<|think|>` in the system turn)"),
    Row("minimax_append_think", false, "NO", NA, "N/A (pass-through: `<think>` prepended to content, no reasoning_content)", "OFF on required/named (universal, PRE.4)", NA, "pass-through"),
    Row("minimax_m2", false, "NO (plain `<think>`)", "`thinking=false` OR `enable_thinking=false`", FORCED_PRE3, SHAPE_PRE4, NA, "[<think>]..</think>"),
    Row("minimax_m3", true, "YES", "`thinking_mode=\"disabled\"`", "starts in reasoning when `thinking_mode=\"enabled\"` or the prompt ends with <mm:think>; otherwise in content (vLLM)", OPT_PRE4, NA, "[<mm:think>]..</mm:think>"),
    Row("cohere_command", true, "YES (`<|START_THINKING|>` is a special token)", NA, OPT_PRE3, OPT_PRE4, NA, "<|START_THINKING|>..<|END_THINKING|><|START_RESPONSE|>..<|END_RESPONSE|>"),
];

fn to_decision(kind: &'static str, r: &Row, aliases: &[&'static str]) -> Decision {
    Decision {
        parser: r.0,
        kind,
        aliases: aliases.to_vec(),
        requires_special_tokens: r.1,
        pre1: r.2,
        pre2: r.3,
        pre3: r.4,
        pre4: r.5,
        pre5: PRE5,
        pre6: r.6,
        markers: r.7,
    }
}

/// The whole table: every tool parser row, then every reasoning parser row.
pub fn all_decisions() -> Vec<Decision> {
    let mut v = Vec::new();
    for r in TOOL_ROWS {
        let aliases = registry::tool_entry(r.0).map(|e| e.aliases).unwrap_or(&[]);
        v.push(to_decision("tool", r, aliases));
    }
    for r in REASONING_ROWS {
        let aliases = registry::reasoning_entry(r.0).map(|e| e.aliases).unwrap_or(&[]);
        v.push(to_decision("reasoning", r, aliases));
    }
    v
}

/// Rows for the configured pair (aliases resolved). Unknown names are errors.
pub fn parser_decisions(tool: Option<&str>, reasoning: Option<&str>) -> Result<Vec<Decision>, ParserError> {
    let mut v = Vec::new();
    if let Some(t) = tool {
        let e = registry::tool_entry(t)?;
        let r = TOOL_ROWS.iter().find(|r| r.0 == e.name).expect("every tool parser has a row");
        v.push(to_decision("tool", r, e.aliases));
    }
    if let Some(n) = reasoning {
        let e = registry::reasoning_entry(n)?;
        let r = REASONING_ROWS.iter().find(|r| r.0 == e.name).expect("every reasoning parser has a row");
        v.push(to_decision("reasoning", r, e.aliases));
    }
    Ok(v)
}

/// `parser_decisions` as JSON text (`None`, `None` ⇒ the whole table).
pub fn decisions_json(tool: Option<&str>, reasoning: Option<&str>) -> Result<String, ParserError> {
    let d = if tool.is_none() && reasoning.is_none() { all_decisions() } else { parser_decisions(tool, reasoning)? };
    serde_json::to_string(&d).map_err(|e| ParserError::InvalidOptions(e.to_string()))
}

/// `reasoning_disabled_by_request` with chat_template_args as JSON text.
pub fn reasoning_disabled_by_request_json(
    reasoning: &str,
    args_json: Option<&str>,
    reasoning_effort: Option<&str>,
) -> Result<bool, ParserError> {
    reasoning_disabled_by_request(reasoning, args_value(args_json)?.as_ref(), reasoning_effort)
}

/// PRE.1: default skip_special_tokens to false for this pair (a request value still wins).
pub fn requires_special_tokens(tool: Option<&str>, reasoning: Option<&str>) -> Result<bool, ParserError> {
    Ok(parser_decisions(tool, reasoning)?.iter().any(|d| d.requires_special_tokens))
}

/// PRE.3 normalization: `true`, "true", "1", "yes", "on", nonzero numbers are enabled.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => matches!(s.trim().to_ascii_lowercase().as_str(), "true" | "1" | "yes" | "on"),
        _ => false,
    }
}

/// PRE.2: does this request turn the reasoning parser off? `args` = chat_template_args
/// (also the request's top-level template kwargs), `reasoning_effort` = the request field.
pub fn reasoning_disabled_by_request(
    reasoning: &str,
    args: Option<&Value>,
    reasoning_effort: Option<&str>,
) -> Result<bool, ParserError> {
    let e = registry::reasoning_entry(reasoning)?;
    let get = |k: &str| args.and_then(|a| a.get(k)).filter(|v| !v.is_null());
    let off = |k: &str| get(k).is_some_and(|v| !truthy(v));
    let on = |k: &str| get(k).is_some_and(truthy);
    let str_is = |k: &str, s: &str| get(k).and_then(|v| v.as_str()) == Some(s);
    Ok(match e.name {
        "kimi_k25" => off("thinking") || (get("thinking").is_none() && off("enable_thinking")),
        "nemotron_nano" | "nemotron3" | "nemotron_v3" => off("enable_thinking") || on("force_nonempty_content"),
        "deepseek_r1" | "deepseek_v3_2" | "deepseek_v4" => off("thinking") || str_is("thinking_mode", "chat"),
        "deepseek_v3" | "deepseek_v3_1" => !on("thinking"),
        "gemma4" => off("enable_thinking"),
        "mistral" => match reasoning_effort {
            None => true,
            Some(r) => r.eq_ignore_ascii_case("none"),
        },
        "minimax_m2" => off("thinking") || off("enable_thinking"),
        "minimax_m3" => str_is("thinking_mode", "disabled"),
        _ => false,
    })
}

/// PRE.3 by request: does the request itself start the output inside reasoning (a template
/// switch that prefills the start marker)? MiniMax M3: `thinking_mode="enabled"` (vLLM).
pub fn reasoning_started_by_request(reasoning: &str, args: Option<&Value>) -> Result<bool, ParserError> {
    let e = registry::reasoning_entry(reasoning)?;
    let mode = args.and_then(|a| a.get("thinking_mode")).and_then(|v| v.as_str());
    Ok(e.name == "minimax_m3" && mode == Some("enabled"))
}

/// `reasoning_started_by_request` with chat_template_args as JSON text.
pub fn reasoning_started_by_request_json(reasoning: &str, args_json: Option<&str>) -> Result<bool, ParserError> {
    reasoning_started_by_request(reasoning, args_value(args_json)?.as_ref())
}

/// chat_template_args JSON text (or none) as a value.
fn args_value(args_json: Option<&str>) -> Result<Option<Value>, ParserError> {
    args_json
        .map(|s| serde_json::from_str(s).map_err(|e| ParserError::InvalidOptions(format!("chat_template_args: {e}"))))
        .transpose()
}

/// PRE.3: does the rendered prompt end inside reasoning (its tail ends with the parser's
/// start marker, whitespace ignored)? Pass the last ~64 characters of the prompt.
pub fn prompt_injected_reasoning(reasoning: &str, prompt_tail: &str) -> Result<bool, ParserError> {
    let e = registry::reasoning_entry(reasoning)?;
    let tail = prompt_tail.trim_end();
    Ok(match e.spec {
        super::reasoning::Spec::Markers(m) => {
            m.pass_through_prefix.is_none() && m.start.iter().any(|s| tail.ends_with(s.trim_end()))
        }
        super::reasoning::Spec::Harmony => false,
    })
}

/// Does the rendered prompt end right after a closed reasoning block (`<think>\n\n</think>`
/// when a template disables thinking)? Pass the last ~64 characters of the prompt.
pub fn prompt_closed_reasoning(reasoning: &str, prompt_tail: &str) -> Result<bool, ParserError> {
    let e = registry::reasoning_entry(reasoning)?;
    let tail = prompt_tail.trim_end();
    Ok(match e.spec {
        super::reasoning::Spec::Markers(m) => m.end.iter().any(|s| tail.ends_with(s.trim_end())),
        super::reasoning::Spec::Harmony => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_parser_has_a_row_and_rows_are_registered() {
        for e in registry::TOOL_PARSERS {
            assert!(TOOL_ROWS.iter().any(|r| r.0 == e.name), "tool {} lacks a PRE row", e.name);
        }
        for e in registry::REASONING_PARSERS {
            assert!(REASONING_ROWS.iter().any(|r| r.0 == e.name), "reasoning {} lacks a PRE row", e.name);
        }
        for r in TOOL_ROWS {
            assert!(registry::tool_entry(r.0).is_ok(), "row {} not registered", r.0);
        }
        for r in REASONING_ROWS {
            assert!(registry::reasoning_entry(r.0).is_ok(), "row {} not registered", r.0);
        }
        for d in all_decisions() {
            for c in [d.pre1, d.pre2, d.pre3, d.pre4, d.pre5, d.pre6, d.markers] {
                assert!(!c.trim().is_empty(), "{} has an empty column", d.parser);
            }
        }
    }

    #[test]
    fn pre1_table() {
        let cases = [
            (Some("harmony"), None, true),
            (None, Some("gpt_oss"), true),
            (Some("hermes"), Some("qwen3"), false),
            (Some("qwen3_coder"), None, false),
            (Some("kimi_k2"), Some("kimi_k25"), true),
            (Some("deepseek_v3"), Some("deepseek_r1"), false),
            (Some("pythonic"), None, false),
            (None, Some("mistral"), true),
            (Some("gemma-4"), None, true),
        ];
        for (t, r, want) in cases {
            assert_eq!(requires_special_tokens(t, r).unwrap(), want, "{t:?} {r:?}");
        }
        assert!(requires_special_tokens(Some("nope"), None).is_err());
    }

    #[test]
    fn pre2_gates() {
        let j = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        let d = |p: &str, a: &str, eff: Option<&str>| reasoning_disabled_by_request(p, Some(&j(a)), eff).unwrap();
        assert!(d("kimi_k25", r#"{"thinking":false}"#, None));
        assert!(d("kimi_k25", r#"{"thinking":"off"}"#, None));
        assert!(!d("kimi_k25", r#"{}"#, None));
        assert!(!d("kimi_k25", r#"{"thinking":"yes"}"#, None));
        assert!(d("nemotron_nano", r#"{"enable_thinking":false}"#, None));
        assert!(d("nemotron_v3", r#"{"force_nonempty_content":true}"#, None));
        assert!(!d("nemotron3", r#"{}"#, None));
        assert!(d("deepseek_r1", r#"{"thinking_mode":"chat"}"#, None));
        assert!(d("deepseek_v4", r#"{"thinking":0}"#, None));
        assert!(!d("deepseek_v4", r#"{"thinking":1}"#, None));
        assert!(d("deepseek_v3", r#"{}"#, None));
        assert!(!d("deepseek_v3_1", r#"{"thinking":"true"}"#, None));
        assert!(d("gemma4", r#"{"enable_thinking":false}"#, None));
        assert!(d("mistral", r#"{}"#, None));
        assert!(d("mistral", r#"{}"#, Some("none")));
        assert!(!d("mistral", r#"{}"#, Some("high")));
        assert!(d("minimax_m3", r#"{"thinking_mode":"disabled"}"#, None));
        let started = |p: &str, a: &str| reasoning_started_by_request(p, Some(&j(a))).unwrap();
        assert!(started("minimax_m3", r#"{"thinking_mode":"enabled"}"#));
        assert!(!started("minimax_m3", r#"{}"#));
        assert!(!started("minimax_m2", r#"{"thinking_mode":"enabled"}"#));
        assert!(!d("qwen3", r#"{"enable_thinking":false}"#, None));
        assert!(prompt_injected_reasoning("qwen3", "<|im_start|>assistant\n<think>\n").unwrap());
        assert!(!prompt_injected_reasoning("qwen3", "<|im_start|>assistant\n").unwrap());
        assert!(prompt_closed_reasoning("qwen", "<|im_start|>assistant\n<think>\n\n</think>\n\n").unwrap());
        assert!(!prompt_closed_reasoning("qwen3", "<|im_start|>assistant\n").unwrap());
    }
}

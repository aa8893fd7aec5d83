//! Marker facts of each reasoning family (from the models' chat formats).

use super::MarkerSpec;

const THINK: &[&str] = &["<think>"];
const THINK_END: &[&str] = &["</think>"];

const BASE: MarkerSpec = MarkerSpec {
    start: THINK,
    end: THINK_END,
    forced: false,
    content_drops: &[],
    shape_aware: false,
    leading_strip_when_disabled: None,
    pass_through_prefix: None,
    implicit_start: false,
    tool_starts: &[],
    span_drops: &[],
};

/// `<think>..</think>`, reasoning only when the model opens it (basic, qwen3, glm45, nemotron_deci).
pub static THINK_OPTIONAL: MarkerSpec = BASE;
/// Qwen3 (`qwen3`, `qwen`): optional `<think>`, and `reasoning</think>answer` without an
/// opening tag is reasoning too (Qwen3 templates put `<think>` in the prompt).
pub static QWEN3: MarkerSpec = MarkerSpec { implicit_start: true, ..BASE };
/// `<think>` is in the prompt: the output starts in reasoning (deepseek_r1, DSv3.2).
pub static THINK_FORCED: MarkerSpec = MarkerSpec { forced: true, ..BASE };
/// DeepSeek V4: forced; its DSML tool-calls block ends the reasoning (the model calls tools
/// without closing `</think>`; vLLM's V4 reasoning parser ends there too).
pub static DEEPSEEK_V4: MarkerSpec = MarkerSpec { tool_starts: &["<｜DSML｜tool_calls>"], ..THINK_FORCED };
/// Kimi K2.5: forced `<think>`; a tool-calls section (or a bare call) ends the reasoning, as in
/// vLLM's kimi_k25 and SGLang's Kimi K2 reasoning parsers.
pub static KIMI_K25: MarkerSpec =
    MarkerSpec { tool_starts: &["<|tool_calls_section_begin|>", "<|tool_call_begin|>"], ..THINK_FORCED };
/// Forced, and tells bare guided JSON from `reasoning</think>JSON` (PRE.4): deepseek_v3/_v3_1, minimax_m2.
pub static THINK_FORCED_SHAPE: MarkerSpec = MarkerSpec { forced: true, shape_aware: true, ..BASE };
/// Nemotron Nano / 3: forced, shape-aware, and PRE.6 leading `<think>` strip when disabled; a
/// `<tool_call>` (its Qwen3-Coder XML) met inside the reasoning ends it (SGLang's Nemotron 3
/// reasoning detector).
pub static NEMOTRON: MarkerSpec = MarkerSpec {
    forced: true,
    shape_aware: true,
    leading_strip_when_disabled: Some("<think>"),
    tool_starts: &["<tool_call>"],
    ..BASE
};
/// Kimi (K1.5 / K2 thinking): `◁think▷..◁/think▷`.
pub static KIMI: MarkerSpec = MarkerSpec { start: &["◁think▷"], end: &["◁/think▷"], ..BASE };
/// Mistral (Magistral, Mistral Small 4): `[THINK]..[/THINK]` (special tokens), reasoning
/// only when the model opens it; a `[/THINK]` nothing opened is dropped (vLLM, SGLang).
pub static MISTRAL: MarkerSpec = MarkerSpec { start: &["[THINK]"], end: &["[/THINK]"], ..BASE };
/// IBM Granite 3.2+: plain-text headers.
pub static GRANITE: MarkerSpec = MarkerSpec {
    start: &["Here is my thought process:", "Here's my thought process:"],
    end: &["Here is my response:", "Here's my response:"],
    ..BASE
};
/// Gemma 4: `<|channel>thought\n..<channel|>`; the `thought` label is markup, a channel
/// opened without it (`<|channel>reasoning..`) is reasoning too (vLLM).
pub static GEMMA4: MarkerSpec = MarkerSpec {
    start: &["<|channel>thought\n", "<|channel>thought", "<|channel>"],
    end: &["<channel|>"],
    tool_starts: &["<|tool_call>"],
    ..BASE
};
/// MiniMax M3: `<mm:think>..</mm:think>`. Starts in content unless the request enabled
/// thinking (`thinking_mode="enabled"`, see `decisions::reasoning_started_by_request`) or the
/// prompt ends with `<mm:think>` (PRE.3): vLLM's default.
pub static MINIMAX_M3: MarkerSpec =
    MarkerSpec { start: &["<mm:think>"], end: &["</mm:think>"], tool_starts: &["]<]minimax[>[<tool_call>"], ..BASE };
/// MiniMax M2: forced and shape-aware like deepseek_v3; a `<minimax:tool_call>` block ends
/// the reasoning.
pub static MINIMAX_M2: MarkerSpec = MarkerSpec { tool_starts: &["<minimax:tool_call>"], ..THINK_FORCED_SHAPE };
/// Step-3: forced; its calls section ends the reasoning.
pub static STEP3: MarkerSpec =
    MarkerSpec { tool_starts: &["<｜tool_calls_begin｜>", "<｜tool_call_begin｜>"], ..THINK_FORCED };
/// Legacy MiniMax: no split, `<think>` prepended to the content.
pub static MINIMAX_APPEND_THINK: MarkerSpec = MarkerSpec { pass_through_prefix: Some("<think>"), ..BASE };
/// Cohere Command A reasoning: `<|START_THINKING|>..<|END_THINKING|>`, response markers
/// dropped, citation tags `<co>..</co: 0:[1,2]>` dropped from reasoning and content (vLLM).
pub static COHERE: MarkerSpec = MarkerSpec {
    start: &["<|START_THINKING|>"],
    end: &["<|END_THINKING|>"],
    content_drops: &["<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_TEXT|>", "<|END_TEXT|>"],
    span_drops: &["<co>", "</co:"],
    tool_starts: &["<|START_ACTION|>"],
    ..BASE
};

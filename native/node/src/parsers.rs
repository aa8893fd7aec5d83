//! Streaming tool-call / reasoning parsers (portico_core::parsers) and the PRE.1–PRE.6
//! decision table. `push` returns a string when only content was produced (the hot path:
//! no object is built), otherwise a flat array `[kind, ...fields]` decoded in TS:
//!   0 content text | 1 reasoning text | 2 tool start: index, id, name | 3 tool args: index, text

use std::panic::{catch_unwind, AssertUnwindSafe};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use portico_core::parsers as p;

fn invalid(e: impl ToString) -> Error {
    Error::new(Status::InvalidArg, e.to_string())
}

fn internal() -> Error {
    Error::new(Status::GenericFailure, "parser panicked (bug): the choice's output is lost")
}

#[napi(object)]
pub struct OutputParserOptions {
    /// PRE.3: the rendered prompt ends inside reasoning (see promptInjectedReasoning).
    pub prompt_injected_reasoning: Option<bool>,
    /// The rendered prompt ends after a closed reasoning block (see promptClosedReasoning).
    pub prompt_closed_reasoning: Option<bool>,
    /// `parallel_tool_calls: false`: at most this many tool calls (later ones are dropped).
    pub max_tool_calls: Option<u32>,
    /// A call to a function not in `toolsJson` is content, not a tool call (chat requests).
    pub only_offered_functions: Option<bool>,
    /// PRE.2: the request disabled reasoning (see reasoningDisabledByRequest).
    pub reasoning_disabled: Option<bool>,
    /// "auto" (default) | "none" | "required" | "named".
    pub tool_choice: Option<String>,
    /// The function name when toolChoice is "named".
    pub named_tool: Option<String>,
    /// The request's `tools` array as JSON text (types XML-style parameter values).
    pub tools_json: Option<String>,
    /// Deterministic tool call ids (tests).
    pub id_seed: Option<f64>,
}

type Flat = Either<String, Vec<Either<u32, String>>>;

fn flatten(out: Vec<p::Delta>) -> Flat {
    if out.iter().all(|d| matches!(d, p::Delta::Content(_))) {
        return Either::A(match out.len() {
            0 => String::new(),
            1 => match out.into_iter().next() {
                Some(p::Delta::Content(s)) => s,
                _ => String::new(),
            },
            _ => out.into_iter().map(|d| if let p::Delta::Content(s) = d { s } else { String::new() }).collect(),
        });
    }
    let mut v: Vec<Either<u32, String>> = Vec::with_capacity(out.len() * 3);
    for d in out {
        match d {
            p::Delta::Content(s) => {
                v.push(Either::A(0));
                v.push(Either::B(s));
            }
            p::Delta::Reasoning(s) => {
                v.push(Either::A(1));
                v.push(Either::B(s));
            }
            p::Delta::ToolStart { index, id, name } => {
                v.push(Either::A(2));
                v.push(Either::A(index));
                v.push(Either::B(id));
                v.push(Either::B(name));
            }
            p::Delta::ToolArgs { index, text } => {
                v.push(Either::A(3));
                v.push(Either::A(index));
                v.push(Either::B(text));
            }
        }
    }
    Either::B(v)
}

/// One per choice: reasoning parser first, then the tool parser over the content.
#[napi]
pub struct OutputParser {
    /// None once a ChoiceOutput took it over (see `take`).
    inner: Option<p::OutputParser>,
}

fn moved() -> Error {
    Error::new(Status::InvalidArg, "this OutputParser was handed to a ChoiceOutput")
}

impl OutputParser {
    /// The parser itself, for a ChoiceOutput that owns it from now on.
    pub(crate) fn take(&mut self) -> Option<p::OutputParser> {
        self.inner.take()
    }
}

#[napi]
impl OutputParser {
    /// Unknown parser names throw (code InvalidArg) with the list of valid names.
    #[napi(constructor)]
    pub fn new(tool_parser: Option<String>, reasoning_parser: Option<String>, opts: Option<OutputParserOptions>) -> Result<Self> {
        let mut o = p::ParserOptions::default();
        if let Some(x) = opts {
            o.prompt_injected_reasoning = x.prompt_injected_reasoning.unwrap_or(false);
            o.reasoning_disabled = x.reasoning_disabled.unwrap_or(false);
            o.prompt_closed_reasoning = x.prompt_closed_reasoning.unwrap_or(false);
            o.max_tool_calls = x.max_tool_calls;
            o.only_offered_functions = x.only_offered_functions.unwrap_or(false);
            o.tools_json = x.tools_json;
            o.id_seed = x.id_seed.map(|s| s as u64);
            o.tool_choice = match x.tool_choice.as_deref() {
                None | Some("auto") => p::ToolChoice::Auto,
                Some("none") => p::ToolChoice::None,
                Some("required") => p::ToolChoice::Required,
                Some("named") => match x.named_tool {
                    Some(n) => p::ToolChoice::Named(n),
                    None => return Err(invalid("toolChoice \"named\" needs namedTool")),
                },
                Some(other) => return Err(invalid(format!("unknown toolChoice {other:?}"))),
            };
        }
        let inner = p::OutputParser::new(tool_parser.as_deref(), reasoning_parser.as_deref(), &o).map_err(invalid)?;
        Ok(OutputParser { inner: Some(inner) })
    }

    /// Text made final by this chunk: a string when it is only content, else a flat array.
    #[napi]
    pub fn push(&mut self, text: String) -> Result<Flat> {
        let inner = self.inner.as_mut().ok_or_else(moved)?;
        catch_unwind(AssertUnwindSafe(|| flatten(inner.push(&text)))).map_err(|_| internal())
    }

    /// End of the choice: flushes held text, applies the truncation rule.
    #[napi]
    pub fn finish(&mut self) -> Result<Flat> {
        let inner = self.inner.as_mut().ok_or_else(moved)?;
        catch_unwind(AssertUnwindSafe(|| flatten(inner.finish()))).map_err(|_| internal())
    }

    /// Tool calls started so far (finish_reason "tool_calls" when > 0).
    #[napi(getter)]
    pub fn tool_call_count(&self) -> u32 {
        self.inner.as_ref().map_or(0, |p| p.tool_call_count())
    }
}

#[napi]
pub fn tool_parser_names() -> Vec<String> {
    p::tool_parser_names().into_iter().map(String::from).collect()
}

#[napi]
pub fn reasoning_parser_names() -> Vec<String> {
    p::reasoning_parser_names().into_iter().map(String::from).collect()
}

/// PRE rows of the configured pair as JSON (`Decision[]`; both null = the whole table).
#[napi]
pub fn parser_decisions_json(tool_parser: Option<String>, reasoning_parser: Option<String>) -> Result<String> {
    p::decisions::decisions_json(tool_parser.as_deref(), reasoning_parser.as_deref()).map_err(invalid)
}

/// PRE.1: default skip_special_tokens to false for this pair.
#[napi]
pub fn requires_special_tokens(tool_parser: Option<String>, reasoning_parser: Option<String>) -> Result<bool> {
    p::decisions::requires_special_tokens(tool_parser.as_deref(), reasoning_parser.as_deref()).map_err(invalid)
}

/// PRE.2: chat_template_args (JSON object text or null) and reasoning_effort turn reasoning off?
#[napi]
pub fn reasoning_disabled_by_request(
    reasoning_parser: String,
    chat_template_args_json: Option<String>,
    reasoning_effort: Option<String>,
) -> Result<bool> {
    p::decisions::reasoning_disabled_by_request_json(
        &reasoning_parser,
        chat_template_args_json.as_deref(),
        reasoning_effort.as_deref(),
    )
    .map_err(invalid)
}

/// PRE.3 by request: does chat_template_args (JSON object text or null) start the output in
/// reasoning (MiniMax M3 `thinking_mode="enabled"`)?
#[napi]
pub fn reasoning_started_by_request(reasoning_parser: String, chat_template_args_json: Option<String>) -> Result<bool> {
    p::decisions::reasoning_started_by_request_json(&reasoning_parser, chat_template_args_json.as_deref()).map_err(invalid)
}

/// PRE.3: does the rendered prompt (its tail) end with the parser's reasoning start marker?
#[napi]
pub fn prompt_injected_reasoning(reasoning_parser: String, prompt_tail: String) -> Result<bool> {
    p::decisions::prompt_injected_reasoning(&reasoning_parser, &prompt_tail).map_err(invalid)
}

/// The rendered prompt ends right after the parser's reasoning end marker (thinking closed
/// by the template): the parser starts in content (pass the last ~64 characters).
#[napi]
pub fn prompt_closed_reasoning(reasoning_parser: String, prompt_tail: String) -> Result<bool> {
    p::decisions::prompt_closed_reasoning(&reasoning_parser, &prompt_tail).map_err(invalid)
}

//! Streaming tool-call and reasoning parsers (spec 003).
//!
//! One [`OutputParser`] per generated choice. Text goes in as it is detokenized
//! (`push`), structured [`Delta`]s come out; `finish` flushes what was held back.
//! The reasoning parser runs first (reasoning vs content); the tool parser runs over
//! the content. Output is independent of how the text was chunked: any split point
//! gives the same merged result as the whole text (the conformance suite proves it).
//!
//! Layout: `scan` (marker search, hold-back), `json` (span scanner that keeps argument
//! bytes exactly), `values` (typed values for XML-style formats), `tool/*` (one file per
//! format family + the shared streaming engine), `reasoning/*`, `harmony` (gpt-oss
//! channels, both tool and reasoning), `registry` (the name table), `decisions`
//! (the PRE.1–PRE.6 table of spec 003).

pub mod decisions;
mod harmony;
pub(crate) mod json;
pub(crate) mod json_stream;
pub mod reasoning;
pub mod registry;
pub(crate) mod scan;
pub mod tool;
pub(crate) mod values;

#[cfg(test)]
mod conformance;

/// The crate-private JSON readers, reachable by the fuzz targets (native/core/fuzz); not API.
#[doc(hidden)]
pub mod fuzz_hooks {
    pub use super::json::{args_text, calls_from_json, decode_str, elements, is_value, members, value_end};
    pub use super::json_stream::{value_end as stream_value_end, Feed, JsonStream};

    /// Reads a `tools` array the way the XML-style formats type their parameter values.
    pub fn tool_schemas(tools_json: &str) -> Result<(), String> {
        super::values::ToolSchemas::parse(tools_json).map(|_| ())
    }
}

use std::fmt;

pub use decisions::{parser_decisions, Decision};
pub use registry::{reasoning_parser_names, tool_parser_names};

/// One structured piece of a choice's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delta {
    /// Visible answer text.
    Content(String),
    /// Reasoning text (`reasoning_content`).
    Reasoning(String),
    /// A tool call begins: its OpenAI `index`, `id` and function `name`.
    ToolStart { index: u32, id: String, name: String },
    /// A fragment of the arguments JSON of call `index` (concatenate them).
    ToolArgs { index: u32, text: String },
}

/// Errors are data: an unknown name, or options the TS side got wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParserError {
    UnknownToolParser { name: String, valid: Vec<&'static str> },
    UnknownReasoningParser { name: String, valid: Vec<&'static str> },
    InvalidOptions(String),
}

impl fmt::Display for ParserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParserError::UnknownToolParser { name, valid } => {
                write!(f, "unknown tool call parser {name:?}; valid names: {}", valid.join(", "))
            }
            ParserError::UnknownReasoningParser { name, valid } => {
                write!(f, "unknown reasoning parser {name:?}; valid names: {}", valid.join(", "))
            }
            ParserError::InvalidOptions(m) => write!(f, "invalid parser options: {m}"),
        }
    }
}

impl std::error::Error for ParserError {}

/// How the request constrained tool use (PRE.4).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolChoice {
    /// `auto` (or no tool_choice): the configured tool parser looks for its markers.
    #[default]
    Auto,
    /// `none`: no tool parsing at all; everything is content.
    None,
    /// `required`: guided JSON, a bare array `[{"name":..,"parameters":{..}}, ...]`.
    Required,
    /// named function: guided JSON, the output is that function's arguments object.
    Named(String),
}

/// Per-request options (what the preprocessor decided for this request).
#[derive(Debug, Clone, Default)]
pub struct ParserOptions {
    /// PRE.3: the rendered prompt already ends inside reasoning (template injected `<think>`),
    /// so the reasoning parser starts in reasoning even if it is not a forced one.
    pub prompt_injected_reasoning: bool,
    /// PRE.3 counterpart: the rendered prompt ends right after a closed reasoning block
    /// (thinking disabled by the template): an `implicit_start` parser starts in content.
    pub prompt_closed_reasoning: bool,
    /// PRE.2: the request turned reasoning off (see `decisions::reasoning_disabled_by_request`).
    /// No reasoning parser runs; PRE.6 (Nemotron leading `<think>` strip) applies where listed.
    pub reasoning_disabled: bool,
    /// PRE.4.
    pub tool_choice: ToolChoice,
    /// The request's `tools` array as JSON text (used to type XML-style parameter values).
    pub tools_json: Option<String>,
    /// Seed for generated tool call ids (`call_…`); random when None.
    pub id_seed: Option<u64>,
    /// `parallel_tool_calls: false`: at most this many calls; later ones are dropped (vLLM).
    pub max_tool_calls: Option<u32>,
    /// A call to a function not in `tools_json` is not a tool call; its text is content
    /// (chat requests; SGLang drops such calls). Off for the /parse endpoints.
    pub only_offered_functions: bool,
}

/// A finished tool call as the formats report it (the engine turns it into deltas).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub name: String,
    /// The arguments JSON text, exactly as it will be sent.
    pub args: String,
    /// The model's own id when the format carries one (Kimi `functions.name:0`).
    pub id: Option<String>,
}

/// Appends deltas, merging adjacent text of the same kind (fewer, larger deltas).
#[derive(Debug, Default)]
pub struct Sink {
    pub out: Vec<Delta>,
}

impl Sink {
    pub fn content(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        if let Some(Delta::Content(c)) = self.out.last_mut() {
            c.push_str(s);
        } else {
            self.out.push(Delta::Content(s.to_string()));
        }
    }
    pub fn reasoning(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        if let Some(Delta::Reasoning(c)) = self.out.last_mut() {
            c.push_str(s);
        } else {
            self.out.push(Delta::Reasoning(s.to_string()));
        }
    }
    pub fn args(&mut self, index: u32, s: &str) {
        if s.is_empty() {
            return;
        }
        if let Some(Delta::ToolArgs { index: i, text }) = self.out.last_mut() {
            if *i == index {
                text.push_str(s);
                return;
            }
        }
        self.out.push(Delta::ToolArgs { index, text: s.to_string() });
    }
}

enum Engine {
    Split {
        reasoning: Option<reasoning::Reasoner>,
        tool: Option<tool::ToolEngine>,
    },
    Harmony(harmony::Harmony),
}

/// The per-choice parser: reasoning first, then tool calls over the content.
pub struct OutputParser {
    engine: Engine,
    /// Bytes of an incomplete UTF-8 character carried between `push_bytes` calls.
    utf8_carry: Vec<u8>,
    scratch: String,
    tool_calls: u32,
    max_tool_calls: Option<u32>,
}

impl OutputParser {
    /// `tool` / `reasoning`: registry names (or None). Unknown names are an error listing
    /// the valid ones.
    pub fn new(
        tool: Option<&str>,
        reasoning: Option<&str>,
        opts: &ParserOptions,
    ) -> Result<OutputParser, ParserError> {
        let tool_fmt = match tool {
            Some(n) => Some(registry::tool_format(n)?),
            None => None,
        };
        let reasoning_spec = match reasoning {
            Some(n) => Some(registry::reasoning_spec(n)?),
            None => None,
        };
        let ids = tool::IdGen::new(opts.id_seed);
        let mut tool_schema = match &opts.tools_json {
            Some(t) => values::ToolSchemas::parse(t).map_err(ParserError::InvalidOptions)?,
            None => values::ToolSchemas::default(),
        };
        if opts.only_offered_functions && opts.tools_json.is_some() {
            tool_schema.restrict_to_offered();
        }
        let harmony_tool = matches!(tool_fmt, Some(registry::ToolFormatId::Harmony));
        let harmony_reasoning = matches!(reasoning_spec, Some(reasoning::Spec::Harmony));
        let guided = matches!(opts.tool_choice, ToolChoice::Required | ToolChoice::Named(_));
        let engine = if (harmony_tool || harmony_reasoning) && !guided {
            Engine::Harmony(harmony::Harmony::new(
                harmony_tool && opts.tool_choice != ToolChoice::None,
                harmony_reasoning && !opts.reasoning_disabled,
                ids,
                tool_schema,
            ))
        } else {
            let reasoning = match reasoning_spec {
                Some(reasoning::Spec::Harmony) => None,
                Some(spec) => reasoning::Reasoner::new(spec, opts, guided),
                None => None,
            };
            let tool = match (&opts.tool_choice, tool_fmt) {
                (ToolChoice::None, _) => None,
                (ToolChoice::Required, _) => Some(tool::ToolEngine::guided_required(ids)),
                (ToolChoice::Named(name), _) => Some(tool::ToolEngine::guided_named(name.clone(), ids)),
                (ToolChoice::Auto, Some(id)) => Some(tool::ToolEngine::new(id, tool_schema, ids)),
                (ToolChoice::Auto, None) => None,
            };
            Engine::Split { reasoning, tool }
        };
        Ok(OutputParser {
            engine,
            utf8_carry: Vec::new(),
            scratch: String::new(),
            tool_calls: 0,
            max_tool_calls: opts.max_tool_calls,
        })
    }

    /// Adds generated text; returns the deltas that became final.
    pub fn push(&mut self, text: &str) -> Vec<Delta> {
        let mut sink = Sink::default();
        self.push_into(text, &mut sink);
        sink.out
    }

    /// Like `push`, appending to `sink` (no allocation when nothing happened).
    pub fn push_into(&mut self, text: &str, sink: &mut Sink) {
        let before = sink.out.len();
        match &mut self.engine {
            Engine::Harmony(h) => h.push(text, false, sink),
            Engine::Split { reasoning, tool } => match reasoning {
                None => match tool {
                    None => sink.content(text),
                    Some(t) => t.push(text, false, sink),
                },
                Some(r) => match tool {
                    None => r.push(text, false, sink, &mut |s: &str, k: &mut Sink| k.content(s)),
                    Some(t) => r.push(text, false, sink, &mut |s: &str, k: &mut Sink| t.push(s, false, k)),
                },
            },
        }
        self.limit_calls(sink, before);
        self.count_calls(&sink.out[before..]);
    }

    /// `parallel_tool_calls: false`: calls past the limit are dropped, id, name and arguments.
    fn limit_calls(&self, sink: &mut Sink, from: usize) {
        let Some(max) = self.max_tool_calls else { return };
        let tail = sink.out.split_off(from);
        sink.out.extend(tail.into_iter().filter(|d| match d {
            Delta::ToolStart { index, .. } | Delta::ToolArgs { index, .. } => *index < max,
            _ => true,
        }));
    }

    /// Adds raw UTF-8 bytes that may end inside a character (held until complete).
    /// Invalid sequences become U+FFFD.
    pub fn push_bytes(&mut self, bytes: &[u8]) -> Vec<Delta> {
        self.utf8_carry.extend_from_slice(bytes);
        // Release everything up to a trailing incomplete character, past invalid sequences
        // too: an incomplete character after an invalid byte may still be completed by the
        // next push (cutting there made one U+FFFD per split instead of the character).
        let mut valid = 0;
        loop {
            match std::str::from_utf8(&self.utf8_carry[valid..]) {
                Ok(_) => {
                    valid = self.utf8_carry.len();
                    break;
                }
                Err(e) => match e.error_len() {
                    None => {
                        valid += e.valid_up_to();
                        break;
                    }
                    Some(n) => valid += e.valid_up_to() + n,
                },
            }
        }
        let chunk: Vec<u8> = self.utf8_carry.drain(..valid).collect();
        self.scratch.clear();
        self.scratch.push_str(&String::from_utf8_lossy(&chunk));
        let text = std::mem::take(&mut self.scratch);
        let out = self.push(&text);
        self.scratch = text;
        out
    }

    /// End of the choice: flushes held text and applies the family's truncation rule.
    pub fn finish(&mut self) -> Vec<Delta> {
        let mut sink = Sink::default();
        if !self.utf8_carry.is_empty() {
            let rest = String::from_utf8_lossy(&std::mem::take(&mut self.utf8_carry)).into_owned();
            self.push_into(&rest, &mut sink);
        }
        let before = sink.out.len();
        match &mut self.engine {
            Engine::Harmony(h) => h.push("", true, &mut sink),
            Engine::Split { reasoning, tool } => {
                if let Some(r) = reasoning {
                    match tool {
                        None => r.push("", true, &mut sink, &mut |s: &str, k: &mut Sink| k.content(s)),
                        Some(t) => r.push("", true, &mut sink, &mut |s: &str, k: &mut Sink| t.push(s, false, k)),
                    }
                }
                if let Some(t) = tool {
                    t.push("", true, &mut sink);
                }
            }
        }
        self.limit_calls(&mut sink, before);
        self.count_calls(&sink.out[before..]);
        sink.out
    }

    fn count_calls(&mut self, deltas: &[Delta]) {
        for d in deltas {
            if matches!(d, Delta::ToolStart { .. }) {
                self.tool_calls += 1;
            }
        }
    }

    /// Number of tool calls started so far (finish_reason is `tool_calls` when > 0).
    pub fn tool_call_count(&self) -> u32 {
        self.tool_calls
    }
}

/// Runs a parser over a whole text (batch mode): push + finish.
pub fn parse_all(
    tool: Option<&str>,
    reasoning: Option<&str>,
    opts: &ParserOptions,
    text: &str,
) -> Result<Vec<Delta>, ParserError> {
    let mut p = OutputParser::new(tool, reasoning, opts)?;
    let mut sink = Sink::default();
    p.push_into(text, &mut sink);
    let mut out = sink.out;
    out.extend(p.finish());
    Ok(out)
}

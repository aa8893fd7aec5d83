//! JSON call families: a marker, then a JSON call object or array of them
//! (`{"name": .., "arguments"|"parameters": {..}}`). Argument bytes are forwarded verbatim.
//!
//! hermes/qwen25 `<tool_call>{..}</tool_call>`; nemotron_deci `<TOOLCALL>[..]</TOOLCALL>`;
//! jamba / hunyuan_a13b `<tool_calls>[..]</tool_calls>`; phi4 `functools[..]`;
//! llama3_json `<|python_tag|>{..}` or a bare `{..}` at the start, `;`-separated;
//! default `<TOOLCALL>..</TOOLCALL>`, `<|python_tag|>{..}` or a bare `{..}` / `[..]` at the start; granite `<|tool_call|>[..]`
//! (3.1+: `<tool_call>[..]`, no closing tag); internlm `<|action_start|><|plugin|>{..}<|action_end|>`;
//! xlam a bare `[..]` (also right after a `</think>` block, which stays content), ```` ```json ..``` ````, `<tool_call>..</tool_call>` or `[TOOL_CALLS][..]`;
//! cohere command `<|START_ACTION|>[{"tool_name":..,"parameters":..}]<|END_ACTION|>`;
//! mistral `[TOOL_CALLS][{..}]` (v0.3) or `[TOOL_CALLS]name[ARGS]{..}` / `name{..}` (v11+),
//! with or without the optional `[/TOOL_CALLS]` end marker (consumed, never content).
//!
//! End of stream: a region without its end marker is a call when its body is one complete
//! JSON call value; otherwise it is content.

use super::stream::Head;
use super::{after_balanced, until_marker_json, Ctx, Format, RegionEnd};
use crate::parsers::scan::skip_ws;
use crate::parsers::json::{self, calls_from_json, ARGS, NAME};
use crate::parsers::Call;

#[derive(Clone, Copy)]
pub enum End {
    Marker(&'static str),
    /// The JSON value right after the start marker closes the region.
    Balanced,
}

pub struct JsonFamily {
    pub starts: &'static [&'static str],
    pub ends: &'static [End],
    pub bare: &'static [u8],
    pub seps: &'static [u8],
    pub names: &'static [&'static str],
    pub args: &'static [&'static str],
    /// See `Format::reopens`.
    pub reopens: &'static [&'static str],
    /// Only a JSON array of calls is a call region (phi4, granite: a bare object after the
    /// marker is text, as vLLM reads it).
    pub list_only: bool,
}

pub const HERMES: JsonFamily = JsonFamily {
    starts: &["<tool_call>"],
    ends: &[End::Marker("</tool_call>")],
    bare: b"",
    seps: b"",
    names: NAME,
    args: ARGS,
    reopens: &[],
    list_only: false,
};
pub const NEMOTRON_DECI: JsonFamily = JsonFamily {
    starts: &["<TOOLCALL>"],
    ends: &[End::Marker("</TOOLCALL>")],
    ..HERMES
};
pub const JAMBA: JsonFamily = JsonFamily {
    starts: &["<tool_calls>"],
    ends: &[End::Marker("</tool_calls>")],
    ..HERMES
};
pub const PHI4: JsonFamily = JsonFamily { starts: &["functools"], ends: &[End::Balanced], list_only: true, ..HERMES };
pub const LLAMA3_JSON: JsonFamily = JsonFamily {
    starts: &["<|python_tag|>"],
    ends: &[End::Balanced],
    bare: b"{",
    seps: b";",
    ..HERMES
};
pub const DEFAULT: JsonFamily = JsonFamily {
    starts: &["<TOOLCALL>", "<|python_tag|>"],
    ends: &[End::Marker("</TOOLCALL>"), End::Balanced],
    // Dynamo's default also reads a bare call object or array at the start of the output
    bare: b"{[",
    seps: b";",
    ..HERMES
};
pub const GRANITE: JsonFamily = JsonFamily {
    starts: &["<|tool_call|>", "<tool_call>"],
    ends: &[End::Balanced, End::Balanced],
    // vLLM's granite parser also reads a call list at the start without a marker (the
    // `<|tool_call|>` token removed by skip_special_tokens)
    bare: b"[",
    list_only: true,
    ..HERMES
};
pub const INTERNLM: JsonFamily = JsonFamily {
    starts: &["<|action_start|><|plugin|>"],
    ends: &[End::Marker("<|action_end|>")],
    ..HERMES
};
pub const XLAM: JsonFamily = JsonFamily {
    starts: &["<tool_call>", "```json", "[TOOL_CALLS]"],
    ends: &[End::Marker("</tool_call>"), End::Marker("```"), End::Balanced],
    bare: b"[",
    // vLLM's xLAM parser reads the JSON list right after a `<think>..</think>` block (kept as content)
    reopens: &["</think>"],
    ..HERMES
};
pub const COHERE: JsonFamily = JsonFamily {
    starts: &["<|START_ACTION|>"],
    ends: &[End::Marker("<|END_ACTION|>")],
    names: &["tool_name", "name"],
    args: &["parameters", "arguments"],
    ..HERMES
};

impl JsonFamily {
    fn body<'a>(&self, region: &'a str, marker: Option<usize>) -> &'a str {
        let Some(i) = marker else { return region };
        let start = self.starts[i];
        let mut body = region.get(start.len()..).unwrap_or("");
        if let End::Marker(e) = self.ends[i] {
            body = body.strip_suffix(e).unwrap_or(body);
        }
        body
    }
}

/// Strips a ```json fence some models put around the JSON.
fn unfence(s: &str) -> &str {
    let t = s.trim();
    if let Some(r) = t.strip_prefix("```") {
        let r = r.strip_prefix("json").unwrap_or(r);
        return r.strip_suffix("```").unwrap_or(r).trim();
    }
    t
}

impl Format for JsonFamily {
    fn starts(&self) -> &'static [&'static str] {
        self.starts
    }
    fn bare(&self) -> &'static [u8] {
        self.bare
    }
    fn separators(&self) -> &'static [u8] {
        self.seps
    }
    fn reopens(&self) -> &'static [&'static str] {
        self.reopens
    }
    fn region_end(&self, buf: &str, marker: Option<usize>) -> RegionEnd {
        match marker {
            None => after_balanced(buf, 0, false),
            Some(i) => match self.ends[i] {
                End::Marker(e) => until_marker_json(buf, self.starts[i].len(), e),
                End::Balanced => after_balanced(buf, self.starts[i].len(), false),
            },
        }
    }
    fn parse(&self, region: &str, marker: Option<usize>, _eof: bool, _cx: &Ctx) -> Option<Vec<Call>> {
        let body = unfence(self.body(region, marker));
        if self.list_only && !body.starts_with('[') {
            return None;
        }
        calls_from_json(body, self.names, self.args)
    }
    fn streams(&self) -> bool {
        true
    }
    fn stream_head(&self, region: &str, marker: Option<usize>) -> Head {
        match list_head(region, marker.map_or(0, |i| self.starts[i].len()), self.names, self.args) {
            Head::List { at, .. } if self.list_only && region.as_bytes()[at] != b'[' => Head::No,
            h => h,
        }
    }
}

/// A JSON call object or array right after `skip` (a fence or anything else: not streamed).
pub fn list_head(region: &str, skip: usize, names: &'static [&'static str], args: &'static [&'static str]) -> Head {
    let i = skip_ws(region, skip);
    match region.as_bytes().get(i) {
        None => Head::NeedMore,
        Some(b'[') | Some(b'{') => Head::List { at: i, names, args },
        Some(_) => Head::No,
    }
}

/// Mistral v11 call head `name[ARGS]`, `name[CALL_ID]id[ARGS]` or `name`: the name, if valid.
fn mistral_name(head: &str) -> Option<&str> {
    let head = head.strip_suffix("[ARGS]").unwrap_or(head);
    let name = head.split("[CALL_ID]").next().unwrap_or("").trim();
    if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == '[' || c == ']') {
        return None;
    }
    Some(name)
}

/// Mistral: `[TOOL_CALLS]` followed by a JSON array (v0.3) or `name[ARGS]{..}` (v11+,
/// optionally `name[CALL_ID]id[ARGS]{..}`, or the older `name{..}`).
pub struct Mistral;

const TOOL_CALLS: &str = "[TOOL_CALLS]";

impl Format for Mistral {
    fn starts(&self) -> &'static [&'static str] {
        &[TOOL_CALLS]
    }
    /// The end marker the format allows but does not require.
    fn drops(&self) -> &'static [&'static str] {
        &["[/TOOL_CALLS]"]
    }
    fn region_end(&self, buf: &str, _m: Option<usize>) -> RegionEnd {
        let k = TOOL_CALLS.len();
        let i = crate::parsers::scan::skip_ws(buf, k);
        match buf.as_bytes().get(i) {
            None => RegionEnd::NeedMore,
            Some(b'[') | Some(b'{') => after_balanced(buf, i, false),
            Some(_) => match buf[i..].find('{') {
                Some(p) => after_balanced(buf, i + p, false),
                None => RegionEnd::NeedMore,
            },
        }
    }
    fn parse(&self, region: &str, _m: Option<usize>, _eof: bool, _cx: &Ctx) -> Option<Vec<Call>> {
        let body = region.get(TOOL_CALLS.len()..)?.trim();
        if body.starts_with('[') || body.starts_with('{') {
            return calls_from_json(body, NAME, ARGS);
        }
        let p = body.find('{')?;
        let head = &body[..p];
        let args = body[p..].trim();
        if !json::is_value(args) {
            return None;
        }
        let name = mistral_name(head)?;
        Some(vec![Call { name: name.to_string(), args: args.to_string(), id: None }])
    }
    fn streams(&self) -> bool {
        true
    }
    fn stream_head(&self, region: &str, _m: Option<usize>) -> Head {
        let i = skip_ws(region, TOOL_CALLS.len());
        match region.as_bytes().get(i) {
            None => Head::NeedMore,
            Some(b'[') | Some(b'{') => Head::List { at: i, names: NAME, args: ARGS },
            Some(_) => match region[i..].find('{') {
                None => Head::NeedMore,
                Some(p) => match mistral_name(&region[i..i + p]) {
                    Some(name) => Head::Args { at: i + p, name: name.to_string(), id: None },
                    None => Head::No,
                },
            },
        }
    }
}

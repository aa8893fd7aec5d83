//! Kimi K2: `<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0
//! <|tool_call_argument_begin|>{..}<|tool_call_end|><|tool_calls_section_end|>`
//! (singular `<|tool_call_section_begin|>` variants too). The model's id
//! (`functions.get_weather:0`) is kept as the OpenAI id; the name is the part between
//! `functions.` and `:index`. Regions are per call; the section markers are dropped.
//!
//! End of stream: a call without `<|tool_call_end|>` is recovered when its arguments are
//! one complete JSON object; otherwise it is content.

use super::stream::Head;
use super::{until_marker_json, Ctx, Format, RegionEnd};
use crate::parsers::scan::skip_ws;
use crate::parsers::json;
use crate::parsers::Call;

pub struct Kimi;

const BEGIN: &str = "<|tool_call_begin|>";
const ARG: &str = "<|tool_call_argument_begin|>";
const END: &str = "<|tool_call_end|>";

impl Format for Kimi {
    fn starts(&self) -> &'static [&'static str] {
        &[BEGIN]
    }
    fn drops(&self) -> &'static [&'static str] {
        &[
            "<|tool_calls_section_begin|>",
            "<|tool_calls_section_end|>",
            "<|tool_call_section_begin|>",
            "<|tool_call_section_end|>",
        ]
    }
    fn region_end(&self, buf: &str, _m: Option<usize>) -> RegionEnd {
        until_marker_json(buf, BEGIN.len(), END)
    }
    fn parse(&self, region: &str, _m: Option<usize>, _eof: bool, _cx: &Ctx) -> Option<Vec<Call>> {
        let body = &region[BEGIN.len()..];
        let body = body.strip_suffix(END).unwrap_or(body);
        let ap = body.find(ARG)?;
        let id = body[..ap].trim();
        let args = body[ap + ARG.len()..].trim();
        let args = if args.is_empty() { "{}" } else { args };
        if !args.starts_with('{') || !json::is_value(args) {
            return None;
        }
        let name = name_of(id)?;
        Some(vec![Call { name: name.to_string(), args: args.to_string(), id: Some(id.to_string()) }])
    }
    fn streams(&self) -> bool {
        true
    }
    fn stream_head(&self, region: &str, _m: Option<usize>) -> Head {
        let body = &region[BEGIN.len()..];
        let Some(ap) = body.find(ARG) else {
            return if body.contains(END) { Head::No } else { Head::NeedMore };
        };
        let id = body[..ap].trim();
        let Some(name) = name_of(id).filter(|_| !id.contains(END)) else { return Head::No };
        let at = skip_ws(region, BEGIN.len() + ap + ARG.len());
        match region.as_bytes().get(at) {
            None => Head::NeedMore,
            Some(b'{') => Head::Args { at, name: name.to_string(), id: Some(id.to_string()) },
            Some(_) => Head::No,
        }
    }
}

/// `functions.get_weather:0` → `get_weather` (None when it cannot be an id). The `:index`
/// suffix is required, as vLLM and SGLang require it: a call without one is not a call.
fn name_of(id: &str) -> Option<&str> {
    let no_prefix = id.strip_prefix("functions.").unwrap_or(id);
    let name = match no_prefix.rfind(':') {
        Some(c) if c + 1 < no_prefix.len() && no_prefix[c + 1..].bytes().all(|b| b.is_ascii_digit()) => &no_prefix[..c],
        _ => return None,
    };
    if name.is_empty() || id.contains(char::is_whitespace) {
        return None;
    }
    Some(name)
}

//! MiniMax: M2 `<minimax:tool_call><invoke name="f"><parameter name="k">v</parameter></invoke></minimax:tool_call>`;
//! M3 the same shape with every tag prefixed by the namespace token `]<]minimax[>[` and
//! parameters written as `<key>value</key>`; child elements inside a parameter build objects
//! and arrays typed by the schema (`minimax_nested`). Regions are per invoke, the wrapper is
//! dropped, so calls stream one by one and a missing wrapper end loses nothing.
//!
//! Arguments stream parameter by parameter (see `stream::Head::Params`): the call starts at
//! its name, each parameter goes out when it closes, `}` with `</invoke>`.
//!
//! End of stream: an invoke whose name arrived stays a call (`{` and the parameters that
//! closed); one cut before its name is content.

use super::stream::{all_params, typed_value, CallStep, Head, ParamStep, ParamSyntax};
use super::xml_function::{attr_head, build_args, next_param, params};
use super::{until_marker, Ctx, Format, RegionEnd};
use crate::parsers::values::{attr, ToolSchemas};
use crate::parsers::Call;

fn m2_head(region: &str, from: usize) -> CallStep {
    attr_head(region, from, "<invoke")
}
fn m2_param(body: &str, from: usize, closed: bool) -> ParamStep<'_> {
    next_param(body, from, closed, "<parameter", "</parameter>", true)
}
static M2_SYNTAX: ParamSyntax =
    ParamSyntax { call: m2_head, call_end: "</invoke>", param: m2_param, value: typed_value, multi: false, json_body: false };

pub struct MiniMaxM2;

impl Format for MiniMaxM2 {
    fn starts(&self) -> &'static [&'static str] {
        &["<invoke name="]
    }
    fn drops(&self) -> &'static [&'static str] {
        &["<minimax:tool_call>", "</minimax:tool_call>"]
    }
    fn region_end(&self, buf: &str, _m: Option<usize>) -> RegionEnd {
        until_marker(buf, 1, "</invoke>")
    }
    fn parse(&self, region: &str, _m: Option<usize>, eof: bool, cx: &Ctx) -> Option<Vec<Call>> {
        if eof && !region.ends_with("</invoke>") {
            return None;
        }
        let he = region.find('>')?;
        let name = attr(&region[..he], "name")?.trim();
        if name.is_empty() {
            return None;
        }
        let body = &region[he + 1..region.len() - "</invoke>".len()];
        let ps = params(body, "<parameter", "</parameter>", true);
        Some(vec![Call { name: name.to_string(), args: build_args(name, &ps, cx, typed_value), id: None }])
    }
    fn streams(&self) -> bool {
        true
    }
    fn stream_head(&self, _region: &str, _m: Option<usize>) -> Head {
        Head::Params { at: 0, syntax: &M2_SYNTAX }
    }
}

pub const NS: &str = "]<]minimax[>[";
const M3_INVOKE: &str = "]<]minimax[>[<invoke";
const M3_INVOKE_END: &str = "]<]minimax[>[</invoke>";

pub struct MiniMaxM3;

impl Format for MiniMaxM3 {
    fn starts(&self) -> &'static [&'static str] {
        &[M3_INVOKE]
    }
    fn drops(&self) -> &'static [&'static str] {
        &["]<]minimax[>[<tool_call>", "]<]minimax[>[</tool_call>"]
    }
    fn region_end(&self, buf: &str, _m: Option<usize>) -> RegionEnd {
        until_marker(buf, M3_INVOKE.len(), M3_INVOKE_END)
    }
    fn parse(&self, region: &str, _m: Option<usize>, eof: bool, cx: &Ctx) -> Option<Vec<Call>> {
        if eof && !region.ends_with(M3_INVOKE_END) {
            return None;
        }
        let h0 = M3_INVOKE.len();
        let he = h0 + region[h0..].find('>')?;
        let name = attr(&region[h0..he], "name")?.trim();
        if name.is_empty() {
            return None;
        }
        let body = &region[he + 1..region.len() - M3_INVOKE_END.len()];
        let ps = all_params(body, m3_param);
        Some(vec![Call { name: name.to_string(), args: build_args(name, &ps, cx, m3_value), id: None }])
    }
    fn streams(&self) -> bool {
        true
    }
    fn stream_head(&self, _region: &str, _m: Option<usize>) -> Head {
        Head::Params { at: 0, syntax: &M3_SYNTAX }
    }
}

fn m3_head(region: &str, from: usize) -> CallStep {
    attr_head(region, from, M3_INVOKE)
}

/// `<key>value</key>`, every tag namespaced; other tags (closing, odd names) are skipped.
fn m3_param(body: &str, from: usize, closed: bool) -> ParamStep<'_> {
    let more = if closed { ParamStep::End } else { ParamStep::More };
    let open = "]<]minimax[>[<";
    let mut cur = from;
    loop {
        let Some(p) = body[cur..].find(open) else { return more };
        let k0 = cur + p + open.len();
        let Some(ke) = body[k0..].find('>') else { return more };
        let key = &body[k0..k0 + ke];
        if key.starts_with('/') || key.is_empty() || key.contains(char::is_whitespace) {
            cur = k0 + ke + 1;
            continue;
        }
        let v0 = k0 + ke + 1;
        let close = format!("{NS}</{key}>");
        let Some(ve) = body[v0..].find(&close) else { return more };
        return ParamStep::Found { key, value: &body[v0..v0 + ve], header: "", next: v0 + ve + close.len() };
    }
}

/// A parameter's value: child elements nest (objects/arrays by schema), else the usual typing.
fn m3_value(func: &str, key: &str, v: &str, header: &str, schemas: &ToolSchemas) -> String {
    super::minimax_nested::nested(v, schemas.param_schema(func, key)).unwrap_or_else(|| typed_value(func, key, v, header, schemas))
}

static M3_SYNTAX: ParamSyntax =
    ParamSyntax { call: m3_head, call_end: M3_INVOKE_END, param: m3_param, value: m3_value, multi: false, json_body: false };

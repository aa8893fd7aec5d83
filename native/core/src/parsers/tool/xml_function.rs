//! XML function families: `<function=name><parameter=key>value</parameter></function>`.
//! qwen3_coder / nemotron_nano wrap it in `<tool_call>..</tool_call>` (a bare `<function=`
//! is accepted too); seed_oss wraps it in `<seed:tool_call>..</seed:tool_call>`.
//! Values are typed by the request's tool schema (see `values`); one newline after the
//! opening and before the closing parameter tag is layout, not value. qwen3_coder /
//! nemotron_nano type as vLLM's and SGLang's Qwen3-Coder parsers do (`qwen_value`): a
//! parameter the schema does not declare is a string (the text `null` is null), an object
//! or array parameter written as a Python literal is read as one. A `</function>` missing
//! right before `</tool_call>` is tolerated there (both peers read such a call).
//!
//! End of stream: a call is recovered when its `</function>` arrived (only the wrapper
//! end is missing); otherwise the region is content.

use super::stream::{typed_value, CallStep, Head, ParamStep, ParamSyntax, ValueFn};
use super::{until_marker, Ctx, Format, RegionEnd};
use crate::parsers::values::{attr, json_string, strip_nl, typed, ArgsBuilder, ToolSchemas};
use crate::parsers::Call;

pub struct XmlFunction {
    pub wrapper: (&'static str, &'static str),
    /// qwen3_coder's reading: a bare `<function=..>` opens a call too, values typed by
    /// `qwen_value`, a missing `</function>` before the wrapper end tolerated.
    pub bare_function: bool,
    /// A block given back as content untouched (`starts()[1]` .. this end): Seed-OSS's
    /// `<seed:think>..</seed:think>`, where a call the model quotes while thinking is not a
    /// call (vLLM). Held until it closes.
    pub opaque_end: Option<&'static str>,
}

pub const QWEN3_CODER: XmlFunction =
    XmlFunction { wrapper: ("<tool_call>", "</tool_call>"), bare_function: true, opaque_end: None };
pub const SEED_OSS: XmlFunction = XmlFunction {
    wrapper: ("<seed:tool_call>", "</seed:tool_call>"),
    bare_function: false,
    opaque_end: Some("</seed:think>"),
};

const FUNC: &str = "<function=";
const FUNC_END: &str = "</function>";

/// The next parameter of an element body at or after `from`: `open` starts a parameter tag
/// whose header runs to `>`; `name_attr` reads `name="k"` from the header, otherwise the
/// header is the name. A value ends at `close`, or (tolerated) at the next parameter or,
/// when `closed`, the end of the body.
pub fn next_param<'a>(body: &'a str, from: usize, closed: bool, open: &str, close: &str, name_attr: bool) -> ParamStep<'a> {
    let more = if closed { ParamStep::End } else { ParamStep::More };
    let Some(p) = body[from..].find(open) else { return more };
    let h0 = from + p + open.len();
    let Some(he) = body[h0..].find('>') else { return more };
    let header = &body[h0..h0 + he];
    let key = if name_attr {
        attr(header, "name").unwrap_or("")
    } else {
        header.trim().trim_matches(|c| c == '"' || c == '\'')
    };
    let v0 = h0 + he + 1;
    let rest = &body[v0..];
    let (vlen, next) = match (rest.find(close), rest.find(open)) {
        (Some(c), Some(o)) if o < c => (o, v0 + o),
        (Some(c), _) => (c, v0 + c + close.len()),
        (None, Some(o)) => (o, v0 + o),
        (None, None) if closed => (rest.len(), body.len()),
        (None, None) => return ParamStep::More,
    };
    ParamStep::Found { key, value: &rest[..vlen], header, next }
}

/// Parameters of a complete element body (see `next_param`).
pub fn params<'a>(body: &'a str, open: &str, close: &str, name_attr: bool) -> Vec<(&'a str, &'a str, &'a str)> {
    let mut out = Vec::new();
    let mut cur = 0;
    while let ParamStep::Found { key, value, header, next } = next_param(body, cur, true, open, close, name_attr) {
        if !key.is_empty() {
            out.push((key, value, header));
        }
        cur = next;
    }
    out
}

/// Builds the arguments JSON of `func` from XML parameters, each converted by `value`
/// (the conversion the format streams with, e.g. `stream::typed_value`).
pub fn build_args(func: &str, ps: &[(&str, &str, &str)], cx: &Ctx, value: ValueFn) -> String {
    let mut a = ArgsBuilder::default();
    for (k, v, h) in ps {
        a.push(k, &value(func, k, v, h, cx.schemas));
    }
    a.finish()
}

/// `TAG name="f" ...>` (minimax, step3, DSML invokes): the next call from `from`.
pub fn attr_head(region: &str, from: usize, tag: &str) -> CallStep {
    let Some(p) = region[from..].find(tag) else { return CallStep::More };
    let h0 = from + p + tag.len();
    let Some(he) = region[h0..].find('>') else { return CallStep::More };
    match attr(&region[h0..h0 + he], "name").map(str::trim) {
        Some(name) if !name.is_empty() => CallStep::Found { name: name.to_string(), body: h0 + he + 1 },
        _ => CallStep::Bad,
    }
}

/// `<function=NAME>`: the next call from `from`.
fn function_head(region: &str, from: usize) -> CallStep {
    let Some(p) = region[from..].find(FUNC) else { return CallStep::More };
    let n0 = from + p + FUNC.len();
    let Some(ne) = region[n0..].find('>') else { return CallStep::More };
    let name = region[n0..n0 + ne].trim();
    if valid_name(name) {
        CallStep::Found { name: name.to_string(), body: n0 + ne + 1 }
    } else {
        CallStep::Bad
    }
}

fn function_param(body: &str, from: usize, closed: bool) -> ParamStep<'_> {
    next_param(body, from, closed, "<parameter=", "</parameter>", false)
}

static SYNTAX: ParamSyntax =
    ParamSyntax { call: function_head, call_end: FUNC_END, param: function_param, value: typed_value, multi: true, json_body: false };
static QWEN_SYNTAX: ParamSyntax = ParamSyntax { value: qwen_value, ..SYNTAX };

/// qwen3_coder's value typing (vLLM's and SGLang's `_convert_param_value`): undeclared
/// parameters stay strings, `null` is null unless the parameter is a string, and an
/// object/array parameter that is not JSON is read as a Python literal.
pub fn qwen_value(func: &str, key: &str, v: &str, _header: &str, schemas: &ToolSchemas) -> String {
    let raw = strip_nl(v);
    let ty = schemas.param_type(func, key);
    if ty != Some("string") && raw.trim() == "null" {
        return "null".into();
    }
    match ty {
        None => json_string(raw),
        Some(t @ ("object" | "array")) => {
            let j = typed(raw, Some(t));
            if j.starts_with('"') {
                let open = if t == "object" { '{' } else { '[' };
                if let Some(p) = super::pythonic::python_literal(raw.trim()).filter(|p| p.starts_with(open)) {
                    return p;
                }
            }
            j
        }
        ty => typed(raw, ty),
    }
}

pub fn valid_name(n: &str) -> bool {
    !n.is_empty() && !n.contains(|c: char| c.is_whitespace() || c == '<' || c == '>')
}

impl Format for XmlFunction {
    fn starts(&self) -> &'static [&'static str] {
        if self.bare_function {
            // qwen3_coder: the wrapper, or a bare function element (back-off)
            &["<tool_call>", FUNC]
        } else {
            &["<seed:tool_call>", "<seed:think>"]
        }
    }
    fn region_end(&self, buf: &str, marker: Option<usize>) -> RegionEnd {
        self.region_end_from(buf, marker, 0)
    }
    fn region_end_from(&self, buf: &str, marker: Option<usize>, floor: usize) -> RegionEnd {
        // plain marker search: an end not found in buf[..floor] starts at floor - len + 1 or later
        let (skip, end) = match (marker, self.opaque_end) {
            (Some(1), Some(e)) => (self.starts()[1].len(), e),
            (Some(1), None) => (FUNC.len(), FUNC_END),
            _ => (self.wrapper.0.len(), self.wrapper.1),
        };
        let mut from = skip.max(floor.saturating_sub(end.len()));
        while !buf.is_char_boundary(from) {
            from -= 1;
        }
        until_marker(buf, from, end)
    }
    fn parse(&self, region: &str, marker: Option<usize>, _eof: bool, cx: &Ctx) -> Option<Vec<Call>> {
        if self.opaque(marker) {
            return None; // given back as content
        }
        let mut calls = Vec::new();
        let mut cur = 0;
        while let Some(p) = region[cur..].find(FUNC) {
            let n0 = cur + p + FUNC.len();
            let ne = n0 + region[n0..].find('>')?;
            let name = region[n0..ne].trim();
            let b0 = ne + 1;
            let (be, next) = match region[b0..].find(FUNC_END) {
                Some(p) => (b0 + p, b0 + p + FUNC_END.len()),
                // qwen3_coder: `</function>` missing right before the wrapper's end
                None if self.bare_function && marker == Some(0) && region.ends_with(self.wrapper.1) => {
                    let e = region.len() - self.wrapper.1.len();
                    (e.max(b0), region.len())
                }
                None => return None, // unclosed function: not a call
            };
            if !valid_name(name) {
                return None;
            }
            let ps = params(&region[b0..be], "<parameter=", "</parameter>", false);
            let args = build_args(name, &ps, cx, if self.bare_function { qwen_value } else { typed_value });
            calls.push(Call { name: name.to_string(), args, id: None });
            cur = next;
        }
        if calls.is_empty() {
            None
        } else {
            Some(calls)
        }
    }
    fn streams(&self) -> bool {
        true
    }
    fn stream_head(&self, _region: &str, m: Option<usize>) -> Head {
        if self.opaque(m) {
            return Head::No;
        }
        Head::Params { at: 0, syntax: if self.bare_function { &QWEN_SYNTAX } else { &SYNTAX } }
    }
}

impl XmlFunction {
    fn opaque(&self, marker: Option<usize>) -> bool {
        self.opaque_end.is_some() && marker == Some(1)
    }
}

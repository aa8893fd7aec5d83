//! GLM-4.5 / GLM-4.7: `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>...</tool_call>`
//! (4.5 puts newlines between the parts, 4.7 does not; both are accepted by both names).
//!
//! Arguments stream parameter by parameter (see `stream::Head::Params`): the call starts
//! once its name ends (at the first `<arg_key>`), each pair goes out when its
//! `</arg_value>` arrives, `}` with `</tool_call>`. A pair missing a part ends the arguments.
//!
//! End of stream: a call whose name arrived stays a call (`{` and the pairs that closed);
//! one cut before that is content.

use super::stream::{all_params, typed_value, CallStep, Head, ParamStep, ParamSyntax};
use crate::parsers::values::ToolSchemas;
use super::{until_marker, Ctx, Format, RegionEnd};
use crate::parsers::values::ArgsBuilder;
use crate::parsers::Call;

pub struct Glm;

const START: &str = "<tool_call>";
const END: &str = "</tool_call>";

impl Format for Glm {
    fn starts(&self) -> &'static [&'static str] {
        &[START]
    }
    fn region_end(&self, buf: &str, _m: Option<usize>) -> RegionEnd {
        until_marker(buf, START.len(), END)
    }
    fn parse(&self, region: &str, _m: Option<usize>, eof: bool, cx: &Ctx) -> Option<Vec<Call>> {
        if eof && !region.ends_with(END) {
            return None;
        }
        let body = &region[START.len()..region.len() - END.len()];
        let name_end = body.find(KEY).unwrap_or(body.len());
        let name = body[..name_end].trim();
        if !valid_name(name) {
            return None;
        }
        let mut a = ArgsBuilder::default();
        for (k, v, h) in all_params(&body[name_end..], param) {
            a.push(k, &value(name, k, v, h, cx.schemas));
        }
        Some(vec![Call { name: name.to_string(), args: a.finish(), id: None }])
    }
    fn streams(&self) -> bool {
        true
    }
    fn stream_head(&self, _region: &str, _m: Option<usize>) -> Head {
        Head::Params { at: 0, syntax: &SYNTAX }
    }
}

const KEY: &str = "<arg_key>";
const KEY_END: &str = "</arg_key>";
const VALUE: &str = "<arg_value>";
const VALUE_END: &str = "</arg_value>";

fn valid_name(n: &str) -> bool {
    !n.is_empty() && !n.contains(|c: char| c.is_whitespace() || c == '<' || c == '>' || c == '{')
}

/// The name runs from `<tool_call>` to the first `<arg_key>` (or the end marker).
fn head(region: &str, _from: usize) -> CallStep {
    let rest = &region[START.len().min(region.len())..];
    let name_end = match (rest.find(KEY), rest.find(END)) {
        (Some(k), Some(e)) => k.min(e),
        (Some(k), None) => k,
        (None, Some(e)) => e,
        (None, None) => return CallStep::More,
    };
    let name = rest[..name_end].trim();
    if valid_name(name) {
        CallStep::Found { name: name.to_string(), body: START.len() + name_end }
    } else {
        CallStep::Bad
    }
}

/// `<arg_key>k</arg_key>` then `<arg_value>v</arg_value>`.
fn param(body: &str, from: usize, closed: bool) -> ParamStep<'_> {
    let more = if closed { ParamStep::End } else { ParamStep::More };
    let find = |from: usize, tag: &str| body[from..].find(tag).map(|p| from + p);
    let Some(k0) = find(from, KEY).map(|p| p + KEY.len()) else { return more };
    let Some(ke) = find(k0, KEY_END) else { return more };
    let after = ke + KEY_END.len();
    let Some(v0) = find(after, VALUE).map(|p| p + VALUE.len()) else { return more };
    let Some(ve) = find(v0, VALUE_END) else { return more };
    ParamStep::Found { key: body[k0..ke].trim(), value: &body[v0..ve], header: "", next: ve + VALUE_END.len() }
}

/// Typed by schema; without a declared type, Python's `True`/`False`/`None` are JSON's
/// `true`/`false`/`null` (GLM writes Python literals; vLLM and SGLang both convert them).
fn value(func: &str, key: &str, v: &str, header: &str, schemas: &ToolSchemas) -> String {
    if schemas.param_type(func, key).is_none() {
        match v.trim() {
            "True" => return "true".into(),
            "False" => return "false".into(),
            "None" => return "null".into(),
            _ => {}
        }
    }
    typed_value(func, key, v, header, schemas)
}

static SYNTAX: ParamSyntax = ParamSyntax { call: head, call_end: END, param, value, multi: false, json_body: false };

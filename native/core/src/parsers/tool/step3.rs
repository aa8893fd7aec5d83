//! Step-3: `<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="f">
//! <steptml:parameter name="k">v</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>`.
//! Regions are per call; the section markers are dropped. Values sit inline between the
//! parameter tags: a string value keeps every byte, newlines included (vLLM).
//!
//! Arguments stream parameter by parameter (see `stream::Head::Params`): the call starts at
//! its invoke name, each parameter goes out when it closes, `}` with `</steptml:invoke>`.
//!
//! End of stream: a call whose invoke name arrived stays a call (`{` and the parameters
//! that closed, `}` too when `</steptml:invoke>` arrived); one cut before it is content.

use super::stream::{exact_value, CallStep, Head, ParamStep, ParamSyntax};
use super::xml_function::{attr_head, build_args, next_param, params};
use super::{until_marker, Ctx, Format, RegionEnd};
use crate::parsers::values::attr;
use crate::parsers::Call;

pub struct Step3;

const BEGIN: &str = "<｜tool_call_begin｜>";
const END: &str = "<｜tool_call_end｜>";
const INVOKE: &str = "<steptml:invoke";
const INVOKE_END: &str = "</steptml:invoke>";

impl Format for Step3 {
    fn starts(&self) -> &'static [&'static str] {
        &[BEGIN]
    }
    fn drops(&self) -> &'static [&'static str] {
        &["<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"]
    }
    fn region_end(&self, buf: &str, _m: Option<usize>) -> RegionEnd {
        until_marker(buf, BEGIN.len(), END)
    }
    fn parse(&self, region: &str, _m: Option<usize>, _eof: bool, cx: &Ctx) -> Option<Vec<Call>> {
        let i0 = region.find(INVOKE)? + INVOKE.len();
        let he = i0 + region[i0..].find('>')?;
        let name = attr(&region[i0..he], "name")?.trim();
        let be = he + 1 + region[he + 1..].find(INVOKE_END)?;
        if name.is_empty() {
            return None;
        }
        let ps = params(&region[he + 1..be], "<steptml:parameter", "</steptml:parameter>", true);
        Some(vec![Call { name: name.to_string(), args: build_args(name, &ps, cx, exact_value), id: None }])
    }
    fn streams(&self) -> bool {
        true
    }
    fn stream_head(&self, _region: &str, _m: Option<usize>) -> Head {
        Head::Params { at: 0, syntax: &SYNTAX }
    }
}

fn head(region: &str, from: usize) -> CallStep {
    attr_head(region, from, INVOKE)
}
fn param(body: &str, from: usize, closed: bool) -> ParamStep<'_> {
    next_param(body, from, closed, "<steptml:parameter", "</steptml:parameter>", true)
}
static SYNTAX: ParamSyntax = ParamSyntax { call: head, call_end: INVOKE_END, param, value: exact_value, multi: false, json_body: false };

//! DeepSeek V3.2 / V4 DSML: `<｜DSML｜function_calls>` (V3.2) or `<｜DSML｜tool_calls>` (V4)
//! around `<｜DSML｜invoke name="f"><｜DSML｜parameter name="k" string="true">v</｜DSML｜parameter>
//! </｜DSML｜invoke>`. `string="true"` values are JSON strings; `string="false"` values are
//! JSON text kept verbatim (typed by schema when not valid JSON). Both block names are
//! accepted by both parser names. Regions are per invoke; block markers are dropped.
//!
//! Arguments stream parameter by parameter (see `stream::Head::Params`): the call starts at
//! its invoke name, each parameter goes out when it closes, `}` with `</｜DSML｜invoke>`.
//!
//! End of stream: an invoke whose name arrived stays a call (`{` and the parameters that
//! closed); one cut before its name is content.

use super::stream::{CallStep, Head, ParamStep, ParamSyntax};
use super::xml_function::{attr_head, next_param, params};
use super::{until_marker, Ctx, Format, RegionEnd};
use crate::parsers::json;
use crate::parsers::values::{attr, json_string, strip_nl, typed, ArgsBuilder, ToolSchemas};
use crate::parsers::Call;

pub struct Dsml;

const INVOKE: &str = "<｜DSML｜invoke";
const INVOKE_END: &str = "</｜DSML｜invoke>";

impl Format for Dsml {
    fn starts(&self) -> &'static [&'static str] {
        &[INVOKE]
    }
    fn drops(&self) -> &'static [&'static str] {
        &[
            "<｜DSML｜function_calls>",
            "</｜DSML｜function_calls>",
            "<｜DSML｜tool_calls>",
            "</｜DSML｜tool_calls>",
        ]
    }
    fn region_end(&self, buf: &str, _m: Option<usize>) -> RegionEnd {
        until_marker(buf, INVOKE.len(), INVOKE_END)
    }
    fn parse(&self, region: &str, _m: Option<usize>, eof: bool, cx: &Ctx) -> Option<Vec<Call>> {
        if eof && !region.ends_with(INVOKE_END) {
            return None;
        }
        let h0 = INVOKE.len();
        let he = h0 + region[h0..].find('>')?;
        let name = attr(&region[h0..he], "name")?.trim();
        if name.is_empty() {
            return None;
        }
        let body = &region[he + 1..region.len() - INVOKE_END.len()];
        let mut a = ArgsBuilder::default();
        for (k, v, header) in params(body, P_OPEN, P_CLOSE, true) {
            a.push(k, &value(name, k, v, header, cx.schemas));
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

const P_OPEN: &str = "<｜DSML｜parameter";
const P_CLOSE: &str = "</｜DSML｜parameter>";

/// `string="true"`: a JSON string; `string="false"`: JSON text kept verbatim; else typed by schema.
fn value(func: &str, k: &str, v: &str, header: &str, schemas: &ToolSchemas) -> String {
    let v = strip_nl(v);
    match attr(header, "string") {
        Some("true") => json_string(v),
        Some("false") if json::is_value(v.trim()) => v.trim().to_string(),
        _ => typed(v, schemas.param_type(func, k)),
    }
}
fn head(region: &str, from: usize) -> CallStep {
    attr_head(region, from, INVOKE)
}
fn param(body: &str, from: usize, closed: bool) -> ParamStep<'_> {
    next_param(body, from, closed, P_OPEN, P_CLOSE, true)
}
static SYNTAX: ParamSyntax = ParamSyntax { call: head, call_end: INVOKE_END, param, value, multi: false };

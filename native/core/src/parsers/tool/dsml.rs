//! DeepSeek V3.2 / V4 DSML: `<｜DSML｜function_calls>` (V3.2) or `<｜DSML｜tool_calls>` (V4)
//! around `<｜DSML｜invoke name="f"><｜DSML｜parameter name="k" string="true">v</｜DSML｜parameter>
//! </｜DSML｜invoke>`. `string="true"` values are JSON strings; `string="false"` values are
//! JSON text kept verbatim (typed by schema when not valid JSON). An invoke whose body is one
//! JSON object instead of parameter tags has that object as its arguments (SGLang).
//!
//! Each generation reads only its own block: the block is the region, so the other
//! generation's block (and an invoke outside any block) is text, as vLLM and SGLang have it.
//!
//! Arguments stream parameter by parameter (see `stream::Head::Params`): a call starts at
//! its invoke name, each parameter goes out when it closes, `}` with `</｜DSML｜invoke>`.
//!
//! End of stream: the invokes that closed are calls when only the block end is missing; a
//! block cut inside an invoke is content.

use super::stream::{json_object_body, CallStep, Head, ParamStep, ParamSyntax};
use super::xml_function::{attr_head, next_param, params};
use super::{until_marker, Ctx, Format, RegionEnd};
use crate::parsers::json;
use crate::parsers::values::{attr, json_string, strip_nl, typed, ArgsBuilder, ToolSchemas};
use crate::parsers::Call;

pub struct Dsml {
    /// The block's opening marker (one), and its closing marker.
    pub open: &'static [&'static str],
    pub close: &'static str,
}

pub const V32: Dsml = Dsml { open: &["<｜DSML｜function_calls>"], close: "</｜DSML｜function_calls>" };
pub const V4: Dsml = Dsml { open: &["<｜DSML｜tool_calls>"], close: "</｜DSML｜tool_calls>" };

const INVOKE: &str = "<｜DSML｜invoke";
const INVOKE_END: &str = "</｜DSML｜invoke>";

impl Format for Dsml {
    fn starts(&self) -> &'static [&'static str] {
        self.open
    }
    fn region_end(&self, buf: &str, m: Option<usize>) -> RegionEnd {
        self.region_end_from(buf, m, 0)
    }
    fn region_end_from(&self, buf: &str, _m: Option<usize>, floor: usize) -> RegionEnd {
        // no end in buf[..floor]: one can only start at floor - len + 1 or later
        let mut from = self.open[0].len().max(floor.saturating_sub(self.close.len()));
        while !buf.is_char_boundary(from) {
            from -= 1;
        }
        until_marker(buf, from, self.close)
    }
    fn parse(&self, region: &str, _m: Option<usize>, _eof: bool, cx: &Ctx) -> Option<Vec<Call>> {
        let mut calls = Vec::new();
        let mut cur = self.open[0].len();
        while let Some(p) = region[cur..].find(INVOKE) {
            let h0 = cur + p + INVOKE.len();
            let he = h0 + region[h0..].find('>')?;
            let name = attr(&region[h0..he], "name")?.trim();
            let be = he + 1 + region[he + 1..].find(INVOKE_END)?; // unclosed invoke: not a call
            if name.is_empty() {
                return None;
            }
            let body = &region[he + 1..be];
            let mut a = ArgsBuilder::default();
            let ps = params(body, P_OPEN, P_CLOSE, true);
            for (k, v, header) in &ps {
                a.push(k, &value(name, k, v, header, cx.schemas));
            }
            // an invoke whose body is one JSON object (no parameter tags): those are its arguments
            let args = match json_object_body(&SYNTAX, &[], body).filter(|_| ps.is_empty()) {
                Some(obj) => obj.to_string(),
                None => a.finish(),
            };
            calls.push(Call { name: name.to_string(), args, id: None });
            cur = be + INVOKE_END.len();
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
    fn stream_head(&self, _region: &str, _m: Option<usize>) -> Head {
        Head::Params { at: self.open[0].len(), syntax: &SYNTAX }
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
static SYNTAX: ParamSyntax = ParamSyntax { call: head, call_end: INVOKE_END, param, value, multi: true, json_body: true };

//! Step-3: `<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="f">
//! <steptml:parameter name="k">v</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>`.
//! Regions are per call; the section markers are dropped.
//!
//! End of stream: a call without `<｜tool_call_end｜>` is recovered when its
//! `</steptml:invoke>` arrived; otherwise it is content.

use super::xml_function::{build_args, params};
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
        Some(vec![Call { name: name.to_string(), args: build_args(name, &ps, cx), id: None }])
    }
}

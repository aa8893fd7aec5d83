//! tool_choice `required` (PRE.4): the engine was asked for JSON-schema guided output, a
//! bare array `[{"name": .., "parameters": {..}}, ..]` (a single object is accepted too).
//! The named-function case streams the arguments object directly (see `ToolEngine`).

use super::json_family::list_head;
use super::stream::Head;
use super::{after_balanced, Ctx, Format, RegionEnd};
use crate::parsers::json::{calls_from_json, NAME};
use crate::parsers::Call;

pub struct RequiredArray;

const GUIDED_ARGS: &[&str] = &["parameters", "arguments"];

impl Format for RequiredArray {
    fn starts(&self) -> &'static [&'static str] {
        &[]
    }
    fn bare(&self) -> &'static [u8] {
        b"[{"
    }
    fn region_end(&self, buf: &str, _m: Option<usize>) -> RegionEnd {
        after_balanced(buf, 0, false)
    }
    fn parse(&self, region: &str, _m: Option<usize>, _eof: bool, _cx: &Ctx) -> Option<Vec<Call>> {
        calls_from_json(region, NAME, GUIDED_ARGS)
    }
    fn streams(&self) -> bool {
        true
    }
    fn stream_head(&self, region: &str, _m: Option<usize>) -> Head {
        list_head(region, 0, NAME, GUIDED_ARGS)
    }
}

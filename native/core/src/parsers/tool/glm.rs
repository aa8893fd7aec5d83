//! GLM-4.5 / GLM-4.7: `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>...</tool_call>`
//! (4.5 puts newlines between the parts, 4.7 does not; both are accepted by both names).
//!
//! End of stream: a `<tool_call>` without `</tool_call>` is content.

use super::{until_marker, Ctx, Format, RegionEnd};
use crate::parsers::values::{strip_nl, typed, ArgsBuilder};
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
        let name_end = body.find("<arg_key>").unwrap_or(body.len());
        let name = body[..name_end].trim();
        if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == '<' || c == '>' || c == '{') {
            return None;
        }
        let mut a = ArgsBuilder::default();
        let mut cur = name_end;
        while let Some(p) = body[cur..].find("<arg_key>") {
            let k0 = cur + p + "<arg_key>".len();
            let ke = k0 + body[k0..].find("</arg_key>")?;
            let key = body[k0..ke].trim();
            let after = ke + "</arg_key>".len();
            let v0 = after + body[after..].find("<arg_value>")? + "<arg_value>".len();
            let ve = v0 + body[v0..].find("</arg_value>")?;
            a.push(key, &typed(strip_nl(&body[v0..ve]), cx.schemas.param_type(name, key)));
            cur = ve + "</arg_value>".len();
        }
        Some(vec![Call { name: name.to_string(), args: a.finish(), id: None }])
    }
}

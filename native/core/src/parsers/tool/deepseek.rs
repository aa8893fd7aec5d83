//! DeepSeek V3 / R1: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>name
//! ```json\n{..}\n```<｜tool▁call▁end｜>..<｜tool▁calls▁end｜>`;
//! DeepSeek V3.1: `<｜tool▁call▁begin｜>name<｜tool▁sep｜>{..}<｜tool▁call▁end｜>`.
//! One parser reads both shapes (told apart by the ```json fence). Regions are per call;
//! the section markers are dropped.
//!
//! End of stream: a call without `<｜tool▁call▁end｜>` is recovered when its arguments are
//! complete (V3: the closing fence arrived; V3.1: one complete JSON object).

use super::{until_marker_json, Ctx, Format, RegionEnd};
use crate::parsers::json;
use crate::parsers::Call;

pub struct DeepSeek;

const BEGIN: &str = "<｜tool▁call▁begin｜>";
const SEP: &str = "<｜tool▁sep｜>";
const END: &str = "<｜tool▁call▁end｜>";

impl Format for DeepSeek {
    fn starts(&self) -> &'static [&'static str] {
        &[BEGIN]
    }
    fn drops(&self) -> &'static [&'static str] {
        &["<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"]
    }
    fn region_end(&self, buf: &str, _m: Option<usize>) -> RegionEnd {
        until_marker_json(buf, BEGIN.len(), END)
    }
    fn parse(&self, region: &str, _m: Option<usize>, _eof: bool, _cx: &Ctx) -> Option<Vec<Call>> {
        let body = &region[BEGIN.len()..];
        let body = body.strip_suffix(END).unwrap_or(body);
        let sp = body.find(SEP)?;
        let (left, right) = (body[..sp].trim(), &body[sp + SEP.len()..]);
        let (name, args) = if let Some(f) = right.find("```") {
            // V3: type<sep>name\n```json\n{..}\n```
            let name = right[..f].trim();
            let after = &right[f + 3..];
            let after = after.strip_prefix("json").unwrap_or(after);
            let close = after.find("```")?;
            (name, after[..close].trim())
        } else {
            (left, right.trim())
        };
        let args = if args.is_empty() { "{}" } else { args };
        if name.is_empty() || name.contains(char::is_whitespace) || !args.starts_with('{') || !json::is_value(args) {
            return None;
        }
        Some(vec![Call { name: name.to_string(), args: args.to_string(), id: None }])
    }
}

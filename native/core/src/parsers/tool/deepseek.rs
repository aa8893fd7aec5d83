//! DeepSeek V3 / R1: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>name
//! ```json\n{..}\n```<｜tool▁call▁end｜>..<｜tool▁calls▁end｜>`;
//! DeepSeek V3.1: `<｜tool▁call▁begin｜>name<｜tool▁sep｜>{..}<｜tool▁call▁end｜>`.
//! One parser reads both shapes (told apart by the ```json fence). Regions are per call;
//! the section markers are dropped.
//!
//! End of stream: a call without `<｜tool▁call▁end｜>` is recovered when its arguments are
//! complete (V3: the closing fence arrived; V3.1: one complete JSON object).

use super::stream::Head;
use super::{until_marker_json, Ctx, Format, RegionEnd};
use crate::parsers::scan::skip_ws;
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
    fn streams(&self) -> bool {
        true
    }
    /// V3.1 `name<sep>{`; V3 `function<sep>name\n```json\n{`.
    fn stream_head(&self, region: &str, _m: Option<usize>) -> Head {
        let body = &region[BEGIN.len()..];
        let Some(sp) = body.find(SEP) else {
            return if body.contains(END) { Head::No } else { Head::NeedMore };
        };
        let r0 = BEGIN.len() + sp + SEP.len();
        let right = &region[r0..];
        let valid = |n: &str| !n.is_empty() && !n.contains(char::is_whitespace) && !n.contains(END);
        let i = skip_ws(right, 0);
        match right.as_bytes().get(i) {
            None => return Head::NeedMore,
            Some(b'{') => {
                let name = body[..sp].trim();
                return if valid(name) { Head::Args { at: r0 + i, name: name.to_string(), id: None } } else { Head::No };
            }
            Some(_) => {}
        }
        let Some(f) = right.find("```") else {
            return if right.contains(END) { Head::No } else { Head::NeedMore };
        };
        let name = right[..f].trim();
        if !valid(name) {
            return Head::No;
        }
        let mut a = f + 3;
        let tail = &right[a..];
        if tail.len() < 4 && "json".starts_with(tail) {
            return Head::NeedMore;
        }
        if tail.starts_with("json") {
            a += 4;
        }
        let j = skip_ws(right, a);
        match right.as_bytes().get(j) {
            None => Head::NeedMore,
            Some(b'{') => Head::Args { at: r0 + j, name: name.to_string(), id: None },
            Some(_) => Head::No,
        }
    }
}

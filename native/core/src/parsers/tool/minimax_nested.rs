//! MiniMax M3 nested parameter values. Inside a parameter the model writes child elements
//! (`NS<city>Singapore NS</city>`, `NS<item>.. NS</item>`, every tag namespaced); they build
//! JSON objects and arrays typed by the parameter's schema, as vLLM's M3 parser reads them:
//! - an `array` parameter: each child is one element, typed by `items`;
//! - otherwise an object: each child is a member, typed by `properties[name]` (or
//!   `additionalProperties`); a name written twice collects its values in an array;
//! - a child without children is a scalar typed by its schema (`018956` for an integer is
//!   18956), or, without one, by the usual rule (`values::typed`).
//!
//! A value that is not only child elements (text around them) is a scalar, as before.

use super::minimax::NS;
use crate::parsers::values::{json_string, typed};
use serde_json::Value;

/// The JSON of a parameter value that nests, or None when `raw` has no child elements.
pub fn nested(raw: &str, schema: Option<&Value>) -> Option<String> {
    children(raw).map(|ch| build(&ch, schema))
}

/// The top-level child elements of `raw` (name, inner text), in order. None unless `raw` is
/// made of child elements and whitespace only.
fn children(raw: &str) -> Option<Vec<(&str, &str)>> {
    let open = format!("{NS}<");
    let mut out = Vec::new();
    let mut cur = 0;
    loop {
        let rest = &raw[cur..];
        let t = rest.trim_start();
        if t.is_empty() {
            break;
        }
        if !t.starts_with(&open) {
            return None;
        }
        let k0 = cur + (rest.len() - t.len()) + open.len();
        let ke = k0 + raw[k0..].find('>')?;
        let name = &raw[k0..ke];
        if name.is_empty() || name.starts_with('/') || name.contains(char::is_whitespace) {
            return None;
        }
        let (inner_end, next) = matching_close(raw, ke + 1, name)?;
        out.push((name, &raw[ke + 1..inner_end]));
        cur = next;
    }
    (!out.is_empty()).then_some(out)
}

/// Where the element `name` opened before `from` closes (same-name elements nest): the end of
/// its inner text and the position after its close tag.
fn matching_close(raw: &str, from: usize, name: &str) -> Option<(usize, usize)> {
    let open = format!("{NS}<{name}>");
    let close = format!("{NS}</{name}>");
    let mut depth = 1;
    let mut cur = from;
    loop {
        let c = cur + raw[cur..].find(&close)?;
        match raw[cur..c].find(&open) {
            Some(o) => {
                depth += 1;
                cur = cur + o + open.len();
            }
            None => {
                depth -= 1;
                if depth == 0 {
                    return Some((c, c + close.len()));
                }
                cur = c + close.len();
            }
        }
    }
}

fn value(raw: &str, schema: Option<&Value>) -> String {
    match children(raw) {
        Some(ch) => build(&ch, schema),
        None => scalar(raw, schema),
    }
}

fn build(ch: &[(&str, &str)], schema: Option<&Value>) -> String {
    let ty = type_of(schema);
    let is_array = match ty {
        Some(t) => t == "array",
        None => ch.iter().all(|(n, _)| *n == "item"),
    };
    if is_array {
        let items = schema.and_then(|s| s.get("items"));
        let parts: Vec<String> = ch.iter().map(|(_, inner)| value(inner, items)).collect();
        return format!("[{}]", parts.join(","));
    }
    let mut names: Vec<&str> = Vec::new();
    for (n, _) in ch {
        if !names.contains(n) {
            names.push(n);
        }
    }
    let members: Vec<String> = names
        .iter()
        .map(|n| {
            let sub = member_schema(schema, n);
            let vals: Vec<&str> = ch.iter().filter(|(m, _)| m == n).map(|(_, inner)| *inner).collect();
            let v = if vals.len() == 1 {
                value(vals[0], sub)
            } else {
                let elem = if type_of(sub) == Some("array") { sub.and_then(|s| s.get("items")) } else { sub };
                format!("[{}]", vals.iter().map(|x| value(x, elem)).collect::<Vec<_>>().join(","))
            };
            format!("{}:{v}", json_string(n))
        })
        .collect();
    format!("{{{}}}", members.join(","))
}

fn member_schema<'a>(schema: Option<&'a Value>, name: &str) -> Option<&'a Value> {
    let s = schema?;
    s.get("properties").and_then(|p| p.get(name)).or_else(|| s.get("additionalProperties").filter(|a| a.is_object()))
}

/// `type`, the first non-null of a type list, or the first non-null `anyOf`/`oneOf` type.
fn type_of(schema: Option<&Value>) -> Option<&str> {
    let s = schema?;
    match s.get("type") {
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(a)) => a.iter().filter_map(|x| x.as_str()).find(|x| *x != "null"),
        _ => {
            let alts = s.get("anyOf").or_else(|| s.get("oneOf")).and_then(|a| a.as_array());
            match alts {
                Some(alts) => alts.iter().filter_map(|a| a.get("type")?.as_str()).find(|t| *t != "null"),
                None if s.get("properties").is_some() => Some("object"),
                None if s.get("items").is_some() => Some("array"),
                None => None,
            }
        }
    }
}

fn scalar(raw: &str, schema: Option<&Value>) -> String {
    let ty = type_of(schema);
    let t = raw.trim();
    if t == "null" && ty != Some("string") {
        return "null".into();
    }
    if ty == Some("integer") {
        // digits with leading zeros (a zip code) are the integer they spell
        let digits = t.strip_prefix('-').unwrap_or(t);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            let n = digits.trim_start_matches('0');
            let n = if n.is_empty() { "0" } else { n };
            return if t.starts_with('-') && n != "0" { format!("-{n}") } else { n.to_string() };
        }
    }
    typed(raw, ty)
}

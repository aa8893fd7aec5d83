//! Python-compatible text forms of template values, as a transformers chat template sees
//! them: `json.dumps(x, ensure_ascii=False, indent=..., separators=..., sort_keys=...)`
//! (the `tojson` filter) and `str(x)` (what `{{ x }}` prints: None, True, ['a'], {'k': 1}).

use std::fmt::Write;

use minijinja::value::{Value, ValueKind};

use crate::template_value::JsonMap;

/// Options of transformers' `tojson` filter.
pub struct JsonOptions {
    pub indent: Option<String>,
    pub item_sep: String,
    pub key_sep: String,
    pub sort_keys: bool,
    pub ensure_ascii: bool,
}

impl JsonOptions {
    /// Python's defaults: `", "`/`": "` without indent, `","`/`": "` with it.
    pub fn new(indent: Option<String>) -> JsonOptions {
        let item_sep = if indent.is_some() { "," } else { ", " }.to_owned();
        JsonOptions {
            indent,
            item_sep,
            key_sep: ": ".to_owned(),
            sort_keys: false,
            ensure_ascii: false,
        }
    }

    /// `json.dumps(x, ensure_ascii=False)`'s own options (the text `JsonMap` keeps).
    fn is_default(&self) -> bool {
        self.indent.is_none()
            && self.item_sep == ", "
            && self.key_sep == ": "
            && !self.sort_keys
            && !self.ensure_ascii
    }
}

/// `json.dumps` of a template value.
pub fn to_json(value: &Value, opts: &JsonOptions) -> String {
    let mut out = String::new();
    write_json(&mut out, value, opts, 0);
    out
}

fn write_json(out: &mut String, value: &Value, opts: &JsonOptions, depth: usize) {
    if let Some(map) = value.downcast_object_ref::<JsonMap>() {
        if opts.is_default() {
            out.push_str(map.default_json(|inner| to_json(inner, opts)));
        } else {
            write_json(out, map.inner(), opts, depth);
        }
        return;
    }
    match value.kind() {
        ValueKind::Undefined | ValueKind::None => out.push_str("null"),
        ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
        ValueKind::Number => write_number(out, value, "NaN", "Infinity"),
        ValueKind::String => {
            write_json_str(out, value.as_str().unwrap_or_default(), opts.ensure_ascii)
        }
        ValueKind::Map => {
            let mut entries: Vec<(Value, Value)> = map_entries(value);
            if opts.sort_keys {
                entries.sort_by_key(|e| e.0.to_string());
            }
            write_container(out, '{', '}', entries.len(), opts, depth, |out, i| {
                let (k, v) = &entries[i];
                let key = match k.kind() {
                    ValueKind::String => k.as_str().unwrap_or_default().to_owned(),
                    _ => {
                        let mut s = String::new();
                        write_json(&mut s, k, opts, depth + 1);
                        s
                    }
                };
                write_json_str(out, &key, opts.ensure_ascii);
                out.push_str(&opts.key_sep);
                write_json(out, v, opts, depth + 1);
            });
        }
        ValueKind::Seq | ValueKind::Iterable => {
            let items: Vec<Value> = value.try_iter().map(|it| it.collect()).unwrap_or_default();
            write_container(out, '[', ']', items.len(), opts, depth, |out, i| {
                write_json(out, &items[i], opts, depth + 1)
            });
        }
        _ => write_json_str(out, &value.to_string(), opts.ensure_ascii),
    }
}

fn write_container(
    out: &mut String,
    open: char,
    close: char,
    len: usize,
    opts: &JsonOptions,
    depth: usize,
    mut item: impl FnMut(&mut String, usize),
) {
    out.push(open);
    if len == 0 {
        out.push(close);
        return;
    }
    for i in 0..len {
        if i > 0 {
            out.push_str(&opts.item_sep);
        }
        if let Some(ind) = &opts.indent {
            out.push('\n');
            (0..=depth).for_each(|_| out.push_str(ind));
        }
        item(out, i);
    }
    if let Some(ind) = &opts.indent {
        out.push('\n');
        (0..depth).for_each(|_| out.push_str(ind));
    }
    out.push(close);
}

fn map_entries(value: &Value) -> Vec<(Value, Value)> {
    let Ok(keys) = value.try_iter() else {
        return Vec::new();
    };
    keys.map(|k| {
        let v = value.get_item(&k).unwrap_or(Value::UNDEFINED);
        (k, v)
    })
    .collect()
}

fn write_json_str(out: &mut String, s: &str, ensure_ascii: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (ensure_ascii && (c as u32) > 0x7e) => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{:04x}", unit);
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Numbers as Python prints them: ints as digits, floats as `repr(float)`.
fn write_number(out: &mut String, value: &Value, nan: &str, inf: &str) {
    if value.is_integer() {
        let _ = write!(out, "{value}");
        return;
    }
    let Ok(f) = f64::try_from(value.clone()) else {
        let _ = write!(out, "{value}");
        return;
    };
    out.push_str(&py_float(f, nan, inf));
}

/// Python's `repr(float)`: shortest round-trip digits, exponent form outside 1e-4..1e16.
pub fn py_float(f: f64, nan: &str, inf: &str) -> String {
    if f.is_nan() {
        return nan.to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            inf.to_owned()
        } else {
            format!("-{inf}")
        };
    }
    let sci = format!("{:e}", f.abs()); // e.g. "1.5e-7", "1e16"
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let point = exp + 1; // digits before the decimal point
        let (int_part, frac_part) = if point <= 0 {
            (
                "0".to_owned(),
                format!("{}{}", "0".repeat((-point) as usize), digits),
            )
        } else if (point as usize) >= digits.len() {
            (
                format!("{}{}", digits, "0".repeat(point as usize - digits.len())),
                String::new(),
            )
        } else {
            (
                digits[..point as usize].to_owned(),
                digits[point as usize..].to_owned(),
            )
        };
        let frac = if frac_part.is_empty() {
            "0".to_owned()
        } else {
            frac_part
        };
        format!("{sign}{int_part}.{frac}")
    } else {
        let m = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{m}e{esign}{:02}", exp.abs())
    }
}

/// `str(x)` in Python, used when a template prints a value with `{{ x }}`.
pub fn to_py_str(value: &Value) -> String {
    match value.kind() {
        ValueKind::String => value.as_str().unwrap_or_default().to_owned(),
        _ => {
            let mut out = String::new();
            write_repr(&mut out, value);
            out
        }
    }
}

fn write_repr(out: &mut String, value: &Value) {
    match value.kind() {
        ValueKind::Undefined => {}
        ValueKind::None => out.push_str("None"),
        ValueKind::Bool => out.push_str(if value.is_true() { "True" } else { "False" }),
        ValueKind::Number => write_number(out, value, "nan", "inf"),
        ValueKind::String => write_py_str_repr(out, value.as_str().unwrap_or_default()),
        ValueKind::Seq => {
            out.push('[');
            if let Ok(items) = value.try_iter() {
                for (i, item) in items.enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_repr(out, &item);
                }
            }
            out.push(']');
        }
        ValueKind::Map => {
            out.push('{');
            for (i, (k, v)) in map_entries(value).iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, k);
                out.push_str(": ");
                write_repr(out, v);
            }
            out.push('}');
        }
        _ => {
            let _ = write!(out, "{value}");
        }
    }
}

/// `repr(str)`: single quotes unless the text has a ' and no ".
fn write_py_str_repr(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(json: &str) -> Value {
        Value::from_serialize(serde_json::from_str::<serde_json::Value>(json).unwrap())
    }

    #[test]
    fn json_dumps_like_python() {
        let x = v(r#"{"b": [1, 2.5, null, true], "a": "é\n\"", "c": {}}"#);
        assert_eq!(
            to_json(&x, &JsonOptions::new(None)),
            r#"{"b": [1, 2.5, null, true], "a": "é\n\"", "c": {}}"#
        );
        assert_eq!(
            to_json(&x, &JsonOptions::new(Some("  ".into()))),
            "{\n  \"b\": [\n    1,\n    2.5,\n    null,\n    true\n  ],\n  \"a\": \"é\\n\\\"\",\n  \"c\": {}\n}"
        );
        let mut ascii = JsonOptions::new(None);
        ascii.ensure_ascii = true;
        assert_eq!(to_json(&v(r#""é😀""#), &ascii), r#""\u00e9\ud83d\ude00""#);
    }

    #[test]
    fn floats_like_python_repr() {
        assert_eq!(py_float(1.0, "NaN", "Infinity"), "1.0");
        assert_eq!(py_float(0.1, "NaN", "Infinity"), "0.1");
        assert_eq!(py_float(-2.5, "NaN", "Infinity"), "-2.5");
        assert_eq!(py_float(1e16, "NaN", "Infinity"), "1e+16");
        assert_eq!(py_float(123456.0, "NaN", "Infinity"), "123456.0");
        assert_eq!(py_float(1.5e-7, "NaN", "Infinity"), "1.5e-07");
        assert_eq!(py_float(0.0001, "NaN", "Infinity"), "0.0001");
    }

    #[test]
    fn str_like_python() {
        assert_eq!(to_py_str(&Value::from(())), "None");
        assert_eq!(to_py_str(&Value::from(true)), "True");
        assert_eq!(to_py_str(&v(r#"["a", {"k": 1}]"#)), "['a', {'k': 1}]");
    }
}

//! A small JSON span scanner: finds the members of an object and the exact byte spans of
//! their values, so argument text is forwarded byte for byte (key order, spacing, `1.0`,
//! big integers) instead of being re-serialized.

use super::Call;

/// End (exclusive) of the JSON value starting at `b[i]` (after whitespace), or None if
/// invalid / incomplete.
pub fn value_end(b: &[u8], i: usize) -> Option<usize> {
    value_end_at(b, i, 0)
}

/// Containers nested deeper than this are not read as JSON (None, like an invalid value).
/// The reader recurses once per level: without a bound, model output (or a /parse request)
/// of a few hundred thousand `[` overflowed the thread's stack and aborted the process.
/// serde_json stops at 128; argument objects are a handful of levels deep.
pub const MAX_DEPTH: usize = 1000;

fn value_end_at(b: &[u8], i: usize, depth: usize) -> Option<usize> {
    if depth >= MAX_DEPTH {
        return None;
    }
    let i = ws(b, i);
    match *b.get(i)? {
        b'{' => {
            let mut j = ws(b, i + 1);
            if *b.get(j)? == b'}' {
                return Some(j + 1);
            }
            loop {
                if *b.get(j)? != b'"' {
                    return None;
                }
                j = string_end(b, j)?;
                j = ws(b, j);
                if *b.get(j)? != b':' {
                    return None;
                }
                j = value_end_at(b, j + 1, depth + 1)?;
                j = ws(b, j);
                match *b.get(j)? {
                    b',' => j = ws(b, j + 1),
                    b'}' => return Some(j + 1),
                    _ => return None,
                }
            }
        }
        b'[' => {
            let mut j = ws(b, i + 1);
            if *b.get(j)? == b']' {
                return Some(j + 1);
            }
            loop {
                j = value_end_at(b, j, depth + 1)?;
                j = ws(b, j);
                match *b.get(j)? {
                    b',' => j += 1,
                    b']' => return Some(j + 1),
                    _ => return None,
                }
            }
        }
        b'"' => string_end(b, i),
        b't' => lit(b, i, b"true"),
        b'f' => lit(b, i, b"false"),
        b'n' => lit(b, i, b"null"),
        b'-' | b'0'..=b'9' => number_end(b, i),
        _ => None,
    }
}

fn lit(b: &[u8], i: usize, w: &[u8]) -> Option<usize> {
    if b.len() >= i + w.len() && &b[i..i + w.len()] == w {
        Some(i + w.len())
    } else {
        None
    }
}

fn number_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    if b.get(j) == Some(&b'-') {
        j += 1;
    }
    let d0 = j;
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
    }
    if j == d0 || (b[d0] == b'0' && j - d0 > 1) {
        return None;
    }
    if b.get(j) == Some(&b'.') {
        j += 1;
        let f0 = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j == f0 {
            return None;
        }
    }
    if matches!(b.get(j), Some(b'e') | Some(b'E')) {
        j += 1;
        if matches!(b.get(j), Some(b'+') | Some(b'-')) {
            j += 1;
        }
        let e0 = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j == e0 {
            return None;
        }
    }
    Some(j)
}

/// End of the string starting at `b[i] == '"'` (validates escapes and control chars).
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'"' => return Some(j + 1),
            b'\\' => {
                match *b.get(j + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => j += 2,
                    b'u' => {
                        if b.len() < j + 6 || !b[j + 2..j + 6].iter().all(|c| c.is_ascii_hexdigit()) {
                            return None;
                        }
                        j += 6
                    }
                    _ => return None,
                }
            }
            c if c < 0x20 => return None,
            _ => j += 1,
        }
    }
    None
}

fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// True when `s` is exactly one JSON value (surrounding whitespace allowed).
pub fn is_value(s: &str) -> bool {
    let b = s.as_bytes();
    match value_end(b, 0) {
        Some(e) => ws(b, e) == b.len(),
        None => false,
    }
}

/// Members of the object `s` (must be exactly one object): (decoded key, value text).
pub fn members(s: &str) -> Option<Vec<(String, &str)>> {
    let b = s.as_bytes();
    single_container(s, b'{', b'}', |j| {
        let ke = string_end(b, j)?;
        let key: String = serde_json::from_str(&s[j..ke]).ok()?;
        let vs = ws(b, ws(b, ke) + 1); // past ':'
        let ve = value_end(b, vs)?;
        Some(((key, &s[vs..ve]), ve))
    })
}

/// Elements of the array `s` (must be exactly one array), as value texts.
pub fn elements(s: &str) -> Option<Vec<&str>> {
    single_container(s, b'[', b']', |j| {
        let ve = value_end(s.as_bytes(), j)?;
        Some((&s[j..ve], ve))
    })
}

/// The items of `s` when it is exactly one JSON container opened by `open` and closed by
/// `close` (whitespace around it allowed, nothing else), else None. `item` reads the item
/// starting at byte `j` and returns it with the index just past it; the container has been
/// validated whole before `item` is called, so separators need no checking here.
fn single_container<T>(s: &str, open: u8, close: u8, mut item: impl FnMut(usize) -> Option<(T, usize)>) -> Option<Vec<T>> {
    let b = s.as_bytes();
    let start = ws(b, 0);
    if b.get(start) != Some(&open) {
        return None;
    }
    let end = value_end(b, start)?;
    if ws(b, end) != b.len() {
        return None;
    }
    let mut out = Vec::new();
    let mut j = ws(b, start + 1);
    if b[j] == close {
        return Some(out);
    }
    loop {
        let (v, e) = item(j)?;
        out.push(v);
        j = ws(b, e);
        if b[j] == close {
            return Some(out);
        }
        j = ws(b, j + 1);
    }
}

/// Decodes a JSON string literal.
pub fn decode_str(v: &str) -> Option<String> {
    if v.starts_with('"') {
        serde_json::from_str(v).ok()
    } else {
        None
    }
}

/// Arguments text from a value: objects kept verbatim; a string holding JSON is unwrapped
/// (some models stringify their arguments); anything else is invalid.
pub fn args_text(v: &str) -> Option<String> {
    let t = v.trim();
    if t.starts_with('{') {
        return Some(t.to_string());
    }
    if t.starts_with('"') {
        let inner = decode_str(t)?;
        if inner.trim().is_empty() {
            return Some("{}".to_string());
        }
        if inner.trim_start().starts_with('{') && is_value(&inner) {
            return Some(inner.trim().to_string());
        }
    }
    None
}

/// One call object `{"name": .., "arguments"|"parameters": {..}}` (keys configurable).
pub fn call_from_object(s: &str, name_keys: &[&str], args_keys: &[&str]) -> Option<Call> {
    let m = members(s)?;
    let mut name = None;
    let mut args = None;
    let mut id = None;
    for (k, v) in &m {
        if name.is_none() && name_keys.contains(&k.as_str()) {
            name = decode_str(v);
        } else if args.is_none() && args_keys.contains(&k.as_str()) {
            args = Some(args_text(v)?);
        } else if k == "function" && v.trim_start().starts_with('{') {
            // OpenAI-shaped {"type":"function","function":{"name":..,"arguments":..}}
            if let Some(c) = call_from_object(v, name_keys, args_keys) {
                return Some(c);
            }
        } else if k == "id" || k == "tool_call_id" {
            id = decode_str(v);
        }
    }
    let name = name?;
    if name.is_empty() {
        return None;
    }
    let _ = id; // generated ids are used: model-written ids here are not unique per request
    Some(Call { name, args: args.unwrap_or_else(|| "{}".to_string()), id: None })
}

/// A JSON object call or an array of them.
pub fn calls_from_json(s: &str, name_keys: &[&str], args_keys: &[&str]) -> Option<Vec<Call>> {
    let t = s.trim();
    if t.starts_with('[') {
        let els = elements(t)?;
        if els.is_empty() {
            return None;
        }
        els.iter().map(|e| call_from_object(e, name_keys, args_keys)).collect()
    } else {
        Some(vec![call_from_object(t, name_keys, args_keys)?])
    }
}

pub const NAME: &[&str] = &["name"];
pub const ARGS: &[&str] = &["arguments", "parameters"];

#[cfg(test)]
mod depth_tests {
    use super::*;

    #[test]
    fn deep_nesting_is_not_json_and_does_not_overflow_the_stack() {
        // found by native/core/examples/fuzz.rs: 200,000 `[` aborted the process
        let deep = "[".repeat(2_000_000);
        assert_eq!(value_end(deep.as_bytes(), 0), None);
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(value_end(ok.as_bytes(), 0), Some(ok.len()));
        let over = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(value_end(over.as_bytes(), 0), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_bytes() {
        let c = call_from_object(r#"{"name": "f", "arguments": {"b": 1.0, "a":  12345678901234567890123}}"#, NAME, ARGS)
            .unwrap();
        assert_eq!(c.args, r#"{"b": 1.0, "a":  12345678901234567890123}"#);
        assert!(call_from_object(r#"{"name": "f", "arguments": {"b": }}"#, NAME, ARGS).is_none());
        assert_eq!(call_from_object(r#"{"name":"f"}"#, NAME, ARGS).unwrap().args, "{}");
        assert_eq!(call_from_object(r#"{"name":"f","arguments":"{\"x\":1}"}"#, NAME, ARGS).unwrap().args, r#"{"x":1}"#);
    }

    #[test]
    fn members_and_elements_take_exactly_one_container() {
        let m = members(" {\"a\" : 1.0 ,\"b\\u0041\":{\"c\":[1, 2]}, \"d\":\"x\"}\n").unwrap();
        assert_eq!(m, vec![("a".to_string(), "1.0"), ("bA".to_string(), r#"{"c":[1, 2]}"#), ("d".to_string(), r#""x""#)]);
        assert_eq!(members(" { } ").unwrap(), vec![]);
        assert_eq!(elements("\t[ 1 , {\"a\": [ ]} ,\"s\",null ]\r\n").unwrap(), vec!["1", r#"{"a": [ ]}"#, r#""s""#, "null"]);
        assert_eq!(elements("[ ]").unwrap(), Vec::<&str>::new());
        for bad in ["", " ", "[]", "{} x", "{}{}", "{", "{\"a\":}", "{\"a\":1,}", "\"{}\"", "x{}"] {
            assert!(members(bad).is_none(), "members({bad:?})");
        }
        for bad in ["", "{}", "[] x", "[][]", "[", "[1,]", "[,1]", "\"[]\"", "1"] {
            assert!(elements(bad).is_none(), "elements({bad:?})");
        }
    }
}

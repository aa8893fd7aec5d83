//! Typed parameter values for the XML-style formats (qwen3_coder, minimax, glm, DSML...),
//! where the model writes `<parameter=name>value</parameter>` and the JSON type has to be
//! chosen. Rule (documented in docs/parsers.md): with the request's tool schema, the
//! declared type wins (for `anyOf`/`oneOf`, the first non-null alternative's type) (string stays a string even if it looks like a number); without one,
//! a value that is exactly one JSON number / true / false / null / object / array is kept
//! verbatim, anything else becomes a JSON string. Number text is never reformatted.

use std::collections::{HashMap, HashSet};

use super::json;

/// Declared parameter types of the request's tools: function → parameter → JSON type.
#[derive(Debug, Clone, Default)]
pub struct ToolSchemas {
    map: HashMap<String, HashMap<String, String>>,
    /// The declared schema of each parameter (function → parameter → schema), for values that
    /// nest (MiniMax M3's child elements).
    props: HashMap<String, HashMap<String, serde_json::Value>>,
    /// (function, parameter) pairs whose schema allows `null` (`type: [.., "null"]`,
    /// `anyOf`/`oneOf` with a null alternative).
    nullable: HashSet<(String, String)>,
    /// Only the offered functions are tool calls (a chat request's `tools`, SGLang's rule).
    restrict: bool,
}

impl ToolSchemas {
    /// Parses an OpenAI `tools` array (`[{type, function:{name, parameters:{properties}}}]`).
    pub fn parse(tools_json: &str) -> Result<ToolSchemas, String> {
        let v: serde_json::Value =
            serde_json::from_str(tools_json).map_err(|e| format!("tools is not JSON: {e}"))?;
        let mut map = HashMap::new();
        let mut all_props = HashMap::new();
        let mut nullable = HashSet::new();
        let arr = v.as_array().ok_or("tools must be a JSON array")?;
        for t in arr {
            let f = t.get("function").unwrap_or(t);
            let Some(name) = f.get("name").and_then(|n| n.as_str()) else { continue };
            let mut params = HashMap::new();
            let mut schemas = HashMap::new();
            if let Some(props) = f
                .get("parameters")
                .and_then(|p| p.get("properties"))
                .and_then(|p| p.as_object())
            {
                for (k, s) in props {
                    schemas.insert(k.clone(), s.clone());
                    if allows_null(s) {
                        nullable.insert((name.to_string(), k.clone()));
                    }
                    let ty = match s.get("type") {
                        Some(serde_json::Value::String(t)) => t.clone(),
                        Some(serde_json::Value::Array(a)) => a
                            .iter()
                            .filter_map(|x| x.as_str())
                            .find(|x| *x != "null")
                            .unwrap_or("string")
                            .to_string(),
                        // composed schemas (`Optional[str]` is anyOf string/null): the first
                        // alternative that is not null names the type (vLLM's rule)
                        _ => {
                            if let Some(t) = composed_type(s) {
                                t
                            } else if s.get("properties").is_some() {
                                "object".to_string()
                            } else if s.get("items").is_some() {
                                "array".to_string()
                            } else {
                                continue;
                            }
                        }
                    };
                    params.insert(k.clone(), ty);
                }
            }
            map.insert(name.to_string(), params);
            all_props.insert(name.to_string(), schemas);
        }
        Ok(ToolSchemas { map, props: all_props, nullable, restrict: false })
    }

    /// From now on only the functions in `tools` are tool calls.
    pub fn restrict_to_offered(&mut self) {
        self.restrict = true;
    }

    /// Is `func` a tool call (always, unless restricted to the offered functions)?
    pub fn offers(&self, func: &str) -> bool {
        !self.restrict || self.map.contains_key(func)
    }

    /// The declared schema of a parameter, as the request gave it.
    pub fn param_schema(&self, func: &str, param: &str) -> Option<&serde_json::Value> {
        self.props.get(func)?.get(param)
    }

    pub fn param_type(&self, func: &str, param: &str) -> Option<&str> {
        self.map.get(func)?.get(param).map(|s| s.as_str())
    }

    /// Does a declared parameter read the literal `null` as JSON null? Yes unless it is a
    /// plain (non-nullable) string (vLLM's and SGLang's MiniMax/Step-3 conversion).
    pub fn null_allowed(&self, func: &str, param: &str) -> bool {
        match self.param_type(func, param) {
            Some("string") => self.nullable.contains(&(func.to_string(), param.to_string())),
            _ => true,
        }
    }
}

/// `type: [.., "null"]` or an `anyOf`/`oneOf` alternative of type null.
fn allows_null(s: &serde_json::Value) -> bool {
    let is_null = |t: &serde_json::Value| t.as_str() == Some("null");
    match s.get("type") {
        Some(serde_json::Value::Array(a)) => a.iter().any(is_null),
        _ => s
            .get("anyOf")
            .or_else(|| s.get("oneOf"))
            .and_then(|a| a.as_array())
            .is_some_and(|a| a.iter().any(|x| x.get("type").is_some_and(is_null))),
    }
}

/// `anyOf` / `oneOf`: the type of the first alternative that is not `null`.
fn composed_type(s: &serde_json::Value) -> Option<String> {
    let alts = s.get("anyOf").or_else(|| s.get("oneOf"))?.as_array()?;
    alts.iter().filter_map(|a| a.get("type")?.as_str()).find(|t| *t != "null").map(str::to_string)
}

/// JSON text for a raw parameter value, following the module rule.
pub fn typed(raw: &str, ty: Option<&str>) -> String {
    let t = raw.trim();
    match ty {
        Some("string") => json_string(raw),
        Some("integer") | Some("number") => {
            if is_number(t) {
                t.to_string()
            } else {
                json_string(raw)
            }
        }
        Some("boolean") => match t.to_ascii_lowercase().as_str() {
            "true" => "true".into(),
            "false" => "false".into(),
            _ => json_string(raw),
        },
        Some("object") | Some("array") => {
            if (t.starts_with('{') || t.starts_with('[')) && json::is_value(t) {
                t.to_string()
            } else if let Some(j) = unescaped_json(t) {
                j
            } else {
                json_string(raw)
            }
        }
        Some("null") if t == "null" => "null".into(),
        _ => {
            if t == "true" || t == "false" || t == "null" || is_number(t) {
                t.to_string()
            } else if (t.starts_with('{') || t.starts_with('[')) && json::is_value(t) {
                t.to_string()
            } else {
                json_string(raw)
            }
        }
    }
}

/// An object/array value the model wrote escaped, as the inside of a JSON string
/// (`[{\"id\": \"1\"}]`): the JSON it stands for (SGLang's GLM detector reads it so).
fn unescaped_json(t: &str) -> Option<String> {
    if !(t.starts_with('{') || t.starts_with('[')) || !t.contains("\\\"") {
        return None;
    }
    let s = json::decode_str(&format!("\"{t}\""))?;
    ((s.starts_with('{') || s.starts_with('[')) && json::is_value(&s)).then_some(s)
}

pub fn is_number(t: &str) -> bool {
    let b = t.as_bytes();
    matches!(b.first(), Some(b'-') | Some(b'0'..=b'9')) && json::value_end(b, 0) == Some(b.len())
}

pub fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// Builds `{"k":v,...}` in insertion order; a repeated key keeps its first value.
#[derive(Default)]
pub struct ArgsBuilder {
    s: String,
    keys: Vec<String>,
}

impl ArgsBuilder {
    pub fn push(&mut self, key: &str, value_json: &str) {
        if self.keys.iter().any(|k| k == key) {
            return;
        }
        self.s.push(if self.keys.is_empty() { '{' } else { ',' });
        self.s.push_str(&json_string(key));
        self.s.push(':');
        self.s.push_str(value_json);
        self.keys.push(key.to_string());
    }
    pub fn finish(mut self) -> String {
        if self.keys.is_empty() {
            return "{}".into();
        }
        self.s.push('}');
        self.s
    }
}

/// Strips one leading and one trailing newline (XML formats put values on their own line).
pub fn strip_nl(s: &str) -> &str {
    let s = s.strip_prefix("\r\n").or_else(|| s.strip_prefix('\n')).unwrap_or(s);
    s.strip_suffix("\r\n").or_else(|| s.strip_suffix('\n')).unwrap_or(s)
}

/// Value of `name="x"` / `name='x'` / `name=x` at the start of `attrs`.
pub fn attr<'a>(attrs: &'a str, key: &str) -> Option<&'a str> {
    let mut rest = attrs;
    loop {
        let p = rest.find(key)?;
        let after = rest[p + key.len()..].trim_start();
        if let Some(v) = after.strip_prefix('=') {
            let v = v.trim_start();
            for q in ['"', '\''] {
                if let Some(x) = v.strip_prefix(q) {
                    return x.find(q).map(|e| &x[..e]);
                }
            }
            let e = v.find(|c: char| c.is_whitespace() || c == '>').unwrap_or(v.len());
            return Some(&v[..e]);
        }
        rest = &rest[p + key.len()..];
    }
}

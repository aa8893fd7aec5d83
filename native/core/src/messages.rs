//! Chat messages arrive as raw JSON bytes (a span of the HTTP body) and are parsed here,
//! then normalised the way vLLM prepares them for a text-only chat template.

use serde_json::{Map, Value};

use crate::content_format::ContentFormat;
use crate::error::{CoreError, Result};
use crate::message_shape::{check_message, kind};

/// Parses a JSON array of message objects.
pub fn parse_messages(bytes: &[u8]) -> Result<Vec<Value>> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| CoreError::InvalidMessages(e.to_string()))?;
    let Value::Array(items) = value else {
        return Err(CoreError::InvalidMessages(format!(
            "expected an array of messages, got {}",
            kind(&value)
        )));
    };
    for (i, m) in items.iter().enumerate() {
        if !m.is_object() {
            return Err(CoreError::InvalidMessages(format!(
                "messages[{i}] must be an object, got {}",
                kind(m)
            )));
        }
    }
    Ok(items)
}

/// Parses an optional JSON array (tools): `None` for an absent span.
pub fn parse_array(bytes: Option<&[u8]>, what: &str) -> Result<Option<Value>> {
    let Some(bytes) = bytes else { return Ok(None) };
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| CoreError::InvalidMessages(format!("{what}: {e}")))?;
    match value {
        Value::Array(_) => Ok(Some(value)),
        Value::Null => Ok(None),
        other => Err(CoreError::InvalidMessages(format!(
            "{what}: expected an array, got {}",
            kind(&other)
        ))),
    }
}

/// The text of a message's `content`: a string, null/absent (""), or a list of parts whose
/// text parts are joined with `sep`. Non-text parts are refused (text-only model).
pub fn content_text(message: &Value, index: usize, sep: &str) -> Result<String> {
    match message.get("content") {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Ok(text_parts(message, index)?.join(sep)),
    }
}

/// The text parts of a message's `content` (a string is one part; null/absent none).
pub fn text_parts<'a>(message: &'a Value, index: usize) -> Result<Vec<&'a str>> {
    match message.get("content") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![s.as_str()]),
        Some(Value::Array(parts)) => parts
            .iter()
            .enumerate()
            .map(|(j, part)| {
                part_text(part).ok_or_else(|| unsupported_part(part, index, j))
            })
            .collect(),
        Some(other) => Err(CoreError::InvalidMessages(format!(
            "messages[{index}].content must be a string, an array of parts or null, got {}",
            kind(other)
        ))),
    }
}

/// The parts of a message's `content` for a template that loops over them: text parts as
/// `{"type": "text", "text": ...}`, image parts as `{"type": "image"}` (the marker the
/// request path puts where an image was, once it has taken the image out: a multimodal
/// template emits the model's image placeholder for it), anything else refused.
fn openai_parts(message: &Value, index: usize) -> Result<Vec<Value>> {
    if let Some(Value::Array(parts)) = message.get("content") {
        if parts.iter().any(is_image_marker) {
            return parts
                .iter()
                .enumerate()
                .map(|(j, part)| match part_text(part) {
                    Some(t) => Ok(serde_json::json!({"type": "text", "text": t})),
                    None if is_image_marker(part) => Ok(serde_json::json!({"type": "image"})),
                    None => Err(unsupported_part(part, index, j)),
                })
                .collect();
        }
    }
    Ok(text_parts(message, index)?
        .into_iter()
        .map(|t| serde_json::json!({"type": "text", "text": t}))
        .collect())
}

fn is_image_marker(part: &Value) -> bool {
    matches!(part, Value::Object(o) if o.len() == 1 && o.get("type").and_then(Value::as_str) == Some("image"))
}

fn unsupported_part(part: &Value, index: usize, j: usize) -> CoreError {
    CoreError::InvalidMessages(format!(
        "messages[{index}].content[{j}]: unsupported content part {} (only text parts are supported)",
        part.get("type").map(Value::to_string).unwrap_or_else(|| kind(part).to_owned())
    ))
}

fn part_text(part: &Value) -> Option<&str> {
    match part {
        Value::String(s) => Some(s),
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("text") | Some("input_text") | Some("output_text") | None => {
                o.get("text").and_then(Value::as_str)
            }
            _ => None,
        },
        _ => None,
    }
}

/// Prepares messages for a chat template, as vLLM does for text-only templates:
/// * `content` becomes a string (text parts joined with "\n"; null/absent → ""), or, for a
///   template that loops over content (`ContentFormat::OpenAi`), a list of
///   `{"type": "text", "text": ...}` parts (a string is one part; null/absent none);
/// * an assistant's `tool_calls[].function.arguments` given as a JSON-object string is
///   parsed into a mapping (templates such as Llama 3's `| tojson` it; Qwen3 takes both).
///
/// * other keys whose value is null are dropped (vLLM never forwards them; transformers
///   drops them too, so templates see a missing key rather than None);
/// * reasoning given as `reasoning_content`, `thinking` or `reasoning` is also exposed
///   under `thinking` (first) and `reasoning_content` (transformers 5's aliasing).
///
/// Other fields are kept as sent, in their order.
pub fn normalise_for_template(messages: Vec<Value>, format: ContentFormat) -> Result<Vec<Value>> {
    messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| normalise_message(m, i, format))
        .collect()
}

/// One message of `normalise_for_template` (`index` only names it in errors): a message's
/// normalised form depends on nothing but its own JSON.
/// The message's shape is checked first (`message_shape`): nothing below iterates a member
/// of the wrong type.
pub fn normalise_message(mut m: Value, index: usize, format: ContentFormat) -> Result<Value> {
    check_message(&m, index)?;
    let content = match (format, m.get_mut("content")) {
        // Moved, not copied: a system prompt can be hundreds of KB.
        (ContentFormat::String, Some(Value::String(s))) => Value::String(std::mem::take(s)),
        (ContentFormat::String, _) => Value::String(content_text(&m, index, "\n")?),
        (ContentFormat::OpenAi, _) => Value::Array(openai_parts(&m, index)?),
    };
    let Value::Object(mut obj) = m else {
        return unreachable_object();
    };
    obj.retain(|k, v| !v.is_null() || k == "content");
    obj.insert("content".to_owned(), content);
    if let Some(Value::Array(calls)) = obj.get_mut("tool_calls") {
        calls.iter_mut().for_each(parse_arguments);
    }
    Ok(Value::Object(alias_reasoning(obj)))
}

fn unreachable_object<T>() -> Result<T> {
    Err(CoreError::InvalidMessages("a message must be an object".into()))
}

const REASONING_KEYS: [&str; 3] = ["reasoning_content", "thinking", "reasoning"];

/// `{"thinking": r, **message, "reasoning_content": r}` when any reasoning key holds a value.
fn alias_reasoning(obj: Map<String, Value>) -> Map<String, Value> {
    let Some(r) = REASONING_KEYS.iter().find_map(|k| obj.get(*k).cloned()) else {
        return obj;
    };
    let mut out = Map::with_capacity(obj.len() + 2);
    out.insert("thinking".to_owned(), r.clone());
    for (k, v) in obj {
        out.insert(k, v);
    }
    out.insert("reasoning_content".to_owned(), r);
    out
}

fn parse_arguments(call: &mut Value) {
    let Some(args) = call
        .get_mut("function")
        .and_then(|f| f.get_mut("arguments"))
    else {
        return;
    };
    if let Value::String(s) = args {
        if let Ok(parsed @ Value::Object(_)) = serde_json::from_str::<Value>(s) {
            *args = parsed;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_json_names_position() {
        let err = parse_messages(br#"[{"role": "user", "content": }]"#).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("invalid messages JSON: "), "{msg}");
        assert!(msg.contains("line 1 column"), "{msg}");
    }

    #[test]
    fn not_an_array() {
        let err = parse_messages(br#"{"role": "user"}"#).unwrap_err();
        assert!(err.to_string().contains("expected an array"), "{err}");
        let err = parse_messages(br#"["hi"]"#).unwrap_err();
        assert!(
            err.to_string().contains("messages[0] must be an object"),
            "{err}"
        );
    }

    #[test]
    fn parts_are_joined_and_null_is_empty() {
        let msgs = parse_messages(
            br#"[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
                {"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"x\": 1}"}}]}]"#,
        )
        .unwrap();
        let out = normalise_for_template(msgs, ContentFormat::String).unwrap();
        assert_eq!(out[0]["content"], "a\nb");
        assert_eq!(out[1]["content"], "");
        assert_eq!(out[1]["tool_calls"][0]["function"]["arguments"]["x"], 1);
        let msgs = parse_messages(br#"[{"role":"user","content":"a"},{"role":"user","content":null}]"#).unwrap();
        let out = normalise_for_template(msgs, ContentFormat::OpenAi).unwrap();
        assert_eq!(out[0]["content"], serde_json::json!([{"type": "text", "text": "a"}]));
        assert_eq!(out[1]["content"], serde_json::json!([]));
    }

    #[test]
    fn image_marker_stays_a_part_for_an_openai_template_only() {
        let msgs = parse_messages(br#"[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}]"#).unwrap();
        let out = normalise_for_template(msgs.clone(), ContentFormat::OpenAi).unwrap();
        assert_eq!(out[0]["content"], serde_json::json!([{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]));
        let err = normalise_for_template(msgs, ContentFormat::String).unwrap_err();
        assert!(err.to_string().contains("content[1]: unsupported content part \"image\""), "{err}");
        // A marker with members is a client's part, not Portico's: refused.
        let msgs = parse_messages(br#"[{"role":"user","content":[{"type":"image"},{"type":"image","image":"x"}]}]"#).unwrap();
        let err = normalise_for_template(msgs, ContentFormat::OpenAi).unwrap_err();
        assert!(err.to_string().contains("content[1]"), "{err}");
    }

    #[test]
    fn image_part_is_refused() {
        let msgs = parse_messages(
            br#"[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]"#,
        )
        .unwrap();
        let err = normalise_for_template(msgs, ContentFormat::String).unwrap_err();
        assert!(err.to_string().contains("\"image_url\""), "{err}");
    }
}

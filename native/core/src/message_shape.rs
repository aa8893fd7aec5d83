//! The shape of one chat message, checked before it reaches a template (OpenAI's Chat
//! Completions message schema, as vLLM's pydantic models enforce it). A template
//! iterates whatever it is given: a `tool_calls` sent as a string was rendered
//! character by character (a 1 MB body became a 13M-token prompt). The check runs on
//! the message already parsed for rendering (`messages::normalise_message`), so the
//! JSON is read once.
//!
//! Checked: `role` a non-empty string; `content` a string, null, or an array of content
//! parts (a string, or an object whose `type` is a string and whose payload member has
//! its type: `text` for text parts, `image_url`, `input_audio`, `file`, `video_url`,
//! `audio_url`, `refusal`); `tool_calls` null or an array of
//! `{id: string, type: "function", function: {name: string, arguments: string | object}}`
//! (OpenAI sends a JSON string; an object is the transformers form, rendered the same way);
//! `tool_call_id`, `name`, `refusal`, `reasoning_content` and `reasoning` strings or null.
//! Other members are kept for the template as sent.

use serde_json::{Map, Value};

use crate::error::{CoreError, Result};

fn bad(path: String, reason: String) -> CoreError {
    CoreError::MessageShape { path, reason }
}

pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

const STRING_MEMBERS: [&str; 5] = ["tool_call_id", "name", "refusal", "reasoning_content", "reasoning"];

/// Checks message `index` (see the module comment); the error names the member's path.
pub fn check_message(m: &Value, index: usize) -> Result<()> {
    let at = format!("messages[{index}]");
    let Value::Object(o) = m else {
        return Err(bad(at, format!("must be an object, got {}", kind(m))));
    };
    match o.get("role") {
        Some(Value::String(r)) if !r.is_empty() => {}
        Some(Value::String(_)) => return Err(bad(format!("{at}.role"), "must not be empty".into())),
        None | Some(Value::Null) => return Err(bad(format!("{at}.role"), "is required".into())),
        Some(other) => return Err(bad(format!("{at}.role"), format!("must be a string, got {}", kind(other)))),
    }
    match o.get("content") {
        None | Some(Value::Null) | Some(Value::String(_)) => {}
        Some(Value::Array(parts)) => {
            for (j, p) in parts.iter().enumerate() {
                check_part(p, &format!("{at}.content[{j}]"))?;
            }
        }
        Some(other) => {
            return Err(bad(
                format!("{at}.content"),
                format!("must be a string, an array of content parts or null, got {}", kind(other)),
            ))
        }
    }
    match o.get("tool_calls") {
        None | Some(Value::Null) => {}
        Some(Value::Array(calls)) => {
            for (j, c) in calls.iter().enumerate() {
                check_call(c, &format!("{at}.tool_calls[{j}]"))?;
            }
        }
        Some(other) => {
            return Err(bad(
                format!("{at}.tool_calls"),
                format!("must be an array of tool call objects, got {}", kind(other)),
            ))
        }
    }
    for key in STRING_MEMBERS {
        match o.get(key) {
            None | Some(Value::Null) | Some(Value::String(_)) => {}
            Some(other) => return Err(bad(format!("{at}.{key}"), format!("must be a string, got {}", kind(other)))),
        }
    }
    Ok(())
}

fn string_member(o: &Map<String, Value>, key: &str, at: &str) -> Result<()> {
    match o.get(key) {
        Some(Value::String(_)) => Ok(()),
        None | Some(Value::Null) => Err(bad(format!("{at}.{key}"), "is required".into())),
        Some(other) => Err(bad(format!("{at}.{key}"), format!("must be a string, got {}", kind(other)))),
    }
}

fn object_member<'a>(o: &'a Map<String, Value>, key: &str, at: &str) -> Result<&'a Map<String, Value>> {
    match o.get(key) {
        Some(Value::Object(inner)) => Ok(inner),
        None | Some(Value::Null) => Err(bad(format!("{at}.{key}"), "is required".into())),
        Some(other) => Err(bad(format!("{at}.{key}"), format!("must be an object, got {}", kind(other)))),
    }
}

fn check_part(p: &Value, at: &str) -> Result<()> {
    let o = match p {
        Value::String(_) => return Ok(()),
        Value::Object(o) => o,
        other => return Err(bad(at.to_owned(), format!("must be a content part object, got {}", kind(other)))),
    };
    let ty = match o.get("type") {
        Some(Value::String(t)) => t.as_str(),
        // vLLM's shorthand: a part with `text` and no type is a text part.
        None | Some(Value::Null) => return string_member(o, "text", at),
        Some(other) => return Err(bad(format!("{at}.type"), format!("must be a string, got {}", kind(other)))),
    };
    match ty {
        "text" | "input_text" | "output_text" => string_member(o, "text", at),
        "refusal" => string_member(o, "refusal", at),
        "image_url" | "video_url" | "audio_url" => match o.get(ty) {
            // {"url": "..."} (OpenAI), or the URL itself (vLLM accepts both).
            Some(Value::String(_)) => Ok(()),
            _ => string_member(object_member(o, ty, at)?, "url", &format!("{at}.{ty}")),
        },
        "input_audio" => {
            let a = object_member(o, "input_audio", at)?;
            let inner = format!("{at}.input_audio");
            string_member(a, "data", &inner)?;
            string_member(a, "format", &inner)
        }
        "file" => object_member(o, "file", at).map(|_| ()),
        // Other part types are refused later as unsupported (a text-only model).
        _ => Ok(()),
    }
}

fn check_call(c: &Value, at: &str) -> Result<()> {
    let Value::Object(o) = c else {
        return Err(bad(at.to_owned(), format!("must be a tool call object, got {}", kind(c))));
    };
    string_member(o, "id", at)?;
    match o.get("type") {
        None | Some(Value::Null) => {}
        Some(Value::String(t)) if t == "function" => {}
        Some(other) => return Err(bad(format!("{at}.type"), format!("must be \"function\", got {other}"))),
    }
    let f = object_member(o, "function", at)?;
    let inner = format!("{at}.function");
    string_member(f, "name", &inner)?;
    match f.get("arguments") {
        Some(Value::String(_)) | Some(Value::Object(_)) => Ok(()),
        None | Some(Value::Null) => Err(bad(format!("{inner}.arguments"), "is required".into())),
        Some(other) => Err(bad(
            format!("{inner}.arguments"),
            format!("must be a string (JSON text) or an object, got {}", kind(other)),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(m: Value) -> String {
        check_message(&m, 2).unwrap_err().to_string()
    }

    #[test]
    fn valid_messages_pass() {
        for m in [
            json!({"role": "user", "content": "hi"}),
            json!({"role": "user", "content": [{"type": "text", "text": "a"}, "b", {"text": "c"}]}),
            json!({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}),
            json!({"role": "tool", "tool_call_id": "c", "content": "ok", "name": null}),
            json!({"role": "ipython", "content": "custom roles pass, as in vLLM"}),
        ] {
            check_message(&m, 0).unwrap();
        }
    }

    #[test]
    fn tool_calls_string_is_refused_with_its_path() {
        let e = err(json!({"role": "assistant", "tool_calls": "x".repeat(1000)}));
        assert_eq!(e, "`messages[2].tool_calls` must be an array of tool call objects, got a string");
    }

    #[test]
    fn tool_call_members() {
        assert!(err(json!({"role": "assistant", "tool_calls": ["x"]})).starts_with("`messages[2].tool_calls[0]` must be a tool call object"));
        assert!(err(json!({"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]}))
            .starts_with("`messages[2].tool_calls[0].id` is required"));
        assert!(err(json!({"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": [1]}}]}))
            .starts_with("`messages[2].tool_calls[0].function.arguments` must be a string (JSON text) or an object, got an array"));
        check_message(&json!({"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"a": 1}}}]}), 0).unwrap();
        assert!(err(json!({"role": "assistant", "tool_calls": [{"id": "c", "type": "x", "function": {"name": "f", "arguments": "{}"}}]}))
            .starts_with("`messages[2].tool_calls[0].type` must be \"function\""));
        assert!(err(json!({"role": "assistant", "tool_calls": [{"id": "c", "function": "f"}]}))
            .starts_with("`messages[2].tool_calls[0].function` must be an object"));
    }

    #[test]
    fn role_content_and_strings() {
        assert_eq!(err(json!({"content": "x"})), "`messages[2].role` is required");
        assert_eq!(err(json!({"role": 5})), "`messages[2].role` must be a string, got a number");
        assert!(err(json!({"role": "user", "content": {"a": 1}})).starts_with("`messages[2].content` must be a string, an array"));
        assert!(err(json!({"role": "user", "content": [5]})).starts_with("`messages[2].content[0]` must be a content part object"));
        assert!(err(json!({"role": "user", "content": [{"type": "text", "text": 5}]})).starts_with("`messages[2].content[0].text` must be a string"));
        assert!(err(json!({"role": "user", "content": [{"type": "image_url"}]})).starts_with("`messages[2].content[0].image_url` is required"));
        assert!(err(json!({"role": "tool", "tool_call_id": 7})).starts_with("`messages[2].tool_call_id` must be a string"));
        assert!(err(json!({"role": "user", "name": ["a"]})).starts_with("`messages[2].name` must be a string"));
    }
}

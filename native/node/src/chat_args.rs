//! Byte spans of the request body → a `ChatRequest` (bounds checked, never panics).

use napi::{Error, Result, Status};
use portico_core::ChatRequest;

/// `body[start..end]`, with `-1/-1` (any negative start) meaning "absent".
pub fn span<'a>(body: &'a [u8], start: i64, end: i64, what: &str) -> Result<Option<&'a [u8]>> {
    if start < 0 {
        return Ok(None);
    }
    let (s, e) = (start as usize, end.max(0) as usize);
    if end < start || e > body.len() {
        return Err(Error::new(
            Status::InvalidArg,
            format!(
                "{what} span [{start}, {end}) is outside the body ({} bytes)",
                body.len()
            ),
        ));
    }
    Ok(Some(&body[s..e]))
}

/// The spans every chat call takes, owned (for async tasks) or borrowed.
pub struct ChatSpans<'a> {
    pub messages: &'a [u8],
    pub tools: Option<&'a [u8]>,
}

impl<'a> ChatSpans<'a> {
    pub fn new(body: &'a [u8], msg: (i64, i64), tools: (i64, i64)) -> Result<ChatSpans<'a>> {
        let messages = span(body, msg.0, msg.1, "messages")?.ok_or_else(|| {
            Error::new(Status::InvalidArg, "messages span is required".to_owned())
        })?;
        let tools = span(body, tools.0, tools.1, "tools")?;
        Ok(ChatSpans { messages, tools })
    }

    pub fn request(
        &self,
        add_generation_prompt: bool,
        kwargs_json: Option<&'a str>,
    ) -> ChatRequest<'a> {
        ChatRequest {
            messages_json: self.messages,
            tools_json: self.tools,
            add_generation_prompt,
            kwargs_json,
        }
    }
}

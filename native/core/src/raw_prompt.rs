//! Raw prompt: the messages' text concatenated in order, no separator, no template.

use crate::error::Result;
use crate::message_shape::check_message;
use crate::messages::{content_text, parse_messages};

/// Concatenates each message's content (string or text parts) with no separator.
pub fn raw_prompt_text(messages_json: &[u8]) -> Result<String> {
    let messages = parse_messages(messages_json)?;
    let mut out = String::new();
    for (i, m) in messages.iter().enumerate() {
        check_message(m, i)?;
        out.push_str(&content_text(m, i, "")?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concatenates_strings_and_parts() {
        let text = raw_prompt_text(
            br#"[{"role":"system","content":"A"},{"role":"user","content":[{"type":"text","text":"B"},{"type":"text","text":"C"}]},{"role":"assistant","content":null}]"#,
        )
        .unwrap();
        assert_eq!(text, "ABC");
    }
}

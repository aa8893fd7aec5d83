//! Chat templates rendered with minijinja in the environment transformers gives them:
//! trim_blocks + lstrip_blocks, no trailing newline, no autoescape, Python string/dict
//! methods (minijinja-contrib pycompat), HF `tojson`, `raise_exception`, `strftime_now`,
//! and Python's way of printing None/True/lists.

use minijinja::value::{Kwargs, Value};
use minijinja::{AutoEscape, Environment, Error, ErrorKind, State};

use crate::content_format::{detect, ContentFormat};
use crate::error::{CoreError, Result};
use crate::pyfmt::{to_json, to_py_str, JsonOptions};
use crate::template_value::{json_to_value, JsonMap};

const NAME: &str = "chat_template";

/// A compiled chat template; render it as often as needed (Send + Sync).
pub struct ChatTemplate {
    env: Environment<'static>,
    content_format: ContentFormat,
}

/// Everything a render needs besides the template.
pub struct RenderInput {
    pub messages: Messages,
    /// Already a template value (see `tools_cache`).
    pub tools: Option<Value>,
    pub add_generation_prompt: bool,
    /// Special tokens (`bos_token`, `eos_token`, ...) — only those that are defined.
    pub special_tokens: Vec<(String, String)>,
    /// transformers' `continue_final_message`: the output ends inside the last message
    /// (its content is left open for the model to continue).
    pub continue_final_message: bool,
    /// Extra template kwargs (e.g. enable_thinking, documents); cannot replace
    /// messages, tools or add_generation_prompt.
    pub kwargs: Option<serde_json::Map<String, serde_json::Value>>,
}

/// The messages of a render: normalised JSON, or already their template value (see
/// `messages_cache`; not with `continue_final_message`, which edits the JSON).
pub enum Messages {
    Json(serde_json::Value),
    Value(Value),
}

impl From<serde_json::Value> for Messages {
    fn from(json: serde_json::Value) -> Messages {
        Messages::Json(json)
    }
}

const RESERVED: &[&str] = &[
    "messages",
    "tools",
    "add_generation_prompt",
    "continue_final_message",
];

/// The marker transformers appends to the final message to find where it ends.
const CONTINUE_TAG: &str = "CONTINUE_FINAL_MESSAGE_TAG ";

impl ChatTemplate {
    pub fn compile(source: &str) -> Result<ChatTemplate> {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_keep_trailing_newline(false);
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.set_formatter(|out, _state, value| {
            match value.as_str() {
                Some(s) => out.write_str(s),
                None => out.write_str(&to_py_str(value)),
            }
            .map_err(Error::from)
        });
        env.add_filter("tojson", tojson);
        env.add_function("raise_exception", raise_exception);
        env.add_function("strftime_now", strftime_now);
        env.add_template_owned(NAME, strip_generation_tags(source))
            .map_err(|e| CoreError::ChatTemplate(describe(&e)))?;
        Ok(ChatTemplate {
            env,
            content_format: detect(source),
        })
    }

    /// The `content` shape this template expects (see `content_format`).
    pub fn content_format(&self) -> ContentFormat {
        self.content_format
    }

    pub fn render(&self, mut input: RenderInput) -> Result<String> {
        if !input.continue_final_message {
            return self.render_plain(input);
        }
        if input.add_generation_prompt {
            return Err(CoreError::InvalidKwargs(
                "continue_final_message and add_generation_prompt are not compatible".into(),
            ));
        }
        let Messages::Json(messages) = &mut input.messages else {
            return Err(CoreError::InvalidKwargs(
                "continue_final_message needs the messages as JSON".into(),
            ));
        };
        let final_text = mark_final_message(messages)?;
        let rendered = self.render_plain(input)?;
        cut_at_continue_tag(rendered, &final_text)
    }

    /// `render`, appended to `out` (a reused buffer: no allocation for the output).
    pub fn render_to(&self, input: RenderInput, out: &mut Vec<u8>) -> Result<()> {
        if input.continue_final_message {
            out.extend_from_slice(self.render(input)?.as_bytes());
            return Ok(());
        }
        let ctx = context(input);
        let tpl = self
            .env
            .get_template(NAME)
            .map_err(|e| CoreError::ChatTemplate(describe(&e)))?;
        // Deprecated for `render_captured_to`, which also keeps the state; not needed here.
        #[allow(deprecated)]
        tpl.render_to_write(ctx, &mut *out)
            .map(drop)
            .map_err(|e| CoreError::ChatTemplate(describe(&e)))
    }

    fn render_plain(&self, input: RenderInput) -> Result<String> {
        let ctx = context(input);
        let tpl = self
            .env
            .get_template(NAME)
            .map_err(|e| CoreError::ChatTemplate(describe(&e)))?;
        tpl.render(ctx)
            .map_err(|e| CoreError::ChatTemplate(describe(&e)))
    }
}

/// The template's context: special tokens, kwargs, then the reserved names.
fn context(input: RenderInput) -> Value {
    let mut ctx: Vec<(String, Value)> = Vec::new();
    for (k, v) in input.special_tokens {
        ctx.push((k, Value::from(v)));
    }
    ctx.push(("documents".to_owned(), Value::from(())));
    if let Some(kwargs) = input.kwargs {
        for (k, v) in kwargs {
            if !RESERVED.contains(&k.as_str()) {
                ctx.push((k, json_to_value(v)));
            }
        }
    }
    let messages = match input.messages {
        Messages::Json(json) => json_to_value(json),
        Messages::Value(value) => value,
    };
    ctx.push(("messages".to_owned(), messages));
    let tools = input.tools.unwrap_or(Value::from(()));
    ctx.push(("tools".to_owned(), tools));
    ctx.push((
        "add_generation_prompt".to_owned(),
        Value::from(input.add_generation_prompt),
    ));
    // Later entries win, so kwargs override special tokens but not the reserved keys.
    ctx.into_iter().collect()
}

/// Appends the continue tag to the last message's content; returns the original content.
fn mark_final_message(messages: &mut serde_json::Value) -> Result<String> {
    let last = messages
        .as_array_mut()
        .and_then(|m| m.last_mut())
        .and_then(|m| m.as_object_mut())
        .ok_or_else(|| {
            CoreError::InvalidMessages("continue_final_message needs a final message".into())
        })?;
    match last.get_mut("content") {
        Some(serde_json::Value::String(s)) => {
            let original = s.clone();
            s.push_str(CONTINUE_TAG);
            Ok(original)
        }
        _ => Err(CoreError::InvalidMessages(
            "continue_final_message is set but the final message has no content to continue".into(),
        )),
    }
}

/// Cuts the render where the final message ends, as transformers does (rstrip when the
/// template trimmed the space after the tag).
fn cut_at_continue_tag(rendered: String, final_text: &str) -> Result<String> {
    let tag = CONTINUE_TAG.trim();
    let (Some(at), true) = (rendered.rfind(tag), rendered.contains(final_text.trim())) else {
        return Err(CoreError::ChatTemplate(
            "continue_final_message is set but the final message does not appear in the rendered chat".into(),
        ));
    };
    if rendered[at..].starts_with(CONTINUE_TAG) {
        Ok(rendered[..at].to_owned())
    } else {
        Ok(rendered[..at].trim_end().to_owned())
    }
}

/// transformers' `tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`;
/// a leading positional number is taken as `indent`, as Jinja2's own filter does.
fn tojson(
    value: Value,
    positional: Option<Value>,
    kwargs: Kwargs,
) -> std::result::Result<Value, Error> {
    // A tool map from the tools cache already holds its default-options text.
    if positional.is_none() && kwargs.args().next().is_none() {
        if let Some(map) = value.downcast_object_ref::<JsonMap>() {
            return Ok(Value::from(
                map.default_json(|inner| to_json(inner, &JsonOptions::new(None))),
            ));
        }
    }
    let mut indent: Option<Value> = kwargs.get("indent")?;
    let mut ensure_ascii: Option<bool> = kwargs.get("ensure_ascii")?;
    if let Some(p) = positional {
        if p.is_integer() || p.as_str().is_some() {
            indent = Some(p);
        } else {
            ensure_ascii = Some(p.is_true());
        }
    }
    let indent = match indent {
        Some(v) if v.is_none() || v.is_undefined() => None,
        Some(v) if v.is_integer() => Some(" ".repeat(v.as_usize().unwrap_or(0))),
        Some(v) => v.as_str().map(str::to_owned),
        None => None,
    };
    let mut opts = JsonOptions::new(indent);
    opts.ensure_ascii = ensure_ascii.unwrap_or(false);
    opts.sort_keys = kwargs.get::<Option<bool>>("sort_keys")?.unwrap_or(false);
    if let Some(seps) = kwargs.get::<Option<Value>>("separators")? {
        if !seps.is_none() {
            let parts: Vec<Value> = seps.try_iter()?.collect();
            if let [item, key] = parts.as_slice() {
                opts.item_sep = item.as_str().unwrap_or(", ").to_owned();
                opts.key_sep = key.as_str().unwrap_or(": ").to_owned();
            }
        }
    }
    kwargs.assert_all_used()?;
    Ok(Value::from(to_json(&value, &opts)))
}

fn raise_exception(message: String) -> std::result::Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, message))
}

/// Local time formatted with a strftime string (chrono's strftime, Python-compatible for
/// the usual %d %b %B %Y %H %M ...). An invalid format is an error, never a panic.
fn strftime_now(_state: &State, format: String) -> std::result::Result<Value, Error> {
    use chrono::format::{Item, StrftimeItems};
    let items: Vec<Item> = StrftimeItems::new(&format).collect();
    if items.iter().any(|i| matches!(i, Item::Error)) {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("strftime_now: invalid format {format:?}"),
        ));
    }
    Ok(Value::from(
        chrono::Local::now()
            .format_with_items(items.into_iter())
            .to_string(),
    ))
}

/// A readable one-line message: raise_exception's text as written, others with their kind.
fn describe(e: &Error) -> String {
    let mut msg = match (e.kind(), e.detail()) {
        (ErrorKind::InvalidOperation, Some(d)) => d.to_owned(),
        (kind, Some(d)) => format!("{kind}: {d}"),
        (kind, None) => kind.to_string(),
    };
    if let Some(line) = e.line() {
        msg.push_str(&format!(" (template line {line})"));
    }
    msg
}

/// transformers' `{% generation %}`/`{% endgeneration %}` marks assistant text for masks;
/// it has no effect on the rendered text, so the tags are dropped.
fn strip_generation_tags(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    while let Some(start) = rest.find("{%") {
        let Some(len) = rest[start..].find("%}") else {
            break;
        };
        let tag = &rest[start + 2..start + len];
        let name = tag.trim_matches(|c: char| c == '-' || c == '+' || c.is_whitespace());
        out.push_str(&rest[..start]);
        if name != "generation" && name != "endgeneration" {
            out.push_str(&rest[start..start + len + 2]);
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn render(src: &str, messages: serde_json::Value, kwargs: serde_json::Value) -> Result<String> {
        ChatTemplate::compile(src)?.render(RenderInput {
            messages: messages.into(),
            tools: None,
            add_generation_prompt: false,
            special_tokens: vec![("bos_token".into(), "<s>".into())],
            continue_final_message: false,
            kwargs: kwargs.as_object().cloned(),
        })
    }

    #[test]
    fn python_methods_and_printing() {
        let out = render(
            "{% for m in messages %}{{ m.content.strip().split(',')[0] }}|{{ m.content.startswith(' a') }}|{{ m.x }}{% endfor %}|{{ tools }}|{{ bos_token }}",
            json!([{"content": " a,b ", "x": null}]),
            json!({}),
        )
        .unwrap();
        assert_eq!(out, "a|True|None|None|<s>");
    }

    #[test]
    fn tojson_python_style_in_order() {
        let out = render(
            "{{ messages[0] | tojson }}|{{ messages[0] | tojson(indent=2) }}",
            json!([{"z": 1, "a": "é"}]),
            json!({}),
        )
        .unwrap();
        assert_eq!(
            out,
            "{\"z\": 1, \"a\": \"é\"}|{\n  \"z\": 1,\n  \"a\": \"é\"\n}"
        );
    }

    #[test]
    fn raise_exception_is_an_error_with_its_message() {
        let err = render(
            "{{ raise_exception('roles must alternate') }}",
            json!([]),
            json!({}),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "chat template error: roles must alternate (template line 1)"
        );
    }

    #[test]
    fn kwargs_cannot_replace_messages() {
        let out = render(
            "{{ messages | length }}{{ enable_thinking }}",
            json!([{}]),
            json!({"messages": [], "enable_thinking": false}),
        )
        .unwrap();
        assert_eq!(out, "1False");
    }

    #[test]
    fn trim_and_lstrip_blocks_no_trailing_newline() {
        let out = render(
            "  {% if true %}\nA\n  {% endif %}\nB\n",
            json!([]),
            json!({}),
        )
        .unwrap();
        assert_eq!(out, "A\nB");
    }

    #[test]
    fn strftime_now_formats_or_errors() {
        let out = render("{{ strftime_now('%Y') }}", json!([]), json!({})).unwrap();
        assert_eq!(out.len(), 4);
        assert!(render("{{ strftime_now('%Q') }}", json!([]), json!({})).is_err());
    }

    #[test]
    fn syntax_error_is_reported() {
        let err = ChatTemplate::compile("{% if %}").err().unwrap();
        assert!(
            err.to_string()
                .starts_with("chat template error: syntax error"),
            "{err}"
        );
    }

    #[test]
    fn continue_final_message_leaves_the_last_message_open() {
        let tpl = ChatTemplate::compile(
            "{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>\n{% endfor %}",
        )
        .unwrap();
        let input = |cont| RenderInput {
            messages: json!([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Sure, "}]).into(),
            tools: None,
            add_generation_prompt: false,
            special_tokens: vec![],
            continue_final_message: cont,
            kwargs: None,
        };
        assert_eq!(tpl.render(input(true)).unwrap(), "<user>Hi</user>\n<assistant>Sure, ");
        assert_eq!(
            tpl.render(input(false)).unwrap(),
            "<user>Hi</user>\n<assistant>Sure, </assistant>\n"
        );
    }

    #[test]
    fn cached_tools_render_the_same_on_every_turn() {
        let tpl = ChatTemplate::compile(
            "{% for t in tools %}{{ t | tojson }}|{{ t | tojson(indent=2) }}|{{ t.function.name }}|{{ t }}\n{% endfor %}{{ tools | tojson }}|{{ tools | tojson(sort_keys=true) }}",
        )
        .unwrap();
        let bytes = br#"[{"type":"function","function":{"name":"f\u00e9","parameters":{"b":[1,2.5,null],"a":"x\n"}}}]"#;
        let cache = crate::tools_cache::ToolsCache::default();
        let render = |tools: Option<Value>| {
            tpl.render(RenderInput {
                messages: json!([]).into(),
                tools,
                add_generation_prompt: false,
                special_tokens: vec![],
                continue_final_message: false,
                kwargs: None,
            })
            .unwrap()
        };
        let plain: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        let expected = render(Some(Value::from_serialize(&plain)));
        assert_eq!(render(cache.get(Some(bytes)).unwrap()), expected);
        assert_eq!(render(cache.get(Some(bytes)).unwrap()), expected);
        assert!(expected.starts_with(r#"{"type": "function", "function": {"name": "fé", "parameters": {"b": [1, 2.5, null], "a": "x\n"}}}|{"#), "{expected}");
    }

    #[test]
    fn generation_tags_are_ignored() {
        let out = render(
            "{% generation %}X{%- endgeneration %}",
            json!([]),
            json!({}),
        )
        .unwrap();
        assert_eq!(out, "X");
    }
}

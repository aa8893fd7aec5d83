//! Which shape of `content` a chat template expects, decided as vLLM decides it
//! (`_detect_content_format`): a template that loops over a message's `content`
//! (`{% for item in message['content'] %}`, e.g. Gemma 3) gets the "openai" shape — a list
//! of `{"type": "text", "text": ...}` parts; any other template gets a plain string.
//!
//! vLLM walks the Jinja AST; this reads the `{% for %}` / `{% set %}` tags of the source,
//! which finds the same loops in the templates we ship fixtures for (a variable assigned
//! from `messages`, e.g. `loop_messages = messages[1:]`, counts as `messages`).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentFormat {
    String,
    OpenAi,
}

pub fn detect(template: &str) -> ContentFormat {
    let tags = statement_tags(template);
    // Names holding the message list: `messages` and anything assigned from one of them.
    let mut lists = vec!["messages".to_owned()];
    let mut changed = true;
    while changed {
        changed = false;
        for tag in &tags {
            let Some((name, value)) = parse_set(tag) else { continue };
            if !lists.contains(&name) && lists.iter().any(|l| base_name(value) == l) {
                lists.push(name);
                changed = true;
            }
        }
    }
    let loops: Vec<(String, &str)> = tags.iter().filter_map(|t| parse_for(t)).collect();
    let message_vars: Vec<&str> = loops
        .iter()
        .filter(|(_, iter)| lists.iter().any(|l| base_name(iter) == l && !is_item_access(iter)))
        .map(|(target, _)| target.as_str())
        .collect();
    let loops_over_content = loops.iter().any(|(_, iter)| {
        let iter = strip_filters(iter);
        message_vars.iter().any(|m| {
            [
                format!("{m}['content']"),
                format!("{m}[\"content\"]"),
                format!("{m}.content"),
            ]
            .iter()
            .any(|form| iter == form)
        })
    });
    if loops_over_content {
        ContentFormat::OpenAi
    } else {
        ContentFormat::String
    }
}

/// The inside of every `{% ... %}` tag, trimmed of `-`/`+` and whitespace.
fn statement_tags(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = src;
    while let Some(start) = rest.find("{%") {
        let Some(len) = rest[start..].find("%}") else { break };
        let inner = &rest[start + 2..start + len];
        out.push(
            inner
                .trim_matches(|c: char| c == '-' || c == '+' || c.is_whitespace())
                .to_owned(),
        );
        rest = &rest[start + len + 2..];
    }
    out
}

/// `for x in expr` → (x, expr); tuple targets and `recursive`/`if` suffixes are cut.
fn parse_for(tag: &str) -> Option<(String, &str)> {
    let body = tag.strip_prefix("for ")?;
    let (target, iter) = body.split_once(" in ")?;
    let iter = iter.split(" if ").next()?.trim_end_matches(" recursive").trim();
    Some((target.trim().to_owned(), iter))
}

/// `set x = expr` → (x, expr).
fn parse_set(tag: &str) -> Option<(String, &str)> {
    let body = tag.strip_prefix("set ")?;
    let (name, value) = body.split_once('=')?;
    let name = name.trim();
    if name.contains(['.', ',', '[']) {
        return None;
    }
    Some((name.to_owned(), value.trim()))
}

fn strip_filters(expr: &str) -> &str {
    expr.split('|').next().unwrap_or(expr).trim()
}

/// `messages[1:]` → `messages`; `messages | reverse` → `messages`.
fn base_name(expr: &str) -> &str {
    let e = strip_filters(expr);
    let end = e
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(e.len());
    &e[..end]
}

/// `messages[0]` (an item, not the list) — slices like `messages[1:]` stay lists.
fn is_item_access(expr: &str) -> bool {
    let e = strip_filters(expr);
    match e.find('[') {
        Some(i) => !e[i..].contains(':'),
        None => e.contains('.'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemma_style_loop_is_openai() {
        let t = "{%- set loop_messages = messages[1:] -%}{%- for message in loop_messages -%}{%- for item in message['content'] -%}{{ item['text'] }}{%- endfor -%}{%- endfor -%}";
        assert_eq!(detect(t), ContentFormat::OpenAi);
    }

    #[test]
    fn string_templates() {
        assert_eq!(
            detect("{% for m in messages %}{{ m.content }}{% endfor %}"),
            ContentFormat::String
        );
        assert_eq!(
            detect("{% for m in messages %}{% for c in m.tool_calls %}{% endfor %}{% endfor %}"),
            ContentFormat::String
        );
    }
}

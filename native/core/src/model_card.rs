//! Reads the non-tokenizer files of a Hugging Face model folder:
//! tokenizer_config.json, chat_template.jinja / chat_template.json, config.json and
//! generation_config.json. Every file but tokenizer.json is optional.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{CoreError, Result};

/// Keys that hold the context length in config.json, in the order vLLM looks at them.
const CONTEXT_LENGTH_KEYS: &[&str] = &[
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
];

/// Everything a model folder says about prompts and stopping, except the vocabulary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelCard {
    pub dir: PathBuf,
    pub chat_template: Option<String>,
    /// The `tool_use` template of a named-template list (used when the request has tools).
    pub tool_use_template: Option<String>,
    /// Every named special token, as transformers' `special_tokens_map` gives the template:
    /// `*_token` keys of tokenizer_config.json (string or AddedToken) and `extra_special_tokens`.
    pub special_tokens: Vec<(String, String)>,
    pub bos_token: Option<String>,
    pub eos_token: Option<String>,
    pub pad_token: Option<String>,
    pub unk_token: Option<String>,
    /// tokenizer_config.json `additional_special_tokens` (strings or AddedTokens), in order.
    pub additional_special_tokens: Vec<String>,
    pub add_bos_token: Option<bool>,
    pub add_eos_token: Option<bool>,
    pub context_length: Option<u64>,
    /// EOS ids from generation_config.json then config.json (deduplicated, in order).
    pub config_eos_token_ids: Vec<u32>,
}

impl ModelCard {
    /// Reads the optional JSON/Jinja files of `dir`. Missing files are fine; unreadable or
    /// malformed ones are errors naming the file.
    pub fn load(dir: &Path) -> Result<ModelCard> {
        let mut card = ModelCard {
            dir: dir.to_path_buf(),
            ..ModelCard::default()
        };

        if let Some(cfg) = read_json(&dir.join("tokenizer_config.json"))? {
            card.bos_token = special_token(&cfg, "bos_token");
            card.eos_token = special_token(&cfg, "eos_token");
            card.pad_token = special_token(&cfg, "pad_token");
            card.unk_token = special_token(&cfg, "unk_token");
            card.add_bos_token = cfg.get("add_bos_token").and_then(Value::as_bool);
            card.add_eos_token = cfg.get("add_eos_token").and_then(Value::as_bool);
            card.special_tokens = named_special_tokens(&cfg);
            card.additional_special_tokens = cfg
                .get("additional_special_tokens")
                .and_then(Value::as_array)
                .map(|list| list.iter().filter_map(token_content).collect())
                .unwrap_or_default();
            if let Some(t) = cfg.get("chat_template") {
                card.chat_template = pick_template(t, "default");
                card.tool_use_template = pick_template(t, "tool_use");
            }
        }
        // As in transformers, a separate template file wins over tokenizer_config.json.
        if let Some(tpl) = read_json(&dir.join("chat_template.json"))? {
            if let Some(t) = tpl.get("chat_template") {
                card.chat_template = pick_template(t, "default");
                card.tool_use_template = pick_template(t, "tool_use");
            }
        }
        if let Some(t) = read_text(&dir.join("chat_template.jinja"))? {
            card.chat_template = Some(t);
            card.tool_use_template = None;
        }

        let mut eos = Vec::new();
        if let Some(gen) = read_json(&dir.join("generation_config.json"))? {
            push_ids(&mut eos, gen.get("eos_token_id"));
        }
        if let Some(cfg) = read_json(&dir.join("config.json"))? {
            push_ids(&mut eos, cfg.get("eos_token_id"));
            card.context_length =
                context_length(&cfg).or_else(|| cfg.get("text_config").and_then(context_length));
            if eos.is_empty() {
                if let Some(text) = cfg.get("text_config") {
                    push_ids(&mut eos, text.get("eos_token_id"));
                }
            }
        }
        card.config_eos_token_ids = eos;
        Ok(card)
    }
}

fn read_text(path: &Path) -> Result<Option<String>> {
    match fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(CoreError::ModelFile {
            path: path.to_path_buf(),
            reason: e.to_string(),
        }),
    }
}

fn read_json(path: &Path) -> Result<Option<Value>> {
    let Some(text) = read_text(path)? else {
        return Ok(None);
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| CoreError::ModelFile {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
}

/// `"<s>"`, `{"content": "<s>", ...}` (AddedToken) or null.
fn special_token(cfg: &Value, key: &str) -> Option<String> {
    token_content(cfg.get(key)?)
}

fn token_content(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("content").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    }
}

/// `*_token` entries (string or AddedToken) plus `extra_special_tokens` (a name → token map),
/// in file order. Flags such as `add_bos_token` are booleans and so are skipped.
fn named_special_tokens(cfg: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let Some(obj) = cfg.as_object() else {
        return out;
    };
    let mut push = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            if !out.iter().any(|(name, _)| name == k) {
                out.push((k.to_owned(), v));
            }
        }
    };
    for key in obj.keys().filter(|k| k.ends_with("_token")) {
        push(key, special_token(cfg, key));
    }
    if let Some(Value::Object(extra)) = cfg.get("extra_special_tokens") {
        for (k, v) in extra {
            let token = match v {
                Value::String(s) => Some(s.clone()),
                Value::Object(o) => o.get("content").and_then(Value::as_str).map(str::to_owned),
                _ => None,
            };
            push(k, token);
        }
    }
    out
}

/// A template string (it is the "default"), or a list of `{name, template}`: the one named
/// `name`.
impl ModelCard {
    /// Replaces the folder's templates by `template_json`: a JSON string (one template) or a
    /// list of `{"name", "template"}` (its `default` and `tool_use` entries).
    pub fn override_template(&mut self, template_json: &str) -> Result<()> {
        let v: Value = serde_json::from_str(template_json).map_err(|e| CoreError::ModelFile {
            path: PathBuf::from("--chat-template"),
            reason: format!("not JSON: {e}"),
        })?;
        let default = pick_template(&v, "default");
        if default.is_none() {
            return Err(CoreError::ModelFile {
                path: PathBuf::from("--chat-template"),
                reason: "expected a template string or a list of named templates with a `default` one".to_owned(),
            });
        }
        self.chat_template = default;
        self.tool_use_template = pick_template(&v, "tool_use");
        Ok(())
    }
}

fn pick_template(v: &Value, name: &str) -> Option<String> {
    match v {
        Value::String(s) if name == "default" => Some(s.clone()),
        Value::Array(list) => list
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
            .and_then(|t| t.get("template"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        _ => None,
    }
}

fn push_ids(out: &mut Vec<u32>, v: Option<&Value>) {
    let mut push = |id: &Value| {
        if let Some(id) = id.as_u64().and_then(|n| u32::try_from(n).ok()) {
            if !out.contains(&id) {
                out.push(id);
            }
        }
    };
    match v {
        Some(Value::Array(ids)) => ids.iter().for_each(&mut push),
        Some(id) => push(id),
        None => {}
    }
}

fn context_length(cfg: &Value) -> Option<u64> {
    CONTEXT_LENGTH_KEYS
        .iter()
        .find_map(|k| cfg.get(*k).and_then(Value::as_u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_token_forms() {
        let cfg: Value = serde_json::json!({
            "bos_token": {"content": "<s>", "lstrip": false},
            "eos_token": "</s>",
            "pad_token": null
        });
        assert_eq!(special_token(&cfg, "bos_token").as_deref(), Some("<s>"));
        assert_eq!(special_token(&cfg, "eos_token").as_deref(), Some("</s>"));
        assert_eq!(special_token(&cfg, "pad_token"), None);
        assert_eq!(special_token(&cfg, "unk_token"), None);
    }

    #[test]
    fn named_special_tokens_like_transformers() {
        let cfg: Value = serde_json::json!({
            "add_bos_token": true,
            "bos_token": "<bos>",
            "unk_token": null,
            "boi_token": {"content": "<img>"},
            "extra_special_tokens": {"image_token": "<image>"}
        });
        let got = named_special_tokens(&cfg);
        let want: Vec<(String, String)> = [("bos_token", "<bos>"), ("boi_token", "<img>"), ("image_token", "<image>")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn template_list_picks_default() {
        let v = serde_json::json!([
            {"name": "tool_use", "template": "T"},
            {"name": "default", "template": "D"}
        ]);
        assert_eq!(pick_template(&v, "default").as_deref(), Some("D"));
        assert_eq!(pick_template(&v, "tool_use").as_deref(), Some("T"));
        assert_eq!(pick_template(&serde_json::json!("S"), "tool_use"), None);
    }

    #[test]
    fn template_override_replaces_both_templates() {
        let mut card = ModelCard {
            chat_template: Some("folder".into()),
            tool_use_template: Some("folder tools".into()),
            ..ModelCard::default()
        };
        card.override_template("\"mine\"").unwrap();
        assert_eq!(card.chat_template.as_deref(), Some("mine"));
        assert_eq!(card.tool_use_template, None);
        card.override_template(r#"[{"name":"default","template":"D"},{"name":"tool_use","template":"T"}]"#).unwrap();
        assert_eq!(card.chat_template.as_deref(), Some("D"));
        assert_eq!(card.tool_use_template.as_deref(), Some("T"));
        assert!(card.override_template("{not json").is_err());
        assert!(card.override_template(r#"[{"name":"tool_use","template":"T"}]"#).is_err());
        assert_eq!(card.chat_template.as_deref(), Some("D"), "a failed override changes nothing");
    }

    #[test]
    fn eos_ids_int_or_list_deduplicated() {
        let mut out = vec![];
        push_ids(&mut out, Some(&serde_json::json!([1, 2])));
        push_ids(&mut out, Some(&serde_json::json!(2)));
        push_ids(&mut out, Some(&serde_json::json!(7)));
        assert_eq!(out, vec![1, 2, 7]);
    }
}

//! Detokenizer on a SentencePiece-style tokenizer with byte fallback (<0xNN> tokens) and
//! the Llama-2 decoder chain (Replace ▁, ByteFallback, Fuse, Strip leading space), built
//! here in memory so no model download is needed.

mod common;

use std::fs;

use common::assert_stream_matches;
use portico_core::Model;
use serde_json::{json, Map, Value};

fn tokenizer_json() -> Value {
    let mut vocab = Map::new();
    for (i, t) in ["<unk>", "<s>", "</s>"].iter().enumerate() {
        vocab.insert(t.to_string(), json!(i));
    }
    for b in 0..=255u32 {
        vocab.insert(format!("<0x{b:02X}>"), json!(3 + b));
    }
    let pieces = ["▁", "▁h", "▁he", "el", "ll", "lo", "▁w", "or", "ld"];
    let chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?'\"-";
    let extra = pieces
        .iter()
        .map(|s| s.to_string())
        .chain(chars.chars().map(String::from));
    for (id, p) in (259u32..).zip(extra) {
        vocab.insert(p, json!(id));
    }
    json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [
            {"id": 0, "content": "<unk>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
            {"id": 1, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
            {"id": 2, "content": "</s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}
        ],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}
        ]},
        "pre_tokenizer": null,
        "post_processor": {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}
        ]},
        "model": {"type": "BPE", "dropout": null, "unk_token": "<unk>", "continuing_subword_prefix": null,
            "end_of_word_suffix": null, "fuse_unk": true, "byte_fallback": true, "ignore_merges": false,
            "vocab": vocab, "merges": [["▁", "h"], ["▁h", "e"], ["e", "l"], ["l", "l"], ["l", "o"], ["▁", "w"], ["o", "r"], ["l", "d"]]}
    })
}

fn model() -> Model {
    // One folder per call: tests run in parallel threads of one process.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("portico-bytefallback-{}-{n}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("tokenizer.json"), tokenizer_json().to_string()).unwrap();
    fs::write(
        dir.join("tokenizer_config.json"),
        json!({"bos_token": {"content": "<s>"}, "eos_token": "</s>", "add_bos_token": true,
               "chat_template": "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}{{ eos_token }}{% endfor %}"})
        .to_string(),
    )
    .unwrap();
    fs::write(
        dir.join("config.json"),
        json!({"max_position_embeddings": 4096, "eos_token_id": 2}).to_string(),
    )
    .unwrap();
    fs::write(
        dir.join("generation_config.json"),
        json!({"eos_token_id": [2, 7]}).to_string(),
    )
    .unwrap();
    Model::load(&dir).unwrap()
}

#[test]
fn byte_fallback_round_trip_and_stream() {
    let m = model();
    for text in ["hello world", "héllo 世界 😀👍🏽 done", "a  b", "🇫🇷"] {
        let ids = m.encode(text, false).unwrap();
        assert!(ids.iter().all(|&id| id != 0), "unk in {ids:?}");
        assert_eq!(m.decode(&ids, false).unwrap(), text);
        assert_stream_matches(&m, &ids, false);
        let with_bos = m.encode(text, true).unwrap();
        assert_eq!(with_bos[0], 1);
        assert_stream_matches(&m, &with_bos, true);
        assert_stream_matches(&m, &with_bos, false);
    }
}

#[test]
fn stray_byte_is_flushed_by_finish() {
    let m = model();
    // 0xE4 starts a 3-byte character that never completes.
    let ids = [m.tokenizer().token_to_id("▁h").unwrap(), 3 + 0xE4];
    let mut d = m.detokenizer(false);
    let first = d.push(&ids).unwrap();
    assert_eq!(first, "");
    let rest = d.finish().unwrap();
    assert_eq!(first + &rest, m.decode(&ids, false).unwrap());
}

#[test]
fn model_card_files() {
    let m = model();
    let info = m.info();
    assert_eq!(info.context_length, Some(4096));
    assert_eq!(info.eos_token_ids, vec![2, 7]);
    assert_eq!(info.bos_token.as_deref(), Some("<s>"));
    assert_eq!((info.bos_token_id, info.eos_token_id), (Some(1), Some(2)));
    assert_eq!((info.pad_token_id, info.unk_token_id), (None, None));
    assert_eq!(
        info.special_tokens,
        vec![
            portico_core::SpecialToken { name: "bos_token".into(), content: "<s>".into(), id: Some(1) },
            portico_core::SpecialToken { name: "eos_token".into(), content: "</s>".into(), id: Some(2) },
        ]
    );
    let req = portico_core::ChatRequest {
        messages_json: br#"[{"role":"user","content":"hi"}]"#,
        tools_json: None,
        add_generation_prompt: false,
        kwargs_json: None,
    };
    assert_eq!(m.render_chat(&req).unwrap(), "<s>[user] hi</s>");
}

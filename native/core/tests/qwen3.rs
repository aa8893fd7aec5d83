//! End-to-end tests on the real Qwen3 tokenizer folder (byte-level BPE).

mod common;

use common::{assert_stream_matches, qwen3, qwen3_dir};
use portico_core::{ChatRequest, CoreError, Model};

const SAMPLES: &[&str] = &[
    "Hello, world! The quick brown fox jumps over the lazy dog.",
    "你好，世界！日本語のテキストも。한국어도 있어요.",
    "Emoji: 😀👍🏽👨‍👩‍👧‍👦 🇫🇷 and ✨ sparkles",
    "fn main() {\n    println!(\"{}\", 1 + 2); // ok\n\tlet x = vec![1u32; 3];\n}\n",
    "  leading spaces, trailing spaces   \n\n\nnew lines\r\n",
    "<|im_start|>user\nspecial tokens inline<|im_end|>",
];

fn chat<'a>(messages: &'a [u8], tools: Option<&'a [u8]>, gen: bool) -> ChatRequest<'a> {
    ChatRequest {
        messages_json: messages,
        tools_json: tools,
        add_generation_prompt: gen,
        kwargs_json: None,
    }
}

#[test]
fn info_from_tokenizer_config() {
    let Some(m) = qwen3() else { return };
    let info = m.info();
    assert_eq!(info.eos_token.as_deref(), Some("<|im_end|>"));
    assert_eq!(info.bos_token, None);
    assert_eq!(info.eos_token_ids, vec![151645]);
    assert_eq!(info.context_length, None); // no config.json in this folder
    assert!(info.has_chat_template);
    assert!(info.vocab_size > 151_000, "{}", info.vocab_size);
}

#[test]
fn round_trip_ascii_cjk_emoji_code() {
    let Some(m) = qwen3() else { return };
    for text in SAMPLES {
        let ids = m.encode(text, false).unwrap();
        assert_eq!(m.decode(&ids, false).unwrap(), *text);
    }
    assert_eq!(m.encode("<|im_start|>", false).unwrap(), vec![151644]);
    assert_eq!(m.tokenizer().token_to_id("<|im_end|>"), Some(151645));
    assert_eq!(
        m.tokenizer().id_to_token(151645).as_deref(),
        Some("<|im_end|>")
    );
}

#[test]
fn known_ids() {
    // Reference ids from the Python `tokenizers` package (oniguruma regex) for the same file.
    let Some(m) = qwen3() else { return };
    assert_eq!(
        m.encode("Hello, world!", false).unwrap(),
        vec![9707, 11, 1879, 0]
    );
}

#[test]
fn detokenizer_stream_equals_decode_for_every_split() {
    let Some(m) = qwen3() else { return };
    for text in SAMPLES {
        let ids = m.encode(text, false).unwrap();
        assert_stream_matches(&m, &ids, false);
        assert_stream_matches(&m, &ids, true);
    }
}

#[test]
fn detokenizer_never_emits_partial_chars() {
    let Some(m) = qwen3() else { return };
    // Each emoji is split over several byte-level tokens.
    let ids = m.encode("😀👍🏽", false).unwrap();
    assert!(ids.len() > 2, "{ids:?}");
    let mut d = m.detokenizer(false);
    let mut out = String::new();
    for id in &ids {
        let piece = d.push(&[*id]).unwrap();
        assert!(!piece.contains('\u{FFFD}'), "{piece:?}");
        out.push_str(&piece);
    }
    out.push_str(&d.finish().unwrap());
    assert_eq!(out, "😀👍🏽");
}

#[test]
fn detokenizer_skips_special_tokens() {
    let Some(m) = qwen3() else { return };
    let ids = m
        .encode("<|im_start|>assistant\nHi 你好<|im_end|>", false)
        .unwrap();
    let mut d = m.detokenizer(true);
    let mut out = String::new();
    for id in &ids {
        out.push_str(&d.push(&[*id]).unwrap());
    }
    out.push_str(&d.finish().unwrap());
    assert_eq!(out, "assistant\nHi 你好");
}

#[test]
fn chat_system_user() {
    let Some(m) = qwen3() else { return };
    let msgs = br#"[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello!"}]"#;
    let out = m.render_chat(&chat(msgs, None, true)).unwrap();
    assert_eq!(
        out,
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n"
    );
    let ids = m.encode_chat(&chat(msgs, None, true)).unwrap();
    assert_eq!(ids[0], 151644);
    assert_eq!(m.decode(&ids, false).unwrap(), out);
}

#[test]
fn chat_multi_turn_and_parts_and_thinking_kwarg() {
    let Some(m) = qwen3() else { return };
    let msgs = br#"[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello!"},{"role":"user","content":[{"type":"text","text":"How"},{"type":"text","text":"are you?"}]}]"#;
    let req = ChatRequest {
        messages_json: msgs,
        tools_json: None,
        add_generation_prompt: true,
        kwargs_json: Some(r#"{"enable_thinking": false}"#),
    };
    assert_eq!(
        m.render_chat(&req).unwrap(),
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nHow\nare you?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    );
}

#[test]
fn chat_tools_tool_calls_and_tool_result() {
    let Some(m) = qwen3() else { return };
    let tools = br#"[{"type":"function","function":{"name":"get_weather","description":"Get the weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]"#;
    let msgs = br#"[
        {"role":"system","content":"S"},
        {"role":"user","content":"Weather in Paris?"},
        {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
        {"role":"tool","tool_call_id":"c1","content":"{\"temp\": 20}"}
    ]"#;
    let out = m.render_chat(&chat(msgs, Some(tools), true)).unwrap();
    let expected = concat!(
        "<|im_start|>system\nS\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n",
        "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n",
        r#"{"type": "function", "function": {"name": "get_weather", "description": "Get the weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}"#,
        "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n",
        "<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n",
        "<|im_start|>user\nWeather in Paris?<|im_end|>\n",
        "<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>\n",
        "<|im_start|>user\n<tool_response>\n{\"temp\": 20}\n</tool_response><|im_end|>\n",
        "<|im_start|>assistant\n",
    );
    assert_eq!(out, expected);
}

#[test]
fn chat_errors_are_data() {
    let Some(m) = qwen3() else { return };
    let err = m
        .render_chat(&chat(br#"[{"role":"user","content":"x"}"#, None, true))
        .unwrap_err();
    assert!(matches!(err, CoreError::InvalidMessages(_)));
    assert!(
        err.to_string().starts_with("invalid messages JSON: "),
        "{err}"
    );
    assert!(err.to_string().contains("line 1 column"), "{err}");
    // An empty conversation: the Qwen3 template reads messages[0].role of nothing.
    let err = m.render_chat(&chat(br#"[]"#, None, true)).unwrap_err();
    assert!(
        err.to_string().starts_with("chat template error: "),
        "{err}"
    );
    let bad_kwargs = ChatRequest {
        kwargs_json: Some("[1]"),
        ..chat(b"[]", None, true)
    };
    assert!(matches!(
        m.render_chat(&bad_kwargs).unwrap_err(),
        CoreError::InvalidKwargs(_)
    ));
}

#[test]
fn raw_messages() {
    let Some(m) = qwen3() else { return };
    let msgs = br#"[{"role":"system","content":"Be brief. "},{"role":"user","content":[{"type":"text","text":"Hi "},{"type":"text","text":"there"}]}]"#;
    let ids = m.encode_raw_messages(msgs).unwrap();
    assert_eq!(ids, m.encode("Be brief. Hi there", false).unwrap());
}

#[test]
fn not_a_model_folder() {
    let dir = qwen3_dir().join("..");
    let err = Model::load(&dir).err().expect("must fail");
    let msg = err.to_string();
    assert!(msg.starts_with("not a model folder: "), "{msg}");
    assert!(msg.contains("no tokenizer.json"), "{msg}");
    let err = Model::load("/definitely/not/here").err().unwrap();
    assert_eq!(
        err.to_string(),
        "not a model folder: /definitely/not/here (no such directory)"
    );
}

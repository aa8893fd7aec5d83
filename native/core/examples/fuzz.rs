//! Deterministic mutation fuzzing of portico-core on stable Rust (no coverage feedback):
//! seeds from native/core/fuzz/corpus/<target>/ plus built-in ones are mutated (byte
//! flips, inserts of format markers and JSON tokens, splices, truncation, repetition,
//! deep nesting) by a seeded PRNG and run through the targets of native/core/fuzz/targets.rs.
//! A panic is caught, the input is written to --out, and the run goes on; the exit status is
//! non-zero when any target panicked. Coverage-guided fuzzing of the same targets with
//! libFuzzer: native/core/fuzz/README.md.
//!
//!   cargo run --release -p portico-core --example fuzz -- [--target NAME|all]
//!       [--seconds T] [--iters N] [--seed S] [--out DIR] [--replay FILE]

#[path = "../fuzz/targets.rs"]
mod targets;

use std::panic;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const TOKENS: &[&str] = &[
    "{", "}", "[", "]", "\"", ":", ",", "\\", "\\u", "\\ud800", "\\udc00", "\\ud83d\\ude80", "null", "true", "1e400", "-0", "18446744073709551616", " ", "\n",
    "<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_start|>", "<|im_end|>", "[TOOL_CALLS]", "<|python_tag|>", "<|tool▁calls▁begin|>", "<|tool▁call▁begin|>", "<|tool▁sep|>",
    "<|tool▁call▁end|>", "<|tool▁calls▁end|>", "<|channel|>", "<|message|>", "<|end|>", "<|start|>", "<|call|>", "<|constrain|>", "analysis", "commentary to=functions.get_weather", "final",
    "<function=get_weather>", "</function>", "<parameter=city>", "</parameter>", "<minimax:tool_call>", "<invoke name=\"get_weather\">", "</invoke>", "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>", "functions.get_weather:0", "<|tool_call_argument_begin|>", "<|tool_call_end|>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "[get_weather(city=",
    ")]", "\"name\"", "\"arguments\"", "\"parameters\"", "get_weather", "é", "🚀", "\u{fffd}", "```json", "```", "<seed:tool_call>", "<|START_ACTION|>", "<|END_ACTION|>",
    "{\"role\":\"user\",\"content\":", "{\"type\":\"text\",\"text\":", "\"tool_calls\":", "\"reasoning_content\":",
];

fn builtin_seeds(target: &str) -> Vec<Vec<u8>> {
    let texts: &[&[u8]] = match target {
        "parsers" => &[
            b"\x00\x00\x00plain",
            b"\x01\x02\x00<think>Check.</think>Let me look.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n</tool_call>",
            b"\x03\x00\x20[get_weather(city=\"Paris\", days=3)]",
            b"\x12\x00\x00<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>",
            b"\x0b\x00\x20<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
            b"\x00\x00\x0c[{\"name\":\"get_weather\",\"parameters\":{\"city\":\"Paris\"}}]",
            b"\x00\x00\x1c{\"city\":\"Paris\"}",
        ],
        "json" => &[b"{\"a\": [1, -2.5e+3, 0, true, false, null, \"x\\\"\\\\\\u00e9\"], \"b\": {}}", b"[{\"name\":\"f\",\"arguments\":{\"x\":1}}]", b"\"\\ud83d\\ude80\"", b"-0.0e-0", b"{\"name\":\"f\",\"parameters\":\"{}\"}"],
        // Magic numbers only: the real seeds are native/core/fuzz/corpus/vision/.
        "vision" => &[b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff\xe0", b"RIFF\x00\x00\x00\x00WEBPVP8L", b"GIF89a"],
        "detokenizer" => &[b"\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09", b"\x01\xff\xff\x00\x9b\x51\x02\x4f\xb1\x00", b"\x00\xe9\x00\x00\xf0\x9f\x9a\x80"],
        _ => &[
            b"[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"hi\"}]",
            b"[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"c\",\"content\":\"ok\"}]\x00[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{}}}]",
            b"[{\"role\":\"assistant\",\"content\":\"x\",\"reasoning_content\":\"r\"},{\"role\":\"user\",\"content\":\"y\"}]",
        ],
    };
    texts.iter().map(|s| s.to_vec()).collect()
}

fn corpus(dir: &Path, target: &str) -> Vec<Vec<u8>> {
    let mut out = builtin_seeds(target);
    if let Ok(rd) = std::fs::read_dir(dir.join(target)) {
        let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        out.extend(files.iter().filter_map(|p| std::fs::read(p).ok()));
    }
    out
}

fn mutate(seeds: &[Vec<u8>], r: &mut Rng) -> Vec<u8> {
    let mut b = seeds[r.below(seeds.len())].clone();
    for _ in 0..1 + r.below(6) {
        let at = r.below(b.len() + 1);
        match r.below(9) {
            0 if !b.is_empty() => {
                let i = r.below(b.len());
                b[i] = r.next() as u8;
            }
            1 => {
                let t = TOKENS[r.below(TOKENS.len())].as_bytes();
                b.splice(at..at, t.iter().copied());
            }
            2 => b.truncate(at),
            3 if !b.is_empty() => {
                let end = (at + 1 + r.below(16)).min(b.len());
                if at < end {
                    b.drain(at..end);
                }
            }
            4 => {
                let other = &seeds[r.below(seeds.len())];
                let from = r.below(other.len() + 1);
                b.splice(at..at, other[from..].iter().copied());
            }
            5 if at < b.len() => {
                // repeat a slice (long runs, deep nesting of whatever brackets it holds)
                let end = (at + 1 + r.below(8)).min(b.len());
                let piece = b[at..end].to_vec();
                for _ in 0..[2, 10, 100, 2000][r.below(4)] {
                    b.splice(at..at, piece.iter().copied());
                }
            }
            6 => {
                let depth = [10, 200, 5000, 100_000][r.below(4)];
                let open = if r.below(2) == 0 { b"[".as_slice() } else { b"{\"a\":".as_slice() };
                let mut nest = Vec::with_capacity(depth * open.len());
                for _ in 0..depth {
                    nest.extend_from_slice(open);
                }
                b.splice(at..at, nest);
            }
            7 => {
                let bad: &[&[u8]] = &[b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\x00"];
                b.splice(at..at, bad[r.below(bad.len())].iter().copied());
            }
            _ => {
                const ALPHABET: &[u8] = b"0123456789{}[]\":,\\ <>/|=abcxyz";
                if let Some(c) = b.get_mut(at) {
                    *c = ALPHABET[r.below(ALPHABET.len())];
                }
            }
        }
    }
    b
}

fn escape(b: &[u8]) -> String {
    b.iter().take(400).map(|&c| if (0x20..0x7f).contains(&c) { (c as char).to_string() } else { format!("\\x{c:02x}") }).collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let target = opt("--target").unwrap_or_else(|| "all".into());
    let seconds: f64 = opt("--seconds").map(|s| s.parse().unwrap()).unwrap_or(10.0);
    let iters: u64 = opt("--iters").map(|s| s.parse().unwrap()).unwrap_or(u64::MAX);
    let seed: u64 = opt("--seed").map(|s| s.parse().unwrap()).unwrap_or(1);
    let out = PathBuf::from(opt("--out").unwrap_or_else(|| "/tmp/portico-fuzz-rust".into()));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let chosen: Vec<_> = targets::TARGETS.iter().filter(|(n, _)| target == "all" || *n == target).collect();
    assert!(!chosen.is_empty(), "unknown --target {target}");
    let _ = targets::qwen3(); // load once, outside the time budget (a failure here panics loudly)
    // panics in a target are findings: reported below with their input, not with a backtrace each
    panic::set_hook(Box::new(|info| {
        if std::env::var_os("FUZZ_VERBOSE").is_some() {
            eprintln!("{info}");
        }
    }));
    if let Some(file) = opt("--replay") {
        let data = std::fs::read(&file).expect("read --replay file");
        for (name, f) in &chosen {
            let r = panic::catch_unwind(|| f(&data));
            println!("{name}: {}", if r.is_ok() { "ok".to_string() } else { format!("PANIC {}", panic_text(r.unwrap_err())) });
        }
        return;
    }
    let current = std::env::var_os("FUZZ_CURRENT").map(PathBuf::from);
    let budget = Duration::from_secs_f64(seconds / chosen.len() as f64);
    let mut failed = 0;
    let mut total = 0;
    for (name, f) in &chosen {
        let seeds = corpus(&dir, name);
        let mut r = Rng(seed ^ name.len() as u64 * 0x1000_0000_01b3);
        let t0 = Instant::now();
        let (mut n, mut panics) = (0u64, 0u64);
        let mut slowest = (Duration::ZERO, Vec::new());
        while n < iters && t0.elapsed() < budget {
            let data = if (n as usize) < seeds.len() { seeds[n as usize].clone() } else { mutate(&seeds, &mut r) };
            n += 1;
            if let Some(p) = &current {
                // a stack overflow or abort cannot be caught: the input is on disk first
                std::fs::write(p, &data).unwrap();
            }
            let t = Instant::now();
            let result = panic::catch_unwind(|| f(&data));
            if t.elapsed() > slowest.0 {
                slowest = (t.elapsed(), data.clone());
            }
            if let Err(e) = result {
                panics += 1;
                let msg = panic_text(e);
                std::fs::create_dir_all(&out).unwrap();
                let file = out.join(format!("{name}-{seed}-{n}.bin"));
                std::fs::write(&file, &data).unwrap();
                if panics <= 5 {
                    println!("PANIC {name} #{n}: {msg}\n  input ({} bytes) {}\n  saved {}", data.len(), escape(&data), file.display());
                }
            }
        }
        println!("fuzz-rust {name}: {n} inputs in {:.1} s, {panics} panics; slowest {:.1} ms ({} bytes: {})", t0.elapsed().as_secs_f64(), slowest.0.as_secs_f64() * 1e3, slowest.1.len(), escape(&slowest.1[..slowest.1.len().min(60)]));
        total += n;
        failed += panics;
    }
    println!("fuzz-rust: {total} inputs, {failed} panics (seed {seed})");
    if failed > 0 {
        std::process::exit(1);
    }
}

fn panic_text(e: Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

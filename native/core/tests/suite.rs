//! Integration tests of the native core, in one binary (each test binary is linked with
//! LTO, so fewer binaries keep `cargo test --release` fast): Sequence and stop handling,
//! chat-template byte identity with Python, prefix-cache id identity.

mod common;

#[path = "suite/choice.rs"]
mod choice;
#[path = "suite/fast_encode.rs"]
mod fast_encode;
#[path = "suite/fuzz.rs"]
mod fuzz;
#[path = "suite/perf.rs"]
mod perf;
#[path = "suite/prefix_cache.rs"]
mod prefix_cache;
#[path = "suite/sequence.rs"]
mod sequence;
#[path = "suite/templates.rs"]
mod templates;

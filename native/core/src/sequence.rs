//! One generated sequence (one choice): incremental detokenizer + stop conditions.
//!
//! Semantics follow vLLM's (SamplingParams, v1 `check_stop` and the incremental
//! detokenizer's stop-string check):
//! * A stop token id (the model's EOS ids unless `ignore_eos`, plus the request's
//!   `stop_token_ids`) ends the sequence with `stop`. Its text is not emitted unless
//!   `include_stop_str_in_output` (and then only if `skip_special_tokens` lets it through).
//!   The matched stop is the id for request `stop_token_ids`, none for an EOS id.
//! * Stop strings end the sequence with `stop`; the text before the match is emitted, the
//!   stop string only with `include_stop_str_in_output`. A partial stop string is held back.
//! * Neither stop tokens nor stop strings count before `min_tokens` tokens were generated
//!   (a stop counts once more than `min_tokens` tokens exist, the stop token included).
//! * `max_tokens` generated tokens end the sequence with `length` (a stop on that same
//!   token wins: `stop`).
//! * Every pushed id counts as generated (`completion_tokens`), the stop token included.

use crate::detokenizer::Detokenizer;
use crate::error::Result;
use crate::stop::{JailOutput, StopJail};

#[derive(Debug, Clone, Default)]
pub struct SequenceOptions {
    pub skip_special_tokens: bool,
    pub spaces_between_special_tokens: bool,
    pub stop: Vec<String>,
    pub stop_token_ids: Vec<u32>,
    pub include_stop_str_in_output: bool,
    pub min_tokens: u32,
    pub ignore_eos: bool,
    pub max_tokens: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    Length,
}

impl FinishReason {
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
        }
    }
}

/// What ended the sequence with `stop` (vLLM's `stop_reason`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchedStop {
    /// A model EOS id (vLLM reports no stop_reason for it).
    Eos(u32),
    /// One of the request's stop_token_ids.
    TokenId(u32),
    /// One of the request's stop strings.
    Text(String),
}

/// Stop / EOS token ids: a sorted Vec. Checked for every generated token and built for
/// every choice; usually one to three ids, where a binary search beats hashing (SipHash
/// was ~6% of a streamed token's cost through N-API) and building costs one allocation.
#[derive(Default)]
struct IdSet(Vec<u32>);

impl IdSet {
    fn new(mut ids: Vec<u32>) -> IdSet {
        ids.sort_unstable();
        ids.dedup();
        IdSet(ids)
    }

    fn contains(&self, id: u32) -> bool {
        self.0.binary_search(&id).is_ok()
    }
}

pub struct Sequence {
    detok: Detokenizer,
    jail: StopJail,
    eos_ids: IdSet,
    stop_ids: IdSet,
    include_stop: bool,
    min_tokens: u32,
    max_tokens: Option<u32>,
    generated: u32,
    finish_reason: Option<FinishReason>,
    matched: Option<MatchedStop>,
}

impl Sequence {
    pub(crate) fn new(detok: Detokenizer, eos_ids: &[u32], opts: SequenceOptions) -> Sequence {
        let eos_ids = if opts.ignore_eos {
            IdSet::default()
        } else {
            IdSet::new(eos_ids.to_vec())
        };
        Sequence {
            detok,
            jail: StopJail::new(opts.stop, opts.include_stop_str_in_output),
            eos_ids,
            stop_ids: IdSet::new(opts.stop_token_ids),
            include_stop: opts.include_stop_str_in_output,
            min_tokens: opts.min_tokens,
            max_tokens: opts.max_tokens,
            generated: 0,
            finish_reason: None,
            matched: None,
        }
    }

    pub fn finished(&self) -> bool {
        self.finish_reason.is_some()
    }

    pub fn finish_reason(&self) -> Option<FinishReason> {
        self.finish_reason
    }

    pub fn matched_stop(&self) -> Option<&MatchedStop> {
        self.matched.as_ref()
    }

    /// Ids counted so far (including a stop token; ids pushed after the end are not counted).
    pub fn generated_tokens(&self) -> u32 {
        self.generated
    }

    /// Adds generated ids; returns the visible text that became final. Once finished,
    /// further ids are ignored.
    pub fn push(&mut self, ids: &[u32]) -> Result<String> {
        if self.finished() || ids.is_empty() {
            return Ok(String::new());
        }
        let mut out = String::new();
        for (i, &id) in ids.iter().enumerate() {
            self.generated += 1;
            let stops_enabled = self.generated > self.min_tokens;
            let stop = if !stops_enabled {
                None
            } else if self.stop_ids.contains(id) {
                Some(MatchedStop::TokenId(id))
            } else if self.eos_ids.contains(id) {
                Some(MatchedStop::Eos(id))
            } else {
                None
            };
            let at_limit = self.max_tokens.is_some_and(|m| self.generated >= m);
            if stop.is_none() && !at_limit {
                continue;
            }
            // Text of the ids before this one, then this one (unless a hidden stop id).
            let upto = if stop.is_some() && !self.include_stop { i } else { i + 1 };
            if self.feed(&ids[..upto], &mut out)? {
                return Ok(out);
            }
            self.end(
                stop.as_ref().map_or(FinishReason::Length, |_| FinishReason::Stop),
                stop,
                &mut out,
            )?;
            return Ok(out);
        }
        self.feed(ids, &mut out)?;
        Ok(out)
    }

    /// Ends the stream (the engine finished on its own, or was aborted): flushes any
    /// incomplete character and releases a held-back partial stop string. Idempotent.
    pub fn finish(&mut self) -> Result<String> {
        let mut out = String::new();
        if self.finished() {
            return Ok(out);
        }
        let tail = self.detok.finish()?;
        if self.jail_push(&tail, &mut out) {
            return Ok(out);
        }
        out.push_str(&self.jail.flush());
        Ok(out)
    }

    /// Detokenizes `ids` and runs the text through the jail. True if a stop string ended it.
    fn feed(&mut self, ids: &[u32], out: &mut String) -> Result<bool> {
        if ids.is_empty() {
            return Ok(false);
        }
        let text = self.detok.push(ids)?;
        Ok(self.jail_push(&text, out))
    }

    fn jail_push(&mut self, text: &str, out: &mut String) -> bool {
        let enabled = self.generated > self.min_tokens;
        match self.jail.push(text, enabled) {
            JailOutput::Text(t) => {
                out.push_str(&t);
                false
            }
            JailOutput::Stopped(m) => {
                out.push_str(&m.released);
                self.finish_reason = Some(FinishReason::Stop);
                self.matched = Some(MatchedStop::Text(self.jail.stop(m.index).to_owned()));
                true
            }
        }
    }

    /// Stop token or length: flush the detokenizer (a stop string may still match in the
    /// flushed text and then wins, being earlier), release what the jail holds.
    fn end(
        &mut self,
        reason: FinishReason,
        matched: Option<MatchedStop>,
        out: &mut String,
    ) -> Result<()> {
        let tail = self.detok.finish()?;
        if self.jail_push(&tail, out) {
            return Ok(());
        }
        out.push_str(&self.jail.flush());
        self.finish_reason = Some(reason);
        self.matched = matched;
        Ok(())
    }
}

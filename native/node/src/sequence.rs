//! One Sequence per generated choice: detokenizer + stop strings/ids + token limits.
//!
//! The constructor takes positional arguments (a flags word and plain numbers/arrays, no
//! options object to look properties up in): a Sequence is created per choice of every
//! request. src/native/core.ts (`newSequence`) builds them from a `SequenceOptions`.
//! The per-token methods (`pushToken`, `pushTokens`) are raw N-API callbacks, in
//! `sequence_fast.rs`.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::errors::to_napi;
use crate::model::Model;
use crate::output_flags::OutputFlags;
use portico_core::{MatchedStop, SequenceOptions as CoreOptions};

#[napi]
pub struct Sequence {
    pub(crate) inner: portico_core::Sequence,
}

#[napi]
impl Sequence {
    /// `flags`: OutputFlags bits (1 skip special tokens, 2 spaces between special tokens,
    /// 4 include the stop string in the output, 8 ignore EOS). `maxTokens` null: no limit.
    #[napi(constructor)]
    pub fn new(
        model: &Model,
        flags: u32,
        min_tokens: u32,
        max_tokens: Option<u32>,
        stop: Option<Vec<String>>,
        stop_token_ids: Option<Vec<u32>>,
    ) -> Sequence {
        let f = OutputFlags(flags);
        let opts = CoreOptions {
            skip_special_tokens: f.skip_special_tokens(),
            spaces_between_special_tokens: f.spaces_between_special_tokens(),
            stop: stop.unwrap_or_default(),
            stop_token_ids: stop_token_ids.unwrap_or_default(),
            include_stop_str_in_output: f.include_stop_str_in_output(),
            min_tokens,
            ignore_eos: f.ignore_eos(),
            max_tokens,
        };
        Sequence {
            inner: model.core().sequence(opts),
        }
    }

    /// Adds generated ids; returns the visible text that became final ("" if none).
    #[napi]
    pub fn push(&mut self, ids: &[u32]) -> Result<String> {
        self.inner.push(ids).map_err(to_napi)
    }

    /// End of stream: flushes held text (a partial stop string that never completed).
    #[napi]
    pub fn finish(&mut self) -> Result<String> {
        self.inner.finish().map_err(to_napi)
    }

    #[napi(getter)]
    pub fn finished(&self) -> bool {
        self.inner.finished()
    }

    #[napi(getter, ts_return_type = "'stop' | 'length' | null")]
    pub fn finish_reason(&self) -> Option<&'static str> {
        self.inner.finish_reason().map(|r| r.as_str())
    }

    /// The stop string or request stop token id that ended the sequence; null for EOS,
    /// length, or not finished (vLLM's stop_reason).
    #[napi(getter, ts_return_type = "string | number | null")]
    pub fn matched_stop(&self) -> Option<Either<String, u32>> {
        match self.inner.matched_stop()? {
            MatchedStop::Text(s) => Some(Either::A(s.clone())),
            MatchedStop::TokenId(id) => Some(Either::B(*id)),
            MatchedStop::Eos(_) => None,
        }
    }

    /// Generated ids counted so far (the stop token included; none after the end).
    #[napi(getter)]
    pub fn generated_tokens(&self) -> u32 {
        self.inner.generated_tokens()
    }
}

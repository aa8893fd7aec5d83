//! One Sequence per generated choice: detokenizer + stop strings/ids + token limits.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::errors::to_napi;
use crate::model::Model;
use portico_core::{MatchedStop, SequenceOptions as CoreOptions};

/// All fields optional; defaults: skip special tokens, no stops, no limits.
#[napi(object)]
#[derive(Default)]
pub struct SequenceOptions {
    pub skip_special_tokens: Option<bool>,
    pub spaces_between_special_tokens: Option<bool>,
    pub stop: Option<Vec<String>>,
    pub stop_token_ids: Option<Vec<u32>>,
    pub include_stop_str_in_output: Option<bool>,
    pub min_tokens: Option<u32>,
    pub ignore_eos: Option<bool>,
    pub max_tokens: Option<u32>,
}

#[napi]
pub struct Sequence {
    inner: portico_core::Sequence,
}

#[napi]
impl Sequence {
    #[napi(constructor)]
    pub fn new(model: &Model, options: Option<SequenceOptions>) -> Sequence {
        let o = options.unwrap_or_default();
        let opts = CoreOptions {
            skip_special_tokens: o.skip_special_tokens.unwrap_or(true),
            spaces_between_special_tokens: o.spaces_between_special_tokens.unwrap_or(true),
            stop: o.stop.unwrap_or_default(),
            stop_token_ids: o.stop_token_ids.unwrap_or_default(),
            include_stop_str_in_output: o.include_stop_str_in_output.unwrap_or(false),
            min_tokens: o.min_tokens.unwrap_or(0),
            ignore_eos: o.ignore_eos.unwrap_or(false),
            max_tokens: o.max_tokens,
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

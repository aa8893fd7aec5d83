//! One incremental detokenizer per generated sequence.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::errors::to_napi;
use crate::model::Model;

#[napi]
pub struct Detokenizer {
    inner: portico_core::Detokenizer,
}

#[napi]
impl Detokenizer {
    #[napi(constructor)]
    pub fn new(model: &Model, skip_special_tokens: bool) -> Detokenizer {
        Detokenizer {
            inner: model.core().detokenizer(skip_special_tokens),
        }
    }

    /// Adds generated ids; returns only the text that became final ("" if none yet).
    #[napi]
    pub fn push(&mut self, ids: &[u32]) -> Result<String> {
        self.inner.push(ids).map_err(to_napi)
    }

    /// Returns whatever text is still held (call once, at the end of the sequence).
    #[napi]
    pub fn finish(&mut self) -> Result<String> {
        self.inner.finish().map_err(to_napi)
    }
}

//! One Sequence per generated choice: detokenizer + stop strings/ids + token limits.
//!
//! Written directly against Node-API rather than as a `#[napi]` class: a Sequence is made
//! for every choice of every request and called once per streamed token, and napi-rs's
//! generic class glue (per-call borrow scope and barrier, argument conversions, a registry
//! entry per wrapped object) cost several times the detokenization itself. Each call here
//! is the Node-API calls it needs and nothing else; the receiver is checked (class signature
//! for methods, type tag `SEQUENCE_TAG` for getters) before its native pointer is used. The
//! per-token methods are in sequence_fast.rs. src/native/core.ts is the typed wrapper
//! (`newSequence`).
//!
//! `new Sequence(model, flags, minTokens, maxTokens | null, stop | null, stopTokenIds | null)`:
//! positional, so construction reads no options object (OutputFlags bits for the booleans).

use std::ptr;

use napi::bindgen_prelude::Unknown;
use napi::{sys, Result};
use napi_derive::napi;

use crate::model::Model;
use crate::output_flags::OutputFlags;
use crate::raw::{self, Env, Value};
use crate::sequence_fast;
use portico_core::{MatchedStop, Sequence as CoreSequence, SequenceOptions};

/// Marks objects made by this constructor (random constant; checked before unwrapping).
pub(crate) const SEQUENCE_TAG: sys::napi_type_tag = sys::napi_type_tag {
    lower: 0x5e9c_3f1a_b27d_4c61,
    upper: 0x9a04_d6e8_71c2_0b3f,
};

const NOT_A_SEQUENCE: &std::ffi::CStr = c"Sequence method called on an object that is not a Sequence";

/// The Sequence of `this`, or None with a TypeError pending (getters: Node does not check
/// their receiver's class, so the tag does).
pub(crate) unsafe fn this_sequence<'a>(env: Env, this: Value) -> Option<&'a mut CoreSequence> {
    // SAFETY: the tag proves the constructor below wrapped a CoreSequence in this object;
    // calls are synchronous on its JS thread and none re-enters JS while it is borrowed.
    unsafe { raw::unwrap_tagged::<CoreSequence>(env, this, &SEQUENCE_TAG, NOT_A_SEQUENCE).map(|p| &mut *p) }
}

/// `this_sequence` for the methods (the per-token path): Node gives a class's methods the
/// class signature (`napi_define_class`), so V8 throws "Illegal invocation" before the
/// callback for any receiver not made by this constructor, and every object it made has a
/// CoreSequence wrapped (it throws otherwise). What is left to check is that the wrap is
/// there; the type-tag lookup (a private-symbol property read, ~15% of a token's cost) is
/// not repeated.
pub(crate) unsafe fn this_sequence_method<'a>(env: Env, this: Value) -> Option<&'a mut CoreSequence> {
    // SAFETY: as above (the class signature stands in for the tag).
    unsafe { raw::unwrap_method::<CoreSequence>(env, this, NOT_A_SEQUENCE) }
}

/// The Sequence class (a new constructor per call: core.ts calls it once per thread).
#[napi(ts_return_type = "unknown")]
pub fn sequence_class(env: napi::Env) -> Result<Unknown<'static>> {
    let env = env.raw();
    let props = [
        raw::method(c"pushToken", Some(sequence_fast::push_token)),
        raw::method(c"pushTokens", Some(sequence_fast::push_tokens)),
        raw::method(c"push", Some(sequence_fast::push)),
        raw::method(c"finish", Some(finish)),
        raw::getter(c"finished", Some(finished)),
        raw::getter(c"finishReason", Some(finish_reason)),
        raw::getter(c"matchedStop", Some(matched_stop)),
        raw::getter(c"generatedTokens", Some(generated_tokens)),
    ];
    let class = raw::define_class(env, c"Sequence", Some(construct), &props)?;
    Ok(unsafe { Unknown::from_raw_unchecked(env, class) })
}

unsafe extern "C" fn construct(env: Env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let mut target = ptr::null_mut();
        if !raw::ok(sys::napi_get_new_target(env, info, &mut target)) || target.is_null() {
            return raw::throw_type(env, c"Class constructor Sequence cannot be invoked without 'new'");
        }
        let Some((this, [model, flags, min_tokens, max_tokens, stop, stop_ids])) = raw::args::<6>(env, info) else {
            return ptr::null_mut();
        };
        let Some(model) = raw::unwrap_napi_rs::<Model>(env, model, c"Sequence: the first argument must be a Model") else {
            return ptr::null_mut();
        };
        let Some(opts) = sequence_options(env, [flags, min_tokens, max_tokens, stop, stop_ids], "Sequence") else {
            return ptr::null_mut();
        };
        let seq = Box::into_raw(Box::new(model.core().sequence(opts)));
        if !raw::ok(sys::napi_wrap(env, this, seq.cast(), Some(drop_sequence), ptr::null_mut(), ptr::null_mut())) {
            drop(Box::from_raw(seq));
            return raw::throw(env, c"GenericFailure", "Sequence: napi_wrap failed");
        }
        // After the wrap: a tagged object always has a Sequence in it.
        if !raw::ok(sys::napi_type_tag_object(env, this, &SEQUENCE_TAG)) {
            return raw::throw(env, c"GenericFailure", "Sequence: napi_type_tag_object failed");
        }
        this
    }
}

/// The positional sequence options `flags, minTokens, maxTokens | null, stop | null,
/// stopTokenIds | null` (shared with ChoiceOutput's constructor); None with a TypeError
/// pending when one is refused (each is checked before the next is read).
pub(crate) unsafe fn sequence_options(env: Env, [flags, min_tokens, max_tokens, stop, stop_ids]: [Value; 5], class: &str) -> Option<SequenceOptions> {
    unsafe {
        let msg = |m: &str| std::ffi::CString::new(format!("{class}: {m}")).unwrap_or_default();
        let (Some(flags), Some(min_tokens)) = (raw::get_u32(env, flags), raw::get_u32(env, min_tokens)) else {
            raw::throw_type(env, &msg("flags and minTokens must be numbers"));
            return None;
        };
        let max_tokens = raw::get_optional(env, max_tokens, || msg("maxTokens must be a number or null"), |env, v| raw::get_u32(env, v).map(Some))?;
        let stop = raw::get_optional(env, stop, || msg("stop must be an array of strings or null"), |env, v| raw::get_string_array(env, v))?;
        let stop_token_ids = raw::get_optional(env, stop_ids, || msg("stopTokenIds must be an array of numbers or null"), |env, v| raw::get_u32_array(env, v))?;
        let f = OutputFlags(flags);
        Some(SequenceOptions {
            skip_special_tokens: f.skip_special_tokens(),
            spaces_between_special_tokens: f.spaces_between_special_tokens(),
            stop,
            stop_token_ids,
            include_stop_str_in_output: f.include_stop_str_in_output(),
            min_tokens,
            ignore_eos: f.ignore_eos(),
            max_tokens,
        })
    }
}

unsafe extern "C" fn drop_sequence(_env: Env, data: *mut std::ffi::c_void, _hint: *mut std::ffi::c_void) {
    // SAFETY: `data` is the Box the constructor wrapped; V8 finalizes each wrap once.
    drop(unsafe { Box::from_raw(data.cast::<CoreSequence>()) });
}

/// End of stream: flushes held text (a partial stop string that never completed).
unsafe extern "C" fn finish(env: Env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let Some((this, [])) = raw::args::<0>(env, info) else { return ptr::null_mut() };
        let Some(seq) = this_sequence_method(env, this) else { return ptr::null_mut() };
        match seq.finish() {
            Ok(text) => raw::string(env, &text),
            Err(e) => raw::throw_core(env, e),
        }
    }
}

unsafe extern "C" fn finished(env: Env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let Some((this, [])) = raw::args::<0>(env, info) else { return ptr::null_mut() };
        let Some(seq) = this_sequence(env, this) else { return ptr::null_mut() };
        raw::boolean(env, seq.finished())
    }
}

unsafe extern "C" fn finish_reason(env: Env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let Some((this, [])) = raw::args::<0>(env, info) else { return ptr::null_mut() };
        let Some(seq) = this_sequence(env, this) else { return ptr::null_mut() };
        finish_reason_value(env, seq.finish_reason())
    }
}

/// The stop string or request stop token id that ended the sequence; null for EOS,
/// length, or not finished (vLLM's stop_reason).
unsafe extern "C" fn matched_stop(env: Env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let Some((this, [])) = raw::args::<0>(env, info) else { return ptr::null_mut() };
        let Some(seq) = this_sequence(env, this) else { return ptr::null_mut() };
        matched_stop_value(env, seq.matched_stop())
    }
}

/// Generated ids counted so far (the stop token included; none after the end).
unsafe extern "C" fn generated_tokens(env: Env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let Some((this, [])) = raw::args::<0>(env, info) else { return ptr::null_mut() };
        let Some(seq) = this_sequence(env, this) else { return ptr::null_mut() };
        raw::uint32(env, seq.generated_tokens())
    }
}

/// A finish reason as JS: its OpenAI name, or null while unfinished (Sequence and ChoiceOutput).
pub(crate) unsafe fn finish_reason_value(env: Env, reason: Option<portico_core::FinishReason>) -> Value {
    unsafe {
        match reason {
            Some(r) => raw::string(env, r.as_str()),
            None => raw::null(env),
        }
    }
}

/// What ended the output as JS (vLLM's stop_reason): the stop string or request stop token
/// id; null for EOS, length, an end the engine decided, or not finished.
pub(crate) unsafe fn matched_stop_value(env: Env, stop: Option<&MatchedStop>) -> Value {
    unsafe {
        match stop {
            Some(MatchedStop::Text(s)) => raw::string(env, s),
            Some(MatchedStop::TokenId(id)) => raw::uint32(env, *id),
            Some(MatchedStop::Eos(_)) | None => raw::null(env),
        }
    }
}

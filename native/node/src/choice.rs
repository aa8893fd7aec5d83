//! The ChoiceOutput class (portico_core::ChoiceOutput): one per generated choice, one call
//! per engine message. Written directly against Node-API like Sequence (see sequence.rs for
//! why); src/native/core.ts `newChoiceOutput` is the typed wrapper.
//!
//! `new ChoiceOutput(model, flags, minTokens, maxTokens | null, stop | null, stopTokenIds | null, parser | null)`:
//! the sequence options as Sequence takes them, and an OutputParser (napi-rs class) whose
//! parser the choice takes over (that OutputParser is unusable afterwards), or null.
//!
//! The result of `pushToken(id)`, `pushTokens(ids)` and `finish()`, built for the common case:
//! * a string: content only (possibly ''), and the choice goes on: one string, no array;
//! * otherwise a flat array `[over, kind, ...fields, kind, ...fields]`: `over` is 1 once the
//!   choice ended (then read finishReason / matchedStop / generatedTokens / toolCallCount),
//!   kinds as OutputParser's: 0 content text | 1 reasoning text | 2 tool start: index, id,
//!   name | 3 tool args: index, text.

use std::ptr;

use napi::{sys, Result};
use napi::bindgen_prelude::Unknown;
use napi_derive::napi;

use crate::model::Model;
use crate::parsers::OutputParser;
use crate::raw::{self, Env, Value};
use crate::sequence::{finish_reason_value, matched_stop_value, sequence_options};
use portico_core::parsers::Delta;
use portico_core::ChoiceOutput as CoreChoice;

const CHOICE_TAG: sys::napi_type_tag = sys::napi_type_tag {
    lower: 0x3b71_c9d2_0e5a_8f46,
    upper: 0xc42e_7a19_d63b_5081,
};

const NOT_A_CHOICE: &std::ffi::CStr = c"ChoiceOutput method called on an object that is not a ChoiceOutput";

/// Getters: checked by the type tag (Node does not check a getter's receiver).
unsafe fn this_choice<'a>(env: Env, this: Value) -> Option<&'a mut CoreChoice> {
    // SAFETY: the tag proves the constructor wrapped a CoreChoice; calls are synchronous.
    unsafe { raw::unwrap_tagged::<CoreChoice>(env, this, &CHOICE_TAG, NOT_A_CHOICE).map(|p| &mut *p) }
}

/// Methods: the class signature stands in for the tag (as Sequence's methods).
unsafe fn this_choice_method<'a>(env: Env, this: Value) -> Option<&'a mut CoreChoice> {
    unsafe { raw::unwrap_method::<CoreChoice>(env, this, NOT_A_CHOICE) }
}

/// The ChoiceOutput class (a new constructor per call: core.ts calls it once per thread).
#[napi(ts_return_type = "unknown")]
pub fn choice_output_class(env: napi::Env) -> Result<Unknown<'static>> {
    let env = env.raw();
    let props = [
        raw::method(c"pushToken", Some(push_token)),
        raw::method(c"pushTokens", Some(push_tokens)),
        raw::method(c"finish", Some(finish)),
        raw::getter(c"finishReason", Some(finish_reason)),
        raw::getter(c"matchedStop", Some(matched_stop)),
        raw::getter(c"generatedTokens", Some(generated_tokens)),
        raw::getter(c"toolCallCount", Some(tool_call_count)),
    ];
    let class = raw::define_class(env, c"ChoiceOutput", Some(construct), &props)?;
    Ok(unsafe { Unknown::from_raw_unchecked(env, class) })
}

unsafe extern "C" fn construct(env: Env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let mut target = ptr::null_mut();
        if !raw::ok(sys::napi_get_new_target(env, info, &mut target)) || target.is_null() {
            return raw::throw_type(env, c"Class constructor ChoiceOutput cannot be invoked without 'new'");
        }
        let Some((this, [model, flags, min_tokens, max_tokens, stop, stop_ids, parser])) = raw::args::<7>(env, info) else {
            return ptr::null_mut();
        };
        let Some(model) = raw::unwrap_napi_rs::<Model>(env, model, c"ChoiceOutput: the first argument must be a Model") else {
            return ptr::null_mut();
        };
        let Some(opts) = sequence_options(env, [flags, min_tokens, max_tokens, stop, stop_ids], "ChoiceOutput") else {
            return ptr::null_mut();
        };
        let parser = if raw::is_nullish(env, parser) {
            None
        } else {
            let tag = <OutputParser as napi::bindgen_prelude::TypeTag>::type_tag();
            let Some(p) = raw::unwrap_tagged::<OutputParser>(env, parser, &tag, c"ChoiceOutput: parser must be an OutputParser or null") else {
                return ptr::null_mut();
            };
            match (*p).take() {
                Some(p) => Some(p),
                None => return raw::throw(env, c"InvalidArg", "ChoiceOutput: this OutputParser was already handed to a ChoiceOutput"),
            }
        };
        let choice = Box::into_raw(Box::new(CoreChoice::new(model.core().sequence(opts), parser)));
        if !raw::ok(sys::napi_wrap(env, this, choice.cast(), Some(drop_choice), ptr::null_mut(), ptr::null_mut())) {
            drop(Box::from_raw(choice));
            return raw::throw(env, c"GenericFailure", "ChoiceOutput: napi_wrap failed");
        }
        if !raw::ok(sys::napi_type_tag_object(env, this, &CHOICE_TAG)) {
            return raw::throw(env, c"GenericFailure", "ChoiceOutput: napi_type_tag_object failed");
        }
        this
    }
}

unsafe extern "C" fn drop_choice(_env: Env, data: *mut std::ffi::c_void, _hint: *mut std::ffi::c_void) {
    // SAFETY: `data` is the Box the constructor wrapped; V8 finalizes each wrap once.
    drop(unsafe { Box::from_raw(data.cast::<CoreChoice>()) });
}

/// `choice.pushToken(id)`: one generated id (the streaming norm: no array read).
unsafe extern "C" fn push_token(env: Env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let Some((this, [id])) = raw::args::<1>(env, info) else { return ptr::null_mut() };
        let Some(c) = this_choice_method(env, this) else { return ptr::null_mut() };
        let Some(id) = raw::get_u32(env, id) else {
            return raw::throw_type(env, c"pushToken: the token id must be a number");
        };
        run(env, c, |c| c.push(&[id]))
    }
}

/// `choice.pushTokens(ids)`: the ids of one engine message (a JS array).
unsafe extern "C" fn push_tokens(env: Env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let Some((this, [ids])) = raw::args::<1>(env, info) else { return ptr::null_mut() };
        let Some(c) = this_choice_method(env, this) else { return ptr::null_mut() };
        let Some(ids) = raw::get_u32_array(env, ids) else {
            return raw::throw_type(env, c"pushTokens: the ids must be an array of numbers");
        };
        run(env, c, |c| c.push(&ids))
    }
}

/// `choice.finish()`: the engine ended the choice; always an array (over = 1).
unsafe extern "C" fn finish(env: Env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let Some((this, [])) = raw::args::<0>(env, info) else { return ptr::null_mut() };
        let Some(c) = this_choice_method(env, this) else { return ptr::null_mut() };
        run(env, c, |c| c.finish())
    }
}

unsafe fn run(env: Env, c: &mut CoreChoice, step: impl FnOnce(&mut CoreChoice) -> portico_core::Result<&[Delta]>) -> Value {
    let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| step(c).map(|d| d.len())));
    unsafe {
        match done {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return raw::throw_core(env, e),
            Err(_) => return raw::throw(env, c"GenericFailure", "ChoiceOutput push panicked (bug): the choice's output is lost"),
        }
        let over = c.over();
        let deltas = c.last();
        if !over {
            match deltas {
                [] => return raw::string(env, ""),
                [Delta::Content(s)] => return raw::string(env, s),
                _ => {}
            }
        }
        let mut arr = ptr::null_mut();
        sys::napi_create_array(env, &mut arr);
        let mut i = 0u32;
        let mut put = |v: Value| {
            sys::napi_set_element(env, arr, i, v);
            i += 1;
        };
        put(raw::uint32(env, over as u32));
        for d in deltas {
            match d {
                Delta::Content(s) => {
                    put(raw::uint32(env, 0));
                    put(raw::string(env, s));
                }
                Delta::Reasoning(s) => {
                    put(raw::uint32(env, 1));
                    put(raw::string(env, s));
                }
                Delta::ToolStart { index, id, name } => {
                    put(raw::uint32(env, 2));
                    put(raw::uint32(env, *index));
                    put(raw::string(env, id));
                    put(raw::string(env, name));
                }
                Delta::ToolArgs { index, text } => {
                    put(raw::uint32(env, 3));
                    put(raw::uint32(env, *index));
                    put(raw::string(env, text));
                }
            }
        }
        arr
    }
}

unsafe extern "C" fn finish_reason(env: Env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let Some((this, [])) = raw::args::<0>(env, info) else { return ptr::null_mut() };
        let Some(c) = this_choice(env, this) else { return ptr::null_mut() };
        finish_reason_value(env, c.finish_reason())
    }
}

/// The stop string or request stop token id that ended the choice; null for EOS, length,
/// or an end the engine decided (vLLM's stop_reason).
unsafe extern "C" fn matched_stop(env: Env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let Some((this, [])) = raw::args::<0>(env, info) else { return ptr::null_mut() };
        let Some(c) = this_choice(env, this) else { return ptr::null_mut() };
        matched_stop_value(env, c.matched_stop())
    }
}

unsafe extern "C" fn generated_tokens(env: Env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let Some((this, [])) = raw::args::<0>(env, info) else { return ptr::null_mut() };
        let Some(c) = this_choice(env, this) else { return ptr::null_mut() };
        raw::uint32(env, c.generated_tokens())
    }
}

unsafe extern "C" fn tool_call_count(env: Env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let Some((this, [])) = raw::args::<0>(env, info) else { return ptr::null_mut() };
        let Some(c) = this_choice(env, this) else { return ptr::null_mut() };
        raw::uint32(env, c.tool_call_count())
    }
}

//! The per-token Sequence methods as raw N-API callbacks.
//!
//! Portico pushes each token the engine streams into its choice's Sequence: one JS→native
//! call per token, so the call's own cost is the detokenize cost that matters. A `#[napi]`
//! method pays napi-rs's generic per-call machinery (a borrow scope and barrier, argument
//! and return conversions through `CallbackInfo`) on top of Node-API itself; here a call
//! is `napi_get_cb_info`, `napi_unwrap` + the class type-tag check (the same receiver check
//! napi-rs does), `napi_get_value_uint32`, the core push and one string creation.
//!
//! Both return the released text as a string while the sequence runs, and `[text]` (a
//! one-element array) once it has finished (a stop or the token limit ended it, on this
//! push or before): the caller learns the state from the return value, with no second
//! call. Installed on `Sequence.prototype` by src/native/core.ts.

use std::ffi::{c_char, CString};
use std::ptr;

use napi::bindgen_prelude::{TypeTag, Unknown};
use napi::{sys, Env, Result};
use napi_derive::napi;

use crate::sequence::Sequence;

type Value = sys::napi_value;

/// `{ pushToken, pushTokens }`: functions for Sequence.prototype (`this` is the Sequence).
#[napi(ts_return_type = "{ pushToken: (this: Sequence, id: number) => string | [string]; pushTokens: (this: Sequence, ids: readonly number[]) => string | [string] }")]
pub fn sequence_fast_methods(env: Env) -> Result<Unknown<'static>> {
    let env = env.raw();
    unsafe {
        let mut obj = ptr::null_mut();
        check(sys::napi_create_object(env, &mut obj))?;
        define(env, obj, c"pushToken", push_token)?;
        define(env, obj, c"pushTokens", push_tokens)?;
        Ok(Unknown::from_raw_unchecked(env, obj))
    }
}

unsafe fn define(
    env: sys::napi_env,
    obj: Value,
    name: &std::ffi::CStr,
    cb: unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> Value,
) -> Result<()> {
    unsafe {
        let mut f = ptr::null_mut();
        check(sys::napi_create_function(env, name.as_ptr(), name.count_bytes() as isize, Some(cb), ptr::null_mut(), &mut f))?;
        check(sys::napi_set_named_property(env, obj, name.as_ptr(), f))
    }
}

fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::from_reason(format!("napi call failed: status {status}")))
    }
}

/// `seq.pushToken(id)`: one generated id.
unsafe extern "C" fn push_token(env: sys::napi_env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let mut argv = [ptr::null_mut(); 1];
        let Some(seq) = receiver(env, info, &mut argv) else {
            return ptr::null_mut();
        };
        let mut id = 0u32;
        if sys::napi_get_value_uint32(env, argv[0], &mut id) != sys::Status::napi_ok {
            return throw_type(env, c"pushToken: the token id must be a number");
        }
        push_and_return(env, seq, &[id])
    }
}

/// `seq.pushTokens(ids)`: a JS array of ids (a chunk of several tokens).
unsafe extern "C" fn push_tokens(env: sys::napi_env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let mut argv = [ptr::null_mut(); 1];
        let Some(seq) = receiver(env, info, &mut argv) else {
            return ptr::null_mut();
        };
        let mut len = 0u32;
        if sys::napi_get_array_length(env, argv[0], &mut len) != sys::Status::napi_ok {
            return throw_type(env, c"pushTokens: the ids must be an array of numbers");
        }
        let mut ids = Vec::with_capacity(len as usize);
        for i in 0..len {
            let mut v = ptr::null_mut();
            let mut id = 0u32;
            if sys::napi_get_element(env, argv[0], i, &mut v) != sys::Status::napi_ok
                || sys::napi_get_value_uint32(env, v, &mut id) != sys::Status::napi_ok
            {
                return throw_type(env, c"pushTokens: the ids must be an array of numbers");
            }
            ids.push(id);
        }
        push_and_return(env, seq, &ids)
    }
}

/// The Sequence `this` wraps (None with a pending exception when it is not one), and the
/// call's arguments in `argv` (missing ones are `undefined`).
unsafe fn receiver<'a>(env: sys::napi_env, info: sys::napi_callback_info, argv: &mut [Value]) -> Option<&'a mut Sequence> {
    unsafe {
        let mut argc = argv.len();
        let mut this = ptr::null_mut();
        if sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), &mut this, ptr::null_mut()) != sys::Status::napi_ok {
            throw_type(env, c"Sequence: bad call");
            return None;
        }
        let mut tagged = false;
        let tag = <Sequence as TypeTag>::type_tag();
        let mut wrapped: *mut std::ffi::c_void = ptr::null_mut();
        if sys::napi_check_object_type_tag(env, this, &tag, &mut tagged) != sys::Status::napi_ok
            || !tagged
            || sys::napi_unwrap(env, this, &mut wrapped) != sys::Status::napi_ok
            || wrapped.is_null()
        {
            throw_type(env, c"Sequence method called on an object that is not a Sequence");
            return None;
        }
        // SAFETY: the type tag proves napi-rs wrapped a `Sequence` in this object; calls are
        // synchronous on the JS thread and nothing re-enters JS before we return.
        Some(&mut *wrapped.cast::<Sequence>())
    }
}

unsafe fn push_and_return(env: sys::napi_env, seq: &mut Sequence, ids: &[u32]) -> Value {
    let pushed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| seq.inner.push(ids)));
    unsafe {
        let text = match pushed {
            Ok(Ok(text)) => text,
            Ok(Err(e)) => {
                let code: &std::ffi::CStr = if e.is_client_error() { c"InvalidArg" } else { c"GenericFailure" };
                return throw(env, code, &e.to_string());
            }
            Err(_) => return throw(env, c"GenericFailure", "Sequence push panicked"),
        };
        let Some(s) = js_string(env, &text) else {
            return ptr::null_mut();
        };
        if !seq.inner.finished() {
            return s;
        }
        let mut arr = ptr::null_mut();
        if sys::napi_create_array_with_length(env, 1, &mut arr) != sys::Status::napi_ok
            || sys::napi_set_element(env, arr, 0, s) != sys::Status::napi_ok
        {
            return ptr::null_mut();
        }
        arr
    }
}

/// ASCII (most tokens) goes in as Latin-1: V8 copies it without UTF-8 decoding.
unsafe fn js_string(env: sys::napi_env, text: &str) -> Option<Value> {
    let mut out = ptr::null_mut();
    let status = unsafe {
        if text.is_ascii() {
            sys::napi_create_string_latin1(env, text.as_ptr().cast::<c_char>(), text.len() as isize, &mut out)
        } else {
            sys::napi_create_string_utf8(env, text.as_ptr().cast::<c_char>(), text.len() as isize, &mut out)
        }
    };
    (status == sys::Status::napi_ok).then_some(out)
}

unsafe fn throw_type(env: sys::napi_env, msg: &std::ffi::CStr) -> Value {
    unsafe {
        sys::napi_throw_type_error(env, ptr::null(), msg.as_ptr());
    }
    ptr::null_mut()
}

unsafe fn throw(env: sys::napi_env, code: &std::ffi::CStr, msg: &str) -> Value {
    let msg = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    unsafe {
        sys::napi_throw_error(env, code.as_ptr(), msg.as_ptr());
    }
    ptr::null_mut()
}

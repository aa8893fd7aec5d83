//! The per-token Sequence methods (Node-API callbacks; the class is in sequence.rs).
//!
//! Portico pushes each token the engine streams into its choice's Sequence: one JS→native
//! call per token, so the call's own cost is the detokenize cost that matters. A call is
//! `napi_get_cb_info`, the receiver's unwrap (see `this_sequence_method`), `napi_get_value_uint32`,
//! the core push and one string creation.
//!
//! `pushToken` / `pushTokens` return the released text as a string while the sequence runs,
//! and `[text]` (a one-element array) once it has finished (a stop or the token limit ended
//! it, on this push or before): the caller learns the state from the return value, with no
//! second call. `push(Uint32Array)` returns the text only.

use std::ptr;

use napi::sys;

use crate::raw::{self, Env, Value};
use crate::sequence::this_sequence_method;
use portico_core::Sequence as CoreSequence;

/// `seq.pushToken(id)`: one generated id.
pub(crate) unsafe extern "C" fn push_token(env: Env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let Some((this, [id])) = raw::args::<1>(env, info) else { return ptr::null_mut() };
        let Some(seq) = this_sequence_method(env, this) else { return ptr::null_mut() };
        let Some(id) = raw::get_u32(env, id) else {
            return raw::throw_type(env, c"pushToken: the token id must be a number");
        };
        push_and_return(env, seq, &[id], true)
    }
}

/// `seq.pushTokens(ids)`: a JS array of ids (a chunk of several tokens).
pub(crate) unsafe extern "C" fn push_tokens(env: Env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let Some((this, [ids])) = raw::args::<1>(env, info) else { return ptr::null_mut() };
        let Some(seq) = this_sequence_method(env, this) else { return ptr::null_mut() };
        let Some(ids) = raw::get_u32_array(env, ids) else {
            return raw::throw_type(env, c"pushTokens: the ids must be an array of numbers");
        };
        push_and_return(env, seq, &ids, true)
    }
}

/// `seq.push(ids: Uint32Array)`: the released text ("" if none), whatever the state.
pub(crate) unsafe extern "C" fn push(env: Env, info: sys::napi_callback_info) -> Value {
    unsafe {
        let Some((this, [ids])) = raw::args::<1>(env, info) else { return ptr::null_mut() };
        let Some(seq) = this_sequence_method(env, this) else { return ptr::null_mut() };
        let mut kind = 0;
        let mut len = 0usize;
        let mut data = ptr::null_mut();
        if !raw::ok(sys::napi_get_typedarray_info(env, ids, &mut kind, &mut len, &mut data, ptr::null_mut(), ptr::null_mut()))
            || kind != sys::TypedarrayType::uint32_array
        {
            return raw::throw_type(env, c"push: the ids must be a Uint32Array");
        }
        let ids: &[u32] = if len == 0 { &[] } else { std::slice::from_raw_parts(data.cast::<u32>(), len) };
        push_and_return(env, seq, ids, false)
    }
}

unsafe fn push_and_return(env: Env, seq: &mut CoreSequence, ids: &[u32], with_state: bool) -> Value {
    let pushed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| seq.push(ids)));
    unsafe {
        let text = match pushed {
            Ok(Ok(text)) => text,
            Ok(Err(e)) => return raw::throw_core(env, e),
            Err(_) => return raw::throw(env, c"GenericFailure", "Sequence push panicked"),
        };
        let s = raw::string(env, &text);
        if !with_state || !seq.finished() {
            return s;
        }
        let mut arr = ptr::null_mut();
        sys::napi_create_array_with_length(env, 1, &mut arr);
        sys::napi_set_element(env, arr, 0, s);
        arr
    }
}

//! Small helpers for the classes written directly against Node-API (see sequence.rs):
//! arguments, receiver checks, strings and throwing, without napi-rs's per-call machinery.

use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;

use napi::bindgen_prelude::TypeTag;
use napi::sys;

pub type Value = sys::napi_value;
pub type Env = sys::napi_env;

pub fn ok(status: sys::napi_status) -> bool {
    status == sys::Status::napi_ok
}

/// `this` and up to N arguments (missing ones are `undefined`); None (exception pending)
/// when Node-API refuses.
pub unsafe fn args<const N: usize>(env: Env, info: sys::napi_callback_info) -> Option<(Value, [Value; N])> {
    let mut argv = [ptr::null_mut(); N];
    let mut argc = N;
    let mut this = ptr::null_mut();
    if unsafe { ok(sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), &mut this, ptr::null_mut())) } {
        Some((this, argv))
    } else {
        unsafe { throw_type(env, c"bad Node-API call") };
        None
    }
}

/// The native value wrapped in `obj` if `obj` carries `tag` (set when it was wrapped);
/// otherwise throws `TypeError(msg)` and returns None.
pub unsafe fn unwrap_tagged<T>(env: Env, obj: Value, tag: &sys::napi_type_tag, msg: &CStr) -> Option<*mut T> {
    let mut tagged = false;
    let mut wrapped: *mut c_void = ptr::null_mut();
    unsafe {
        if ok(sys::napi_check_object_type_tag(env, obj, tag, &mut tagged))
            && tagged
            && ok(sys::napi_unwrap(env, obj, &mut wrapped))
            && !wrapped.is_null()
        {
            return Some(wrapped.cast());
        }
        throw_type(env, msg);
    }
    None
}

/// A napi-rs class instance (e.g. Model), checked with the tag napi-rs gives its objects.
pub unsafe fn unwrap_napi_rs<'a, T: TypeTag>(env: Env, obj: Value, msg: &CStr) -> Option<&'a T> {
    let tag = T::type_tag();
    unsafe { unwrap_tagged::<T>(env, obj, &tag, msg).map(|p| &*p) }
}

pub unsafe fn is_nullish(env: Env, v: Value) -> bool {
    let mut t = 0;
    unsafe { ok(sys::napi_typeof(env, v, &mut t)) && (t == sys::ValueType::napi_undefined || t == sys::ValueType::napi_null) }
}

pub unsafe fn get_u32(env: Env, v: Value) -> Option<u32> {
    let mut n = 0u32;
    unsafe { ok(sys::napi_get_value_uint32(env, v, &mut n)).then_some(n) }
}

/// `read(env, v)`, or `T::default()` when `v` is null or undefined; None, with
/// `TypeError(msg)` thrown, when `read` refuses `v`.
/// (`msg` is built only when `v` is refused: an object is constructed per request, and three
/// eager messages were three `format!`s and CStrings on every one.)
pub unsafe fn get_optional<T: Default>(env: Env, v: Value, msg: impl FnOnce() -> CString, read: impl FnOnce(Env, Value) -> Option<T>) -> Option<T> {
    unsafe {
        if is_nullish(env, v) {
            return Some(T::default());
        }
        let got = read(env, v);
        if got.is_none() {
            throw_type(env, &msg());
        }
        got
    }
}

/// The elements of the JS array `v`, each read by `read`; None if `v` is not an array or
/// `read` refuses an element.
pub unsafe fn get_array<T>(env: Env, v: Value, mut read: impl FnMut(Env, Value) -> Option<T>) -> Option<Vec<T>> {
    let mut len = 0u32;
    unsafe {
        if !ok(sys::napi_get_array_length(env, v, &mut len)) {
            return None;
        }
        let mut out = Vec::with_capacity(len as usize);
        for i in 0..len {
            let mut e = ptr::null_mut();
            if !ok(sys::napi_get_element(env, v, i, &mut e)) {
                return None;
            }
            out.push(read(env, e)?);
        }
        Some(out)
    }
}

/// A JS array of numbers; None if `v` is not one.
pub unsafe fn get_u32_array(env: Env, v: Value) -> Option<Vec<u32>> {
    unsafe { get_array(env, v, |env, e| get_u32(env, e)) }
}

/// A JS array of strings; None if `v` is not one.
pub unsafe fn get_string_array(env: Env, v: Value) -> Option<Vec<String>> {
    unsafe { get_array(env, v, |env, e| get_string(env, e)) }
}

pub unsafe fn get_string(env: Env, v: Value) -> Option<String> {
    let mut len = 0usize;
    unsafe {
        if !ok(sys::napi_get_value_string_utf8(env, v, ptr::null_mut(), 0, &mut len)) {
            return None;
        }
        let mut buf = vec![0u8; len + 1];
        let mut written = 0usize;
        if !ok(sys::napi_get_value_string_utf8(env, v, buf.as_mut_ptr().cast(), len + 1, &mut written)) {
            return None;
        }
        buf.truncate(written);
        // Node-API writes UTF-8 (lone surrogates become U+FFFD).
        String::from_utf8(buf).ok()
    }
}

/// ASCII (most tokens) goes in as Latin-1: V8 copies it without UTF-8 decoding.
pub unsafe fn string(env: Env, text: &str) -> Value {
    let mut out = ptr::null_mut();
    unsafe {
        if text.is_ascii() {
            sys::napi_create_string_latin1(env, text.as_ptr().cast::<c_char>(), text.len() as isize, &mut out);
        } else {
            sys::napi_create_string_utf8(env, text.as_ptr().cast::<c_char>(), text.len() as isize, &mut out);
        }
    }
    out
}

pub unsafe fn null(env: Env) -> Value {
    let mut out = ptr::null_mut();
    unsafe { sys::napi_get_null(env, &mut out) };
    out
}

pub unsafe fn boolean(env: Env, b: bool) -> Value {
    let mut out = ptr::null_mut();
    unsafe { sys::napi_get_boolean(env, b, &mut out) };
    out
}

pub unsafe fn uint32(env: Env, n: u32) -> Value {
    let mut out = ptr::null_mut();
    unsafe { sys::napi_create_uint32(env, n, &mut out) };
    out
}

pub unsafe fn throw_type(env: Env, msg: &CStr) -> Value {
    unsafe { sys::napi_throw_type_error(env, ptr::null(), msg.as_ptr()) };
    ptr::null_mut()
}

/// Throws an Error with `code` (`InvalidArg` for the client's fault, as errors.rs does).
pub unsafe fn throw(env: Env, code: &CStr, msg: &str) -> Value {
    let msg = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    unsafe { sys::napi_throw_error(env, code.as_ptr(), msg.as_ptr()) };
    ptr::null_mut()
}

pub unsafe fn throw_core(env: Env, e: portico_core::CoreError) -> Value {
    let code = if e.is_client_error() { c"InvalidArg" } else { c"GenericFailure" };
    unsafe { throw(env, code, &e.to_string()) }
}

/// A class method's property descriptor (`napi_define_class`).
pub fn method(name: &'static CStr, cb: sys::napi_callback) -> sys::napi_property_descriptor {
    sys::napi_property_descriptor {
        utf8name: name.as_ptr(),
        name: ptr::null_mut(),
        method: cb,
        getter: None,
        setter: None,
        value: ptr::null_mut(),
        attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable,
        data: ptr::null_mut(),
    }
}

/// A read-only accessor's property descriptor.
pub fn getter(name: &'static CStr, cb: sys::napi_callback) -> sys::napi_property_descriptor {
    sys::napi_property_descriptor { method: None, getter: cb, attributes: sys::PropertyAttributes::configurable, ..method(name, None) }
}

/// Defines a class from its constructor and descriptors (the classes whose per-token methods
/// bypass napi-rs's wrappers: sequence.rs, choice.rs).
pub fn define_class(env: Env, name: &'static CStr, construct: sys::napi_callback, props: &[sys::napi_property_descriptor]) -> napi::Result<Value> {
    let mut class = ptr::null_mut();
    // SAFETY: `name` is NUL-terminated (its length is passed without the NUL); the descriptors
    // point at 'static names and extern "C" callbacks.
    let status = unsafe { sys::napi_define_class(env, name.as_ptr(), name.to_bytes().len() as isize, construct, ptr::null_mut(), props.len(), props.as_ptr(), &mut class) };
    if !ok(status) {
        return Err(napi::Error::from_reason(format!("defining the {} class failed (napi status {status})", name.to_string_lossy())));
    }
    Ok(class)
}

/// The native object wrapped in `this` for a class method, or None with a TypeError pending.
/// Node gives a class's methods the class signature (`napi_define_class`), so V8 throws
/// "Illegal invocation" before the callback for a receiver the constructor did not make, and
/// every object it made has its value wrapped: what is left to check is that the wrap is there
/// (the type-tag lookup, a private-symbol read of ~15% of a token's cost, is not repeated).
///
/// # Safety
/// `this` must come from a method of a class whose constructor wraps a `T`.
pub unsafe fn unwrap_method<'a, T>(env: Env, this: Value, msg: &CStr) -> Option<&'a mut T> {
    let mut wrapped: *mut std::ffi::c_void = ptr::null_mut();
    unsafe {
        if ok(sys::napi_unwrap(env, this, &mut wrapped)) && !wrapped.is_null() {
            return Some(&mut *wrapped.cast::<T>());
        }
        throw_type(env, msg);
    }
    None
}

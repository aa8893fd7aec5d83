//! CoreError → JS Error. Client errors (bad messages, template raised) are thrown with
//! `code: "InvalidArg"` so the TS layer can answer 400; others with "GenericFailure".

use napi::{Error, Status};
use portico_core::CoreError;

pub fn to_napi(e: CoreError) -> Error {
    let status = if e.is_client_error() {
        Status::InvalidArg
    } else {
        Status::GenericFailure
    };
    Error::new(status, e.to_string())
}

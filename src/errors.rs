//! Errors crossing into JavaScript: the core error as JSON behind a marker the TS entry parses.

use berth_core::Error;

/// The prefix of every berth rejection message; the JSON `{ code, message, details, cause? }` follows.
pub const ERROR_MARKER: &str = "BERTH_ERROR ";

/// Converts a core error for JavaScript.
pub fn to_js(e: Error) -> napi::Error {
    napi::Error::new(
        napi::Status::GenericFailure,
        format!("{ERROR_MARKER}{}", e.to_json()),
    )
}

/// Converts a core result for JavaScript.
pub fn js<T>(r: berth_core::Result<T>) -> napi::Result<T> {
    r.map_err(to_js)
}

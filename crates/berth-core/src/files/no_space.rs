//! No space: tells a write that found its filesystem full (`ENOSPC`) from other failures, and
//! builds its `E_NO_SPACE`. Pure: no engine calls.
//!
//! Every write path checks what it wrote before the rename: a tool that failed with
//! "No space left on device" on its stderr (the engine's archive extraction says the same in
//! its answer), or a temporary file whose size (`wc -c`) is not the size sent (busybox's
//! `base64 -d` exits 0 on a full disk), is `E_NO_SPACE`; the temporary file is removed and the
//! old file is untouched.

use crate::model::errors::{Error, Result};

/// Whether `text` (a tool's stderr, an engine's message) says the filesystem is full.
pub(crate) fn says_no_space(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("no space left on device") || text.contains("ENOSPC")
}

/// `E_NO_SPACE` for a write of `bytes` bytes to `path`, with `message` saying what failed.
pub(crate) fn error(path: &str, bytes: u64, message: impl Into<String>) -> Error {
    Error::NoSpace {
        path: path.into(),
        bytes,
        message: message.into(),
    }
}

/// `E_NO_SPACE` for a temporary file that came out short of `bytes` (a tool that did not
/// report its failed write).
pub(crate) fn short(path: &str, bytes: u64) -> Error {
    error(
        path,
        bytes,
        "the temporary file came out short of the size sent",
    )
}

/// Turns an `E_ENGINE` whose message says the filesystem is full into `E_NO_SPACE`; any
/// other result unchanged.
pub(crate) fn classify<T>(r: Result<T>, path: &str, bytes: u64) -> Result<T> {
    match r {
        Err(Error::Engine { message, .. }) if says_no_space(&message) => {
            Err(error(path, bytes, message))
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_disk_messages_are_no_space() {
        for text in [
            "cat: write error: No space left on device",
            "Error response from daemon: write /data/.berth-tmp-1: no space left on device",
            "ENOSPC",
        ] {
            assert!(says_no_space(text), "{text}");
        }
        assert!(!says_no_space("cat: can't open '/x': Permission denied"));
        let e = Error::Engine {
            operation: "write file".into(),
            status: Some(500),
            message: "no space left on device".into(),
        };
        let e = classify::<()>(Err(e), "/data/a", 3).unwrap_err();
        assert_eq!(e.code(), "E_NO_SPACE");
        assert_eq!(e.details()["errno"], "ENOSPC");
        assert_eq!(e.details()["bytes"], 3);
        let other = Error::invalid("path", "x");
        assert_eq!(
            classify::<()>(Err(other), "/a", 1).unwrap_err().code(),
            "E_INVALID_ARGUMENT"
        );
    }
}

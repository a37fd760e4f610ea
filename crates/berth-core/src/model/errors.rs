//! Errors: one enum, each variant mapped to a stable code (see `docs/design.md#errors`).

use serde_json::{json, Map, Value};

/// What holds a session name, as reported by `E_SESSION_EXISTS`.
#[derive(Debug, Clone, PartialEq)]
pub struct Holder {
    /// The container name that is taken.
    pub name: String,
    /// The full container id holding the name (empty when the engine would not say).
    pub id: String,
    /// The container's state as the engine reports it.
    pub state: String,
    /// Whether the container carries berth's managed labels.
    pub managed: bool,
    /// The session id recorded in its labels, when managed.
    pub session_id: Option<String>,
    /// The owner recorded in its labels (JSON shaped as `PeekResult.owner`).
    pub owner: Value,
}

/// Every failure berth reports. Each variant has a stable code (see [`Error::code`]).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `E_INVALID_ARGUMENT`: an argument was rejected before any engine call.
    #[error("invalid argument `{field}`: {reason}")]
    InvalidArgument {
        /// The option or argument name, as the caller spelled it (`sessionId`, `ports[0]`).
        field: String,
        /// Why it was rejected.
        reason: String,
    },
    /// `E_ENGINE_UNAVAILABLE`: no engine answered.
    #[error("container engine unavailable: {reason} (tried {tried}); {hint}")]
    EngineUnavailable {
        /// Each endpoint tried, in order, with what happened.
        tried: String,
        /// The last failure.
        reason: String,
        /// The likely fix.
        hint: String,
    },
    /// `E_SESSION_EXISTS`: the derived container name is taken.
    #[error("session `{session_id}` exists: container `{}` ({}) already holds the name", .holder.name, .holder.state)]
    SessionExists {
        /// The requested session id.
        session_id: String,
        /// What holds the name.
        holder: Holder,
    },
    /// `E_SESSION_NOT_FOUND`: no container under the derived name.
    #[error("session `{session_id}` not found (no container named `{name}`)")]
    SessionNotFound {
        /// The requested session id.
        session_id: String,
        /// The container name looked up.
        name: String,
    },
    /// `E_SESSION_NOT_FOUND` with `details.reason: 'expired'`: the session passed its deadline
    /// (`timeoutMs`, `setTimeout`, `removeAfterStopMs`) and was removed, or is being removed.
    #[error("session `{session_id}` expired (container `{name}` removed)")]
    SessionExpired {
        /// The requested session id.
        session_id: String,
        /// The container name looked up.
        name: String,
    },
    /// `E_SESSION_DEAD`: the session's container is not running (or is gone) and berth did not
    /// stop or remove it; `death` says why (see `docs/design.md#cause-of-death`).
    #[error("session `{session_id}` (container `{name}`) is dead: {}{}", .death.cause, .death.exit_code.map(|c| format!(" (exit code {c})")).unwrap_or_default())]
    SessionDead {
        /// The session id.
        session_id: String,
        /// The container name.
        name: String,
        /// The container id.
        id: String,
        /// The cause, exit code, time and log tail.
        death: crate::model::death::Death,
    },
    /// `E_FOREIGN_CONTAINER`: a container under the derived name that berth does not manage for this session.
    #[error("container `{name}` is not a berth session `{session_id}`: {reason}")]
    ForeignContainer {
        /// The requested session id.
        session_id: String,
        /// The container name.
        name: String,
        /// The container id.
        id: String,
        /// Why it is foreign.
        reason: String,
    },
    /// `E_SESSION_BUSY`: someone else holds or is preparing the session.
    #[error("session `{session_id}` (container `{name}`) is busy: {reason}")]
    SessionBusy {
        /// The requested session id.
        session_id: String,
        /// The container name.
        name: String,
        /// The container id.
        id: String,
        /// `initialising`, or another stable reason.
        reason: String,
        /// The owner (JSON shaped as `PeekResult.owner`).
        owner: Value,
    },
    /// `E_SESSION_INCOMPLETE`: setup never finished and its owner is dead.
    #[error("session `{session_id}` (container `{name}`) is incomplete: its creator died before setup finished")]
    SessionIncomplete {
        /// The requested session id.
        session_id: String,
        /// The container name.
        name: String,
        /// The container id.
        id: String,
        /// The owner (JSON shaped as `PeekResult.owner`).
        owner: Value,
    },
    /// `E_SPEC_DRIFT`: the container differs from the spec given to resume.
    #[error("session `{session_id}` (container `{name}`) drifted from the given spec in: {}", .fields.join(", "))]
    SpecDrift {
        /// The requested session id.
        session_id: String,
        /// The container name.
        name: String,
        /// The spec fields that differ.
        fields: Vec<String>,
    },
    /// `E_VERIFY_FAILED`: verify found hard findings left after repair (or a recreated
    /// container failed its verification and was rolled back).
    #[error("session `{session_id}` (container `{name}`) failed verification: {}", .findings.iter().filter(|f| !f.repaired).map(|f| f.code).collect::<Vec<_>>().join(", "))]
    VerifyFailed {
        /// The session id.
        session_id: String,
        /// The container name.
        name: String,
        /// The container id verified.
        id: String,
        /// Every finding (repaired ones with `repaired: true`).
        findings: Vec<crate::model::findings::Finding>,
    },
    /// `E_IMAGE_NOT_FOUND`: the image is not present and could not be pulled.
    #[error("image `{image}` not found: {reason}")]
    ImageNotFound {
        /// The image reference.
        image: String,
        /// The engine's or registry's reason.
        reason: String,
    },
    /// `E_SETUP_FAILED`: a setup command exited non-zero.
    #[error("setup command {index} of session `{session_id}` (container `{name}`) exited with {exit_code}")]
    SetupFailed {
        /// The session id.
        session_id: String,
        /// The container name.
        name: String,
        /// Zero-based index of the failing command.
        index: usize,
        /// Its argv.
        argv: Vec<String>,
        /// Its exit code.
        exit_code: i64,
        /// The tail of its stdout (at most 4 KiB, lossy UTF-8).
        stdout: String,
        /// The tail of its stderr (at most 4 KiB, lossy UTF-8).
        stderr: String,
    },
    /// `E_SETUP_FAILED`: the container was not running after start or after setup (its
    /// entrypoint or init exited).
    #[error("container `{name}` of session `{session_id}` is not running after {stage} (state {state}, exit code {exit_code})")]
    NotRunning {
        /// The session id.
        session_id: String,
        /// The container name.
        name: String,
        /// `start` or `setup`: when it was found not running.
        stage: String,
        /// The engine's state word (`exited`, `dead`, ...).
        state: String,
        /// The container's exit code, as the engine reports it.
        exit_code: i64,
        /// The tail of the container's log (stdout and stderr, lossy UTF-8, at most 4 KiB).
        log: String,
        /// The engine's message when it refused the start (an unknown user, an entrypoint it
        /// cannot run); empty otherwise.
        reason: String,
    },
    /// `E_EXEC_TIMEOUT`: an exec ran past its `timeoutMs`; its process tree is killed right after, in the background.
    #[error("exec in container `{container}` timed out after {timeout_ms} ms")]
    ExecTimeout {
        /// The container name.
        container: String,
        /// The timeout, in milliseconds.
        timeout_ms: u64,
        /// Output so far.
        stdout: Vec<u8>,
        /// Error output so far.
        stderr: Vec<u8>,
    },
    /// `E_ABORTED`: the caller's `AbortSignal` fired.
    #[error("{operation} aborted")]
    Aborted {
        /// What was aborted.
        operation: String,
        /// Output so far, for an aborted exec.
        stdout: Vec<u8>,
        /// Error output so far, for an aborted exec.
        stderr: Vec<u8>,
    },
    /// `E_PERMISSION_DENIED`: the session's user may not do this file operation (permission on
    /// the file or on a directory on the way), as the kernel decides for that user.
    #[error("permission denied: user {user} may not {operation} `{path}`")]
    PermissionDenied {
        /// What was refused (`read`, `write`).
        operation: String,
        /// The path, as normalised.
        path: String,
        /// The user checked, as `uid:gid`.
        user: String,
    },
    /// `E_FILE_TOO_LARGE`: a buffered read found the file larger than its cap; the host
    /// stopped reading at the cap.
    #[error("file `{path}` is larger than the read's cap of {max_bytes} bytes{}", .size.map(|s| format!(" ({s} bytes)")).unwrap_or_default())]
    FileTooLarge {
        /// The path, as normalised.
        path: String,
        /// The file's size in bytes, when known before the cap was reached.
        size: Option<u64>,
        /// The cap, in bytes.
        max_bytes: u64,
    },
    /// `E_NO_SPACE`: a write found no room for all its bytes (`ENOSPC`: a full filesystem, or
    /// a write that came out short, as busybox's tools do on a full disk while exiting 0).
    /// The temporary file is removed and the old file is intact.
    #[error("no space left on device (ENOSPC): writing {bytes} bytes to `{path}`: {message}")]
    NoSpace {
        /// The path written, as normalised (or the host spool for a streamed write).
        path: String,
        /// The size of the write, in bytes.
        bytes: u64,
        /// What failed (the tool's message, or the short size).
        message: String,
    },
    /// `E_ENGINE`: any other engine failure.
    #[error("engine error during {operation}{}: {message}", .status.map(|s| format!(" (HTTP {s})")).unwrap_or_default())]
    Engine {
        /// What berth was doing (`create container`, `start container`, ...).
        operation: String,
        /// The HTTP status, when the engine answered.
        status: Option<u16>,
        /// The engine's message.
        message: String,
    },
    /// A first error, plus a cleanup that failed after it (the cleanup is kept for retry).
    #[error("{first}")]
    WithCleanup {
        /// The error that made berth clean up.
        first: Box<Error>,
        /// The cleanup's own failure.
        cleanup: Box<Error>,
    },
}

/// How much of the end of each of stdout and stderr an `E_EXEC_TIMEOUT` or `E_ABORTED`
/// carries, in bytes (64 KiB).
pub(crate) const ERROR_OUTPUT_TAIL_BYTES: usize = 64 * 1024;

/// The last [`ERROR_OUTPUT_TAIL_BYTES`] of `bytes`.
fn output_tail(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.len() > ERROR_OUTPUT_TAIL_BYTES {
        bytes.drain(..bytes.len() - ERROR_OUTPUT_TAIL_BYTES);
        bytes.shrink_to_fit();
    }
    bytes
}

/// Shorthand for results in this crate.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The stable code (`docs/design.md#errors`).
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidArgument { .. } => "E_INVALID_ARGUMENT",
            Error::EngineUnavailable { .. } => "E_ENGINE_UNAVAILABLE",
            Error::SessionExists { .. } => "E_SESSION_EXISTS",
            Error::SessionNotFound { .. } => "E_SESSION_NOT_FOUND",
            Error::SessionExpired { .. } => "E_SESSION_NOT_FOUND",
            Error::SessionDead { .. } => "E_SESSION_DEAD",
            Error::ForeignContainer { .. } => "E_FOREIGN_CONTAINER",
            Error::SessionBusy { .. } => "E_SESSION_BUSY",
            Error::SessionIncomplete { .. } => "E_SESSION_INCOMPLETE",
            Error::SpecDrift { .. } => "E_SPEC_DRIFT",
            Error::VerifyFailed { .. } => "E_VERIFY_FAILED",
            Error::ImageNotFound { .. } => "E_IMAGE_NOT_FOUND",
            Error::SetupFailed { .. } | Error::NotRunning { .. } => "E_SETUP_FAILED",
            Error::ExecTimeout { .. } => "E_EXEC_TIMEOUT",
            Error::Aborted { .. } => "E_ABORTED",
            Error::PermissionDenied { .. } => "E_PERMISSION_DENIED",
            Error::FileTooLarge { .. } => "E_FILE_TOO_LARGE",
            Error::NoSpace { .. } => "E_NO_SPACE",
            Error::Engine { .. } => "E_ENGINE",
            Error::WithCleanup { first, .. } => first.code(),
        }
    }

    /// Builds an `E_INVALID_ARGUMENT`.
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::InvalidArgument {
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// Builds an `E_ABORTED` with no output.
    pub fn aborted(operation: impl Into<String>) -> Self {
        Error::Aborted {
            operation: operation.into(),
            stdout: Vec::new(),
            stderr: Vec::new(),
        }
    }

    /// Attaches the last [`ERROR_OUTPUT_TAIL_BYTES`] of an exec's output so far to an
    /// `E_EXEC_TIMEOUT` or `E_ABORTED` (other errors are returned unchanged): an error never
    /// carries more than that of each stream, whatever the process wrote.
    pub fn with_output(self, stdout: Vec<u8>, stderr: Vec<u8>) -> Self {
        let (stdout, stderr) = (output_tail(stdout), output_tail(stderr));
        match self {
            Error::ExecTimeout {
                container,
                timeout_ms,
                ..
            } => Error::ExecTimeout {
                container,
                timeout_ms,
                stdout,
                stderr,
            },
            Error::Aborted { operation, .. } => Error::Aborted {
                operation,
                stdout,
                stderr,
            },
            other => other,
        }
    }

    /// Attaches a failed cleanup to this error, keeping this one first.
    pub fn with_cleanup(self, cleanup: Error) -> Self {
        Error::WithCleanup {
            first: Box::new(self),
            cleanup: Box::new(cleanup),
        }
    }

    /// The first cause, without any attached cleanup failure.
    pub fn first(&self) -> &Error {
        match self {
            Error::WithCleanup { first, .. } => first.first(),
            other => other,
        }
    }

    /// The cleanup failure attached to this error, if any.
    pub fn cleanup(&self) -> Option<&Error> {
        match self {
            Error::WithCleanup { cleanup, .. } => Some(cleanup),
            _ => None,
        }
    }

    /// Machine-readable details (a JSON object). Byte fields are base64 strings.
    pub fn details(&self) -> Value {
        let mut d = Map::new();
        match self {
            Error::InvalidArgument { field, reason } => {
                d.insert("field".into(), json!(field));
                d.insert("reason".into(), json!(reason));
            }
            Error::EngineUnavailable {
                tried,
                reason,
                hint,
            } => {
                d.insert("tried".into(), json!(tried));
                d.insert("reason".into(), json!(reason));
                d.insert("hint".into(), json!(hint));
            }
            Error::SessionExists { session_id, holder } => {
                // `{ name, id, state, managed, sessionId, owner }` describe the holder (docs/design.md#errors).
                d.insert("requestedSessionId".into(), json!(session_id));
                d.insert("name".into(), json!(holder.name));
                d.insert("id".into(), json!(holder.id));
                d.insert("state".into(), json!(holder.state));
                d.insert("managed".into(), json!(holder.managed));
                d.insert("sessionId".into(), json!(holder.session_id));
                d.insert("owner".into(), holder.owner.clone());
            }
            Error::SessionNotFound { session_id, name } => {
                d.insert("sessionId".into(), json!(session_id));
                d.insert("name".into(), json!(name));
            }
            Error::SessionExpired { session_id, name } => {
                d.insert("sessionId".into(), json!(session_id));
                d.insert("name".into(), json!(name));
                d.insert("reason".into(), json!(crate::model::lifetime::EXPIRED));
            }
            Error::SessionDead {
                session_id,
                name,
                id,
                death,
            } => {
                d.insert("sessionId".into(), json!(session_id));
                d.insert("name".into(), json!(name));
                d.insert("id".into(), json!(id));
                if let Value::Object(m) = death.to_json() {
                    d.extend(m);
                }
            }
            Error::ForeignContainer {
                session_id,
                name,
                id,
                reason,
            } => {
                d.insert("sessionId".into(), json!(session_id));
                d.insert("name".into(), json!(name));
                d.insert("id".into(), json!(id));
                d.insert("reason".into(), json!(reason));
            }
            Error::SessionBusy {
                session_id,
                name,
                id,
                reason,
                owner,
            } => {
                d.insert("sessionId".into(), json!(session_id));
                d.insert("name".into(), json!(name));
                d.insert("id".into(), json!(id));
                d.insert("reason".into(), json!(reason));
                d.insert("owner".into(), owner.clone());
            }
            Error::SessionIncomplete {
                session_id,
                name,
                id,
                owner,
            } => {
                d.insert("sessionId".into(), json!(session_id));
                d.insert("name".into(), json!(name));
                d.insert("id".into(), json!(id));
                d.insert("owner".into(), owner.clone());
            }
            Error::SpecDrift {
                session_id,
                name,
                fields,
            } => {
                d.insert("sessionId".into(), json!(session_id));
                d.insert("name".into(), json!(name));
                d.insert("fields".into(), json!(fields));
            }
            Error::VerifyFailed {
                session_id,
                name,
                id,
                findings,
            } => {
                d.insert("sessionId".into(), json!(session_id));
                d.insert("name".into(), json!(name));
                d.insert("id".into(), json!(id));
                d.insert(
                    "findings".into(),
                    Value::Array(findings.iter().map(|f| f.to_json()).collect()),
                );
            }
            Error::ImageNotFound { image, reason } => {
                d.insert("image".into(), json!(image));
                d.insert("reason".into(), json!(reason));
            }
            Error::SetupFailed {
                session_id,
                name,
                index,
                argv,
                exit_code,
                stdout,
                stderr,
            } => {
                d.insert("sessionId".into(), json!(session_id));
                d.insert("name".into(), json!(name));
                d.insert("index".into(), json!(index));
                d.insert("argv".into(), json!(argv));
                d.insert("exitCode".into(), json!(exit_code));
                d.insert("stdout".into(), json!(stdout));
                d.insert("stderr".into(), json!(stderr));
            }
            Error::NotRunning {
                session_id,
                name,
                stage,
                state,
                exit_code,
                log,
                reason,
            } => {
                d.insert("sessionId".into(), json!(session_id));
                d.insert("name".into(), json!(name));
                d.insert("stage".into(), json!(stage));
                d.insert("state".into(), json!(state));
                d.insert("exitCode".into(), json!(exit_code));
                d.insert("log".into(), json!(log));
                if !reason.is_empty() {
                    d.insert("reason".into(), json!(reason));
                }
            }
            Error::ExecTimeout {
                container,
                timeout_ms,
                stdout,
                stderr,
            } => {
                d.insert("container".into(), json!(container));
                d.insert("timeoutMs".into(), json!(timeout_ms));
                d.insert("stdout".into(), json!(base64(stdout)));
                d.insert("stderr".into(), json!(base64(stderr)));
            }
            Error::Aborted {
                operation,
                stdout,
                stderr,
            } => {
                d.insert("operation".into(), json!(operation));
                d.insert("stdout".into(), json!(base64(stdout)));
                d.insert("stderr".into(), json!(base64(stderr)));
            }
            Error::PermissionDenied {
                operation,
                path,
                user,
            } => {
                d.insert("operation".into(), json!(operation));
                d.insert("path".into(), json!(path));
                d.insert("user".into(), json!(user));
            }
            Error::FileTooLarge {
                path,
                size,
                max_bytes,
            } => {
                d.insert("path".into(), json!(path));
                if let Some(size) = size {
                    d.insert("size".into(), json!(size));
                }
                d.insert("maxBytes".into(), json!(max_bytes));
            }
            Error::NoSpace {
                path,
                bytes,
                message,
            } => {
                d.insert("path".into(), json!(path));
                d.insert("bytes".into(), json!(bytes));
                d.insert("errno".into(), json!("ENOSPC"));
                d.insert("message".into(), json!(message));
            }
            Error::Engine {
                operation,
                status,
                message,
            } => {
                d.insert("operation".into(), json!(operation));
                d.insert("status".into(), json!(status));
                d.insert("message".into(), json!(message));
            }
            Error::WithCleanup { first, .. } => return first.details(),
        }
        Value::Object(d)
    }

    /// The whole error as JSON: `{ code, message, details, cause? }`, the cause being a failed cleanup.
    pub fn to_json(&self) -> Value {
        let first = self.first();
        let mut v = json!({
            "code": first.code(),
            "message": first.to_string(),
            "details": first.details(),
        });
        if let Some(cleanup) = self.cleanup() {
            v["cause"] = cleanup.to_json();
            v["details"]["cleanupFailed"] = json!(true);
        }
        v
    }
}

/// Standard base64 (RFC 4648, with padding), used for byte fields in error details.
pub(crate) fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable() {
        assert_eq!(Error::invalid("x", "y").code(), "E_INVALID_ARGUMENT");
        assert_eq!(Error::aborted("create").code(), "E_ABORTED");
        let e = Error::Engine {
            operation: "start container".into(),
            status: Some(500),
            message: "boom".into(),
        };
        assert_eq!(e.code(), "E_ENGINE");
        assert_eq!(
            e.to_string(),
            "engine error during start container (HTTP 500): boom"
        );
    }

    #[test]
    fn cleanup_never_replaces_the_first_error() {
        let first = Error::SetupFailed {
            session_id: "s".into(),
            name: "n".into(),
            index: 0,
            argv: vec!["false".into()],
            exit_code: 1,
            stdout: String::new(),
            stderr: String::new(),
        };
        let cleanup = Error::Engine {
            operation: "remove container".into(),
            status: Some(500),
            message: "x".into(),
        };
        let e = first.with_cleanup(cleanup);
        assert_eq!(e.code(), "E_SETUP_FAILED");
        let j = e.to_json();
        assert_eq!(j["code"], "E_SETUP_FAILED");
        assert_eq!(j["cause"]["code"], "E_ENGINE");
        assert_eq!(j["details"]["cleanupFailed"], true);
        assert_eq!(j["details"]["exitCode"], 1);
    }

    #[test]
    fn exec_errors_carry_only_the_tail_of_the_output() {
        let big: Vec<u8> = (0..ERROR_OUTPUT_TAIL_BYTES + 1000)
            .map(|i| i as u8)
            .collect();
        let e = Error::aborted("exec").with_output(big.clone(), b"err".to_vec());
        let Error::Aborted { stdout, stderr, .. } = e else {
            panic!("still E_ABORTED")
        };
        assert_eq!(stdout.len(), ERROR_OUTPUT_TAIL_BYTES);
        assert_eq!(stdout[..], big[1000..]);
        assert_eq!(stderr, b"err");
    }

    #[test]
    fn base64_matches_rfc4648() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }
}

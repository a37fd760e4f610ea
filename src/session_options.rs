//! Options and results of the `BindingSession` methods (exec, writeFile, stop, remove, release).

use std::collections::HashMap;

use super::options::sorted;
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;

use berth_core::js_integer_opt;
use berth_core::Result;
use berth_core::{ExecOptions, ExecOutput};

/// Options of `Session.exec`.
#[napi(object)]
pub struct BindingExecOptions {
    /// Working directory (absolute).
    pub cwd: Option<String>,
    /// Extra environment variables.
    pub env: Option<HashMap<String, String>>,
    /// User to run as.
    pub user: Option<String>,
    /// Bytes written to stdin, which is then closed.
    pub stdin: Option<Buffer>,
    /// Deadline, in milliseconds; the process tree is killed when it passes (`E_EXEC_TIMEOUT`).
    pub timeout_ms: Option<f64>,
    /// Cap on what is kept of stdout and stderr together, in bytes. @default 67108864
    pub max_buffer_bytes: Option<f64>,
}

/// Options of `Session.writeFile` and `Session.createFileWriter`.
#[napi(object)]
pub struct BindingWriteFileOptions {
    /// File mode bits (the core checks the range: 0..0o7777). @default 0o644
    pub mode: Option<f64>,
}

impl BindingWriteFileOptions {
    /// The mode as the core takes it: a whole number that fits a `u32`, else `E_INVALID_ARGUMENT`.
    pub fn mode_of(options: Option<Self>) -> Result<Option<u32>> {
        js_integer_opt("mode", options.and_then(|o| o.mode))
    }
}

/// Options of `Session.stop`.
#[napi(object)]
pub struct BindingStopOptions {
    /// Stop even when this handle does not own the container. @default false
    pub force: Option<bool>,
    /// Grace period before SIGKILL, in milliseconds (rounded up to seconds). @default 10000
    pub timeout_ms: Option<f64>,
}

/// Options of `Session.remove`.
#[napi(object)]
pub struct BindingRemoveOptions {
    /// Remove even when this handle does not own the container. @default false
    pub force: Option<bool>,
}

/// The buffered result of an exec.
#[napi(object)]
pub struct BindingExecResult {
    /// Exit code, as the engine reports it.
    pub exit_code: i64,
    /// Standard output.
    pub stdout: Buffer,
    /// Standard error.
    pub stderr: Buffer,
    /// Whether output went past `maxBufferBytes` (or the process-wide budget) and was cut.
    pub truncated: bool,
    /// Whether the memory limit's OOM killer ended it (exit code 137 and a new OOM kill in
    /// the container's cgroup).
    pub oom_killed: bool,
}

/// The buffered result of an exec, as text (`Session.execText`).
#[napi(object, object_from_js = false)]
pub struct BindingExecTextResult {
    /// Exit code, as the engine reports it.
    pub exit_code: i64,
    /// Standard output as UTF-8 text (malformed sequences as U+FFFD, a leading BOM kept).
    #[napi(ts_type = "string")]
    pub stdout: LossyText,
    /// Standard error, as `stdout`.
    #[napi(ts_type = "string")]
    pub stderr: LossyText,
    /// Whether output went past `maxBufferBytes` (or the process-wide budget) and was cut.
    pub truncated: bool,
    /// Whether the memory limit's OOM killer ended it, as `BindingExecResult::oom_killed`.
    pub oom_killed: bool,
}

/// Output bytes that become a JavaScript string as they cross: the engine's bytes go to
/// `napi_create_string_utf8` as they are (V8 decodes them, every malformed sequence as
/// U+FFFD, as `TextDecoder` does), and are freed as soon as the string exists. So the bytes
/// and the text are held together only during that one copy, never until a garbage collection.
pub struct LossyText(pub Vec<u8>);

impl napi::bindgen_prelude::TypeName for LossyText {
    fn type_name() -> &'static str {
        "string"
    }
    fn value_type() -> napi::ValueType {
        napi::ValueType::String
    }
}

impl napi::bindgen_prelude::ToNapiValue for LossyText {
    unsafe fn to_napi_value(
        env: napi::sys::napi_env,
        val: Self,
    ) -> napi::Result<napi::sys::napi_value> {
        let mut out = std::ptr::null_mut();
        // SAFETY: `val.0` is alive for the call; V8 copies the bytes into its own string.
        let status = unsafe {
            napi::sys::napi_create_string_utf8(
                env,
                val.0.as_ptr().cast(),
                val.0.len() as isize,
                &mut out,
            )
        };
        drop(val);
        if status != napi::sys::Status::napi_ok {
            return Err(napi::Error::new(
                napi::Status::GenericFailure,
                "berth: the output could not be made into a string",
            ));
        }
        Ok(out)
    }
}

impl From<ExecOutput> for BindingExecTextResult {
    fn from(o: ExecOutput) -> Self {
        BindingExecTextResult {
            exit_code: o.exit_code,
            stdout: LossyText(o.stdout),
            stderr: LossyText(o.stderr),
            truncated: o.truncated,
            oom_killed: o.oom_killed,
        }
    }
}

/// The result of `stop`.
#[napi(object)]
pub struct BindingStopResult {
    /// Whether the container is stopped now.
    pub stopped: bool,
    /// `not-owner`, `absent` or `already-removed`.
    pub reason: Option<String>,
}

/// The result of `release`.
#[napi(object)]
pub struct BindingReleaseResult {
    /// Whether this call dropped the handle's holder record.
    pub released: bool,
    /// `owner` or `already-released`.
    pub reason: Option<String>,
}

/// The result of `remove`.
#[napi(object)]
pub struct BindingRemoveResult {
    /// Whether this call removed the container.
    pub removed: bool,
    /// `not-owner`, `absent` or `already-removed`.
    pub reason: Option<String>,
}

impl BindingExecOptions {
    /// The core exec options.
    pub fn into_core(self) -> Result<ExecOptions> {
        Ok(ExecOptions {
            cwd: self.cwd,
            env: sorted(self.env),
            user: self.user,
            stdin: self.stdin.map(|b| b.to_vec()),
            timeout_ms: js_integer_opt("timeoutMs", self.timeout_ms)?,
            max_buffer_bytes: js_integer_opt("maxBufferBytes", self.max_buffer_bytes)?,
        })
    }
}

impl From<ExecOutput> for BindingExecResult {
    fn from(o: ExecOutput) -> Self {
        BindingExecResult {
            exit_code: o.exit_code,
            stdout: o.stdout.into(),
            stderr: o.stderr.into(),
            truncated: o.truncated,
            oom_killed: o.oom_killed,
        }
    }
}

//! Options and results of the `BindingSession` methods (exec, writeFile, stop, remove, release).

use std::collections::HashMap;

use super::options::sorted;
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;

use berth_core::whole_number;
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
    /// Cap on each of stdout and stderr, in bytes. @default 67108864
    pub max_buffer_bytes: Option<f64>,
}

/// Options of `Session.writeFile` and `Session.createFileWriter`.
#[napi(object)]
pub struct BindingWriteFileOptions {
    /// File mode bits (0..0o7777). @default 0o644
    pub mode: Option<u32>,
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
    /// Whether output went past `maxBufferBytes` and was cut.
    pub truncated: bool,
    /// Whether the memory limit's OOM killer ended it (exit code 137 and a new OOM kill in
    /// the container's cgroup).
    pub oom_killed: bool,
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
            timeout_ms: self
                .timeout_ms
                .map(|t| whole_number("timeoutMs", t, 1, i64::MAX).map(|t| t as u64))
                .transpose()?,
            max_buffer_bytes: self
                .max_buffer_bytes
                .map(|m| whole_number("maxBufferBytes", m, 0, i64::MAX).map(|m| m as usize))
                .transpose()?,
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

//! Exec: run an argv in a container and collect its output as bytes.
//!
//! Engine calls: `POST /containers/{id}/exec`, `POST /exec/{id}/start` (attached,
//! no TTY, so stdout and stderr stay apart), `GET /exec/{id}/json` for the exit code
//! (launch, marker, exit code and tree kill live in [`crate::exec::launch`]).
//! Every exec carries a unique `BERTH_EXEC_ID` env marker; a timeout or abort kills
//! every process in the container that carries it, and every process in the session of
//! one that does (the engine starts each exec as a session leader, so children that
//! cleared their environment are found too), then rejects with the output so far. No
//! exit code is ever made up.

pub(crate) mod budget;
pub(crate) mod channel;
pub(crate) mod launch;
pub(crate) mod stream;
pub(crate) mod watch;

use std::collections::BTreeMap;

use futures_util::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

use crate::engine::connection::Engine;
use crate::exec::launch::{Launch, Launched};
use crate::model::errors::{Error, Result};
use crate::model::spec::{validate_argv, validate_container_path, validate_env, validate_user};

/// Default cap on what a buffered exec keeps of stdout and stderr together, in bytes (64 MiB).
pub(crate) const DEFAULT_MAX_BUFFER_BYTES: usize = 64 * 1024 * 1024;
/// How much output past the cap a buffered exec reads and discards before it kills the
/// process tree, in bytes (16 MiB): a command that writes a little more than the cap still
/// ends on its own (its own exit code), one that never stops writing (`yes`) is killed, so
/// the call settles with `truncated` set and the exit code of the killed process.
pub(crate) const DISCARD_PAST_CAP_BYTES: u64 = 16 * 1024 * 1024;

/// Options of one exec.
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// Working directory (absolute); the container's by default.
    pub cwd: Option<String>,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
    /// User to run as; the container's by default.
    pub user: Option<String>,
    /// Bytes written to the process's stdin, which is then closed. No stdin is attached when `None`.
    pub stdin: Option<Vec<u8>>,
    /// Deadline in milliseconds; the process tree is killed when it passes.
    pub timeout_ms: Option<u64>,
    /// Cap on what is kept of stdout and stderr together, in bytes
    /// ([`DEFAULT_MAX_BUFFER_BYTES`] when `None`): output is kept in the order it arrives until
    /// the two streams hold this many bytes (or the process-wide [`budget`] is spent), output
    /// past it is dropped and `truncated` set, and a process that writes more than
    /// [`DISCARD_PAST_CAP_BYTES`] past it is killed.
    pub max_buffer_bytes: Option<usize>,
}

impl ExecOptions {
    /// Checks the options; `E_INVALID_ARGUMENT` naming the field.
    pub fn validate(&self) -> Result<()> {
        if let Some(c) = &self.cwd {
            validate_container_path("cwd", c)?;
        }
        validate_env("env", &self.env)?;
        if let Some(u) = &self.user {
            validate_user(u)?;
        }
        if self.timeout_ms == Some(0) {
            return Err(Error::invalid(
                "timeoutMs",
                "must be a positive number of milliseconds",
            ));
        }
        Ok(())
    }
}

/// What an exec produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecOutput {
    /// The process's exit code, as the engine reports it.
    pub exit_code: i64,
    /// Standard output bytes.
    pub stdout: Vec<u8>,
    /// Standard error bytes.
    pub stderr: Vec<u8>,
    /// Whether output went past `max_buffer_bytes` (both streams together) or the
    /// process-wide [`budget`] and was cut.
    pub truncated: bool,
    /// Whether the memory limit's OOM killer ended it: exit code 137 and the container's
    /// cgroup counted a new OOM kill (set by `Session::exec` only; see
    /// `docs/design.md#cause-of-death`).
    pub oom_killed: bool,
}

/// Runs `argv` in container `id` (named `name`, for messages) and buffers its output.
///
/// Errors: `E_INVALID_ARGUMENT` (bad argv or options, before any engine call),
/// `E_EXEC_TIMEOUT` / `E_ABORTED` (with the output so far, after killing the tree),
/// `E_ENGINE` (for example 409: the container is not running), `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn exec(
    engine: &Engine,
    id: &str,
    name: &str,
    argv: &[String],
    opts: &ExecOptions,
    cancel: &CancellationToken,
) -> Result<ExecOutput> {
    exec_via(engine, id, name, argv, opts, cancel, None).await
}

/// [`exec`], over one of `channels` when it can carry the command (see
/// [`crate::exec::channel`]), else through the engine; the result and errors are the same.
pub(crate) async fn exec_via(
    engine: &Engine,
    id: &str,
    name: &str,
    argv: &[String],
    opts: &ExecOptions,
    cancel: &CancellationToken,
    channels: Option<&channel::CommandChannels>,
) -> Result<ExecOutput> {
    validate_argv("argv", argv)?;
    opts.validate()?;
    channel::validate_request_size(argv, opts)?;
    let at = launch::deadline_at(opts.timeout_ms);
    let engine = &launch::scope(engine, cancel, name, opts.timeout_ms, at);
    let Launched {
        exit,
        marker,
        mut output,
        mut input,
        gone: _,
    } = start(engine, id, argv, opts, opts.stdin.is_some(), channels).await?;
    let writer = opts.stdin.clone().map(|bytes| {
        tokio::spawn(async move {
            // A process that never reads stdin may close it early: that is not an error.
            let _ = input.write_all(&bytes).await;
            let _ = input.shutdown().await;
        })
    });
    let mut kept = Kept {
        cap: opts.max_buffer_bytes.unwrap_or(DEFAULT_MAX_BUFFER_BYTES),
        share: budget::Share::default(),
    };
    let mut out = ExecOutput::default();
    let mut discarded: u64 = 0;
    let mut killed = false;
    let sleep = launch::deadline(at);
    tokio::pin!(sleep);
    // Once killed, its output must end within a bound (see `launch::KILLED_END_TIMEOUT_MS`).
    let killed_end = tokio::time::sleep(std::time::Duration::MAX);
    tokio::pin!(killed_end);
    let interrupted: Option<Error> = loop {
        if !killed && discarded > DISCARD_PAST_CAP_BYTES {
            // It keeps writing past the cap: end it; what it writes until it ended is dropped.
            killed = true;
            launch::spawn_kill_tree(engine, id, &marker);
            killed_end.as_mut().reset(launch::killed_end_at());
        }
        tokio::select! {
            chunk = output.next() => match chunk {
                None => break None,
                Some(Ok(bollard::container::LogOutput::StdErr { message })) => {
                    discarded += kept.append(&mut out.stderr, out.stdout.len(), &message, &mut out.truncated);
                }
                Some(Ok(bollard::container::LogOutput::StdOut { message } | bollard::container::LogOutput::Console { message })) => {
                    discarded += kept.append(&mut out.stdout, out.stderr.len(), &message, &mut out.truncated);
                }
                Some(Ok(_)) => {}
                // Podman resets the hijacked connection when the process exits with stdin bytes
                // unread (podman #7360): the stream ended; the exit code comes from inspect.
                Some(Err(e)) if opts.stdin.is_some()
                    && crate::engine::connection::io_kind(&e) == Some(std::io::ErrorKind::ConnectionReset) => break None,
                Some(Err(e)) => break Some(engine.error("read exec output", e)),
            },
            _ = &mut sleep => break Some(Error::ExecTimeout {
                container: name.to_string(),
                timeout_ms: opts.timeout_ms.unwrap_or_default(),
                stdout: Vec::new(),
                stderr: Vec::new(),
            }),
            _ = cancel.cancelled() => break Some(Error::aborted("exec")),
            _ = &mut killed_end, if killed => break Some(launch::killed_without_end()),
        }
    };
    if let Some(w) = writer {
        w.abort();
    }
    if let Some(err) = interrupted {
        drop(output);
        launch::spawn_kill_tree(engine, id, &marker);
        return Err(err.with_output(out.stdout, out.stderr));
    }
    out.exit_code = exit.code(engine).await?;
    Ok(out)
}

/// Starts `argv` over a channel of `channels` when one can carry it, else as an engine exec
/// (with stdin attached when `stdin`).
pub(crate) async fn start(
    engine: &Engine,
    id: &str,
    argv: &[String],
    opts: &ExecOptions,
    stdin: bool,
    channels: Option<&channel::CommandChannels>,
) -> Result<Launched> {
    if let Some(c) = channels {
        if let Some(l) = channel::launch(c, engine, id, argv, opts).await? {
            return Ok(l);
        }
    }
    let mut launched = launch::launch(engine, id, &Launch::of(argv, opts, stdin)).await?;
    if let Some(c) = channels {
        launched.gone = c.gone();
    }
    Ok(launched)
}

/// What a buffered exec may keep: its own cap on both streams together and its share of the
/// process-wide [`budget`] (given back when the call returns).
struct Kept {
    cap: usize,
    share: budget::Share,
}

impl Kept {
    /// Appends to `buf` what fits under the cap (with `other` bytes held by the other stream)
    /// and the budget; the head is kept. Answers how many bytes were dropped.
    fn append(
        &mut self,
        buf: &mut Vec<u8>,
        other: usize,
        bytes: &[u8],
        truncated: &mut bool,
    ) -> u64 {
        let room = self.cap.saturating_sub(buf.len() + other).min(bytes.len());
        let room = self.share.take(room as u64) as usize;
        if bytes.len() > room {
            *truncated = true;
        }
        if buf.capacity() - buf.len() < room {
            // Grow to what this call may still keep at most, not past it (a doubling `Vec`
            // would reserve up to twice the cap).
            let need = (buf.len() + room)
                .max(buf.len() * 2)
                .min(self.cap.saturating_sub(other));
            buf.reserve_exact(need - buf.len());
        }
        buf.extend_from_slice(&bytes[..room]);
        (bytes.len() - room) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_keeps_the_head_of_both_streams_together_and_counts_what_it_dropped() {
        let mut kept = Kept {
            cap: 8,
            share: budget::Share::default(),
        };
        let (mut out, mut err, mut truncated) = (Vec::new(), Vec::new(), false);
        assert_eq!(kept.append(&mut out, err.len(), b"abc", &mut truncated), 0);
        assert_eq!(kept.append(&mut err, out.len(), b"12", &mut truncated), 0);
        assert!(!truncated);
        assert_eq!(kept.append(&mut out, err.len(), b"defg", &mut truncated), 1);
        assert!(truncated);
        assert_eq!(kept.append(&mut err, out.len(), b"345", &mut truncated), 3);
        assert_eq!(
            (out.as_slice(), err.as_slice()),
            (&b"abcdef"[..], &b"12"[..])
        );
    }
}

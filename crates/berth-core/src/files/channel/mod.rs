//! Channel: one long-lived exec of `sh` per session that carries small file reads and writes,
//! so each costs a round trip on an open stream instead of the engine's per-call work.
//!
//! On Docker 20.10 an archive call costs tens of milliseconds (the engine mounts the
//! container's filesystem for each one) and so does an exec start; a request on the open
//! channel costs a few. The channel speaks [`crate::files::channel::protocol`]; it is opened on the
//! first file call, runs as the container's user, and is dropped (its exec ends when its
//! stdin closes) on any protocol surprise, timeout or abort. Whatever the channel cannot do
//! (an image without `sh` or `base64`, a path the user may not write, a large file, a
//! read-only root filesystem) is reported as [`Outcome::Fallback`] and the caller takes the
//! archive path, which has the full semantics of `files`.
//!
//! Engine calls: `POST /containers/{id}/exec`, `POST /exec/{id}/start` (attached, stdin open),
//! once per session; nothing per request.

pub(crate) mod protocol;
pub(crate) mod slot;

use std::time::Duration;

use bollard::container::LogOutput;
use futures_util::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

use crate::engine::connection::Engine;
use crate::exec::launch::{self, Launch, Launched};
use crate::files::channel::protocol::{self as proto, Status};
use crate::model::errors::{Error, Result};

/// How long the script may take to say hello, in milliseconds.
pub(crate) const OPEN_TIMEOUT_MS: u64 = 5_000;
/// How long one request may take, in milliseconds; past it the channel is dropped.
pub(crate) const REQUEST_TIMEOUT_MS: u64 = 30_000;

/// What a channel request came to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Outcome<T> {
    /// Done through the channel.
    Done(T),
    /// A directory is at the path (`E_INVALID_ARGUMENT` for the caller).
    IsDir,
    /// A write came out short of its size (a full disk: `E_NO_SPACE` for the caller); the
    /// temporary file is removed and the old file untouched.
    NoSpace,
    /// The channel cannot do it: take the archive path.
    Fallback,
}

/// An open channel.
pub(crate) struct Channel {
    launched: Launched,
    /// stdout bytes received but not yet consumed as lines.
    pending: Vec<u8>,
}

/// Why a channel could not be opened.
#[derive(Debug)]
pub(crate) enum OpenFailure {
    /// The image cannot run the channel (no `sh`, no `base64`, a wrong answer): never again
    /// for this session.
    Unsupported,
    /// The engine refused or failed (a stopped container, say): the archive path reports it.
    Engine,
}

impl Channel {
    /// Starts the channel's exec in container `id` and waits for its hello.
    ///
    /// `POST /containers/{id}/exec`, `POST /exec/{id}/start` (attached, stdin open).
    pub(crate) async fn open(engine: &Engine, id: &str) -> std::result::Result<Self, OpenFailure> {
        let argv = vec![
            "sh".to_string(),
            "-c".into(),
            proto::SCRIPT.into(),
            "berth-channel".into(),
        ];
        let launch = Launch {
            argv: &argv,
            stdin: true,
            ..Default::default()
        };
        let launched = launch::launch(engine, id, &launch)
            .await
            .map_err(|_| OpenFailure::Engine)?;
        let mut channel = Channel {
            launched,
            pending: Vec::new(),
        };
        let hello =
            tokio::time::timeout(Duration::from_millis(OPEN_TIMEOUT_MS), channel.line()).await;
        match hello {
            Ok(Ok(Some(line))) if line == proto::HELLO => Ok(channel),
            _ => Err(OpenFailure::Unsupported),
        }
    }

    /// The next stdout line (without `\n`); `None` once the exec's output ended. A line over
    /// [`proto::MAX_LINE_BYTES`] breaks the channel.
    async fn line(&mut self) -> Result<Option<String>> {
        loop {
            if let Some(i) = self.pending.iter().position(|b| *b == b'\n') {
                let rest = self.pending.split_off(i + 1);
                let mut line = std::mem::replace(&mut self.pending, rest);
                line.pop();
                return Ok(Some(String::from_utf8_lossy(&line).into_owned()));
            }
            if self.pending.len() > proto::MAX_LINE_BYTES {
                return Err(broken(format!(
                    "a channel line over {} bytes",
                    proto::MAX_LINE_BYTES
                )));
            }
            match self.launched.output.next().await {
                Some(Ok(LogOutput::StdOut { message })) => self.pending.extend_from_slice(&message),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(broken(format!("reading the channel: {e}"))),
                None => return Ok(None),
            }
        }
    }

    async fn send(&mut self, request: &[u8]) -> Result<()> {
        self.launched
            .input
            .write_all(request)
            .await
            .map_err(|e| broken(format!("writing to the channel: {e}")))?;
        self.launched
            .input
            .flush()
            .await
            .map_err(|e| broken(format!("writing to the channel: {e}")))
    }

    async fn status(&mut self) -> Result<Status> {
        let line = self
            .line()
            .await?
            .ok_or_else(|| broken("the channel ended".into()))?;
        proto::status(&line).ok_or_else(|| broken(format!("unexpected channel reply `{line}`")))
    }

    async fn write_inner(
        &mut self,
        path: &str,
        mode: Option<u32>,
        data: &[u8],
    ) -> Result<Outcome<()>> {
        self.send(&proto::write_request(path, mode, data)).await?;
        Ok(match self.status().await? {
            Status::Ok => Outcome::Done(()),
            Status::IsDir => Outcome::IsDir,
            Status::Fail => Outcome::Fallback,
            Status::NoSpace => Outcome::NoSpace,
            other => return Err(broken(format!("unexpected reply {other:?} to a write"))),
        })
    }

    async fn read_inner(&mut self, path: &str, limit: u64) -> Result<Outcome<Option<Vec<u8>>>> {
        self.send(&proto::read_request(path, limit)).await?;
        let max_chars = proto::max_data_chars(limit);
        match self.status().await? {
            Status::Absent => Ok(Outcome::Done(None)),
            Status::IsDir => Ok(Outcome::IsDir),
            Status::Big | Status::Fail => Ok(Outcome::Fallback),
            Status::Data => {
                let mut lines = Vec::new();
                let mut chars = 0usize;
                loop {
                    let line = self
                        .line()
                        .await?
                        .ok_or_else(|| broken("the channel ended".into()))?;
                    if line == "." {
                        break;
                    }
                    chars += line.len();
                    if chars > max_chars {
                        return Err(broken(format!("a read sent more than {limit} bytes")));
                    }
                    lines.push(line);
                }
                Ok(match proto::decode_data(&lines) {
                    Some(bytes) if bytes.len() as u64 <= limit => Outcome::Done(Some(bytes)),
                    _ => Outcome::Fallback,
                })
            }
            Status::Ok | Status::NoSpace => Err(broken("unexpected reply to a read".into())),
        }
    }

    /// Writes `data` (at most [`proto::MAX_WRITE_BYTES`]) to the normalised `path` with
    /// `mode` (`None`: an existing file's, 0644 for a new one), creating missing parents;
    /// atomic (a temporary name in the same directory, renamed over `path`, once its size is
    /// checked: `NoSpace` when it came out short). An `Err` means the channel is unusable now: drop it.
    /// Errors: `E_ABORTED` (`cancel` fired), `E_ENGINE` (timeout, broken channel).
    pub(crate) async fn write(
        &mut self,
        path: &str,
        mode: Option<u32>,
        data: &[u8],
        cancel: &CancellationToken,
    ) -> Result<Outcome<()>> {
        if !proto::path_fits(path) || data.len() > proto::MAX_WRITE_BYTES {
            return Ok(Outcome::Fallback);
        }
        bounded(cancel, "writeFile", self.write_inner(path, mode, data)).await
    }

    /// Reads the normalised `path` when it has at most `max_bytes` and
    /// [`proto::MAX_READ_BYTES`] bytes (`Fallback` when larger); `Done(None)` when nothing is
    /// there. An `Err` means the channel is unusable now: drop it (also when the container
    /// sends more than the limit).
    /// Errors: `E_ABORTED`, `E_ENGINE` (timeout, broken channel).
    pub(crate) async fn read(
        &mut self,
        path: &str,
        max_bytes: u64,
        cancel: &CancellationToken,
    ) -> Result<Outcome<Option<Vec<u8>>>> {
        if !proto::path_fits(path) {
            return Ok(Outcome::Fallback);
        }
        let limit = max_bytes.min(proto::MAX_READ_BYTES);
        bounded(cancel, "readFile", self.read_inner(path, limit)).await
    }
}

/// Runs a request under [`REQUEST_TIMEOUT_MS`] and `cancel`.
async fn bounded<T>(
    cancel: &CancellationToken,
    operation: &str,
    fut: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    tokio::select! {
        r = tokio::time::timeout(Duration::from_millis(REQUEST_TIMEOUT_MS), fut) => {
            r.map_err(|_| broken(format!("no channel reply within {REQUEST_TIMEOUT_MS} ms")))?
        }
        _ = cancel.cancelled() => Err(Error::aborted(operation)),
    }
}

fn broken(message: String) -> Error {
    Error::Engine {
        operation: "file channel".into(),
        status: None,
        message,
    }
}

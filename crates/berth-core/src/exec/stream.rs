//! Streaming exec: run an argv and deliver stdout and stderr chunks as they come, with back-pressure.
//!
//! Engine calls as in [`crate::exec::launch`]: `POST /containers/{id}/exec`,
//! `POST /exec/{id}/start`, `GET /exec/{id}/json`. Chunks travel through bounded channels of
//! [`STREAM_CHANNEL_CHUNKS`] chunks each; while a reader lags, the pump stops reading the
//! engine's stream, so the engine (and then the process) is held back instead of berth
//! buffering without bound. A reader that closes its stream lets the rest of that stream be
//! discarded. The exit code comes from the engine once the output ended; a `kill()`, a
//! timeout or an abort kills the process tree (see [`crate::exec::launch::kill_tree`]).
//!
//! A process whose container stops while its output is unread settles too: the session's
//! `stop()`/`remove()` give its command up ([`Launched::gone`]), and for a stop outside berth
//! an engine exec that waited for its reader over a second has its container checked (see
//! [`crate::exec::watch`]).

use bollard::container::LogOutput;
use bytes::Bytes;
use futures_util::StreamExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, watch, Mutex};
use tokio_util::sync::CancellationToken;

use crate::engine::connection::Engine;
use crate::exec::launch::{self, ExecInput, Launched};
use crate::exec::watch::watch_stopped;
use crate::exec::ExecOptions;
use crate::model::errors::{Error, Result};
use crate::model::spec::validate_argv;

/// Capacity of each of the stdout and stderr channels, in chunks (a chunk is one engine frame,
/// at most a few tens of KiB).
pub(crate) const STREAM_CHANNEL_CHUNKS: usize = 8;
/// How much of the end of each stream a timeout or abort error carries, in bytes (64 KiB).
pub(crate) const ERROR_TAIL_BYTES: usize = crate::model::errors::ERROR_OUTPUT_TAIL_BYTES;
const STDIN_CHUNK_BYTES: usize = 64 * 1024;

/// What a streaming exec reads as its stdin; it is closed at the end, so `cat` ends.
pub(crate) enum Stdin {
    /// No stdin attached.
    None,
    /// These bytes.
    Bytes(Bytes),
    /// A file's contents from its current position (for spooled uploads).
    File(tokio::fs::File),
}

/// Which output stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

type Chunk = Result<Bytes>;

/// A running (or finished) exec whose output is read chunk by chunk.
pub struct ExecProcess {
    stdout: Mutex<mpsc::Receiver<Chunk>>,
    stderr: Mutex<mpsc::Receiver<Chunk>>,
    kill: CancellationToken,
    outcome: watch::Receiver<Option<Result<i64>>>,
}

/// Starts `argv` in container `id` (named `name`, for messages) and returns at once.
///
/// Options as for the buffered exec, except `max_buffer_bytes` (nothing is buffered) and
/// `stdin` (given as `stdin`). `cancel` aborts it (tree kill, then `E_ABORTED`); past
/// `opts.timeout_ms` it is killed and ends in `E_EXEC_TIMEOUT`. Both errors carry the last
/// [`ERROR_TAIL_BYTES`] of each stream as `stdout`/`stderr`, and are what [`ExecProcess::wait`]
/// returns and what each stream ends with.
///
/// Errors (before the process starts): `E_INVALID_ARGUMENT`, `E_ENGINE` (409: the container
/// is not running), `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn spawn(
    engine: &Engine,
    id: &str,
    name: &str,
    argv: &[String],
    opts: &ExecOptions,
    stdin: Stdin,
    cancel: CancellationToken,
) -> Result<ExecProcess> {
    spawn_via(engine, id, name, argv, opts, stdin, cancel, None).await
}

/// [`spawn`], over one of `channels` when it can carry the command (see
/// [`crate::exec::channel`]; no stdin or `opts.stdin`'s bytes, never a file), else through
/// the engine; the process behaves the same.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn spawn_via(
    engine: &Engine,
    id: &str,
    name: &str,
    argv: &[String],
    opts: &ExecOptions,
    stdin: Stdin,
    cancel: CancellationToken,
    channels: Option<&crate::exec::channel::CommandChannels>,
) -> Result<ExecProcess> {
    validate_argv("argv", argv)?;
    opts.validate()?;
    crate::exec::channel::validate_request_size(argv, opts)?;
    let at = launch::deadline_at(opts.timeout_ms);
    let engine = &launch::scope(engine, &cancel, name, opts.timeout_ms, at);
    let channels = channels.filter(|_| !matches!(stdin, Stdin::File(_)));
    let attach = !matches!(stdin, Stdin::None);
    let launched = crate::exec::start(engine, id, argv, opts, attach, channels).await?;
    let (out_tx, out_rx) = mpsc::channel(STREAM_CHANNEL_CHUNKS);
    let (err_tx, err_rx) = mpsc::channel(STREAM_CHANNEL_CHUNKS);
    let (done_tx, done_rx) = watch::channel(None);
    let kill = CancellationToken::new();
    let stall = Arc::new(AtomicU64::new(0));
    // An engine exec has no helper that dies with its container: watch the container while
    // the process waits for its reader (see the module's docs).
    let watcher = match &launched.exit {
        launch::Exit::Engine(exec_id) => Some(tokio::spawn(watch_stopped(
            engine.clone(),
            id.to_string(),
            exec_id.clone(),
            stall.clone(),
            launched.gone.clone(),
        ))),
        launch::Exit::Channel(_) => None,
    };
    let pump = Pump {
        engine: engine.clone(),
        id: id.to_string(),
        name: name.to_string(),
        timeout_ms: opts.timeout_ms,
        at,
        cancel,
        kill: kill.clone(),
        out_tx,
        err_tx,
        stall,
    };
    tokio::spawn(async move {
        let outcome = pump.run(launched, stdin).await;
        if let Some(w) = watcher {
            w.abort();
        }
        let _ = done_tx.send(Some(outcome));
    });
    Ok(ExecProcess {
        stdout: Mutex::new(out_rx),
        stderr: Mutex::new(err_rx),
        kill,
        outcome: done_rx,
    })
}

impl ExecProcess {
    /// The next chunk of `which`, `Ok(None)` at its end. After a timeout or abort the stream
    /// ends with that error (once), then `Ok(None)`.
    pub async fn next(&self, which: Which) -> Result<Option<Bytes>> {
        let rx = match which {
            Which::Stdout => &self.stdout,
            Which::Stderr => &self.stderr,
        };
        rx.lock().await.recv().await.transpose()
    }

    /// Stops delivering `which`: what is queued and what comes later is discarded, so an
    /// unread stream never holds the process back. Idempotent.
    pub async fn close(&self, which: Which) {
        let rx = match which {
            Which::Stdout => &self.stdout,
            Which::Stderr => &self.stderr,
        };
        let mut rx = rx.lock().await;
        rx.close();
        while rx.try_recv().is_ok() {}
    }

    /// The exit code as the engine reports it, once the process ended; or the error it ended
    /// with (`E_EXEC_TIMEOUT`, `E_ABORTED`, `E_ENGINE`). Any number of calls get the same answer.
    /// A process whose container stops or is removed (by the session or outside berth) while
    /// its output is unread settles with `E_ENGINE` (its exit code is unknown then: the
    /// engine's is never read past unread output): at once for the session's `stop()` or
    /// `remove()`, within about 2 s for a stop outside berth ([`crate::exec::watch`]). Over a
    /// command channel the same holds (the helper dies with the container).
    /// Engine calls: none over the command channel (the helper reports the exit code);
    /// otherwise `GET /exec/{id}/json` once the output ended.
    pub async fn wait(&self) -> Result<i64> {
        let mut rx = self.outcome.clone();
        let seen = rx
            .wait_for(Option::is_some)
            .await
            .map_err(|_| Error::Engine {
                operation: "wait for exec".into(),
                status: None,
                message: "the exec's pump ended without an outcome (a bug in berth)".into(),
            })?;
        seen.clone().expect("checked by wait_for")
    }

    /// Kills the process and its children (TERM, then KILL: see
    /// [`crate::exec::launch::kill_tree`]) and waits until the exec ended and its tree kill
    /// finished, or until `cancel` fires: `E_ABORTED` then, at once, while the kill goes on in
    /// the background and [`ExecProcess::wait`] still settles. The wait never outlasts the
    /// process's own deadline (`timeout_ms`, counted from the spawn: `wait()` then settles
    /// `E_EXEC_TIMEOUT`, or with the exit code when the process had ended) or its spawn's
    /// signal; the fixed bounds are only ceilings: the output's end at most
    /// [`crate::exec::launch::KILLED_END_TIMEOUT_MS`] after the kill (`E_ENGINE` past it), the
    /// tree kill awaited at most [`crate::exec::launch::KILL_TREE_TIMEOUT_MS`] after that. Idempotent; a process that already ended is left
    /// alone. Its exit code (for example 143) stays readable through [`ExecProcess::wait`].
    /// From the call on, output is delivered only where a stream's queue has room (the rest is
    /// dropped), so an unread stream cannot keep a killed exec open.
    /// Errors: `E_ABORTED` (only from `cancel`; how the process ended is `wait()`'s answer).
    pub async fn kill(&self, cancel: &CancellationToken) -> Result<()> {
        if self.outcome.borrow().is_none() {
            if cancel.is_cancelled() {
                return Err(Error::aborted("kill"));
            }
            self.kill.cancel();
        }
        tokio::select! {
            _ = self.wait() => Ok(()),
            _ = cancel.cancelled() => Err(Error::aborted("kill")),
        }
    }
}

struct Pump {
    engine: Engine,
    id: String,
    name: String,
    timeout_ms: Option<u64>,
    /// When the process's time is up (from `timeout_ms`, counted from the spawn call).
    at: Option<tokio::time::Instant>,
    cancel: CancellationToken,
    kill: CancellationToken,
    out_tx: mpsc::Sender<Chunk>,
    err_tx: mpsc::Sender<Chunk>,
    /// The number of the chunk that waits for its reader (chunks counted from 1), 0 when
    /// none does: what [`watch_stopped`] reads.
    stall: Arc<AtomicU64>,
}

/// The last [`ERROR_TAIL_BYTES`] of a stream.
#[derive(Default)]
struct Tail(Vec<u8>);

impl Tail {
    fn push(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
        if self.0.len() > 2 * ERROR_TAIL_BYTES {
            self.0.drain(..self.0.len() - ERROR_TAIL_BYTES);
        }
    }
    fn take(self) -> Vec<u8> {
        let start = self.0.len().saturating_sub(ERROR_TAIL_BYTES);
        self.0[start..].to_vec()
    }
}

impl Pump {
    async fn run(self, launched: Launched, stdin: Stdin) -> Result<i64> {
        let stdin_attached = !matches!(stdin, Stdin::None);
        let Launched {
            exit,
            marker,
            mut output,
            input,
            gone,
        } = launched;
        let writer = tokio::spawn(feed(input, stdin));
        let sleep = launch::deadline(self.at);
        tokio::pin!(sleep);
        let (mut out_tail, mut err_tail) = (Tail::default(), Tail::default());
        let mut pending: Option<(Which, Bytes)> = None;
        let mut killing: Option<tokio::task::JoinHandle<()>> = None;
        // The command gone (its helper lost, its session removed) while a chunk waits for the
        // reader: the outcome does not wait for the reader either.
        let mut gone_unread = false;
        let mut chunks: u64 = 0;
        // Once killed, its output must end within a bound (see `launch::KILLED_END_TIMEOUT_MS`).
        let killed_end = tokio::time::sleep(std::time::Duration::MAX);
        tokio::pin!(killed_end);
        let interrupted: Option<Error> = loop {
            self.stall.store(
                if pending.is_some() { chunks } else { 0 },
                Ordering::Release,
            );
            tokio::select! {
                biased;
                _ = self.cancel.cancelled() => break Some(Error::aborted("exec")),
                _ = gone.cancelled(), if pending.is_some() => {
                    if let Some((which, bytes)) = pending.take() {
                        self.offer(which, bytes);
                    }
                    // The channel's output ends once what it queued is taken: drain it without
                    // waiting for the reader (a bounded amount: the channel's credit).
                    while let Some(Some(Ok(item))) = futures_util::FutureExt::now_or_never(output.next()) {
                        match item {
                            LogOutput::StdErr { message } => { err_tail.push(&message); self.offer(Which::Stderr, message) }
                            LogOutput::StdOut { message } | LogOutput::Console { message } => { out_tail.push(&message); self.offer(Which::Stdout, message) }
                            _ => {}
                        }
                    }
                    gone_unread = true;
                    break None;
                },
                _ = &mut sleep => break Some(Error::ExecTimeout {
                    container: self.name.clone(),
                    timeout_ms: self.timeout_ms.unwrap_or_default(),
                    stdout: Vec::new(),
                    stderr: Vec::new(),
                }),
                _ = &mut killed_end, if killing.is_some() => break Some(launch::killed_without_end()),
                _ = self.kill.cancelled(), if killing.is_none() => {
                    let (engine, id, marker) = (self.engine.clone(), self.id.clone(), marker.clone());
                    killing = Some(tokio::spawn(async move { launch::kill_tree(&engine, &id, &marker).await }));
                    killed_end.as_mut().reset(launch::killed_end_at());
                    // From now on nothing waits for a reader (see `offer`): the end must come.
                    if let Some((which, bytes)) = pending.take() {
                        self.offer(which, bytes);
                    }
                }
                permit = reserve(&self.out_tx, &self.err_tx, pending.as_ref().map(|p| p.0)), if pending.is_some() => {
                    let (_, bytes) = pending.take().expect("guarded by is_some");
                    // A closed receiver means the reader is not interested: discard.
                    if let Ok(permit) = permit {
                        permit.send(Ok(bytes));
                    }
                }
                chunk = output.next(), if pending.is_none() => match chunk {
                    None => break None,
                    Some(Ok(LogOutput::StdErr { message })) => {
                        err_tail.push(&message);
                        if killing.is_some() { self.offer(Which::Stderr, message) } else { chunks += 1; pending = Some((Which::Stderr, message)) }
                    }
                    Some(Ok(LogOutput::StdOut { message } | LogOutput::Console { message })) => {
                        out_tail.push(&message);
                        if killing.is_some() { self.offer(Which::Stdout, message) } else { chunks += 1; pending = Some((Which::Stdout, message)) }
                    }
                    Some(Ok(_)) => {}
                    // Podman resets the hijacked connection when the process exits with stdin bytes
                    // unread (podman #7360): the stream ended; the exit code comes from inspect.
                    Some(Err(e)) if stdin_attached
                        && crate::engine::connection::io_kind(&e) == Some(std::io::ErrorKind::ConnectionReset) => break None,
                    Some(Err(e)) => break Some(self.engine.error("read exec output", e)),
                },
            }
        };
        writer.abort();
        drop(output);
        let ended_by_itself = interrupted.is_none();
        let outcome = match interrupted {
            // The channel's reader reported why; an engine exec's container is being stopped or
            // removed, or was stopped outside berth (its output dropped first, so the engine
            // does not wait for a reader).
            None if gone_unread => match exit {
                launch::Exit::Engine(_) => Err(Error::Engine {
                    operation: "exec".into(),
                    status: None,
                    message: "the session's container stopped or was removed while the command's \
                              output was unread; its exit code is unknown"
                        .into(),
                }),
                channel => channel.code(&self.engine).await,
            },
            None => match pending.take() {
                // The last chunk still waits for room; deliver it before the end.
                Some((which, bytes)) => {
                    let _ = self.tx(which).send(Ok(bytes)).await;
                    exit.code(&self.engine).await
                }
                None => exit.code(&self.engine).await,
            },
            Some(err) => {
                // A kill already under way goes on in the background (its task is not awaited).
                if killing.is_none()
                    && matches!(err, Error::ExecTimeout { .. } | Error::Aborted { .. })
                {
                    launch::spawn_kill_tree(&self.engine, &self.id, &marker);
                }
                Err(err.with_output(out_tail.take(), err_tail.take()))
            }
        };
        if let (Some(k), true) = (killing, ended_by_itself) {
            // `kill()`: the process ended; its tree kill (the children it left) is awaited too,
            // but never past the process's deadline or signal, and at most
            // `launch::KILL_TREE_TIMEOUT_MS` from here: the kill goes on in the background then.
            let sleep = launch::deadline(self.at);
            tokio::select! {
                _ = k => {}
                _ = sleep => {}
                _ = self.cancel.cancelled() => {}
                _ = tokio::time::sleep(std::time::Duration::from_millis(launch::KILL_TREE_TIMEOUT_MS)) => {}
            }
        }
        if let Err(e) = &outcome {
            // Each stream ends with the error, once its reader got what was queued before it.
            for tx in [self.out_tx.clone(), self.err_tx.clone()] {
                let e = e.clone();
                tokio::spawn(async move {
                    let _ = tx.send(Err(e)).await;
                });
            }
        }
        outcome
    }

    /// Delivers a chunk only if its queue has room; drops it otherwise. Used once `kill()` was
    /// called: a reader that stopped reading must not keep a killed process's exec open.
    fn offer(&self, which: Which, bytes: Bytes) {
        let _ = self.tx(which).try_send(Ok(bytes));
    }

    fn tx(&self, which: Which) -> &mpsc::Sender<Chunk> {
        match which {
            Which::Stdout => &self.out_tx,
            Which::Stderr => &self.err_tx,
        }
    }
}

async fn reserve<'a>(
    out: &'a mpsc::Sender<Chunk>,
    err: &'a mpsc::Sender<Chunk>,
    which: Option<Which>,
) -> std::result::Result<mpsc::Permit<'a, Chunk>, mpsc::error::SendError<()>> {
    match which {
        Some(Which::Stderr) => err.reserve().await,
        _ => out.reserve().await,
    }
}

/// Writes `stdin` to the exec and closes it. A process that never reads stdin may close it
/// early: that is not an error.
async fn feed(mut input: ExecInput, stdin: Stdin) {
    match stdin {
        Stdin::None => return,
        Stdin::Bytes(b) => {
            let _ = input.write_all(&b).await;
        }
        Stdin::File(mut f) => {
            let mut buf = vec![0u8; STDIN_CHUNK_BYTES];
            loop {
                match f.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if input.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                }
            }
        }
    }
    let _ = input.shutdown().await;
}

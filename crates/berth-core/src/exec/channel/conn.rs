//! One command channel: the helper ([`super::install`]) running as one long-lived engine exec
//! for one user, carrying any number of commands at once, each on a stream id of its own.
//!
//! Two tasks per channel: a writer (frames to the helper's stdin, in order) and a reader
//! (frames from its stdout, handed to each command's queue; a command's queue holds at most the
//! credit the helper was given, [`protocol::INITIAL_CREDIT`] per stream, because credit is
//! granted back only as the command's reader takes chunks, see [`super::output`]). When the
//! helper's stream ends or breaks, every command still on it ends with `E_ENGINE` (operation
//! `command channel`) after a tree kill of its marker, and the channel is dead: the pool opens
//! another on the next command.
//!
//! Engine calls: `POST /containers/{id}/exec` and `POST /exec/{id}/start` (attached, stdin
//! open), once per channel; `POST /containers/{id}/exec` for the tree kills after a death.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use berth_agent::protocol::{self, Frame, Request, WriteReply, WriteRequest, WriteStatus};
use bollard::container::LogOutput;
use bytes::Bytes;
use futures_util::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::engine::connection::Engine;
use crate::exec::channel::output::{CommandOutput, Item};
use crate::exec::launch::{self, ExecOutputStream, Launch, Marker};
use crate::model::errors::{Error, Result};

/// How long the helper may take to say hello, in milliseconds.
const HELLO_TIMEOUT_MS: u64 = 10_000;
/// How long the helper may take to answer `STARTED` or `FALLBACK`, in milliseconds (an upper
/// bound: the command's deadline or abort comes first; a start left unanswered this long
/// condemns the channel even when its caller went away sooner).
const START_TIMEOUT_MS: u64 = 10_000;
/// How long a `START` or `WRITE` may go unanswered before the channel counts as stalled, in
/// milliseconds: the genuine helper answers as soon as it forked (a `WRITE`: wrote at most
/// [`protocol::MAX_WRITE_BYTES`]), in milliseconds even on a loaded machine. A stalled
/// channel takes no new request ([`Channel::stalled`]: they take the engine path), so only
/// the requests already sent wait for [`START_TIMEOUT_MS`] (or their caller's deadline).
pub(crate) const STALL_MS: u64 = 1_000;
/// How long the helper may take to answer a `WRITE`, in milliseconds (at most
/// [`protocol::MAX_WRITE_BYTES`] to a local filesystem; an upper bound: the call's deadline or
/// abort comes first; a write left unanswered this long condemns the channel).
const WRITE_TIMEOUT_MS: u64 = 10_000;
/// How long the rest of a frame may take once its first byte came, in milliseconds: the helper
/// writes each frame whole, so a frame left half-sent this long is a broken or forged helper.
const PARTIAL_FRAME_TIMEOUT_MS: u64 = 5_000;
/// Largest payload berth accepts from the helper, in bytes: its data frames carry at most
/// [`protocol::CHUNK_BYTES`], its other frames a few bytes or a short message. A larger claimed
/// length cuts the channel before anything is buffered for it.
pub(crate) const HELPER_MAX_PAYLOAD_BYTES: usize = protocol::CHUNK_BYTES;
/// Most bytes of queued frames the writer gathers into one write.
const WRITE_BATCH_BYTES: usize = 1024 * 1024;
/// stdin bytes per `STDIN` frame.
const STDIN_FRAME_BYTES: usize = 256 * 1024;

/// Why a channel could not be opened.
#[derive(Debug)]
pub(crate) enum OpenFailure {
    /// The helper did not say hello (it cannot run here: noexec, a missing user, ...).
    Unsupported,
    /// The engine refused the exec (a stopped container, say): the engine path reports it.
    Engine,
}

/// What starting a command came to.
pub(crate) enum Started {
    /// Running: its output, its exit code, and a token cancelled if the channel is lost.
    Running(
        CommandOutput,
        oneshot::Receiver<Result<i64>>,
        CancellationToken,
    ),
    /// The helper could not start it (no such program, a bad `cwd`): the engine runs it and
    /// reports what it reports.
    Fallback,
    /// The channel broke before the helper answered: drop it.
    Broken,
}

/// A command the reader still routes frames to.
struct Pending {
    started: Option<oneshot::Sender<bool>>,
    /// The command's output queue: never holds more than `credit` allows (checked in
    /// [`Reader::route`]), so it is bounded though unbounded in type.
    data: mpsc::UnboundedSender<Item>,
    exit: Option<oneshot::Sender<Result<i64>>>,
    marker: String,
    /// What the helper may still send on each stream, shared with the command's reader.
    credit: Arc<Credit>,
    /// Cancelled when the command is lost with its channel (see [`Launched::gone`]).
    gone: CancellationToken,
    /// Set for a file write (`WRITE`) instead of a command: its one answer goes here, and any
    /// other frame on its stream breaks the channel.
    written: Option<oneshot::Sender<std::result::Result<WriteReply, String>>>,
    /// When the request (`START` or `WRITE`) was sent: with `started` or `written` still set,
    /// how long its answer has been awaited ([`Channel::stalled`]).
    asked: tokio::time::Instant,
}

/// What a file write over the channel came to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Written {
    /// The helper answered (its `Ok` carried the size sent).
    Reply(WriteStatus),
    /// The helper refused the request (`ERROR`: an older helper, a malformed request) or the
    /// channel broke before it answered: another path writes the file.
    Broken,
}

/// An open channel. Dropping it cuts it (see [`Channel::cut`]).
pub(crate) struct Channel {
    writer: mpsc::UnboundedSender<Vec<u8>>,
    pending: Arc<Mutex<HashMap<u32, Pending>>>,
    health: Health,
    next_id: AtomicU32,
}

/// A channel's state, shared by its handle, its reader and the watchers of unanswered starts.
#[derive(Clone)]
struct Health {
    alive: Arc<AtomicBool>,
    /// Set when the helper broke the protocol or left a start unanswered (as opposed to its
    /// stream ending): the pool then backs off ([`super::CommandChannels`]).
    misbehaved: Arc<AtomicBool>,
    /// Cancelled to end the channel at once: the reader stops, the connection is closed, and
    /// the helper's and its commands' process trees are killed.
    cut: CancellationToken,
}

impl Health {
    /// Cuts the channel because the helper misbehaved.
    fn condemn(&self) {
        self.misbehaved.store(true, Ordering::Release);
        self.alive.store(false, Ordering::Release);
        self.cut.cancel();
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        self.cut();
    }
}

/// Per-stream credit the host granted the helper, in bytes (stdout, stderr).
#[derive(Default)]
pub(crate) struct Credit([AtomicI64; 2]);

impl Credit {
    fn new() -> Self {
        let c = Credit::default();
        for s in &c.0 {
            s.store(i64::from(protocol::INITIAL_CREDIT), Ordering::Relaxed);
        }
        c
    }

    /// Grants `n` more bytes on stream `which` ([`protocol::WHICH_STDOUT`] or `WHICH_STDERR`).
    pub(crate) fn grant(&self, which: u8, n: usize) {
        self.0[usize::from(which == protocol::WHICH_STDERR)].fetch_add(n as i64, Ordering::AcqRel);
    }

    /// Takes `n` bytes off stream `which`; `false` when that is past what was granted.
    fn take(&self, which: u8, n: usize) -> bool {
        self.0[usize::from(which == protocol::WHICH_STDERR)].fetch_sub(n as i64, Ordering::AcqRel)
            >= n as i64
    }
}

impl Channel {
    /// Starts the helper at `path` as `user` (the exec's create and start bounded by `engine`'s
    /// scope) and waits for its hello, for at most [`HELLO_TIMEOUT_MS`] whatever the scope says.
    pub(crate) async fn open(
        engine: &Engine,
        id: &str,
        user: Option<&str>,
        path: &str,
    ) -> std::result::Result<Channel, OpenFailure> {
        let argv = vec![path.to_string()];
        let spec = Launch {
            argv: &argv,
            user,
            stdin: true,
            ..Default::default()
        };
        let launched = launch::launch(engine, id, &spec)
            .await
            .map_err(|_| OpenFailure::Engine)?;
        let mut output = launched.output;
        let mut buf = Vec::new();
        // Not bounded by the command's deadline or signal: the pool runs the open in the
        // background past them (`super::CommandChannels`), so a helper that never says hello
        // is found out, once, at this bound.
        let hello = tokio::time::timeout(
            Duration::from_millis(HELLO_TIMEOUT_MS),
            next_frame(&mut output, &mut buf),
        )
        .await;
        match hello {
            Ok(Ok(Some(f))) if f.kind == protocol::HELLO && f.payload == protocol::MAGIC => {}
            _ => {
                // In the background: a mute or forged helper costs the command no more time.
                drop(output);
                launch::spawn_kill_tree(engine, id, &launched.marker);
                return Err(OpenFailure::Unsupported);
            }
        }
        let (writer, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let mut input = launched.input;
        // Ended by the reader when the helper's stream ends, so the connection is closed then
        // (not held open by a handle that is still referenced).
        let ended = CancellationToken::new();
        let stop = ended.clone();
        tokio::spawn(async move {
            loop {
                let bytes = tokio::select! {
                    bytes = rx.recv() => bytes,
                    _ = stop.cancelled() => None,
                };
                let Some(mut bytes) = bytes else { break };
                // Frames queued meanwhile go in the same write.
                while let Ok(more) = rx.try_recv() {
                    bytes.extend_from_slice(&more);
                    if bytes.len() >= WRITE_BATCH_BYTES {
                        break;
                    }
                }
                if input.write_all(&bytes).await.is_err() || input.flush().await.is_err() {
                    break;
                }
            }
            let _ = input.shutdown().await;
        });
        let pending: Arc<Mutex<HashMap<u32, Pending>>> = Arc::default();
        let health = Health {
            alive: Arc::new(AtomicBool::new(true)),
            misbehaved: Arc::default(),
            cut: CancellationToken::new(),
        };
        let reader = Reader {
            pending: pending.clone(),
            health: health.clone(),
            engine: engine.detached(),
            container: id.to_string(),
            marker: launched.marker,
            ended,
        };
        tokio::spawn(reader.run(output, buf));
        Ok(Channel {
            writer,
            pending,
            health,
            next_id: AtomicU32::new(1),
        })
    }

    /// Whether the helper's stream is still open.
    pub(crate) fn alive(&self) -> bool {
        self.health.alive.load(Ordering::Acquire) && !self.writer.is_closed()
    }

    /// Whether the channel ended because the helper broke the protocol (garbage, a claimed
    /// length over [`HELPER_MAX_PAYLOAD_BYTES`], output past its credit, a half-sent frame, a
    /// start left unanswered), not because its stream ended.
    pub(crate) fn misbehaved(&self) -> bool {
        self.health.misbehaved.load(Ordering::Acquire)
    }

    /// Whether a request sent over this channel (a `START` or a `WRITE`) has gone unanswered
    /// for [`STALL_MS`] or more: a helper that stopped answering (a forgery that said hello and
    /// nothing since, a helper stuck behind a frozen container). Such a channel takes no new
    /// request: each later command would wait for its own answer too. It is not cut for it:
    /// the unanswered request's bound ([`START_TIMEOUT_MS`], [`WRITE_TIMEOUT_MS`]) condemns it
    /// (a late answer clears the stall). No engine call.
    pub(crate) fn stalled(&self) -> bool {
        let since = Duration::from_millis(STALL_MS);
        match self.pending.lock() {
            Ok(p) => p.values().any(|p| {
                (p.started.is_some() || p.written.is_some()) && p.asked.elapsed() >= since
            }),
            Err(_) => true,
        }
    }

    /// Ends the channel now: the reader stops and closes the engine connection, every command
    /// still on it ends with `E_ENGINE` (`command channel`), and the helper's and those
    /// commands' process trees are killed in the background. Idempotent.
    pub(crate) fn cut(&self) {
        self.health.alive.store(false, Ordering::Release);
        self.health.cut.cancel();
    }

    /// Sends `request` (and `stdin`, then its end) and waits for the helper's answer, for at
    /// most [`START_TIMEOUT_MS`] and no longer than `engine`'s deadline or signal allow.
    ///
    /// Errors: the scope's `E_EXEC_TIMEOUT` / `E_ABORTED` (the command is killed if it starts
    /// later; a start left unanswered past [`START_TIMEOUT_MS`] still condemns the channel).
    pub(crate) async fn start(
        &self,
        engine: &Engine,
        request: &Request,
        stdin: Option<&[u8]>,
    ) -> Result<Started> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (started_tx, mut started_rx) = oneshot::channel();
        let (data_tx, data_rx) = mpsc::unbounded_channel();
        let (exit_tx, exit_rx) = oneshot::channel();
        let credit = Arc::new(Credit::new());
        let gone = CancellationToken::new();
        {
            let Ok(mut pending) = self.pending.lock() else {
                return Ok(Started::Broken);
            };
            if !self.alive() {
                return Ok(Started::Broken);
            }
            pending.insert(
                id,
                Pending {
                    started: Some(started_tx),
                    data: data_tx,
                    exit: Some(exit_tx),
                    marker: String::from_utf8_lossy(&request.marker).into_owned(),
                    credit: credit.clone(),
                    gone: gone.clone(),
                    written: None,
                    asked: tokio::time::Instant::now(),
                },
            );
        }
        let mut frames = Vec::new();
        protocol::frame(&mut frames, id, protocol::START, &request.encode());
        if let Some(bytes) = stdin {
            for chunk in bytes.chunks(STDIN_FRAME_BYTES) {
                protocol::frame(&mut frames, id, protocol::STDIN, chunk);
            }
            protocol::frame(&mut frames, id, protocol::STDIN_END, &[]);
        }
        if self.writer.send(frames).is_err() {
            return Ok(Started::Broken);
        }
        let sent = tokio::time::Instant::now();
        let bound = Duration::from_millis(START_TIMEOUT_MS);
        let answer = engine
            .step(async { Ok(tokio::time::timeout(bound, &mut started_rx).await) })
            .await;
        let answer = match answer {
            Ok(a) => a,
            Err(e) => {
                // The caller's deadline or abort came first: it settles now. The answer is still
                // awaited in the background: a command that starts is killed, and a start left
                // unanswered past the bound condemns the channel, as if the caller had waited.
                let (health, writer) = (self.health.clone(), self.writer.clone());
                tokio::spawn(async move {
                    let answer = tokio::time::timeout_at(sent + bound, started_rx).await;
                    match answer {
                        Ok(Ok(true)) => {
                            let mut kill = Vec::new();
                            protocol::frame(&mut kill, id, protocol::KILL, &[]);
                            let _ = writer.send(kill);
                        }
                        Ok(_) => {}
                        Err(_) => health.condemn(),
                    }
                });
                return Err(e);
            }
        };
        Ok(match answer {
            Ok(Ok(true)) => Started::Running(
                CommandOutput::new(id, data_rx, self.writer.clone(), credit),
                exit_rx,
                gone,
            ),
            Ok(Ok(false)) => Started::Fallback,
            Ok(Err(_)) => Started::Broken,
            Err(_) => {
                // No answer: the channel cannot be trusted any more.
                self.health.condemn();
                Started::Broken
            }
        })
    }
}

impl Channel {
    /// Sends a `WRITE` of `data` to `path` (`mode` `None`: keep an existing file's, 0644 for a
    /// new one) and waits for the helper's `WRITTEN`, for at most [`WRITE_TIMEOUT_MS`] and no
    /// longer than `engine`'s deadline or signal allow. An `Ok` reply is accepted only when it
    /// says the temporary file held exactly `data.len()` bytes; any other frame on the write's
    /// stream, a malformed reply or a late one condemns the channel (see the module doc).
    ///
    /// Errors: the scope's `E_EXEC_TIMEOUT` / `E_ABORTED` (the file is then the old one or the
    /// new one, never a mix).
    pub(crate) async fn write(
        &self,
        engine: &Engine,
        path: &str,
        mode: Option<u32>,
        data: &[u8],
    ) -> Result<Written> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, mut rx) = oneshot::channel();
        {
            let Ok(mut pending) = self.pending.lock() else {
                return Ok(Written::Broken);
            };
            if !self.alive() {
                return Ok(Written::Broken);
            }
            // No credit: a write's stream carries no output.
            let credit = Arc::new(Credit::default());
            let (data_tx, _) = mpsc::unbounded_channel();
            pending.insert(
                id,
                Pending {
                    started: None,
                    data: data_tx,
                    exit: None,
                    marker: String::new(),
                    credit,
                    gone: CancellationToken::new(),
                    written: Some(tx),
                    asked: tokio::time::Instant::now(),
                },
            );
        }
        let request = WriteRequest {
            path: path.as_bytes().to_vec(),
            mode: mode.unwrap_or(protocol::KEEP_MODE),
            data: data.to_vec(),
        };
        let mut frames = Vec::with_capacity(protocol::HEADER_BYTES + 16 + path.len() + data.len());
        protocol::frame(&mut frames, id, protocol::WRITE, &request.encode());
        if self.writer.send(frames).is_err() {
            return Ok(Written::Broken);
        }
        let sent = tokio::time::Instant::now();
        let bound = Duration::from_millis(WRITE_TIMEOUT_MS);
        let answer = engine
            .step(async { Ok(tokio::time::timeout(bound, &mut rx).await) })
            .await;
        let answer = match answer {
            Ok(a) => a,
            Err(e) => {
                // The caller's deadline or abort came first; a write left unanswered past the
                // bound still condemns the channel.
                let health = self.health.clone();
                tokio::spawn(async move {
                    if tokio::time::timeout_at(sent + bound, rx).await.is_err() {
                        health.condemn();
                    }
                });
                return Err(e);
            }
        };
        Ok(match answer {
            Ok(Ok(Ok(reply))) => {
                if reply.status == WriteStatus::Ok && reply.written != data.len() as u64 {
                    // A helper that says it wrote what it did not: not believed, not used again.
                    self.health.condemn();
                    Written::Broken
                } else {
                    Written::Reply(reply.status)
                }
            }
            Ok(Ok(Err(_))) | Ok(Err(_)) => Written::Broken,
            Err(_) => {
                self.health.condemn();
                Written::Broken
            }
        })
    }
}

/// Reads frames from the helper until its stream ends, routing each to its command.
struct Reader {
    pending: Arc<Mutex<HashMap<u32, Pending>>>,
    health: Health,
    /// Detached: the kills after a channel's end are bounded by per-request timeouts only.
    engine: Engine,
    container: String,
    marker: Marker,
    ended: CancellationToken,
}

impl Reader {
    async fn run(self, mut output: ExecOutputStream, mut buf: Vec<u8>) {
        let why = loop {
            let frame = tokio::select! {
                biased;
                _ = self.health.cut.cancelled() => break if self.health.misbehaved.load(Ordering::Acquire) {
                    "the command helper left a command unanswered".to_string()
                } else {
                    "the command channel was closed".to_string()
                },
                f = next_frame(&mut output, &mut buf) => f,
            };
            match frame {
                Ok(Some(f)) => {
                    if let Err(why) = self.route(f) {
                        self.health.misbehaved.store(true, Ordering::Release);
                        break why;
                    }
                }
                Ok(None) => break "the command helper's stream ended".to_string(),
                Err(Broke::Engine(e)) => break e,
                Err(Broke::Helper(e)) => {
                    self.health.misbehaved.store(true, Ordering::Release);
                    break e;
                }
            }
        };
        self.health.alive.store(false, Ordering::Release);
        self.ended.cancel();
        drop(output);
        drop(buf);
        let lost: Vec<Pending> = match self.pending.lock() {
            Ok(mut p) => p.drain().map(|(_, v)| v).collect(),
            Err(_) => Vec::new(),
        };
        // A helper that ended with nothing running (its session went away) needs no kill; one
        // that misbehaved may still run (a forged one ignores its closed stdin).
        let mut markers = Vec::new();
        if !lost.is_empty() || self.health.misbehaved.load(Ordering::Acquire) {
            markers.push(self.marker.clone());
        }
        for mut p in lost {
            if let Some(tx) = p.exit.take() {
                let _ = tx.send(Err(lost_error(&why)));
            }
            p.gone.cancel();
            if p.written.is_some() {
                continue; // a file write: no process of its own
            }
            // The helper runs every command as its own user: the kill runs as that user too.
            markers.push(Marker {
                value: p.marker,
                user: self.marker.user.clone(),
            });
        }
        for m in markers {
            launch::kill_tree(&self.engine, &self.container, &m).await;
        }
    }

    /// Hands one frame to its command. `Err`: the channel is broken.
    fn route(&self, f: Frame) -> std::result::Result<(), String> {
        let mut pending = self.pending.lock().map_err(|_| "poisoned".to_string())?;
        if f.id == 0 {
            return Err(format!(
                "the command helper failed: {}",
                String::from_utf8_lossy(&f.payload)
            ));
        }
        let Some(p) = pending.get_mut(&f.id) else {
            // A command is routed to until its EXIT, ERROR or FALLBACK (also one berth gave up
            // on: its KILL was sent, its credit is no longer granted), and the genuine helper
            // sends nothing for it after that: a frame for a stream that is not running (never
            // started, or ended) is a forgery, and output dropped here would be read without
            // bound. The channel is cut.
            return Err(format!(
                "the command helper sent a frame (kind {}) for stream {}, which is not running",
                f.kind, f.id
            ));
        };
        if p.written.is_some() {
            let mut p = pending.remove(&f.id).expect("found above");
            let tx = p.written.take().expect("checked above");
            return match f.kind {
                protocol::WRITTEN => {
                    let reply = WriteReply::decode(&f.payload)
                        .ok_or_else(|| "a malformed WRITTEN frame".to_string())?;
                    let _ = tx.send(Ok(reply));
                    Ok(())
                }
                protocol::ERROR => {
                    let _ = tx.send(Err(String::from_utf8_lossy(&f.payload).into_owned()));
                    Ok(())
                }
                other => Err(format!(
                    "frame kind {other} from the command helper on a file write's stream"
                )),
            };
        }
        match f.kind {
            protocol::STARTED | protocol::FALLBACK => {
                let ok = f.kind == protocol::STARTED;
                if let Some(tx) = p.started.take() {
                    let _ = tx.send(ok);
                }
                if !ok {
                    pending.remove(&f.id);
                }
            }
            protocol::STDOUT | protocol::STDERR => {
                let which = if f.kind == protocol::STDOUT {
                    protocol::WHICH_STDOUT
                } else {
                    protocol::WHICH_STDERR
                };
                if p.started.is_some() || !p.credit.take(which, f.payload.len()) {
                    return Err(format!(
                        "the command helper sent output past its credit (stream {})",
                        f.id
                    ));
                }
                let message = Bytes::from(f.payload);
                let item = if f.kind == protocol::STDOUT {
                    LogOutput::StdOut { message }
                } else {
                    LogOutput::StdErr { message }
                };
                let _ = p.data.send(Ok(item));
            }
            protocol::END => {}
            protocol::WRITTEN => {
                return Err(format!(
                    "a WRITTEN frame from the command helper on a command's stream ({})",
                    f.id
                ))
            }
            protocol::EXIT => {
                let code = f
                    .payload
                    .as_slice()
                    .try_into()
                    .map(i32::from_le_bytes)
                    .map_err(|_| "a malformed EXIT frame".to_string())?;
                if let Some(mut p) = pending.remove(&f.id) {
                    if let Some(tx) = p.exit.take() {
                        let _ = tx.send(Ok(i64::from(code)));
                    }
                }
            }
            protocol::ERROR => {
                if let Some(mut p) = pending.remove(&f.id) {
                    let why = String::from_utf8_lossy(&f.payload).into_owned();
                    if let Some(tx) = p.exit.take() {
                        let _ = tx.send(Err(lost_error(&why)));
                    }
                }
            }
            other => {
                return Err(format!(
                    "unknown frame kind {other} from the command helper"
                ))
            }
        }
        Ok(())
    }
}

/// Why reading the helper's stream stopped.
#[derive(Debug)]
enum Broke {
    /// The engine's stream failed.
    Engine(String),
    /// The helper broke the protocol.
    Helper(String),
}

/// The next frame of the helper's stdout (its stderr is ignored: the helper never writes there,
/// and an engine's own complaint about a helper that cannot start is not a frame). A claimed
/// length over [`HELPER_MAX_PAYLOAD_BYTES`] is refused before anything is buffered for it, so
/// `buf` never holds more than one frame's worth plus one engine chunk; a frame left half-sent
/// for [`PARTIAL_FRAME_TIMEOUT_MS`] is refused too.
async fn next_frame(
    output: &mut ExecOutputStream,
    buf: &mut Vec<u8>,
) -> std::result::Result<Option<Frame>, Broke> {
    loop {
        if let Some(len) = buf.get(5..protocol::HEADER_BYTES) {
            let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
            if len > HELPER_MAX_PAYLOAD_BYTES {
                return Err(Broke::Helper(format!(
                    "the command helper claimed a frame of {len} bytes (the limit is {HELPER_MAX_PAYLOAD_BYTES})"
                )));
            }
        }
        if let Some(f) = protocol::next_frame(buf).map_err(Broke::Helper)? {
            return Ok(Some(f));
        }
        let next = if buf.is_empty() {
            output.next().await
        } else {
            match tokio::time::timeout(
                Duration::from_millis(PARTIAL_FRAME_TIMEOUT_MS),
                output.next(),
            )
            .await
            {
                Ok(n) => n,
                Err(_) => {
                    return Err(Broke::Helper(format!(
                    "the command helper left a frame half-sent for {PARTIAL_FRAME_TIMEOUT_MS} ms"
                )))
                }
            }
        };
        match next {
            Some(Ok(LogOutput::StdOut { message } | LogOutput::Console { message })) => {
                buf.extend_from_slice(&message)
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(Broke::Engine(format!("reading the command channel: {e}"))),
            None if buf.is_empty() => return Ok(None),
            // A helper killed mid-write (not a protocol breach: the next command opens another).
            None => {
                return Err(Broke::Engine(
                    "the command helper's stream ended mid-frame".into(),
                ))
            }
        }
    }
}

/// The error of a command whose channel broke while it ran.
pub(crate) fn lost_error(why: &str) -> Error {
    Error::Engine {
        operation: "command channel".into(),
        status: None,
        message: format!("{why}; the command's exit code is unknown"),
    }
}

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
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use berth_agent::protocol::{self, Frame, Request};
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
/// How long the helper may take to answer `STARTED` or `FALLBACK`, in milliseconds.
const START_TIMEOUT_MS: u64 = 10_000;
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
    /// Running: its output, exit code and marker.
    Running(CommandOutput, oneshot::Receiver<Result<i64>>),
    /// The helper could not start it (no such program, a bad `cwd`): the engine runs it and
    /// reports what it reports.
    Fallback,
    /// The channel broke before the helper answered: drop it.
    Broken,
}

/// A command the reader still routes frames to.
struct Pending {
    started: Option<oneshot::Sender<bool>>,
    data: mpsc::UnboundedSender<Item>,
    exit: Option<oneshot::Sender<Result<i64>>>,
    marker: String,
}

/// An open channel.
pub(crate) struct Channel {
    writer: mpsc::UnboundedSender<Vec<u8>>,
    pending: Arc<Mutex<HashMap<u32, Pending>>>,
    alive: Arc<AtomicBool>,
    next_id: AtomicU32,
}

impl Channel {
    /// Starts the helper at `path` as `user` and waits for its hello.
    pub async fn open(
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
        let hello = engine
            .step(async {
                Ok(tokio::time::timeout(
                    Duration::from_millis(HELLO_TIMEOUT_MS),
                    next_frame(&mut output, &mut buf),
                )
                .await)
            })
            .await;
        // The command's abort or deadline came first: that says nothing of the helper.
        let Ok(hello) = hello else {
            launch::spawn_kill_tree(engine, id, &launched.marker);
            return Err(OpenFailure::Engine);
        };
        match hello {
            Ok(Ok(Some(f))) if f.kind == protocol::HELLO && f.payload == protocol::MAGIC => {}
            _ => {
                launch::kill_tree(engine, id, &launched.marker).await;
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
        let alive = Arc::new(AtomicBool::new(true));
        let reader = Reader {
            pending: pending.clone(),
            alive: alive.clone(),
            engine: engine.clone(),
            container: id.to_string(),
            marker: launched.marker,
            ended,
        };
        tokio::spawn(reader.run(output, buf));
        Ok(Channel {
            writer,
            pending,
            alive,
            next_id: AtomicU32::new(1),
        })
    }

    /// Whether the helper's stream is still open.
    pub fn alive(&self) -> bool {
        self.alive.load(Ordering::Acquire) && !self.writer.is_closed()
    }

    /// Sends `request` (and `stdin`, then its end) and waits for the helper's answer.
    pub async fn start(&self, request: &Request, stdin: Option<&[u8]>) -> Started {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (started_tx, started_rx) = oneshot::channel();
        let (data_tx, data_rx) = mpsc::unbounded_channel();
        let (exit_tx, exit_rx) = oneshot::channel();
        {
            let Ok(mut pending) = self.pending.lock() else {
                return Started::Broken;
            };
            if !self.alive() {
                return Started::Broken;
            }
            pending.insert(
                id,
                Pending {
                    started: Some(started_tx),
                    data: data_tx,
                    exit: Some(exit_tx),
                    marker: String::from_utf8_lossy(&request.marker).into_owned(),
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
            return Started::Broken;
        }
        let answer =
            tokio::time::timeout(Duration::from_millis(START_TIMEOUT_MS), started_rx).await;
        match answer {
            Ok(Ok(true)) => Started::Running(
                CommandOutput::new(id, data_rx, self.writer.clone()),
                exit_rx,
            ),
            Ok(Ok(false)) => Started::Fallback,
            _ => {
                // No answer: the channel cannot be trusted any more.
                self.alive.store(false, Ordering::Release);
                let mut kill = Vec::new();
                protocol::frame(&mut kill, id, protocol::KILL, &[]);
                let _ = self.writer.send(kill);
                Started::Broken
            }
        }
    }
}

/// Reads frames from the helper until its stream ends, routing each to its command.
struct Reader {
    pending: Arc<Mutex<HashMap<u32, Pending>>>,
    alive: Arc<AtomicBool>,
    engine: Engine,
    container: String,
    marker: Marker,
    ended: CancellationToken,
}

impl Reader {
    async fn run(self, mut output: ExecOutputStream, mut buf: Vec<u8>) {
        let why = loop {
            match next_frame(&mut output, &mut buf).await {
                Ok(Some(f)) => {
                    if let Err(why) = self.route(f) {
                        break why;
                    }
                }
                Ok(None) => break "the command helper's stream ended".to_string(),
                Err(e) => break e,
            }
        };
        self.alive.store(false, Ordering::Release);
        self.ended.cancel();
        drop(output);
        let lost: Vec<Pending> = match self.pending.lock() {
            Ok(mut p) => p.drain().map(|(_, v)| v).collect(),
            Err(_) => Vec::new(),
        };
        // A helper that ended with nothing running (its session went away) needs no kill.
        let mut markers = Vec::new();
        if !lost.is_empty() {
            markers.push(self.marker.clone());
        }
        for mut p in lost {
            if let Some(tx) = p.exit.take() {
                let _ = tx.send(Err(lost_error(&why)));
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
            return Ok(()); // a command berth gave up on
        };
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
                let message = Bytes::from(f.payload);
                let item = if f.kind == protocol::STDOUT {
                    LogOutput::StdOut { message }
                } else {
                    LogOutput::StdErr { message }
                };
                let _ = p.data.send(Ok(item));
            }
            protocol::END => {}
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

/// The next frame of the helper's stdout (its stderr is ignored: the helper never writes there,
/// and an engine's own complaint about a helper that cannot start is not a frame).
async fn next_frame(
    output: &mut ExecOutputStream,
    buf: &mut Vec<u8>,
) -> std::result::Result<Option<Frame>, String> {
    loop {
        if let Some(f) = protocol::next_frame(buf)? {
            return Ok(Some(f));
        }
        match output.next().await {
            Some(Ok(LogOutput::StdOut { message } | LogOutput::Console { message })) => {
                buf.extend_from_slice(&message)
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(format!("reading the command channel: {e}")),
            None => return Ok(None),
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

//! Command channels: a session's commands run through berth's helper
//! (`crates/berth-agent`, a small static binary copied into the container on first use and run
//! as one long-lived engine exec per user) instead of one engine exec each, so a command costs a
//! fork and exec inside the container (about a millisecond) instead of the engine's
//! three-request exec sequence (tens of milliseconds).
//!
//! [`launch`] hands back the same [`Launched`] the engine path produces (a framed output
//! stream, an exit-code source, the command's `BERTH_EXEC_ID` marker), so the buffered exec,
//! the streaming spawn, timeouts, aborts and the tree kill are the same code. One channel per
//! user carries any number of commands at once (multiplexed by stream id, with per-stream
//! credit for back-pressure, see [`conn`] and [`output`]).
//!
//! It answers `None`, and the caller takes the engine exec path, for that command:
//! `BERTH_COMMAND_CHANNEL=0` in berth's environment; stdin over [`MAX_STDIN_BYTES`]; no helper
//! in this build (a host other than Linux), an image of another architecture or a container the
//! engine would not copy it into ([`install`]; not tried again on this handle); a user whose
//! helper failed (see below); a channel the engine would not open (a stopped container: the
//! engine path reports it); a command the helper could not start (no such program, a bad
//! `cwd`: the engine reports what it reports); a channel that broke before answering (dropped;
//! one fresh channel is tried first). A channel that dies while a command runs ends that
//! command with `E_ENGINE` (operation `command channel`) after a tree kill; the next command
//! opens a new channel.
//!
//! **A failed helper is not retried on every command.** The sandbox's root can replace the
//! helper, so nothing it sends is trusted ([`conn`]). A helper that did not say hello, left a
//! start unanswered for [`conn`]'s bound, or broke the protocol (garbage, a claimed length over
//! the limit, output past its credit, a half-sent frame) puts its user in back-off: that user's
//! commands take the engine path for [`BACKOFF_FIRST_MS`], doubling with each failure up to
//! [`BACKOFF_MAX_MS`]; the next channel after a back-off copies the helper again first (so a
//! replaced binary is overwritten with berth's own before it is trusted again). A helper that
//! stops answering without breaking anything (it said hello, then nothing) costs one wait: a
//! channel with a `START` or `WRITE` unanswered for [`conn::STALL_MS`] takes no new command
//! (they take the engine path at once) until that request's bound condemns it (10 s, see
//! [`conn`]; the caller's own deadline or abort settles it sooner). Every wait here, the one
//! for another command's install or channel open included, is bounded by the command's
//! deadline and signal first.
//!
//! Engine calls: see [`install`] (once per handle) and [`conn`] (once per channel); nothing per
//! command.

pub(crate) mod conn;
pub(crate) mod install;
pub(crate) mod output;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use berth_agent::protocol::{self, Request, WriteStatus};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::engine::connection::Engine;
use crate::exec::channel::conn::{Channel, OpenFailure, Started, Written};
use crate::exec::launch::{Exit, Launched, Marker};
use crate::exec::ExecOptions;
use crate::model::errors::{Error, Result};

/// Largest stdin carried over a channel, in bytes (16 MiB; the helper holds what the command
/// has not read yet); larger ones take the engine path.
pub(crate) const MAX_STDIN_BYTES: usize = 16 * 1024 * 1024;
/// The first back-off of a user whose helper failed, in milliseconds.
pub(crate) const BACKOFF_FIRST_MS: u64 = 30_000;
/// The longest back-off, in milliseconds (10 minutes).
pub(crate) const BACKOFF_MAX_MS: u64 = 600_000;

type Slot = Arc<tokio::sync::Mutex<Option<Arc<Channel>>>>;

/// A session handle's command channels (cheap to clone: an `Arc` inside).
#[derive(Clone, Default)]
pub(crate) struct CommandChannels(Arc<Inner>);

#[derive(Default)]
struct Inner {
    /// Whether the helper is installed: `None` until the first command tried (and again after
    /// a helper failed, so the copy is made again).
    installed: tokio::sync::Mutex<Option<bool>>,
    /// The channel of each user (`None`: the container's user).
    slots: Mutex<HashMap<Option<String>, Slot>>,
    /// Users whose helper failed: the engine path until `until`.
    backoff: Mutex<HashMap<Option<String>, Backoff>>,
    /// Cancelled when the session is being removed: the commands launched until then are gone.
    gone: Mutex<CancellationToken>,
    /// Set once the session was removed: no channel is opened any more.
    removed: std::sync::atomic::AtomicBool,
    /// Set when a helper failed: the next channel copies the helper again first (`installed`
    /// is reset under its own lock, so marking it never waits for an install in progress).
    reinstall: std::sync::atomic::AtomicBool,
    /// When the channel of each user being opened right now began to open.
    opening: Mutex<HashMap<Option<String>, tokio::time::Instant>>,
}

/// One user's back-off after a failed helper.
#[derive(Clone, Copy)]
struct Backoff {
    until: tokio::time::Instant,
    /// The next back-off's length, in milliseconds.
    next_ms: u64,
}

impl CommandChannels {
    /// Closes every channel of this handle at once ([`Channel::cut`]): its engine connection
    /// closes, a command still running over one ends like one whose channel broke (its tree
    /// killed, `E_ENGINE`), and the helper's processes are killed. No engine call but the
    /// kills. The next command opens a channel again.
    pub(crate) fn close(&self) {
        let slots: Vec<Slot> = match self.0.slots.lock() {
            Ok(mut slots) => slots.drain().map(|(_, s)| s).collect(),
            Err(_) => Vec::new(),
        };
        for slot in slots {
            // A slot being opened right now is dropped with the map; its channel is cut on drop.
            if let Ok(mut s) = slot.try_lock() {
                if let Some(c) = s.take() {
                    c.cut();
                }
            }
        }
    }

    /// [`Self::close`], right before the session's container is removed: every command
    /// launched through this handle until now (over a channel or the engine) is gone
    /// ([`Launched::gone`]), so a spawn whose output nobody reads drops its engine stream and
    /// settles (the engine would otherwise hold the removal for a reader). Later commands are
    /// not affected (a removal that fails leaves the session usable).
    pub(crate) fn removing(&self) {
        self.give_up();
        self.close();
    }

    /// Every command launched through this handle until now (over a channel or the engine)
    /// is gone ([`Launched::gone`]): right before the session's container is stopped or
    /// removed, so a spawn whose output nobody reads settles instead of waiting for a reader
    /// of a process the stop ends. Later commands are not affected.
    pub(crate) fn give_up(&self) {
        if let Ok(mut g) = self.0.gone.lock() {
            std::mem::take(&mut *g).cancel();
        }
    }

    /// [`Self::close`], once the session's container is removed: no channel opens again.
    pub(crate) fn removed(&self) {
        self.0
            .removed
            .store(true, std::sync::atomic::Ordering::Release);
        self.close();
    }

    /// The token a command launched through this handle's engine path is gone with.
    pub(crate) fn gone(&self) -> CancellationToken {
        self.0
            .gone
            .lock()
            .map(|g| g.child_token())
            .unwrap_or_default()
    }

    /// Whether a channel of `user` has been opening for [`conn::STALL_MS`] or more (a helper
    /// that has not said hello yet): its commands take the engine path meanwhile.
    fn opening_too_long(&self, user: &Option<String>) -> bool {
        self.0
            .opening
            .lock()
            .ok()
            .and_then(|o| o.get(user).copied())
            .is_some_and(|since| since.elapsed() >= Duration::from_millis(conn::STALL_MS))
    }

    /// Whether `user` is in back-off (its commands take the engine path).
    fn backing_off(&self, user: &Option<String>) -> bool {
        self.0
            .backoff
            .lock()
            .ok()
            .and_then(|b| b.get(user).copied())
            .is_some_and(|b| tokio::time::Instant::now() < b.until)
    }

    /// Puts `user` in back-off after its helper failed, and has the helper copied again
    /// before the next channel. Never waits.
    fn failed(&self, user: &Option<String>) {
        if let Ok(mut all) = self.0.backoff.lock() {
            let ms = all.get(user).map_or(BACKOFF_FIRST_MS, |b| b.next_ms);
            all.insert(
                user.clone(),
                Backoff {
                    until: tokio::time::Instant::now() + Duration::from_millis(ms),
                    next_ms: (ms * 2).min(BACKOFF_MAX_MS),
                },
            );
        }
        self.0
            .reinstall
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// Installs the helper and opens `user`'s channel ahead of its first command (at create,
    /// while berth's other post-start steps run). Best effort: whatever fails here is decided
    /// again by the first command, as [`CommandChannels::channel`] always does.
    pub(crate) async fn prepare(&self, engine: &Engine, id: &str, user: &Option<String>) {
        let _ = self.channel(engine, id, user).await;
    }

    /// The live channel of `user`, opened (and the helper installed) when needed; `None` when
    /// the command must take the engine path. A channel found dead is replaced, unless its
    /// helper misbehaved (then the user backs off); a live one that left a request unanswered
    /// for [`conn::STALL_MS`] is passed over (its unanswered request's own bound condemns it),
    /// so later commands never wait on a helper that went silent.
    ///
    /// Every wait is bounded by `engine`'s deadline and signal, the wait for another command
    /// that is installing the helper or opening this user's channel too. Errors: the scope's
    /// `E_EXEC_TIMEOUT` / `E_ABORTED`.
    async fn channel(
        &self,
        engine: &Engine,
        id: &str,
        user: &Option<String>,
    ) -> Result<Option<Arc<Channel>>> {
        if self.0.removed.load(std::sync::atomic::Ordering::Acquire) || self.backing_off(user) {
            return Ok(None);
        }
        {
            let mut installed = engine
                .step(async { Ok(self.0.installed.lock().await) })
                .await?;
            if self
                .0
                .reinstall
                .swap(false, std::sync::atomic::Ordering::AcqRel)
            {
                *installed = None;
            }
            if installed.is_none() {
                // An interrupted install (this command's abort or deadline) decides nothing.
                let Ok(done) = install::install(engine, id).await else {
                    return Ok(None);
                };
                *installed = Some(done);
            }
            if *installed != Some(true) {
                return Ok(None);
            }
        }
        if self.opening_too_long(user) {
            return Ok(None);
        }
        let Some(slot) = self
            .0
            .slots
            .lock()
            .ok()
            .map(|mut slots| slots.entry(user.clone()).or_default().clone())
        else {
            return Ok(None);
        };
        let mut slot = engine.step(async { Ok(slot.lock_owned().await) }).await?;
        if let Some(c) = slot.as_ref().filter(|c| c.alive()) {
            return Ok((!c.stalled()).then(|| c.clone()));
        }
        if let Some(dead) = slot.take() {
            if dead.misbehaved() {
                drop(slot);
                self.failed(user);
                return Ok(None);
            }
        }
        // The open goes on in the background, holding the slot, when this command's deadline
        // or abort comes first: a helper that is merely slow to say hello serves the next
        // commands; one that never does puts its user in back-off at the hello's own bound.
        // Meanwhile later commands of the user take the engine path (`opening_too_long`).
        if let Ok(mut o) = self.0.opening.lock() {
            o.insert(user.clone(), tokio::time::Instant::now());
        }
        let (tx, rx) = oneshot::channel();
        let (this, engine_, id, user_) =
            (self.clone(), engine.clone(), id.to_string(), user.clone());
        tokio::spawn(async move {
            let opened = match Channel::open(&engine_, &id, user_.as_deref(), install::path()).await
            {
                Ok(c) => {
                    let c = Arc::new(c);
                    *slot = Some(c.clone());
                    Some(c)
                }
                Err(OpenFailure::Unsupported) => {
                    this.failed(&user_);
                    None
                }
                Err(OpenFailure::Engine) => None,
            };
            if let Ok(mut o) = this.0.opening.lock() {
                o.remove(&user_);
            }
            drop(slot);
            let _ = tx.send(opened);
        });
        engine.step(async { Ok(rx.await.ok().flatten()) }).await
    }
}

/// The bytes a length-prefixed string of `n` bytes takes in a `START`.
fn string_bytes(n: usize) -> usize {
    4 + n
}

/// The bytes `argv` takes in a `START` (its count, then each argument).
fn argv_bytes(argv: &[String]) -> usize {
    4 + argv.iter().map(|a| string_bytes(a.len())).sum::<usize>()
}

/// The bytes `env` takes in a `START` (its count, then each name and value).
fn env_bytes(env: &std::collections::BTreeMap<String, String>) -> usize {
    4 + env
        .iter()
        .map(|(k, v)| string_bytes(k.len()) + string_bytes(v.len()))
        .sum::<usize>()
}

/// The bytes a `START` carrying `argv` and `opts` takes (its marker is 24 hex digits), as
/// [`Request::encode`] lays it out.
fn request_bytes(argv: &[String], opts: &ExecOptions) -> usize {
    string_bytes(24)
        + string_bytes(opts.cwd.as_deref().map_or(0, str::len))
        + env_bytes(&opts.env)
        + argv_bytes(argv)
        + 1
}

/// Refuses a command whose argv, env and cwd together are over one request's limit
/// ([`protocol::MAX_PAYLOAD_BYTES`], 8 MiB), before anything is sent, on either path (the
/// helper would drop the channel; the engine's own limits differ by engine). stdin has no such
/// limit: it travels in chunks of its own, never in the request.
///
/// Errors: `E_INVALID_ARGUMENT` whose field is the larger of `argv` and `env` (the one to
/// shrink; `cwd` is at most 4 095 bytes), its message naming that field's size, the request's
/// and the limit, in bytes.
pub(crate) fn validate_request_size(argv: &[String], opts: &ExecOptions) -> Result<()> {
    let n = request_bytes(argv, opts);
    if n <= protocol::MAX_PAYLOAD_BYTES {
        return Ok(());
    }
    let (a, e) = (argv_bytes(argv), env_bytes(&opts.env));
    let (field, size) = if e > a { ("env", e) } else { ("argv", a) };
    Err(Error::invalid(
        field,
        format!(
            "{field} takes {size} bytes and the command's argv, env and cwd together {n} bytes, \
             over the limit of {} bytes (8 MiB) for one command",
            protocol::MAX_PAYLOAD_BYTES
        ),
    ))
}

/// Starts `argv` over `channels` in container `id`; `Ok(None)` when the command must take the
/// engine path (see the module doc). The result's input is a sink: `opts.stdin` went with the
/// request. Errors: `engine`'s `E_EXEC_TIMEOUT` / `E_ABORTED` while waiting for the helper.
pub(crate) async fn launch(
    channels: &CommandChannels,
    engine: &Engine,
    id: &str,
    argv: &[String],
    opts: &ExecOptions,
) -> Result<Option<Launched>> {
    if disabled()
        || opts
            .stdin
            .as_ref()
            .is_some_and(|s| s.len() > MAX_STDIN_BYTES)
        || request_bytes(argv, opts) > protocol::MAX_PAYLOAD_BYTES
    {
        return Ok(None);
    }
    let marker = hex::encode(rand::random::<[u8; 12]>());
    let request = Request {
        marker: marker.clone().into_bytes(),
        cwd: opts.cwd.clone().unwrap_or_default().into_bytes(),
        env: opts
            .env
            .iter()
            .map(|(k, v)| (k.clone().into_bytes(), v.clone().into_bytes()))
            .collect(),
        argv: argv.iter().map(|a| a.clone().into_bytes()).collect(),
        stdin: opts.stdin.is_some(),
    };
    // A channel that broke before answering is replaced once.
    for _ in 0..2 {
        let Some(channel) = channels.channel(engine, id, &opts.user).await? else {
            return Ok(None);
        };
        match channel
            .start(engine, &request, opts.stdin.as_deref())
            .await?
        {
            Started::Running(output, exit, gone) => {
                return Ok(Some(Launched {
                    exit: Exit::Channel(exit),
                    marker: Marker {
                        value: marker,
                        user: opts.user.clone(),
                    },
                    output: Box::pin(output),
                    input: Box::pin(tokio::io::sink()),
                    gone,
                }))
            }
            Started::Fallback => return Ok(None),
            Started::Broken => continue,
        }
    }
    Ok(None)
}

/// Writes `data` to the normalised `path` over the container user's channel (the helper does it
/// in the container, see [`protocol::WriteRequest`]: a temporary name beside the file, its size
/// checked, its mode set, renamed over the file); `Ok(None)` when another path must write it:
/// `BERTH_COMMAND_CHANNEL=0`, data over [`protocol::MAX_WRITE_BYTES`], no channel to be had
/// (see the module doc), a helper that refused the request or a channel that broke before it
/// answered (the write may or may not have happened; the other path writes it again, whole).
/// A helper whose `Ok` does not say it wrote exactly `data.len()` bytes is not believed: its
/// channel is condemned and the user backs off, as for any protocol breach.
///
/// No engine call once the channel is open. Errors: `engine`'s `E_EXEC_TIMEOUT` /
/// `E_ABORTED` while waiting for the helper.
pub(crate) async fn write_file(
    channels: &CommandChannels,
    engine: &Engine,
    id: &str,
    path: &str,
    mode: Option<u32>,
    data: &[u8],
) -> Result<Option<WriteStatus>> {
    if disabled() || data.len() > protocol::MAX_WRITE_BYTES {
        return Ok(None);
    }
    let Some(channel) = channels.channel(engine, id, &None).await? else {
        return Ok(None);
    };
    Ok(match channel.write(engine, path, mode, data).await? {
        Written::Reply(status) => Some(status),
        Written::Broken => None,
    })
}

/// The exit code a channel's reader hands over (see [`Exit::code`]).
pub(crate) async fn exit_code(rx: oneshot::Receiver<Result<i64>>) -> Result<i64> {
    rx.await
        .unwrap_or_else(|_| Err(conn::lost_error("the command channel's reader ended")))
}

/// Whether `BERTH_COMMAND_CHANNEL=0` is set: every command then takes the engine path (for the
/// benchmark's comparison and for troubleshooting).
fn disabled() -> bool {
    std::env::var_os("BERTH_COMMAND_CHANNEL").is_some_and(|v| v == "0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_size_is_what_encode_makes() {
        let mut opts = ExecOptions {
            cwd: Some("/tmp".into()),
            ..Default::default()
        };
        opts.env.insert("A".into(), "xyz".into());
        let argv = vec!["sh".to_string(), "-c".into(), "echo hi".into()];
        let r = Request {
            marker: vec![b'0'; 24],
            cwd: b"/tmp".to_vec(),
            env: vec![(b"A".to_vec(), b"xyz".to_vec())],
            argv: argv.iter().map(|a| a.clone().into_bytes()).collect(),
            stdin: false,
        };
        assert_eq!(request_bytes(&argv, &opts), r.encode().len());
        assert!(validate_request_size(&argv, &opts).is_ok());
        let big = vec!["x".repeat(protocol::MAX_PAYLOAD_BYTES)];
        let e = validate_request_size(&big, &ExecOptions::default()).unwrap_err();
        assert_eq!(e.code(), "E_INVALID_ARGUMENT");
        assert!(
            matches!(&e, Error::InvalidArgument { field, .. } if field == "argv"),
            "{e:?}"
        );
        assert!(e.to_string().contains("8388608 bytes"), "{e}");
        // The env that weighs most is named, whatever argv is.
        let mut opts = ExecOptions::default();
        opts.env
            .insert("BIG".into(), "x".repeat(protocol::MAX_PAYLOAD_BYTES));
        let e = validate_request_size(&argv, &opts).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument { field, .. } if field == "env"),
            "{e:?}"
        );
        assert!(e.to_string().contains("env takes 8388623 bytes"), "{e}");
        assert!(e.to_string().contains("8388608 bytes"), "{e}");
        // Just at the limit: accepted.
        let mut opts = ExecOptions::default();
        let room = protocol::MAX_PAYLOAD_BYTES - request_bytes(&argv, &opts);
        opts.env.insert("B".into(), "x".repeat(room - 4 - 1 - 4));
        assert_eq!(request_bytes(&argv, &opts), protocol::MAX_PAYLOAD_BYTES);
        assert!(validate_request_size(&argv, &opts).is_ok());
    }
}

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
//! engine would not copy it into ([`install`]; not tried again on this handle); a helper that
//! did not start for that user (a noexec `/run`, an unknown user: not tried again for that
//! user); a channel the engine would not open (a stopped container: the engine path reports
//! it); a command the helper could not start (no such program, a bad `cwd`: the engine reports
//! what it reports); a channel that broke before answering (dropped; one fresh channel is tried
//! first). A channel that dies while a command runs ends that command with `E_ENGINE`
//! (operation `command channel`) after a tree kill; the next command opens a new channel.
//!
//! Engine calls: see [`install`] (once per handle) and [`conn`] (once per channel); nothing per
//! command.

pub mod conn;
pub mod install;
pub mod output;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use berth_agent::protocol::Request;
use tokio::sync::oneshot;

use crate::engine::connection::Engine;
use crate::exec::channel::conn::{Channel, OpenFailure, Started};
use crate::exec::launch::{Exit, Launched, Marker};
use crate::exec::ExecOptions;
use crate::model::errors::Result;

/// Largest stdin carried over a channel, in bytes (16 MiB; the helper holds what the command
/// has not read yet); larger ones take the engine path.
pub(crate) const MAX_STDIN_BYTES: usize = 16 * 1024 * 1024;

type Slot = Arc<tokio::sync::Mutex<Option<Arc<Channel>>>>;

/// A session handle's command channels (cheap to clone: an `Arc` inside).
#[derive(Clone, Default)]
pub(crate) struct CommandChannels(Arc<Inner>);

#[derive(Default)]
struct Inner {
    /// Whether the helper is installed: `None` until the first command tried.
    installed: tokio::sync::Mutex<Option<bool>>,
    /// The channel of each user (`None`: the container's user).
    slots: Mutex<HashMap<Option<String>, Slot>>,
    /// Users whose helper did not start.
    unsupported: Mutex<HashSet<Option<String>>>,
}

impl CommandChannels {
    /// Closes every channel of this handle: each helper sees its input end and exits, and a
    /// command still running over one is ended like one whose channel broke (its tree killed,
    /// `E_ENGINE`). The next command opens a channel again.
    pub(crate) fn close(&self) {
        if let Ok(mut slots) = self.0.slots.lock() {
            slots.clear();
        }
    }

    /// The live channel of `user`, opened (and the helper installed) when needed; `None` when
    /// the command must take the engine path. A channel found dead is replaced.
    async fn channel(
        &self,
        engine: &Engine,
        id: &str,
        user: &Option<String>,
    ) -> Option<Arc<Channel>> {
        if self.0.unsupported.lock().ok()?.contains(user) {
            return None;
        }
        {
            let mut installed = self.0.installed.lock().await;
            if installed.is_none() {
                // An interrupted install (this command's abort or deadline) decides nothing.
                *installed = Some(install::install(engine, id).await.ok()?);
            }
            if *installed != Some(true) {
                return None;
            }
        }
        let slot = self
            .0
            .slots
            .lock()
            .ok()?
            .entry(user.clone())
            .or_default()
            .clone();
        let mut slot = slot.lock().await;
        if let Some(c) = slot.as_ref().filter(|c| c.alive()) {
            return Some(c.clone());
        }
        *slot = None;
        match Channel::open(engine, id, user.as_deref(), install::path()).await {
            Ok(c) => {
                let c = Arc::new(c);
                *slot = Some(c.clone());
                Some(c)
            }
            Err(OpenFailure::Unsupported) => {
                if let Ok(mut u) = self.0.unsupported.lock() {
                    u.insert(user.clone());
                }
                None
            }
            Err(OpenFailure::Engine) => None,
        }
    }
}

/// Starts `argv` over `channels` in container `id`; `None` when the command must take the
/// engine path (see the module doc). The result's input is a sink: `opts.stdin` went with the
/// request.
pub(crate) async fn launch(
    channels: &CommandChannels,
    engine: &Engine,
    id: &str,
    argv: &[String],
    opts: &ExecOptions,
) -> Option<Launched> {
    if disabled()
        || opts
            .stdin
            .as_ref()
            .is_some_and(|s| s.len() > MAX_STDIN_BYTES)
    {
        return None;
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
        let channel = channels.channel(engine, id, &opts.user).await?;
        match channel.start(&request, opts.stdin.as_deref()).await {
            Started::Running(output, exit) => {
                return Some(Launched {
                    exit: Exit::Channel(exit),
                    marker: Marker {
                        value: marker,
                        user: opts.user.clone(),
                    },
                    output: Box::pin(output),
                    input: Box::pin(tokio::io::sink()),
                })
            }
            Started::Fallback => return None,
            Started::Broken => continue,
        }
    }
    None
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

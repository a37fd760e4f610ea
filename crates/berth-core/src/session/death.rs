//! Cause of death on a handle: when a call fails (or would act on a stopped container) and
//! the container is not running although berth did not stop it, the call reports
//! `E_SESSION_DEAD` with the cause (see `docs/design.md#cause-of-death`).

use tokio_util::sync::CancellationToken;

use crate::engine::connection::Engine;
use crate::engine::container::{inspect, Facts};
use crate::engine::logs;
use crate::engine::top;
use crate::model::death::{self, Death};
use crate::model::errors::{Error, Result};
use crate::ownership::records;
use crate::session::Session;

/// How long reading the cgroup's OOM count may take, in milliseconds.
const OOM_READ_TIMEOUT_MS: u64 = 10_000;
/// At most this many bytes of the cgroup file are read (it is a few short lines).
const OOM_READ_MAX_BYTES: usize = 4096;
/// How often, and at most how many times, a command whose channel was lost looks again for the
/// container's death while the engine still shows it running (50 × 100 ms): a forced removal
/// kills the helper first, and the engine reports the container running for a moment after
/// (about 150 ms on Docker 20.10, over 1.5 s on a loaded Podman 4.3).
const LOST_CHANNEL_POLL_MS: u64 = 100;
const LOST_CHANNEL_POLLS: u32 = 50;
/// The looks in a row that must find the container's processes still running before a lost
/// channel counts as the helper's alone (killed or replaced in a live container): a forced
/// removal kills every process at once, so a torn-down container lists none.
const LIVE_LOOKS: u32 = 3;

/// What one look at the container finds.
enum Look {
    /// Dead, and not by berth's hand.
    Dead(Death),
    /// Not ended as far as the engine shows: running, paused, restarting, created.
    NotEnded,
    /// Ended without a death: stopped or removed by berth, or never started.
    Settled,
    /// Gone, removed through berth by another handle or process (its records went with it).
    RemovedByBerth,
}

impl Session {
    /// Why this session's container is dead, or `None` when it is not: it runs (or is
    /// paused), berth stopped or removed it, or it never started.
    ///
    /// `GET /containers/{id}/json`; when it is not running (or gone), `GET /volumes?filters=...`
    /// (its records: berth's stops, its deadline, readiness); for a dead one
    /// `GET /containers/{id}/logs?tail=100` (at most [`logs::LOG_TAIL_BYTES`] kept).
    /// A gone container counts as removed outside berth only while its records are still
    /// there (berth removes them right after the container).
    /// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`, `E_ABORTED`.
    pub(crate) async fn death(&self, engine: &Engine) -> Result<Option<Death>> {
        Ok(match self.look(engine).await? {
            Look::Dead(d) => Some(d),
            Look::NotEnded | Look::Settled | Look::RemovedByBerth => None,
        })
    }

    /// [`Session::death`], telling a container that has not ended from one that ended without
    /// a death. Same requests and errors.
    async fn look(&self, engine: &Engine) -> Result<Look> {
        let Some(c) = inspect(engine, &self.id).await? else {
            return self.gone_look(engine).await;
        };
        let f = Facts::from_inspect(&c);
        if f.state == "removing" {
            // Going away, and not by this handle: as good as gone (see above).
            return self.gone_look(engine).await;
        }
        if !matches!(f.state, "exited" | "dead") {
            return Ok(Look::NotEnded);
        }
        let recs = records::of_container(engine, &self.id).await?;
        let Some(mut d) = death::classify(&f.end, recs.own_stops()) else {
            return Ok(Look::Settled);
        };
        d.log_tail = logs::tail(engine, &self.id).await;
        Ok(Look::Dead(d))
    }

    /// A container that is gone (or being removed): removed outside berth while its readiness
    /// record is still there and this handle is not the one removing it; removed through berth
    /// by another handle once its records are gone too.
    async fn gone_look(&self, engine: &Engine) -> Result<Look> {
        if self.state.lock().await.is_done() {
            return Ok(Look::Settled);
        }
        let recs = records::of_container(engine, &self.id).await?;
        Ok(if recs.ready {
            Look::Dead(Death::removed_outside())
        } else {
            Look::RemovedByBerth
        })
    }

    /// `E_SESSION_DEAD` for `death`.
    pub(crate) fn dead(&self, death: Death) -> Error {
        Error::SessionDead {
            session_id: self.session_id.clone(),
            name: self.name.clone(),
            id: self.id.clone(),
            death,
        }
    }

    /// `Err(E_SESSION_DEAD)` when the container is dead (see [`Session::death`]), else `Ok`.
    /// Errors: also those of [`Session::death`].
    pub(crate) async fn check_not_dead(&self, engine: &Engine) -> Result<()> {
        match self.death(engine).await? {
            Some(d) => Err(self.dead(d)),
            None => Ok(()),
        }
    }

    /// The error a failed call reports: `E_SESSION_DEAD` when the failure is the engine's
    /// (`E_ENGINE`, `E_SESSION_NOT_FOUND`) and the container turns out dead, else `e`
    /// itself (also when finding out fails: the first error is never replaced by a second).
    ///
    /// A command whose channel was lost (`E_ENGINE`, operation `command channel`) looks again
    /// every [`LOST_CHANNEL_POLL_MS`] while the engine still shows the container running: its
    /// helper is killed before the engine reports the container stopping or removed, so the
    /// first look is too early. It stops looking once the container's processes are seen
    /// running [`LIVE_LOOKS`] times in a row (`GET /containers/{id}/top`: the helper alone was
    /// lost, in a live container), or after [`LOST_CHANNEL_POLLS`] looks.
    pub(crate) async fn explain(&self, engine: &Engine, e: Error) -> Error {
        if !matches!(
            e.first(),
            Error::Engine { .. } | Error::SessionNotFound { .. }
        ) {
            return e;
        }
        let lost =
            matches!(e.first(), Error::Engine { operation, .. } if operation == "command channel");
        let polls = if lost { LOST_CHANNEL_POLLS } else { 1 };
        let mut live = 0;
        for i in 0..polls {
            match self.look(engine).await {
                Ok(Look::Dead(d)) => return self.dead(d),
                // A command cut by a removal through berth elsewhere: the container is gone.
                Ok(Look::RemovedByBerth) if lost => return self.not_found(),
                Ok(Look::NotEnded) if i + 1 < polls => {
                    let running = top::process_count(engine, &self.id)
                        .await
                        .ok()
                        .flatten()
                        .is_some_and(|n| n > 0);
                    live = if running { live + 1 } else { 0 };
                    if live >= LIVE_LOOKS {
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(LOST_CHANNEL_POLL_MS))
                        .await;
                }
                _ => break,
            }
        }
        e
    }

    /// Whether the container's cgroup counted an OOM kill since this handle last looked (the
    /// count starts at 0 for a new handle), after a command exited 137. One command over the
    /// session's command channel (else one engine exec): `cat` of `memory.events` (cgroup v2)
    /// or `memory/memory.oom_control` (cgroup v1) under `/sys/fs/cgroup`, the kernel's files
    /// for the container's own cgroup; at most [`OOM_READ_MAX_BYTES`] read, within
    /// [`OOM_READ_TIMEOUT_MS`] and `cancel`. Best effort: `false` when it cannot be read.
    pub async fn new_oom_kill(&self, cancel: &CancellationToken) -> bool {
        let argv: Vec<String> = [
            "sh",
            "-c",
            "cat /sys/fs/cgroup/memory.events 2>/dev/null || cat /sys/fs/cgroup/memory/memory.oom_control",
        ]
        .map(String::from)
        .to_vec();
        let opts = crate::exec::ExecOptions {
            timeout_ms: Some(OOM_READ_TIMEOUT_MS),
            max_buffer_bytes: Some(OOM_READ_MAX_BYTES),
            ..Default::default()
        };
        let Ok(out) = crate::exec::exec_via(
            &self.engine,
            &self.id,
            &self.name,
            &argv,
            &opts,
            cancel,
            Some(self.commands()),
        )
        .await
        else {
            return false;
        };
        let Some(count) = death::oom_kill_count(&String::from_utf8_lossy(&out.stdout)) else {
            return false;
        };
        let seen = self
            .oom_seen
            .fetch_max(count, std::sync::atomic::Ordering::SeqCst);
        count > seen
    }

    /// `r`, with its error explained by [`Session::explain`].
    pub(crate) async fn explained<T>(&self, engine: &Engine, r: Result<T>) -> Result<T> {
        match r {
            Ok(v) => Ok(v),
            Err(e) => Err(self.explain(engine, e).await),
        }
    }
}

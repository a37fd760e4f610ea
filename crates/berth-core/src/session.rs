//! Session: one handle on one container, sharing this process's duty to remove it when the
//! process owns it (see [`process_duty`]).

use std::sync::Arc;

use tokio::sync::{Mutex, OnceCell};
use tokio_util::sync::CancellationToken;

use crate::engine::calls::{self, Removal, Stop};
use crate::engine::connection::Engine;
use crate::engine::networks::{self, NetworkPolicy};
use crate::engine::ports;
use crate::engine::templates;
use crate::exec::channel::{self, CommandChannels};
use crate::exec::stream::{self, ExecProcess, Stdin};
use crate::exec::{self, ExecOptions, ExecOutput};
use crate::files::channel::slot::ChannelSlot;
use crate::files::channel::Outcome;
use crate::files::context::{self, FsContext, Target};
use crate::files::{self, Data, FileAccess, FileReader};
use crate::model::errors::{Error, Result};
use crate::model::identity::Owner;
use crate::model::spec::validate_port;
use crate::ownership::hold;
use berth_agent::protocol::WriteStatus;

pub(crate) mod deadline_timer;
mod death;
pub(crate) mod keepalive;
mod metrics;
pub(crate) mod process_duty;
mod timeout;
use process_duty::Shared;

/// Default grace period of `stop()` before SIGKILL, in milliseconds.
pub(crate) const DEFAULT_STOP_TIMEOUT_MS: u64 = 10_000;

/// How this handle came to hold its container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ownership {
    /// This process created the container: it must remove it (through any of its handles).
    Created,
    /// This handle resumed another process's container: it removes nothing unless forced.
    Adopted,
    /// This process took over a dead owner's duty to remove.
    Inherited,
}

impl Ownership {
    /// `created`, `adopted` or `inherited`.
    pub fn as_str(self) -> &'static str {
        match self {
            Ownership::Created => "created",
            Ownership::Adopted => "adopted",
            Ownership::Inherited => "inherited",
        }
    }
}

/// Whether the container of a handle is still to be removed by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Duty {
    /// Live container; removal is this handle's duty when it owns it.
    Holding,
    /// A removal through this handle finished.
    Done,
}

/// The result of `remove()`: `removed`, and otherwise why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoveOutcome {
    /// Whether this call removed the container.
    pub removed: bool,
    /// `not-owner`, `absent` or `already-removed` when not removed.
    pub reason: Option<&'static str>,
}

/// The result of `stop()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopOutcome {
    /// Whether the container is stopped now.
    pub stopped: bool,
    /// `not-owner`, `absent` or `already-removed` when not stopped.
    pub reason: Option<&'static str>,
}

/// The result of `release()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseOutcome {
    /// Whether this call dropped the handle's holder record.
    pub released: bool,
    /// `owner` or `already-released` when not released.
    pub reason: Option<&'static str>,
}

/// A handle on one session's container.
pub struct Session {
    /// The engine the container lives on.
    pub(crate) engine: Engine,
    /// Full 64-hex container id; every destructive call uses it.
    pub id: String,
    /// Container name.
    pub name: String,
    /// Session id.
    pub session_id: String,
    /// How this handle holds the container.
    pub ownership: Ownership,
    /// The creator recorded in the labels.
    pub owner: Option<Owner>,
    /// Spec fields that differ from creation (empty unless a spec was compared).
    pub drift: Vec<String>,
    /// The verification a `resumeSession({ verify })` or a recreation ran, if any.
    pub verification: Option<crate::model::verification::Verification>,
    /// What a recreation lost and kept, for a handle made by `recreateSession`.
    pub replaced: Option<crate::ownership::replaced::Replaced>,
    /// When the session expires, in ms since the epoch, as read when this handle was made
    /// (`timeoutMs`, `setTimeout`, `removeAfterStopMs`); `None`: never.
    pub expires_at: Option<u64>,
    /// Shared by every handle of this process on the container when this process holds its
    /// duty (see [`process_duty`]).
    state: Arc<Mutex<State>>,
    /// The container user's ids and mount table, learned on the first file call.
    fs: OnceCell<FsContext>,
    /// The file channel, opened on the first small read or write.
    channel: ChannelSlot,
    /// Who file calls act as (`files` on `createSession` / `resumeSession`).
    file_access: std::sync::Mutex<FileAccess>,
    /// The command channels, opened on the first exec or spawn ([`crate::exec::channel`]).
    commands: CommandChannels,
    /// The container's cgroup OOM kill count this handle saw last (see [`Session::exec`]).
    oom_seen: std::sync::atomic::AtomicU64,
    /// This handle's last usage sample, for the next one's CPU share ([`Session::metrics`]).
    last_metrics: std::sync::Mutex<Option<crate::model::metrics::Metrics>>,
    /// The container's configured limits, read on the first [`Session::metrics`].
    configured: OnceCell<crate::model::metrics::Configured>,
}

/// The mutable part of a handle: its duty and its own holder record.
pub(crate) struct State {
    duty: Duty,
    /// The volume name of this handle's holder (or duty) record, until released.
    record: Option<String>,
}

impl State {
    /// Whether a removal of the container finished.
    pub(crate) fn is_done(&self) -> bool {
        self.duty == Duty::Done
    }

    /// Records that the container is gone (removed, or found absent).
    pub(crate) fn mark_done(&mut self) {
        self.duty = Duty::Done;
        self.record = None;
    }
}

impl Session {
    /// A handle on a live container.
    pub(crate) fn new(
        engine: Engine,
        id: String,
        name: String,
        session_id: String,
        ownership: Ownership,
        owner: Option<Owner>,
    ) -> Self {
        Session {
            // The handle outlives the call that made it: no caller's bounds stay attached.
            engine: engine.detached(),
            id,
            name,
            session_id,
            ownership,
            owner,
            drift: Vec::new(),
            verification: None,
            replaced: None,
            expires_at: None,
            state: Arc::new(Mutex::new(State {
                duty: Duty::Holding,
                record: None,
            })),
            fs: OnceCell::new(),
            channel: ChannelSlot::default(),
            file_access: std::sync::Mutex::new(FileAccess::User),
            commands: CommandChannels::default(),
            oom_seen: std::sync::atomic::AtomicU64::new(0),
            last_metrics: std::sync::Mutex::new(None),
            configured: OnceCell::new(),
        }
    }

    /// The same handle, holding its own record `record` (a volume name) and reporting `drift`.
    pub fn with_record(self, record: Option<String>, drift: Vec<String>) -> Self {
        Session {
            drift,
            state: Arc::new(Mutex::new(State {
                duty: Duty::Holding,
                record,
            })),
            ..self
        }
    }

    /// Records this owning handle's duty as the process's (see [`process_duty`]), with
    /// the session's `removeAfterStopMs`, so that later handles of this process share it.
    /// An adopted handle is returned unchanged.
    pub fn into_process_duty(self, retention_ms: Option<u64>) -> Self {
        if self.owns() {
            let shared = Shared {
                ownership: self.ownership,
                state: self.state.clone(),
            };
            process_duty::register(&self.id, shared, retention_ms);
        }
        self
    }

    /// Arms this process's deadline timer for the session when `has_deadline` (it was
    /// created with `timeoutMs`, or carries a deadline record) and this process holds its
    /// duty (see [`deadline_timer`]). Returns the handle unchanged.
    pub fn with_deadline_timer(self, has_deadline: bool) -> Self {
        if has_deadline && self.owns() {
            deadline_timer::arm(&self.engine, &self.id);
        }
        self
    }

    /// The same handle, reporting `expires_at` (ms since the epoch).
    pub fn with_expires_at(self, expires_at: Option<u64>) -> Self {
        Session { expires_at, ..self }
    }

    /// The same handle, sharing the duty `shared` this process holds for its container.
    pub fn with_shared_duty(self, shared: Shared) -> Self {
        Session {
            ownership: shared.ownership,
            state: shared.state,
            ..self
        }
    }

    /// The same handle, reporting `verification`.
    pub fn with_verification(self, verification: crate::model::verification::Verification) -> Self {
        Session {
            verification: Some(verification),
            ..self
        }
    }

    /// The same handle, reporting what its recreation `replaced`.
    pub fn with_replaced(self, replaced: crate::ownership::replaced::Replaced) -> Self {
        Session {
            replaced: Some(replaced),
            ..self
        }
    }

    /// The volume name of this handle's own holder or duty record, while it holds one.
    pub async fn record(&self) -> Option<String> {
        self.state.lock().await.record.clone()
    }

    fn owns(&self) -> bool {
        matches!(self.ownership, Ownership::Created | Ownership::Inherited)
    }

    /// Whether this owning handle still holds the duty to remove: nobody handed it over to
    /// another process since (`docs/design.md#parked-sessions-and-handover`). The duty moved
    /// when the records' highest duty generation is another process's; then this handle
    /// acts as adopted, and this process forgets the duty. `GET /volumes?filters=...`.
    /// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`, `E_ABORTED`.
    async fn still_owns(&self, engine: &Engine) -> Result<bool> {
        if !self.owns() {
            return Ok(false);
        }
        let Some(me) = crate::model::identity::current() else {
            return Ok(true);
        };
        let recs = crate::ownership::records::of_container(engine, &self.id).await?;
        let moved = match crate::ownership::holders::duty(self.owner.as_ref(), &recs.holds) {
            crate::ownership::holders::Duty::Generation(r) => !r.is_of(me),
            crate::ownership::holders::Duty::Creator(_) => false,
        };
        if moved {
            process_duty::forget(&self.id);
        }
        Ok(!moved)
    }

    /// `E_SESSION_NOT_FOUND` for this session (its container is gone).
    pub(crate) fn not_found(&self) -> Error {
        Error::SessionNotFound {
            session_id: self.session_id.clone(),
            name: self.name.clone(),
        }
    }

    /// The rule of the owner-only calls (`setNetworkPolicy`, `setTimeout`): after removal
    /// (`removed`) `E_SESSION_NOT_FOUND`; on an adopted handle `E_SESSION_BUSY`
    /// (`reason: 'not-owner'`), both without an engine call.
    fn owner_only(&self, removed: bool) -> Result<()> {
        if removed {
            return Err(self.not_found());
        }
        if !self.owns() {
            return Err(self.not_owner());
        }
        Ok(())
    }

    /// `E_SESSION_BUSY` (`reason: 'not-owner'`) for this handle.
    fn not_owner(&self) -> Error {
        Error::SessionBusy {
            session_id: self.session_id.clone(),
            name: self.name.clone(),
            id: self.id.clone(),
            reason: "not-owner".into(),
            owner: self
                .owner
                .as_ref()
                .map(Owner::to_json)
                .unwrap_or(serde_json::Value::Null),
        }
    }

    /// Removes the container by id when this handle owns it (or `force`).
    ///
    /// An owning handle first reads the session's records (`GET /volumes?filters=...`): when
    /// another process took the duty over by a handover since, it acts as adopted (`not-owner`).
    /// `DELETE /containers/{id}?force=true&v=true`, then its records. Concurrent calls, through
    /// this handle or any other handle of this process sharing its duty, wait for each other:
    /// one engine call; later calls resolve `already-removed` without one.
    /// A failure rejects and keeps the duty (in this handle and in its record), so a retry,
    /// or a reaper run after this process died, removes. Adopted without `force`: no engine
    /// call at all, `not-owner` (see [`Session::release`] to drop this handle's hold).
    /// `cancel` aborts it (`E_ABORTED`, at once, whatever the engine does); the duty is then
    /// kept, as after any failure.
    /// Before the `DELETE` the handle's running commands are given up (a spawned process's
    /// `wait()` settles with `E_ENGINE`, see `exec::channel::CommandChannels`); after
    /// it the handle's file channel and command channels are closed, so no engine connection
    /// of this handle outlives the removal.
    /// Errors: `E_ABORTED`, `E_ENGINE`, `E_ENGINE_UNAVAILABLE` (the duty is kept; retry).
    pub async fn remove(&self, force: bool, cancel: &CancellationToken) -> Result<RemoveOutcome> {
        let engine = self.engine.within(cancel, "remove");
        engine.step(self.remove_within(&engine, force)).await
    }

    async fn remove_within(&self, engine: &Engine, force: bool) -> Result<RemoveOutcome> {
        let mut state = self.state.lock().await;
        if state.duty == Duty::Done {
            return Ok(RemoveOutcome {
                removed: false,
                reason: Some("already-removed"),
            });
        }
        if !force && !self.still_owns(engine).await? {
            return Ok(RemoveOutcome {
                removed: false,
                reason: Some("not-owner"),
            });
        }
        // Its commands are given up first: an engine exec whose output nobody reads would
        // otherwise hold the engine's removal for a reader.
        self.commands.removing();
        let outcome = crate::ownership::removal::remove_by_id(engine, &self.id).await?;
        state.mark_done();
        // A removed session holds nothing: its file channel's and command channels' engine
        // connections close here (not when the handle is collected), and its spawned
        // processes' `wait()` settles even with unread output.
        self.channel.close().await;
        self.commands.removed();
        process_duty::forget(&self.id);
        Ok(match outcome {
            Removal::Removed => RemoveOutcome {
                removed: true,
                reason: None,
            },
            Removal::Absent => RemoveOutcome {
                removed: false,
                reason: Some("absent"),
            },
        })
    }

    /// Drops this adopted handle's holder record, so the reaper no longer counts this
    /// process as holding the session. The container is never touched, except that this
    /// handle's file channel (an exec of `sh`, if one is open) ends.
    ///
    /// `DELETE /volumes/berth-holder-<id>-<token>` (this handle's own record only). An owner
    /// (created or inherited) cannot release: its duty is to remove (`owner`); one whose duty
    /// another process took over by a handover since acts as adopted (one
    /// `GET /volumes?filters=...` first) and drops its own record. Later calls,
    /// and calls after removal, resolve `already-released` without an engine call.
    /// `cancel` aborts it (`E_ABORTED`; the record is kept).
    /// Errors: `E_ABORTED`, `E_ENGINE`, `E_ENGINE_UNAVAILABLE` (the record is kept; retry).
    pub async fn release(&self, cancel: &CancellationToken) -> Result<ReleaseOutcome> {
        let engine = self.engine.within(cancel, "release");
        engine.step(self.release_within(&engine)).await
    }

    async fn release_within(&self, engine: &Engine) -> Result<ReleaseOutcome> {
        let mut state = self.state.lock().await;
        // An owner whose duty another process took over by a handover acts as adopted: it
        // may drop its own (duty) record.
        if self.owns() && state.duty != Duty::Done && self.still_owns(engine).await? {
            return Ok(ReleaseOutcome {
                released: false,
                reason: Some("owner"),
            });
        }
        let Some(record) = state.record.clone() else {
            return Ok(ReleaseOutcome {
                released: false,
                reason: Some("already-released"),
            });
        };
        hold::release(engine, &record).await?;
        state.record = None;
        // A released handle leaves nothing of its own running in the container: its file
        // channel's exec and its command channels' helpers end here, not when it is dropped.
        self.channel.close().await;
        self.commands.close();
        Ok(ReleaseOutcome {
            released: true,
            reason: None,
        })
    }

    /// Stops the container by id when this handle owns it (or `force`); an owning handle
    /// whose duty another process took over by a handover acts as adopted (one
    /// `GET /volumes?filters=...` first, as [`Session::remove`]).
    ///
    /// `GET /containers/{id}/json` and `POST /volumes/create` (a stop record, so that the
    /// stopped container is never reported as dead: see [`crate::ownership::stops`]), then
    /// `POST /containers/{id}/stop?t=<ceil(timeout_ms / 1000)>`. Adopted without `force`:
    /// no engine call, `not-owner`. An owner's stop of a session created with
    /// `removeAfterStopMs` arms this process's removal timer
    /// ([`process_duty::arm_after_stop`]). `cancel` aborts it (`E_ABORTED`, at once).
    /// Right before the `POST` the handle's running commands are given up, as by
    /// [`Session::remove`]: a spawned process whose output is unread settles with `E_ENGINE`
    /// (one that is read to its end settles with its exit code, as the stop ends it).
    /// `timeout_ms` (the grace period before SIGKILL) is checked first, with no engine call:
    /// 0 to 2147483647 (2^31 - 1, the engine takes whole seconds as a 32-bit integer).
    /// Errors: `E_INVALID_ARGUMENT` (`timeoutMs`), `E_ABORTED`, `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
    pub async fn stop(
        &self,
        force: bool,
        timeout_ms: Option<u64>,
        cancel: &CancellationToken,
    ) -> Result<StopOutcome> {
        validate_stop_timeout(timeout_ms)?;
        let engine = self.engine.within(cancel, "stop");
        engine
            .step(self.stop_within(&engine, force, timeout_ms))
            .await
    }

    async fn stop_within(
        &self,
        engine: &Engine,
        force: bool,
        timeout_ms: Option<u64>,
    ) -> Result<StopOutcome> {
        let state = self.state.lock().await;
        if state.duty == Duty::Done {
            return Ok(StopOutcome {
                stopped: false,
                reason: Some("already-removed"),
            });
        }
        if !force && !self.still_owns(engine).await? {
            return Ok(StopOutcome {
                stopped: false,
                reason: Some("not-owner"),
            });
        }
        // Its commands are given up first, as by `remove()`: a spawn whose output nobody reads
        // would otherwise wait for a reader of a process the stop ends.
        self.commands.give_up();
        // berth's own stop is recorded first, so that no reader takes it for a death.
        if let Some(c) = crate::engine::container::inspect(engine, &self.id).await? {
            let labels = c.labels();
            crate::ownership::stops::record(engine, &self.id, &labels).await?;
        }
        Ok(
            match calls::stop_by_id(
                engine,
                &self.id,
                timeout_ms.unwrap_or(DEFAULT_STOP_TIMEOUT_MS),
            )
            .await?
            {
                Stop::Stopped => {
                    if self.owns() {
                        process_duty::arm_after_stop(&self.engine, &self.id);
                    }
                    StopOutcome {
                        stopped: true,
                        reason: None,
                    }
                }
                Stop::Absent => StopOutcome {
                    stopped: false,
                    reason: Some("absent"),
                },
            },
        )
    }

    /// Sets the container's outbound network access; see [`networks::set_policy`].
    ///
    /// Only an owner (created or inherited) may change it: an adopted handle gets
    /// `E_SESSION_BUSY` (`reason: 'not-owner'`) without an engine call, since the container
    /// is another live process's, and so does an owner whose duty another process took over
    /// by a handover since (after one `GET /volumes?filters=...`, as [`Session::remove`]).
    /// After `remove()`: `E_SESSION_NOT_FOUND`.
    /// Errors: `E_INVALID_ARGUMENT` (see [`networks::set_policy`]), `E_SESSION_BUSY`,
    /// `E_SESSION_NOT_FOUND`, `E_SESSION_DEAD`, `E_ABORTED` (`cancel`), `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
    pub async fn set_network_policy(
        &self,
        policy: NetworkPolicy,
        cancel: &CancellationToken,
    ) -> Result<()> {
        let engine = self.engine.within(cancel, "setNetworkPolicy");
        let r = engine
            .step(self.set_network_policy_within(&engine, policy))
            .await;
        self.explained(&engine, r).await
    }

    async fn set_network_policy_within(
        &self,
        engine: &Engine,
        policy: NetworkPolicy,
    ) -> Result<()> {
        let state = self.state.lock().await;
        self.owner_only(state.duty == Duty::Done)?;
        if !self.still_owns(engine).await? {
            return Err(self.not_owner());
        }
        networks::set_policy(engine, &self.id, policy, || self.not_found()).await
    }

    /// Runs `argv` in the container, over the command channel when it can (see
    /// [`crate::exec::channel`]), else as an engine exec; see [`exec::exec`].
    ///
    /// Engine calls: none per command over the command channel (its helper is copied in with
    /// `PUT /containers/{id}/archive` and started as one exec per user, `POST /containers/{id}/exec`
    /// and `POST /exec/{id}/start`, on first use); otherwise (an image the helper cannot run, or
    /// `BERTH_COMMAND_CHANNEL=0`) `POST /containers/{id}/exec`, `POST /exec/{id}/start`,
    /// `GET /exec/{id}/json`. `opts` is checked first ([`ExecOptions::validate`]: `timeout_ms`
    /// at least 1 ms).
    ///
    /// Errors: `E_INVALID_ARGUMENT` (argv or options, before any engine call),
    /// `E_SESSION_NOT_FOUND` (the container is gone: an engine 404 on its id), `E_SESSION_DEAD` (it died: see `session::death`),
    /// `E_EXEC_TIMEOUT`, `E_ABORTED` (both with the output so far), `E_ENGINE` (operation
    /// `command channel`: the channel's helper died while the command ran),
    /// `E_ENGINE_UNAVAILABLE`.
    pub async fn exec(
        &self,
        argv: &[String],
        opts: &ExecOptions,
        cancel: &CancellationToken,
    ) -> Result<ExecOutput> {
        let channels = Some(&self.commands);
        let r = exec::exec_via(
            &self.engine,
            &self.id,
            &self.name,
            argv,
            opts,
            cancel,
            channels,
        )
        .await
        .map_err(|e| self.gone_is_not_found(e));
        let engine = self.engine.within(cancel, "exec");
        let mut out = self.explained(&engine, r).await?;
        if out.exit_code == 137 {
            out.oom_killed = self.new_oom_kill(cancel).await;
        }
        Ok(out)
    }

    /// This handle's command channels ([`crate::exec::channel`]): a create's setup commands
    /// use them too, so the channel they open serves the session's first commands.
    pub(crate) fn commands(&self) -> &CommandChannels {
        &self.commands
    }

    /// An engine 404 on this handle's container id means the session's container is gone:
    /// `E_SESSION_NOT_FOUND`, as every sibling operation reports it.
    fn gone_is_not_found(&self, e: Error) -> Error {
        match e {
            Error::Engine {
                status: Some(404), ..
            } => self.not_found(),
            e => e,
        }
    }

    /// The container's working directory, where an exec without `cwd` starts:
    /// `Config.WorkingDir` (the create's `workDir`, else the image's), `/` when neither set one.
    ///
    /// `GET /containers/{id}/json`. Errors: `E_SESSION_NOT_FOUND` (the container is gone),
    /// `E_ABORTED` (`cancel`), `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
    pub async fn working_directory(&self, cancel: &CancellationToken) -> Result<String> {
        let engine = self.engine.within(cancel, "workingDirectory");
        let found = crate::engine::container::inspect(&engine, &self.id)
            .await?
            .ok_or_else(|| Error::SessionNotFound {
                session_id: self.session_id.clone(),
                name: self.name.clone(),
            });
        let c = self.explained(&engine, found).await?;
        let dir = c
            .body
            .config
            .as_ref()
            .and_then(|cfg| cfg.working_dir.clone())
            .unwrap_or_default();
        Ok(if dir.is_empty() { "/".into() } else { dir })
    }

    /// The published host address of container port `port`/tcp (`"127.0.0.1:49153"`; a remote
    /// engine's host instead of a loopback address); see [`ports::host_address`]. `port` is
    /// checked first: 1 to 65535, no engine call.
    /// Engine calls: `GET /containers/{id}/json` (`NetworkSettings.Ports`), retried briefly
    /// while the engine has not filled the mapping.
    /// Errors: `E_INVALID_ARGUMENT` (port out of range or not published),
    /// `E_SESSION_NOT_FOUND`, `E_SESSION_DEAD`, `E_ABORTED` (`cancel`), `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
    pub async fn host_address(&self, port: i64, cancel: &CancellationToken) -> Result<String> {
        let port = validate_port("port", port)?;
        let engine = self.engine.within(cancel, "hostAddress");
        let r = engine
            .step(ports::host_address(
                &engine,
                &self.id,
                &self.session_id,
                &self.name,
                port,
            ))
            .await;
        self.explained(&engine, r).await
    }

    /// Starts `argv` and streams its output, over the command channel when it can (see
    /// [`crate::exec::channel`]); see [`stream::spawn`].
    ///
    /// Engine calls: none per command over the command channel (its helper is copied in with
    /// `PUT /containers/{id}/archive` and started as one exec per user, `POST /containers/{id}/exec`
    /// and `POST /exec/{id}/start`, on first use); otherwise (an image the helper cannot run, or
    /// `BERTH_COMMAND_CHANNEL=0`) `POST /containers/{id}/exec`, `POST /exec/{id}/start`,
    /// `GET /exec/{id}/json`. `opts` is checked first ([`ExecOptions::validate`]: `timeout_ms`
    /// at least 1 ms).
    ///
    /// Errors: `E_INVALID_ARGUMENT` (before any engine call), `E_SESSION_NOT_FOUND` (the
    /// container is gone), `E_ABORTED`, `E_ENGINE`, `E_ENGINE_UNAVAILABLE`. A timeout is the
    /// process's: its `wait` rejects with `E_EXEC_TIMEOUT`; a helper that died while it ran
    /// makes `wait` reject with `E_ENGINE` (operation `command channel`).
    pub async fn spawn(
        &self,
        argv: &[String],
        opts: &ExecOptions,
        cancel: CancellationToken,
    ) -> Result<ExecProcess> {
        let stdin = match &opts.stdin {
            Some(b) => Stdin::Bytes(b.clone().into()),
            None => Stdin::None,
        };
        let channels = Some(&self.commands);
        let explain = self.engine.within(&cancel, "spawn");
        let r = stream::spawn_via(
            &self.engine,
            &self.id,
            &self.name,
            argv,
            opts,
            stdin,
            cancel,
            channels,
        )
        .await
        .map_err(|e| self.gone_is_not_found(e));
        self.explained(&explain, r).await
    }

    fn target<'a>(&'a self, engine: &'a Engine) -> Target<'a> {
        Target {
            engine,
            id: &self.id,
            name: &self.name,
            session_id: &self.session_id,
        }
    }

    /// The filesystem context: probed once and cached when the probe's exec answered;
    /// a fallback answer (container stopped, no `sh`) is used once and probed again next time.
    async fn fs(&self, engine: &Engine) -> Result<FsContext> {
        if let Some(ctx) = self.fs.get() {
            return Ok(ctx.clone());
        }
        let (ctx, definitive) = context::probe(self.target(engine)).await?;
        if definitive {
            let _ = self.fs.set(ctx.clone());
        }
        Ok(ctx)
    }

    /// Who file calls act as; [`FileAccess::User`] unless set.
    pub fn file_access(&self) -> FileAccess {
        *self.file_access.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets who file calls act as (`files: 'user' | 'engine'`).
    pub fn set_file_access(&self, access: FileAccess) {
        *self.file_access.lock().unwrap_or_else(|e| e.into_inner()) = access;
    }

    /// Opens a file for streaming reads; `None` when absent. See [`files::open`]: the reader
    /// never hands out more than the size checked when the file was opened, nor more than
    /// `max_bytes` (`None`: no cap). `cancel` bounds the opening (later chunks are bounded by
    /// the reader's own cancel and the per-chunk timeout).
    /// Engine calls: for a non-root user an exec of `sh` as the user (`POST /containers/{id}/exec`,
    /// `POST /exec/{id}/start`); for root or [`FileAccess::Engine`],
    /// `GET /containers/{id}/archive?path=` (an exec of `cat` on tmpfs mounts).
    /// Errors: `E_INVALID_ARGUMENT` (a relative path, a directory), `E_PERMISSION_DENIED`,
    /// `E_FILE_TOO_LARGE`, `E_SESSION_NOT_FOUND`, `E_SESSION_DEAD`, `E_ABORTED`, `E_ENGINE`,
    /// `E_ENGINE_UNAVAILABLE`.
    pub async fn open_file(
        &self,
        path: &str,
        max_bytes: Option<u64>,
        cancel: &CancellationToken,
    ) -> Result<Option<FileReader>> {
        let engine = self.engine.within(cancel, "openFile");
        let r = engine
            .step(self.open_within(&engine, path, max_bytes))
            .await;
        self.explained(&engine, r).await
    }

    async fn open_within(
        &self,
        engine: &Engine,
        path: &str,
        max_bytes: Option<u64>,
    ) -> Result<Option<FileReader>> {
        files::normalize_path("path", path)?;
        // The archive path works on a stopped container: a dead one is reported instead.
        self.check_not_dead(engine).await?;
        let ctx = self.fs(engine).await?;
        files::open(
            self.target(engine),
            &ctx,
            path,
            self.file_access(),
            max_bytes,
        )
        .await
    }

    /// Reads a whole file of at most `max_bytes` bytes ([`files::DEFAULT_MAX_READ_BYTES`]
    /// when `None`); `None` when absent. A larger file is `E_FILE_TOO_LARGE` and the read stops
    /// there (the archive path knows the size from the tar header before the body; the exec
    /// paths from the size line; the host never takes more than `max_bytes` + one chunk).
    /// Files up to 1 MiB go through the session's channel ([`crate::files::channel`], as the
    /// container's user) when the image can run it; others, and whatever the channel cannot
    /// read, through [`files::open`].
    /// Engine calls: over the channel none per file (one exec of `sh` as the user,
    /// `POST /containers/{id}/exec` and `POST /exec/{id}/start`, opened on the first file call);
    /// otherwise, for a non-root user, an exec of `sh` (`cat`) as the user; for root or
    /// [`FileAccess::Engine`], `GET /containers/{id}/archive?path=` (an exec of `cat` on tmpfs
    /// mounts). `max_bytes` is whole bytes (the default is 64 MiB).
    /// `cancel` aborts it at once (`E_ABORTED`), whatever the engine does.
    /// Errors: `E_INVALID_ARGUMENT` (a relative path, a directory), `E_PERMISSION_DENIED`,
    /// `E_FILE_TOO_LARGE`, `E_SESSION_NOT_FOUND`, `E_SESSION_DEAD`, `E_ABORTED`, `E_ENGINE`,
    /// `E_ENGINE_UNAVAILABLE`.
    pub async fn read_file(
        &self,
        path: &str,
        max_bytes: Option<u64>,
        cancel: &CancellationToken,
    ) -> Result<Option<Vec<u8>>> {
        let engine = self.engine.within(cancel, "readFile");
        let max_bytes = max_bytes.unwrap_or(files::DEFAULT_MAX_READ_BYTES);
        let r = engine
            .step(self.read_within(&engine, path, max_bytes, cancel))
            .await;
        self.explained(&engine, r).await
    }

    async fn read_within(
        &self,
        engine: &Engine,
        path: &str,
        max_bytes: u64,
        cancel: &CancellationToken,
    ) -> Result<Option<Vec<u8>>> {
        let norm = files::normalize_path("path", path)?;
        match self
            .channel
            .read(engine, &self.id, &norm, max_bytes, cancel)
            .await?
        {
            Outcome::Done(bytes) => return Ok(bytes),
            Outcome::IsDir => {
                return Err(Error::invalid("path", format!("`{norm}` is a directory")))
            }
            Outcome::Fallback | Outcome::NoSpace => {}
        }
        match self.open_within(engine, path, Some(max_bytes)).await? {
            Some(mut r) => r.read_to_end().await.map(Some),
            None => Ok(None),
        }
    }

    /// Writes a file atomically, as [`files::write`] describes (owner, mode, temporary name).
    /// Files up to 1 MiB given as bytes go through the container user's command channel
    /// ([`channel::write_file`]: the helper writes it, as that user, also atomic, no engine
    /// call) when the helper runs there and the user may write there and owns an existing file;
    /// where no helper runs, files up to 16 KiB go through the session's shell file channel
    /// ([`crate::files::channel`], the same rules); anything else through [`files::write`]. Every path checks what it wrote before the rename
    /// ([`files::no_space`]).
    /// Errors: `E_INVALID_ARGUMENT` (a bad path or mode, a directory at `path`, a parent that
    /// is a file), `E_PERMISSION_DENIED`, `E_NO_SPACE` (a full filesystem: the old file is
    /// intact), `E_SESSION_NOT_FOUND`, `E_SESSION_DEAD`, `E_ABORTED`, `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
    pub async fn write_file(
        &self,
        path: &str,
        data: Data,
        mode: Option<u32>,
        cancel: &CancellationToken,
    ) -> Result<()> {
        let engine = self.engine.within(cancel, "writeFile");
        let r = engine
            .step(self.write_within(&engine, path, data, mode, cancel))
            .await;
        self.explained(&engine, r).await
    }

    async fn write_within(
        &self,
        engine: &Engine,
        path: &str,
        data: Data,
        mode: Option<u32>,
        cancel: &CancellationToken,
    ) -> Result<()> {
        let norm = files::normalize_path("path", path)?;
        let access = self.file_access();
        if mode.is_some_and(|m| m & 0o7000 != 0 && m <= 0o7777) {
            let ctx = self.fs(engine).await?;
            files::check_mode(mode, ctx.uid, access)?;
        } else {
            files::check_mode(mode, 0, access)?;
        }
        let mut data = data;
        if let Data::Spool(spool) = &mut data {
            // A small stream (the harness provider's `writeFile`) goes over the helper too.
            if spool.len() <= berth_agent::protocol::MAX_WRITE_BYTES as u64 {
                use tokio::io::AsyncReadExt;
                let mut bytes = Vec::with_capacity(spool.len() as usize);
                spool
                    .reader()
                    .await?
                    .read_to_end(&mut bytes)
                    .await
                    .map_err(|e| Error::Engine {
                        operation: "write file".into(),
                        status: None,
                        message: format!("reading the host spool: {e}"),
                    })?;
                if bytes.len() as u64 == spool.len() {
                    data = Data::Bytes(bytes.into());
                }
            }
        }
        let mut helper_tried = false;
        if let Data::Bytes(bytes) = &data {
            let over_helper =
                channel::write_file(&self.commands, engine, &self.id, &norm, mode, bytes).await?;
            helper_tried = over_helper.is_some();
            match over_helper {
                Some(WriteStatus::Ok) => return Ok(()),
                Some(WriteStatus::IsDir) => {
                    return Err(Error::invalid("path", format!("`{norm}` is a directory")))
                }
                Some(WriteStatus::NoSpace) => {
                    return Err(files::no_space::short(&norm, bytes.len() as u64))
                }
                // Refused (a file the user does not own, a mount point, ...): the engine's
                // paths below say why or do it; the shell channel would refuse it too.
                Some(WriteStatus::Fail) | None => {}
            }
        }
        if let (Data::Bytes(bytes), false) = (&data, helper_tried) {
            match self
                .channel
                .write(engine, &self.id, &norm, mode, bytes, cancel)
                .await?
            {
                Outcome::Done(()) => return Ok(()),
                Outcome::IsDir => {
                    return Err(Error::invalid("path", format!("`{norm}` is a directory")))
                }
                Outcome::NoSpace => {
                    return Err(Error::NoSpace {
                        path: norm,
                        bytes: bytes.len() as u64,
                        message: "the temporary file came out short of the size sent".into(),
                    })
                }
                Outcome::Fallback => {}
            }
        }
        // The archive path works on a stopped container: a dead one is reported instead.
        self.check_not_dead(engine).await?;
        let ctx = self.fs(engine).await?;
        files::write(self.target(engine), &ctx, path, data, mode, access, cancel).await
    }

    /// Commits this container to the template `berth-template:<key>`; see [`templates::commit`].
    /// Returns the image id. `cancel` aborts it (`E_ABORTED`).
    /// Engine calls: `POST /commit?container=<id>&repo=berth-template&tag=<key>&pause=true`
    /// (the container is paused meanwhile; the image keeps its labels and env).
    /// Errors: `E_INVALID_ARGUMENT` (a bad key), `E_ABORTED`, `E_ENGINE`,
    /// `E_ENGINE_UNAVAILABLE`.
    pub async fn commit_template(&self, key: &str, cancel: &CancellationToken) -> Result<String> {
        let engine = self.engine.within(cancel, "commitTemplate");
        let r = engine.step(templates::commit(&engine, &self.id, key)).await;
        self.explained(&engine, r).await
    }
}

/// The longest grace period of [`Session::stop`], in milliseconds: 2^31 - 1 (the engine takes
/// it in whole seconds as a 32-bit integer).
pub(crate) const MAX_STOP_TIMEOUT_MS: u64 = i32::MAX as u64;

/// The rule of [`Session::stop`]'s `timeout_ms`: 0 to [`MAX_STOP_TIMEOUT_MS`].
fn validate_stop_timeout(timeout_ms: Option<u64>) -> Result<()> {
    if timeout_ms.is_some_and(|t| t > MAX_STOP_TIMEOUT_MS) {
        return Err(Error::invalid(
            "timeoutMs",
            format!("must be a whole number of milliseconds from 0 to {MAX_STOP_TIMEOUT_MS}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod stop_timeout_tests {
    use super::*;

    #[test]
    fn the_stop_grace_period_is_checked_at_and_above_its_bound() {
        for t in [None, Some(0), Some(10_000), Some(MAX_STOP_TIMEOUT_MS)] {
            assert!(validate_stop_timeout(t).is_ok(), "{t:?}");
        }
        for t in [MAX_STOP_TIMEOUT_MS + 1, u64::MAX] {
            let e = validate_stop_timeout(Some(t)).unwrap_err();
            assert!(e.to_string().contains("`timeoutMs`"), "{e}");
        }
    }
}

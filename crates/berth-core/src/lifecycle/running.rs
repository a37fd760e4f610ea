//! Running: a new session is ready only when its container runs (`docs/design.md#readiness`).
//!
//! Every berth container runs an init as PID 1 (`HostConfig.Init`) whose only child is the
//! keep-alive entrypoint; the init exits with it. An entrypoint that cannot start
//! (`['/nope']`) or exits at once stops the container within milliseconds of the start, but
//! an inspect in those milliseconds still says running (the init lives): so a running
//! container is ready only once it has more than its init, the keep-alive, as the engine's
//! process list shows.

use std::time::Duration;

use crate::engine::connection::Engine;
use crate::engine::container::inspect;
use crate::engine::logs;
use crate::engine::top;
use crate::model::errors::{Error, Result};
use crate::session::Session;

/// Pause between two inspects while the engine's state does not tell yet whether the
/// container runs (see [`conclusive`]), in milliseconds.
const RECHECK_INTERVAL_MS: u64 = 20;
/// Inspects after the first while the state is not conclusive.
const RECHECKS: u32 = 25;
/// Checks of [`ensure_still_running`] after an engine error under the setup.
const SETTLE_CHECKS: u32 = 10;

/// Checks that `session`'s container runs, with one `GET /containers/{id}/json` and, when it
/// says running, one `GET /containers/{id}/top` (the keep-alive beside the init): no wait
/// before them. Only while that is not conclusive yet (the start not reflected: `created`,
/// Podman's `configured`/`initialized`, or `restarting`; or the init still alone) it checks
/// again, every [`RECHECK_INTERVAL_MS`], at most [`RECHECKS`] times.
///
/// When it is not running, also `GET /containers/{id}/logs` for the tail. Errors:
/// `E_SETUP_FAILED` (not running: `stage`, the public state, the exit code, the log tail),
/// `E_SESSION_NOT_FOUND` (gone), `E_ENGINE`, `E_ENGINE_UNAVAILABLE`, `E_ABORTED`.
pub(crate) async fn ensure_running(session: &Session, engine: &Engine, stage: &str) -> Result<()> {
    ensure_running_or(session, engine, stage, String::new()).await
}

/// After an engine error under the setup (a refused exec, a command channel whose helper went
/// away): whether the container stopped. The engine may still say running for a moment after
/// the keep-alive ended, so [`ensure_running`] is asked [`SETTLE_CHECKS`] times,
/// [`RECHECK_INTERVAL_MS`] apart. `Ok`: it still runs (the caller reports its own error).
/// Errors: those of [`ensure_running`].
pub(crate) async fn ensure_still_running(
    session: &Session,
    engine: &Engine,
    stage: &str,
) -> Result<()> {
    for _ in 0..SETTLE_CHECKS {
        ensure_running(session, engine, stage).await?;
        engine
            .step(async {
                tokio::time::sleep(Duration::from_millis(RECHECK_INTERVAL_MS)).await;
                Ok(())
            })
            .await?;
    }
    Ok(())
}

/// [`ensure_running`], reporting `reason` (the engine's refusal of the start) when not running.
pub(crate) async fn ensure_running_or(
    session: &Session,
    engine: &Engine,
    stage: &str,
    reason: String,
) -> Result<()> {
    let mut rechecks = 0;
    let c = loop {
        let Some(c) = inspect(engine, &session.id).await? else {
            return Err(Error::SessionNotFound {
                session_id: session.session_id.clone(),
                name: session.name.clone(),
            });
        };
        if conclusive(&c) && (!is_running(&c) || keep_alive_up(engine, &session.id).await?) {
            break c;
        }
        if rechecks == RECHECKS {
            break c;
        }
        rechecks += 1;
        engine
            .step(async {
                tokio::time::sleep(Duration::from_millis(RECHECK_INTERVAL_MS)).await;
                Ok(())
            })
            .await?;
    };
    let state = c.state.as_ref();
    if is_running(&c) {
        return Ok(());
    }
    Err(Error::NotRunning {
        session_id: session.session_id.clone(),
        name: session.name.clone(),
        stage: stage.to_string(),
        // The public word, as `peek` reports it (Podman's `stopped` is `exited`).
        state: crate::engine::container::spec_state(&c.raw_state).to_string(),
        exit_code: state.and_then(|s| s.exit_code).unwrap_or(-1),
        log: logs::tail(engine, &session.id).await,
        reason,
    })
}

/// Whether the inspect says the container runs (and is not restarting).
fn is_running(c: &crate::engine::container::Inspected) -> bool {
    let state = c.state.as_ref();
    state.and_then(|s| s.running) == Some(true) && state.and_then(|s| s.restarting) != Some(true)
}

/// Whether the keep-alive runs beside the init: more than one process in the container. An
/// engine that will not list them (the container just stopped) answers no: the next inspect
/// tells the state.
async fn keep_alive_up(engine: &Engine, id: &str) -> Result<bool> {
    Ok(top::process_count(engine, id).await?.is_some_and(|n| n > 1))
}

/// Whether an inspect after a start tells if the container runs: running, or ended
/// (`exited`, `dead`, `removing`, `paused`); not while the engine still reports the state
/// before the start or a restart.
fn conclusive(c: &crate::engine::container::Inspected) -> bool {
    let state = c.state.as_ref();
    if state.and_then(|s| s.restarting) == Some(true) {
        return false;
    }
    if state.and_then(|s| s.running) == Some(true) {
        return true;
    }
    !matches!(
        c.raw_state.as_str(),
        "created" | "configured" | "initialized" | "restarting" | ""
    )
}

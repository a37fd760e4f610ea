//! Running: a new session is ready only when its container runs (`docs/design.md#readiness`).
//!
//! Every berth container runs an init as PID 1 (`HostConfig.Init`) whose only child is the
//! keep-alive entrypoint; the init exits with it, so "the keep-alive is alive" is "the
//! container is running" once the init had a moment to notice. An entrypoint that cannot
//! start (`['/nope']`) or exits at once stops the container within milliseconds of the start.

use std::time::Duration;

use crate::engine::connection::Engine;
use crate::engine::container::inspect;
use crate::engine::logs;
use crate::model::errors::{Error, Result};
use crate::session::Session;

/// Pause between two inspects while the engine's state does not tell yet whether the
/// container runs (see [`conclusive`]), in milliseconds.
const RECHECK_INTERVAL_MS: u64 = 20;
/// Inspects after the first while the state is not conclusive.
const RECHECKS: u32 = 25;

/// Checks that `session`'s container runs, with one `GET /containers/{id}/json`: no wait
/// before it. Only while the engine's state is not conclusive yet (the start not reflected:
/// `created`, Podman's `configured`/`initialized`, or `restarting`) it inspects again, every
/// [`RECHECK_INTERVAL_MS`], at most [`RECHECKS`] times.
///
/// When it is not running, also `GET /containers/{id}/logs` for the tail. Errors:
/// `E_SETUP_FAILED` (not running: `stage`, the public state, the exit code, the log tail),
/// `E_SESSION_NOT_FOUND` (gone), `E_ENGINE`, `E_ENGINE_UNAVAILABLE`, `E_ABORTED`.
pub(crate) async fn ensure_running(session: &Session, engine: &Engine, stage: &str) -> Result<()> {
    ensure_running_or(session, engine, stage, String::new()).await
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
        if conclusive(&c) || rechecks == RECHECKS {
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
    let running = state.and_then(|s| s.running) == Some(true)
        && state.and_then(|s| s.restarting) != Some(true);
    if running {
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

//! Running: a new session is ready only when its container runs (`docs/design.md#readiness`).
//!
//! Every berth container runs an init as PID 1 (`HostConfig.Init`) whose only child is the
//! keep-alive entrypoint; the init exits with it, so "the keep-alive is alive" is "the
//! container is running" once the init had a moment to notice. An entrypoint that cannot
//! start (`['/nope']`) or exits at once stops the container within milliseconds of the start.

use std::time::Duration;

use tokio::time::Instant;

use crate::engine::container::inspect;
use crate::engine::logs;
use crate::model::errors::{Error, Result};
use crate::session::Session;

/// How long after the start a container must still run before it counts as ready, in
/// milliseconds (setup commands that take longer add no wait).
pub(crate) const READY_SETTLE_MS: u64 = 100;

/// Checks that `session`'s container runs, at least [`READY_SETTLE_MS`] after `started`.
///
/// `GET /containers/{id}/json`; when it is not running, also `GET /containers/{id}/logs` for
/// the tail. Errors: `E_SETUP_FAILED` (not running: `stage`, the state, the exit code, the
/// log tail), `E_SESSION_NOT_FOUND` (gone), `E_ENGINE`, `E_ENGINE_UNAVAILABLE`, `E_ABORTED`.
pub(crate) async fn ensure_running(
    session: &Session,
    engine: &crate::engine::connection::Engine,
    stage: &str,
    started: Instant,
) -> Result<()> {
    ensure_running_or(session, engine, stage, started, String::new()).await
}

/// [`ensure_running`], reporting `reason` (the engine's refusal of the start) when not running.
pub(crate) async fn ensure_running_or(
    session: &Session,
    engine: &crate::engine::connection::Engine,
    stage: &str,
    started: Instant,
    reason: String,
) -> Result<()> {
    let settle = started + Duration::from_millis(READY_SETTLE_MS);
    if Instant::now() < settle {
        engine
            .step(async {
                tokio::time::sleep_until(settle).await;
                Ok(())
            })
            .await?;
    }
    let Some(c) = inspect(engine, &session.id).await? else {
        return Err(Error::SessionNotFound {
            session_id: session.session_id.clone(),
            name: session.name.clone(),
        });
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
        state: if c.raw_state.is_empty() {
            "unknown".into()
        } else {
            c.raw_state.clone()
        },
        exit_code: state.and_then(|s| s.exit_code).unwrap_or(-1),
        log: logs::tail(engine, &session.id).await,
        reason,
    })
}

//! Process duty: the duty to remove a session belongs to the process, not to one handle.
//!
//! A process that created a session (or inherited it from a dead owner) holds its duty until
//! the container is removed. Every handle this process gets on that container afterwards (a
//! `resumeSession` in the same process, as the AI SDK's `HarnessAgent` does after
//! `detach()`) shares it: the same ownership, the same removal state, so `remove()`/`stop()`
//! act through any of them and removals through several of them coalesce into one engine
//! call (the later ones resolve `already-removed`, or `absent` when the engine had lost it).
//!
//! The registry is keyed by the full 64-hex container id, never by a name (a name can be
//! taken by another container once this one is gone). It also carries the session's
//! `removeAfterStopMs`, so that this process's own stop arms the timer that removes the
//! container when that retention ends ([`arm_after_stop`]).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex as StdMutex};
use std::time::{Duration, SystemTime};

use tokio::sync::Mutex;

use crate::engine::connection::Engine;
use crate::engine::container::{inspect, Facts};
use crate::model::lifetime;
use crate::ownership::removal;
use crate::session::{Ownership, State};

/// The duty one process holds for one container: how it holds it, and the removal state
/// every handle of this process on that container shares.
#[derive(Clone)]
pub struct Shared {
    /// `created` or `inherited`.
    pub ownership: Ownership,
    /// The removal state (duty done or not, the duty's record) shared by the handles.
    pub(crate) state: Arc<Mutex<State>>,
}

struct Entry {
    shared: Shared,
    /// The session's `removeAfterStopMs` (from its create spec or its labels).
    retention_ms: Option<u64>,
}

static REGISTRY: LazyLock<StdMutex<HashMap<String, Entry>>> =
    LazyLock::new(|| StdMutex::new(HashMap::new()));

fn registry() -> std::sync::MutexGuard<'static, HashMap<String, Entry>> {
    // A panic while holding this lock cannot leave the map half-written (single inserts and
    // removes), so a poisoned lock is still usable.
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Records that this process holds the duty for container `id`. Only owners
/// (`created`, `inherited`) are recorded; an adopted handle holds no duty.
pub(crate) fn register(id: &str, shared: Shared, retention_ms: Option<u64>) {
    if !matches!(shared.ownership, Ownership::Created | Ownership::Inherited) {
        return;
    }
    registry().insert(
        id.to_string(),
        Entry {
            shared,
            retention_ms,
        },
    );
}

/// The duty this process holds for container `id` (64-hex), if any.
pub(crate) fn lookup(id: &str) -> Option<Shared> {
    registry().get(id).map(|e| e.shared.clone())
}

/// Drops the duty for container `id` (it was removed, by this process or found gone).
pub(crate) fn forget(id: &str) {
    registry().remove(id);
}

/// The `removeAfterStopMs` of a container whose duty this process holds.
pub(crate) fn retention(id: &str) -> Option<u64> {
    registry().get(id).and_then(|e| e.retention_ms)
}

/// Slack added to a retention timer, in milliseconds, so that the engine's `FinishedAt`
/// (taken a moment after the stop call returned) is past when the timer looks.
pub(crate) const TIMER_SLACK_MS: u64 = 250;

/// After this process stopped container `id`, arms the timer that removes it once its
/// `removeAfterStopMs` has passed (nothing when it has none, or when this process holds no
/// duty for it). The timer is a Tokio task: it never keeps Node alive (a process that exits
/// first leaves the expiry to any later `reapOrphans`).
///
/// When it fires it inspects the container (`GET /containers/{id}/json`) and removes it
/// (`DELETE /containers/{id}?force=true&v=true`, then its records) only when it is still
/// stopped and its stop is older than the retention; a container started again meanwhile
/// is left alone (its next stop arms a new timer). The removal goes through the shared
/// removal state, so it coalesces with a `remove()` in flight on any handle.
pub(crate) fn arm_after_stop(engine: &Engine, id: &str) {
    let Some(retention_ms) = retention(id) else {
        return;
    };
    let engine = engine.clone();
    let id = id.to_string();
    tokio::spawn(async move {
        let mut wait = Duration::from_millis(retention_ms + TIMER_SLACK_MS);
        loop {
            tokio::time::sleep(wait).await;
            let Some(shared) = lookup(&id) else {
                return; // removed meanwhile
            };
            let mut state = shared.state.lock().await;
            if state.is_done() {
                return;
            }
            let Ok(found) = inspect(&engine, &id).await else {
                // The engine did not answer: try again a retention later at the latest.
                wait = Duration::from_millis(retention_ms.clamp(1_000, 60_000));
                continue;
            };
            let Some(c) = found else {
                state.mark_done();
                forget(&id);
                return;
            };
            let f = Facts::from_inspect(&c);
            let left = lifetime::time_left(
                Some(retention_ms),
                f.state,
                &f.finished_at,
                SystemTime::now(),
            );
            match left {
                None => return, // started again: its next stop arms a new timer
                Some(d) if d > Duration::ZERO => {
                    wait = d + Duration::from_millis(TIMER_SLACK_MS);
                }
                Some(_) => {
                    if removal::remove_by_id(&engine, &id).await.is_ok() {
                        state.mark_done();
                        forget(&id);
                    }
                    // A failed removal keeps the duty; any reapOrphans removes it as expired.
                    return;
                }
            }
        }
    });
}

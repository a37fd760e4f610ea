//! The owning process's deadline timer: removes its own sessions when their deadline
//! (`timeoutMs`, `setTimeout`) passes, whoever else looks at them.
//!
//! One Tokio task per session this process holds the duty for (created or inherited) that
//! has a deadline. The task sleeps until the deadline, reads the current deadline again
//! from the records ([`crate::ownership::deadlines`], so an extension by any handle is
//! honoured) and removes the container by id once it has passed. A Tokio task never keeps
//! Node alive: a process that exits first leaves the expiry to the container's own
//! keep-alive and to any later `reapOrphans`. Re-arming (after
//! `setTimeout`) replaces the task: the older one sees it is outdated and ends.
//!
//! It also remembers, per engine and container name, the sessions this process removed for
//! expiry, so that a later `resumeSession` of one answers `E_SESSION_NOT_FOUND` with
//! `details.reason: 'expired'` rather than a plain not-found.

use std::collections::{HashMap, HashSet};
use std::sync::{LazyLock, Mutex as StdMutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::engine::connection::Engine;
use crate::engine::container::{inspect, Facts};
use crate::ownership::{deadlines, removal};
use crate::session::process_duty::{self, TIMER_SLACK_MS};

/// The timer generation armed last for each container id.
static ARMED: LazyLock<StdMutex<HashMap<String, u64>>> =
    LazyLock::new(|| StdMutex::new(HashMap::new()));

/// `<engine endpoint>\n<container name>` of the sessions removed for expiry by this process.
static EXPIRED: LazyLock<StdMutex<HashSet<String>>> =
    LazyLock::new(|| StdMutex::new(HashSet::new()));

/// How many expired names [`remember_expired`] keeps before it starts over.
const EXPIRED_MAX: usize = 4096;

/// Milliseconds since the epoch, now.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Records that the session in container `name` was removed for expiry.
pub(crate) fn remember_expired(engine: &Engine, name: &str) {
    let mut set = EXPIRED.lock().unwrap_or_else(|p| p.into_inner());
    if set.len() >= EXPIRED_MAX {
        set.clear();
    }
    set.insert(format!("{}\n{name}", engine.endpoint));
}

/// Whether this process removed the session in container `name` for expiry.
pub(crate) fn was_expired(engine: &Engine, name: &str) -> bool {
    EXPIRED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .contains(&format!("{}\n{name}", engine.endpoint))
}

/// A new generation for container `id`; the tasks of older ones end when they wake.
fn next_generation(id: &str) -> u64 {
    let mut armed = ARMED.lock().unwrap_or_else(|p| p.into_inner());
    let g = armed.get(id).map_or(0, |g| g + 1);
    armed.insert(id.to_string(), g);
    g
}

fn is_current(id: &str, generation: u64) -> bool {
    ARMED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(id)
        .is_some_and(|g| *g == generation)
}

fn disarm(id: &str, generation: u64) {
    let mut armed = ARMED.lock().unwrap_or_else(|p| p.into_inner());
    if armed.get(id) == Some(&generation) {
        armed.remove(id);
    }
}

/// Arms this process's timer for container `id`: it fires at the session's current
/// deadline and removes the container (`DELETE /containers/{id}?force=true&v=true`, then
/// its records) once the deadline read again from the records has passed. Nothing when this
/// process holds no duty for `id`. Each wake-up reads `GET /volumes?filters=...` (the
/// deadline) and `GET /containers/{id}/json` (still there, its name); an engine that does
/// not answer is asked again later. The removal goes through the shared removal state, so
/// it coalesces with a `remove()` in flight on any handle of this process.
pub(crate) fn arm(engine: &Engine, id: &str) {
    if process_duty::lookup(id).is_none() {
        return;
    }
    let generation = next_generation(id);
    let engine = engine.clone();
    let id = id.to_string();
    tokio::spawn(async move {
        let mut wait = Duration::ZERO;
        loop {
            tokio::time::sleep(wait).await;
            if !is_current(&id, generation) {
                return;
            }
            let Some(shared) = process_duty::lookup(&id) else {
                return disarm(&id, generation); // removed meanwhile
            };
            let deadline = match deadlines::current(&engine, &id).await {
                Ok(Some(d)) => d,
                Ok(None) => return disarm(&id, generation),
                Err(_) => {
                    wait = Duration::from_secs(5);
                    continue;
                }
            };
            let now = now_ms();
            if deadline > now {
                wait = Duration::from_millis(deadline - now + TIMER_SLACK_MS);
                continue;
            }
            let mut state = shared.state.lock().await;
            if state.is_done() {
                return disarm(&id, generation);
            }
            let name = match inspect(&engine, &id).await {
                Ok(Some(c)) => Facts::from_inspect(&c).name,
                Ok(None) => {
                    state.mark_done();
                    process_duty::forget(&id);
                    return disarm(&id, generation);
                }
                Err(_) => {
                    wait = Duration::from_secs(5);
                    continue;
                }
            };
            if removal::remove_by_id(&engine, &id).await.is_ok() {
                remember_expired(&engine, &name);
                state.mark_done();
                process_duty::forget(&id);
                return disarm(&id, generation);
            }
            // A failed removal keeps the duty: try again a little later.
            wait = Duration::from_secs(5);
        }
    });
}

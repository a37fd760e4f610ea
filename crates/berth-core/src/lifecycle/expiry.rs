//! Expiry: removes a session whose deadline (`timeoutMs`, `setTimeout`) or `removeAfterStopMs`
//! has passed, whoever owns it.
//!
//! Used by `reapOrphans` and `resumeSession` (any berth process, any owner's liveness); the
//! owning process's own timer is in [`crate::session::process_duty::arm_after_stop`]. The rule itself
//! is [`crate::model::lifetime`].

use std::time::SystemTime;

use crate::engine::calls::Removal;
use crate::engine::connection::Engine;
use crate::engine::container::{inspect, Facts};
use crate::model::errors::Result;
use crate::ownership::removal::remove_by_id;
use crate::session::process_duty;

/// Inspects container `id` again and removes it when it is (still) expired.
///
/// Engine calls: `GET /containers/{id}/json`, `GET /volumes?filters=...` (its deadline), then when expired
/// `DELETE /containers/{id}?force=true&v=true` and `DELETE /volumes/{name}` for its records.
/// `Ok(true)`: removed by this call; `Ok(false)`: not expired any more (started again) or
/// gone already. A container that only inherited berth's labels is never touched.
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE` (the container is then still there).
pub(crate) async fn remove_if_expired(engine: &Engine, id: &str) -> Result<bool> {
    let Some(c) = inspect(engine, id).await? else {
        return Ok(false);
    };
    let f = Facts::from_inspect(&c);
    if f.managed.is_none() {
        return Ok(false);
    }
    let deadline = crate::ownership::deadlines::current(engine, id).await?;
    if !f.expired_at(SystemTime::now(), deadline) {
        return Ok(false);
    }
    if crate::ownership::provenance::not_berth_made(engine, &c, &f)
        .await?
        .is_some()
    {
        return Ok(false);
    }
    // Coalesce with a removal in flight through this process's own handles, if it owns it.
    let shared = process_duty::lookup(id);
    let mut state = match &shared {
        Some(s) => Some(s.state.lock().await),
        None => None,
    };
    if state.as_ref().is_some_and(|s| s.is_done()) {
        return Ok(false);
    }
    let removed = remove_by_id(engine, id).await? == Removal::Removed;
    crate::session::deadline_timer::remember_expired(engine, &f.name);
    if let Some(s) = state.as_mut() {
        s.mark_done();
    }
    process_duty::forget(id);
    Ok(removed)
}

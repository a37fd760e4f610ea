//! `session.setTimeout(ms)`: moves a session's deadline to now + `ms`.

use std::time::SystemTime;

use tokio_util::sync::CancellationToken;

use crate::engine::connection::Engine;
use crate::engine::container::{inspect, Facts};
use crate::model::errors::{Error, Result};
use crate::model::lifetime::validate_lifetime_ms;
use crate::ownership::{deadlines, records, removal};
use crate::session::{deadline_timer, keepalive, process_duty, Session};

impl Session {
    /// Moves the session's deadline to now + `ms` milliseconds (0 to
    /// [`crate::model::lifetime::MAX_RETENTION_MS`], 30 days), as e2b's `setTimeout` does; works on a session
    /// created without `timeoutMs` too (its default keep-alive then cannot stop by itself:
    /// the owner's timer and any reaper still remove it). Returns the new deadline, in ms
    /// since the epoch.
    ///
    /// Owner or inheritor only: an adopted handle gets `E_SESSION_BUSY` (`reason:
    /// 'not-owner'`) with no engine call, and so does an owner whose duty another process took
    /// over by a handover since (after one `GET /volumes?filters=...`). A removed session is `E_SESSION_NOT_FOUND`; one
    /// already past its deadline is removed by id and answered `E_SESSION_NOT_FOUND` with
    /// `details.reason: 'expired'` (an extension never revives it).
    ///
    /// Engine calls: `GET /containers/{id}/json`, `GET /volumes?filters=...` (its deadline
    /// records); when it runs berth's deadline keep-alive and is running, one exec as root
    /// rewriting the deadline file (see [`keepalive`]); `POST /volumes/create` (the next
    /// deadline record, compare-and-set). Then this process's timer is re-armed.
    /// Every request is bounded by `cancel` and a per-request timeout; an abort after the
    /// deadline record was written leaves that deadline in force.
    /// Errors: `E_INVALID_ARGUMENT`, `E_SESSION_BUSY`, `E_SESSION_NOT_FOUND`, `E_ENGINE`,
    /// `E_ENGINE_UNAVAILABLE`, `E_EXEC_TIMEOUT`, `E_ABORTED`.
    pub async fn set_timeout(&self, ms: u64, cancel: &CancellationToken) -> Result<u64> {
        validate_lifetime_ms("ms", ms)?;
        let engine = self.engine.within(cancel, "setTimeout");
        engine.step(self.set_timeout_within(&engine, ms)).await
    }

    async fn set_timeout_within(&self, engine: &Engine, ms: u64) -> Result<u64> {
        let mut state = self.state.lock().await;
        self.owner_only(state.is_done())?;
        if !self.still_owns(engine).await? {
            return Err(self.not_owner());
        }
        let Some(c) = inspect(engine, &self.id).await? else {
            state.mark_done();
            process_duty::forget(&self.id);
            return Err(self.not_found());
        };
        let f = Facts::from_inspect(&c);
        let all = records::list(engine, Some(&self.id)).await?;
        let current = deadlines::current_of(&all, &self.id).map(|(_, d)| d);
        if f.expired_at(SystemTime::now(), current) {
            removal::remove_by_id(engine, &self.id).await?;
            deadline_timer::remember_expired(&self.engine, &self.name);
            state.mark_done();
            process_duty::forget(&self.id);
            return Err(Error::SessionExpired {
                session_id: self.session_id.clone(),
                name: self.name.clone(),
            });
        }
        let deadline = deadline_timer::now_ms().saturating_add(ms);
        let labels = c.labels();
        if f.state == "running" {
            // A root container's channel is root's: the write goes over it when it can.
            let channels = c.runs_as_root().then(|| self.commands());
            keepalive::write_deadline(engine, &self.id, &self.name, &labels, deadline, channels)
                .await?;
        }
        deadlines::set(engine, &self.id, deadline, &labels).await?;
        drop(state);
        deadline_timer::arm(&self.engine, &self.id);
        Ok(deadline)
    }
}

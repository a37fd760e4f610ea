//! Usage figures of a session's container: one stats request per sample, the CPU share from
//! this handle's previous sample (`docs/design.md#usage-figures`).

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::engine::bounded::Deadline;
use crate::engine::connection::{status, unavailable, Engine};
use crate::engine::container::inspect;
use crate::engine::stats::{self, STATS_TIMEOUT_MS};
use crate::model::errors::{Error, Result};
use crate::model::metrics::Metrics;
use crate::session::Session;

/// The most a caller's `timeoutMs` for one sample may be (2^31 - 1 ms, as a timer's).
const MAX_METRICS_TIMEOUT_MS: u64 = i32::MAX as u64;

impl Session {
    /// One usage sample of the container (see [`Metrics`] for the figures and their units).
    ///
    /// The CPU share is measured since this handle's previous sample (`None` on its first);
    /// a paused container reports its figures with a CPU share of 0; a container berth
    /// stopped reports `running: false` and no figures.
    ///
    /// `GET /containers/{id}/stats?stream=false&one-shot=true`, bounded by `timeout_ms`
    /// (default and most [`STATS_TIMEOUT_MS`]) and `cancel`; the handle's first sample also
    /// reads the configured limits once (`GET /containers/{id}/json`). Errors:
    /// `E_INVALID_ARGUMENT` (`timeout_ms` not 1 to 2^31 - 1), `E_SESSION_DEAD` (the container
    /// died or was removed outside berth),
    /// `E_SESSION_NOT_FOUND` (it is gone), `E_ABORTED` (`cancel`), `E_ENGINE_UNAVAILABLE`
    /// (no answer within `timeout_ms`), `E_ENGINE`.
    pub async fn metrics(
        &self,
        timeout_ms: Option<u64>,
        cancel: &CancellationToken,
    ) -> Result<Metrics> {
        if let Some(ms) = timeout_ms.filter(|ms| !(1..=MAX_METRICS_TIMEOUT_MS).contains(ms)) {
            return Err(Error::invalid(
                "timeoutMs",
                format!(
                    "must be a whole number of milliseconds from 1 to {MAX_METRICS_TIMEOUT_MS}, got {ms}"
                ),
            ));
        }
        let per_request = timeout_ms.unwrap_or(STATS_TIMEOUT_MS).min(STATS_TIMEOUT_MS);
        let mut engine = self.engine.within(cancel, "metrics");
        if let Some(ms) = timeout_ms {
            engine = engine.until(Deadline {
                at: tokio::time::Instant::now() + Duration::from_millis(ms),
                error: unavailable::no_answer(&engine.endpoint, "GET /containers/{id}/stats", ms),
            });
        }
        let r = engine.step(self.sample(&engine, per_request)).await;
        let m = self.explained(&engine, r).await?;
        if !m.running {
            // Not running: dead (stopped outside berth) or stopped by berth.
            engine.step(self.check_not_dead(&engine)).await?;
        }
        *self.last_metrics.lock().unwrap_or_else(|e| e.into_inner()) =
            Some(m.clone()).filter(|m| m.running);
        Ok(m)
    }

    /// The sample itself; see [`Session::metrics`].
    async fn sample(&self, engine: &Engine, per_request: u64) -> Result<Metrics> {
        let configured = match self.configured.get() {
            Some(c) => *c,
            None => {
                let c = inspect(engine, &self.id)
                    .await?
                    .ok_or_else(|| self.not_found())?;
                *self
                    .configured
                    .get_or_init(|| async { stats::configured_of(&c) })
                    .await
            }
        };
        let answer = match stats::sample(engine, &self.id, per_request).await? {
            Ok(a) => a,
            Err(e) if status(&e) == Some(404) => return Err(self.not_found()),
            Err(e) => return Err(engine.error("read usage figures", e)),
        };
        let previous = self
            .last_metrics
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        Ok(stats::metrics_of(
            answer.as_ref(),
            previous.as_ref(),
            configured,
        ))
    }
}

//! Peek: inspect a session without side effects.

use std::collections::BTreeMap;

use tokio_util::sync::CancellationToken;

use crate::engine::connection::{Engine, EngineOptions};
use crate::engine::container::{inspect, Facts};
use crate::lifecycle::opening::{self, Opening};
use crate::model::errors::Result;
use crate::model::identity::liveness;
use crate::model::identity::Owner;
use crate::model::naming::DEFAULT_PREFIX;
use crate::ownership::holders::{lifecycle, verdict};
use crate::ownership::records;

/// What `peek` reports about a session's container (`PeekResult` in `docs/design.md#public-api`).
#[derive(Debug, Clone)]
pub struct PeekResult {
    /// Container name.
    pub name: String,
    /// Full container id.
    pub id: String,
    /// Session id from the labels (`None` when unmanaged).
    pub session_id: Option<String>,
    /// Whether berth manages it.
    pub managed: bool,
    /// Whether its setup finished.
    pub ready: bool,
    /// Public state (`docs/design.md#public-api`).
    pub state: &'static str,
    /// The engine's state string.
    pub raw_state: String,
    /// Image reference.
    pub image: String,
    /// Creation time (RFC 3339).
    pub created_at: String,
    /// Recorded owner.
    pub owner: Option<Owner>,
    /// `"8080/tcp"` -> `"127.0.0.1:49153"`.
    pub ports: BTreeMap<String, String>,
    /// When the session expires, in milliseconds since the epoch (its deadline from
    /// `timeoutMs`/`setTimeout`, or its stop plus `removeAfterStopMs`, whichever is first);
    /// `None`: never (see [`crate::model::lifetime::expires_at`]).
    pub expires_at: Option<u64>,
    /// Where a managed session stands: `held` (a live or unknown process holds it), `parked`
    /// (its owner is gone, its lifetime runs: kept until `expires_at`), `expired` (the next
    /// reap removes it), `orphan` (owner dead, no live holder, no lifetime: the next reap
    /// removes it); `None` for an unmanaged container (see [`crate::ownership::holders::lifecycle`]).
    pub lifecycle: Option<&'static str>,
    /// Why a managed session's container is not running when berth did not stop it (cause,
    /// exit code, time; no log tail: that is `E_SESSION_DEAD`'s), `None` otherwise (see
    /// [`crate::model::death::classify`]).
    pub death: Option<crate::model::death::Death>,
    /// The expiry by `removeAfterStopMs` alone, for [`PeekResult::with_deadline`].
    stop_expiry: Option<u64>,
}

/// Looks the session up; `Ok(None)` when no container has its name.
///
/// Never creates, starts, unpauses or pulls anything. Engine calls:
/// `GET /containers/{name}/json`, and for a managed container `GET /volumes?filters=...`
/// (its records: readiness, holders, deadline).
/// Every request is bounded by `cancel` and a per-request timeout.
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_ABORTED`, `E_ENGINE`.
pub async fn peek(
    session_id: &[u16],
    prefix: Option<&[u16]>,
    engine_opts: &EngineOptions,
    cancel: &CancellationToken,
) -> Result<Option<PeekResult>> {
    let Opening { name, .. } = Opening::new(session_id, prefix, DEFAULT_PREFIX)?;
    let engine = opening::connect(engine_opts, cancel, "peek").await?;
    let Some(c) = inspect(&engine, &name).await? else {
        return Ok(None);
    };
    let f = Facts::from_inspect(&c);
    let recs = match &f.managed {
        Some(_) => records::of_container(&engine, &f.id).await?,
        None => Default::default(),
    };
    Ok(Some(PeekResult::of(&engine, f, &recs)))
}

impl PeekResult {
    /// The result for inspected facts and the readiness read from the records. Published
    /// ports are addresses reachable from this process (a remote engine's host, not 127.0.0.1).
    pub(crate) fn from_facts(engine: &Engine, f: Facts, ready: bool) -> Self {
        let stop_expiry = f.expires_at(None);
        PeekResult {
            expires_at: stop_expiry,
            stop_expiry,
            lifecycle: None,
            death: None,
            owner: f.owner().cloned(),
            session_id: f.managed.as_ref().map(|m| m.session_id.clone()),
            managed: f.managed.is_some(),
            ready: ready && f.managed.is_some(),
            name: f.name,
            id: f.id,
            state: f.state,
            raw_state: f.raw_state,
            image: f.image,
            created_at: f.created_at,
            ports: f
                .ports
                .into_iter()
                .map(|(k, v)| (k, engine.reachable_address(&v)))
                .collect(),
        }
    }

    /// The result for a container and its records: readiness, deadline and lifecycle.
    pub(crate) fn of(engine: &Engine, f: Facts, recs: &records::ContainerRecords) -> Self {
        let lifecycle = f.managed.is_some().then(|| {
            let deadline = recs.deadline_ms();
            let expired = f.expired_at(std::time::SystemTime::now(), deadline);
            let pending = f.expires_at(deadline).is_some();
            let v = verdict(recs.ready, f.owner(), &recs.holds, pending, &liveness);
            lifecycle(expired, v)
        });
        let death = f
            .managed
            .is_some()
            .then(|| crate::model::death::classify(&f.end, recs.own_stops()))
            .flatten();
        PeekResult {
            lifecycle,
            death,
            ..PeekResult::from_facts(engine, f, recs.ready).with_deadline(recs.deadline_ms())
        }
    }

    /// The same result, with the session's current deadline record `deadline_ms` (ms since
    /// the epoch) taken into `expires_at`.
    pub(crate) fn with_deadline(self, deadline_ms: Option<u64>) -> Self {
        let expires_at = match (self.stop_expiry, deadline_ms) {
            (Some(a), Some(d)) => Some(a.min(d)),
            (a, d) => a.or(d),
        };
        PeekResult { expires_at, ..self }
    }
}

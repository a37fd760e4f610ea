//! Metrics of a container by id, without a session handle: what `berth top` samples for each
//! session of its selection (`docs/design.md#usage-figures`).

use tokio_util::sync::CancellationToken;

use crate::engine::connection::{status, EngineOptions};
use crate::engine::container::inspect;
use crate::engine::stats::{self, STATS_TIMEOUT_MS};
use crate::lifecycle::opening;
use crate::model::errors::{Error, Result};
use crate::model::metrics::Metrics;

/// One usage sample of container `id` (its full 64-hex id, as `listSessions` gives it);
/// `Ok(None)` when no container has that id (any more). `previous`: the caller's previous
/// sample of the same container, for the CPU share and the limits (without it, the limits
/// are read from the container's inspect first). A container that is not running gives
/// `running: false` and no figures (the listing tells why).
///
/// `GET /containers/{id}/stats?stream=false&one-shot=true` (and `GET /containers/{id}/json`
/// without `previous`), each bounded by `cancel` and its per-request timeout.
/// Errors: `E_INVALID_ARGUMENT` (not a full container id), `E_ENGINE_UNAVAILABLE`,
/// `E_ABORTED`, `E_ENGINE`.
pub async fn container_metrics(
    id: &str,
    previous: Option<&Metrics>,
    engine_opts: &EngineOptions,
    cancel: &CancellationToken,
) -> Result<Option<Metrics>> {
    if id.len() != 64 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::invalid(
            "id",
            "must be a full container id (64 hex digits)",
        ));
    }
    let engine = opening::connect(engine_opts, cancel, "metrics").await?;
    let configured = match previous {
        Some(p) if p.running => p.configured(),
        _ => match inspect(&engine, id).await? {
            Some(c) => stats::configured_of(&c),
            None => return Ok(None),
        },
    };
    match stats::sample(&engine, id, STATS_TIMEOUT_MS).await? {
        Ok(answer) => Ok(Some(stats::metrics_of(
            answer.as_ref(),
            previous.filter(|p| p.running),
            configured,
        ))),
        Err(e) if status(&e) == Some(404) => Ok(None),
        Err(e) => Err(engine.error("read usage figures", e)),
    }
}

//! Usage figures (`session.metrics()`, `berth top`): the sample as it crosses into JavaScript,
//! and `containerMetrics`, the sample of a container by id that `berth top` takes.

use napi::bindgen_prelude::PromiseRaw;
use napi::Env;
use napi_derive::napi;

use super::cancel::{token_of, CancelToken};
use super::engine_options::BindingEngineOptions;
use super::errors::js;
use berth_core::Metrics;

/// One usage sample, flat (the TypeScript layer nests it). Every figure is `null` when the
/// engine did not report it; all are `null` when `running` is false.
#[napi(object)]
pub struct BindingMetrics {
    /// Whether the container is running (or paused).
    pub running: bool,
    /// When the engine took the sample, in ms since the epoch.
    pub sampled_at_ms: Option<f64>,
    /// CPU share since the previous sample, in percent of one CPU.
    pub cpu_percent: Option<f64>,
    /// CPU time used since the container started, in nanoseconds.
    pub cpu_time_ns: Option<f64>,
    /// CPUs online for the container.
    pub online_cpus: Option<u32>,
    /// CPU limit, in CPUs.
    pub cpu_limit: Option<f64>,
    /// Memory in use (page cache's inactive files left out), in bytes.
    pub memory_bytes: Option<f64>,
    /// Memory limit the engine reports, in bytes.
    pub memory_limit_bytes: Option<f64>,
    /// Processes.
    pub pids: Option<f64>,
    /// Pids limit.
    pub pids_limit: Option<f64>,
    /// Bytes received, all interfaces.
    pub network_rx_bytes: Option<f64>,
    /// Bytes sent, all interfaces.
    pub network_tx_bytes: Option<f64>,
    /// Bytes read from block devices.
    pub block_read_bytes: Option<f64>,
    /// Bytes written to block devices.
    pub block_write_bytes: Option<f64>,
}

fn f(v: Option<u64>) -> Option<f64> {
    v.map(|n| n as f64)
}

/// A JS number back to a count (a previous sample handed back by `berth top`): whole and
/// not negative, else dropped.
fn u(v: Option<f64>) -> Option<u64> {
    v.filter(|n| n.is_finite() && *n >= 0.0 && n.fract() == 0.0 && *n <= u64::MAX as f64)
        .map(|n| n as u64)
}

impl From<Metrics> for BindingMetrics {
    fn from(m: Metrics) -> Self {
        BindingMetrics {
            running: m.running,
            sampled_at_ms: m.sampled_at_ms,
            cpu_percent: m.cpu_percent,
            cpu_time_ns: f(m.cpu_time_ns),
            online_cpus: m.online_cpus,
            cpu_limit: m.cpu_limit,
            memory_bytes: f(m.memory_bytes),
            memory_limit_bytes: f(m.memory_limit_bytes),
            pids: f(m.pids),
            pids_limit: f(m.pids_limit),
            network_rx_bytes: f(m.network_rx_bytes),
            network_tx_bytes: f(m.network_tx_bytes),
            block_read_bytes: f(m.block_read_bytes),
            block_write_bytes: f(m.block_write_bytes),
        }
    }
}

impl From<BindingMetrics> for Metrics {
    fn from(b: BindingMetrics) -> Self {
        Metrics {
            running: b.running,
            sampled_at_ms: b.sampled_at_ms.filter(|t| t.is_finite()),
            cpu_percent: b.cpu_percent,
            cpu_time_ns: u(b.cpu_time_ns),
            online_cpus: b.online_cpus,
            cpu_limit: b.cpu_limit.filter(|c| c.is_finite() && *c > 0.0),
            memory_bytes: u(b.memory_bytes),
            memory_limit_bytes: u(b.memory_limit_bytes),
            pids: u(b.pids),
            pids_limit: u(b.pids_limit),
            network_rx_bytes: u(b.network_rx_bytes),
            network_tx_bytes: u(b.network_tx_bytes),
            block_read_bytes: u(b.block_read_bytes),
            block_write_bytes: u(b.block_write_bytes),
        }
    }
}

/// Options of `BindingSession.metrics`.
#[napi(object)]
pub struct BindingMetricsOptions {
    /// Bound of the whole call, in milliseconds. @default 10000
    pub timeout_ms: Option<f64>,
}

/// One usage sample of container `id` (full 64-hex id); `null` when it is gone. `previous`:
/// the caller's previous sample of it (CPU share, limits). Internal: `berth top`.
///
/// Engine API: `GET /containers/{id}/stats?stream=false&one-shot=true`, and
/// `GET /containers/{id}/json` without `previous`. Errors: `E_INVALID_ARGUMENT`,
/// `E_ENGINE_UNAVAILABLE`, `E_ABORTED`, `E_ENGINE`.
#[napi(ts_return_type = "Promise<BindingMetrics | null>")]
pub fn container_metrics<'e>(
    env: &'e Env,
    id: String,
    previous: Option<BindingMetrics>,
    options: Option<BindingEngineOptions>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'e, Option<BindingMetrics>>> {
    let cancel = token_of(token);
    let engine = options
        .map(BindingEngineOptions::into_core)
        .transpose()
        .map(Option::unwrap_or_default);
    let previous: Option<Metrics> = previous.map(Into::into);
    env.spawn_future(async move {
        let engine = js(engine)?;
        js(berth_core::container_metrics(&id, previous.as_ref(), &engine, &cancel).await)
            .map(|m| m.map(Into::into))
    })
}

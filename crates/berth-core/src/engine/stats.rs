//! Stats: one usage sample of a container (`GET /containers/{id}/stats?stream=false&one-shot=true`)
//! and how its answer becomes berth's [`Metrics`] (`docs/design.md#usage-figures`).
//!
//! `one-shot=true` asks for one reading without the engine's own second CPU reading: Docker
//! otherwise waits about a second more (1-2 s in all, measured on 20.10) to fill `precpu_stats`,
//! and Podman 4.3 never fills it. The CPU share therefore comes from two samples the caller
//! keeps (the previous [`Metrics`] of the same handle or `berth top` loop), and from the
//! engine's `precpu_stats` only when an engine sends a real one anyway.

use bollard::models::ContainerStatsResponse;
use futures_util::StreamExt;

use crate::engine::bounded::READ_TIMEOUT_MS;
use crate::engine::connection::Engine;
use crate::engine::Answer;
use crate::model::errors::Result;
use crate::model::lifetime::parse_engine_time;
use crate::model::metrics::{cpu_percent, Configured, CpuMark, Metrics};

/// Per-request timeout of a stats request, in milliseconds: Docker answers a one-shot request
/// at its collector's next tick (up to about 1 s after the request, measured on 20.10), so
/// the read timeout leaves ample room.
pub(crate) const STATS_TIMEOUT_MS: u64 = READ_TIMEOUT_MS;

/// At most this many network interfaces and block I/O entries are summed: an answer with
/// more is not the engine's usual (a container has a handful of each) and the rest is left out.
pub(crate) const MAX_ENTRIES: usize = 1024;

/// One usage sample of container `id`: `Ok(None)` inside when the engine sent no sample (Podman
/// answers 200 with an empty body for a stopped container); the engine's own error otherwise
/// (404: gone).
///
/// `GET /containers/{id}/stats?stream=false&one-shot=true`, bounded by `timeout_ms` (callers
/// pass [`STATS_TIMEOUT_MS`] or less). Errors (outer): `E_ENGINE_UNAVAILABLE`, the scope's
/// `E_ABORTED` or deadline error.
pub(crate) async fn sample(
    engine: &Engine,
    id: &str,
    timeout_ms: u64,
) -> Result<Answer<Option<ContainerStatsResponse>>> {
    let options = bollard::query_parameters::StatsOptions {
        stream: false,
        one_shot: true,
    };
    engine
        .call("GET /containers/{id}/stats", timeout_ms, async {
            // One answer: the stream is dropped (its connection closed) after the first item.
            let mut answers = engine.docker.stats(id, Some(options));
            answers.next().await.transpose()
        })
        .await
}

/// The limits container `c` was created with (its `HostConfig`).
pub(crate) fn configured_of(c: &crate::engine::container::Inspected) -> Configured {
    let h = c.body.host_config.as_ref();
    Configured::from_host_config(
        h.and_then(|h| h.nano_cpus),
        h.and_then(|h| h.cpu_quota),
        h.and_then(|h| h.cpu_period),
        h.and_then(|h| h.pids_limit),
    )
}

/// The figures of one stats answer (`None`: no sample, the container is not running).
/// `previous`: the caller's previous sample of the same container, for the CPU share; its
/// absence falls back to the engine's `precpu_stats` when they are real (a `preread` time
/// and a CPU count), else the share is `None`. `configured`: the container's limits from its
/// inspect. Pure.
pub(crate) fn metrics_of(
    answer: Option<&ContainerStatsResponse>,
    previous: Option<&Metrics>,
    configured: Configured,
) -> Metrics {
    let Some(s) = answer else {
        return Metrics::not_running();
    };
    // Docker's answer for a stopped container: the zero time and no figures.
    let Some(at) = s.read.as_deref().and_then(parse_engine_time) else {
        return Metrics::not_running();
    };
    let sampled_at_ms = at
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs_f64() * 1000.0);
    let cpu = s.cpu_stats.as_ref();
    let cpu_time_ns = cpu
        .and_then(|c| c.cpu_usage.as_ref())
        .and_then(|u| u.total_usage);
    let online_cpus = cpu.and_then(|c| c.online_cpus).or_else(|| {
        cpu.and_then(|c| c.cpu_usage.as_ref())
            .and_then(|u| u.percpu_usage.as_ref())
            .map(|p| p.len())
            .filter(|&n| n > 0)
            .and_then(|n| u32::try_from(n).ok())
    });
    let now = cpu_time_ns
        .zip(sampled_at_ms)
        .map(|(cpu_ns, at_ms)| CpuMark { cpu_ns, at_ms });
    let engine_before = engine_precpu(s);
    let cpu_percent = now.and_then(|now| {
        previous
            .and_then(CpuMark::of)
            .and_then(|before| cpu_percent(before, now))
            .or_else(|| engine_before.and_then(|before| cpu_percent(before, now)))
    });
    let mem = s.memory_stats.as_ref();
    let memory_bytes = mem.and_then(|m| {
        let usage = m.usage?;
        let stats = m.stats.as_ref();
        // As `docker stats`: cgroup v1 reports `total_inactive_file`, v2 `inactive_file`.
        let inactive = stats
            .and_then(|st| st.get("total_inactive_file"))
            .or_else(|| stats.and_then(|st| st.get("inactive_file")))
            .copied()
            .filter(|&v| v < usage)
            .unwrap_or(0);
        Some(usage - inactive)
    });
    let memory_limit_bytes = mem.and_then(|m| m.limit).filter(|&l| l > 0);
    let pids = s.pids_stats.as_ref();
    let pids_limit = pids
        .and_then(|p| p.limit)
        .filter(|&l| l > 0 && l != u64::MAX)
        .or(configured.pids);
    let (network_rx_bytes, network_tx_bytes) = match s.networks.as_ref() {
        Some(nets) => {
            let take = || nets.values().take(MAX_ENTRIES);
            (
                sum(take().map(|n| n.rx_bytes)),
                sum(take().map(|n| n.tx_bytes)),
            )
        }
        None => (None, None),
    };
    let (block_read_bytes, block_write_bytes) = match s
        .blkio_stats
        .as_ref()
        .and_then(|b| b.io_service_bytes_recursive.as_ref())
    {
        Some(entries) => {
            let of = |op: &str| -> u64 {
                entries
                    .iter()
                    .take(MAX_ENTRIES)
                    .filter(|e| e.op.as_deref().is_some_and(|o| o.eq_ignore_ascii_case(op)))
                    .filter_map(|e| e.value)
                    .fold(0u64, u64::saturating_add)
            };
            (Some(of("read")), Some(of("write")))
        }
        None => (None, None),
    };
    Metrics {
        running: true,
        sampled_at_ms,
        cpu_percent,
        cpu_time_ns,
        online_cpus,
        cpu_limit: configured.cpus,
        memory_bytes,
        memory_limit_bytes,
        pids: pids.and_then(|p| p.current),
        pids_limit,
        network_rx_bytes,
        network_tx_bytes,
        block_read_bytes,
        block_write_bytes,
    }
}

/// The engine's earlier CPU reading in the same answer, when it is a real one: a `preread`
/// time after 1970 and a non-zero CPU time (Docker without `one-shot`; Podman sends zeros).
fn engine_precpu(s: &ContainerStatsResponse) -> Option<CpuMark> {
    let at = s.preread.as_deref().and_then(parse_engine_time)?;
    let cpu_ns = s
        .precpu_stats
        .as_ref()?
        .cpu_usage
        .as_ref()?
        .total_usage
        .filter(|&n| n > 0)?;
    let at_ms = at.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs_f64() * 1000.0;
    Some(CpuMark { cpu_ns, at_ms })
}

/// The sum of the reported values, saturating; `None` when none was reported.
fn sum(values: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    values.flatten().fold(None, |acc: Option<u64>, v| {
        Some(acc.unwrap_or(0).saturating_add(v))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real answers of this machine's engines (cgroup v1), one container each, created
    /// `--memory 64m --pids-limit 100 --cpus 1.5` running `yes > /dev/null`: Docker 20.10.24
    /// (`stream=false` alone, then `one-shot=true`, then paused and stopped) and Podman 4.3.1.
    fn fixture(name: &str) -> ContainerStatsResponse {
        let text = match name {
            "docker-running" => include_str!("stats_fixtures/docker-running.json"),
            "docker-oneshot" => include_str!("stats_fixtures/docker-oneshot.json"),
            "docker-paused" => include_str!("stats_fixtures/docker-paused.json"),
            "docker-stopped" => include_str!("stats_fixtures/docker-stopped.json"),
            "podman-running" => include_str!("stats_fixtures/podman-running.json"),
            "podman-oneshot" => include_str!("stats_fixtures/podman-oneshot.json"),
            "podman-paused" => include_str!("stats_fixtures/podman-paused.json"),
            _ => unreachable!(),
        };
        serde_json::from_str(text).unwrap()
    }

    const LIMITS: Configured = Configured {
        cpus: Some(1.5),
        pids: Some(100),
    };

    #[test]
    fn docker_answer_with_the_engines_precpu() {
        let m = metrics_of(Some(&fixture("docker-running")), None, LIMITS);
        assert!(m.running);
        assert_eq!(m.cpu_time_ns, Some(1_643_622_544));
        // 295_498_991 ns of CPU over 1_005.207 ms between `preread` and `read`.
        let share = m.cpu_percent.unwrap();
        assert!((share - 29.397).abs() < 0.01, "{share}");
        assert_eq!(m.online_cpus, Some(2));
        assert_eq!(m.cpu_limit, Some(1.5));
        // cgroup v1: usage less total_inactive_file (0 here).
        assert_eq!(m.memory_bytes, Some(458_752));
        assert_eq!(m.memory_limit_bytes, Some(67_108_864));
        assert_eq!(m.pids, Some(2));
        assert_eq!(m.pids_limit, Some(100));
        assert_eq!(m.network_rx_bytes, Some(586));
        assert_eq!(m.network_tx_bytes, Some(0));
        // Reported, and empty: nothing read or written.
        assert_eq!(m.block_read_bytes, Some(0));
        assert_eq!(m.block_write_bytes, Some(0));
        let at = m.sampled_at_ms.unwrap();
        assert!((at - 1_796_609_989_904.564).abs() < 0.01, "{at}");
    }

    #[test]
    fn one_shot_answers_need_the_previous_sample_for_cpu() {
        // The CPU time between the two readings over the time between them: 209_400_748 ns
        // over 1_005.746 ms on Docker, 6_734_605 ns over 50.081 ms on Podman (this 2-CPU
        // machine was busy: `yes` got a fraction of a CPU).
        for (first, second, expected) in [
            ("docker-running", "docker-oneshot", 20.8204),
            ("podman-running", "podman-oneshot", 13.4474),
        ] {
            let one = metrics_of(Some(&fixture(second)), None, LIMITS);
            assert!(one.running);
            assert_eq!(one.cpu_percent, None, "{second}: no earlier reading");
            let before = metrics_of(Some(&fixture(first)), None, LIMITS);
            let two = metrics_of(Some(&fixture(second)), Some(&before), LIMITS);
            let share = two.cpu_percent.unwrap();
            assert!((share - expected).abs() < 0.01, "{second}: {share}");
        }
    }

    #[test]
    fn podman_answer() {
        let m = metrics_of(Some(&fixture("podman-running")), None, LIMITS);
        assert!(m.running);
        // Podman's `precpu_stats` are zeros and its `preread` the zero time: no share.
        assert_eq!(m.cpu_percent, None);
        assert_eq!(m.cpu_time_ns, Some(2_068_395_945));
        assert_eq!(m.online_cpus, Some(2));
        // No page-cache breakdown: `usage` as sent.
        assert_eq!(m.memory_bytes, Some(376_832));
        assert_eq!(m.memory_limit_bytes, Some(67_108_864));
        assert_eq!(m.pids, Some(2));
        // Podman does not report the pids limit: the configured one.
        assert_eq!(m.pids_limit, Some(100));
        assert_eq!(
            metrics_of(
                Some(&fixture("podman-running")),
                None,
                Configured::default()
            )
            .pids_limit,
            None
        );
        assert_eq!(m.network_rx_bytes, Some(586));
        assert_eq!(m.network_tx_bytes, Some(832));
        assert_eq!(m.block_read_bytes, Some(0));
    }

    #[test]
    fn paused_containers_report_figures_and_their_cpu_share_is_zero() {
        for paused in ["docker-paused", "podman-paused"] {
            // The same reading a second earlier: a paused container's CPU time stands still.
            let mut before = metrics_of(Some(&fixture(paused)), None, LIMITS);
            before.sampled_at_ms = before.sampled_at_ms.map(|t| t - 1000.0);
            let m = metrics_of(Some(&fixture(paused)), Some(&before), LIMITS);
            assert!(m.running);
            assert_eq!(m.cpu_percent, Some(0.0), "{paused}");
            assert!(m.memory_bytes.is_some() && m.pids.is_some());
        }
    }

    #[test]
    fn stopped_containers_have_no_figures() {
        // Docker: the zero time and zeros; Podman: an empty answer (no sample).
        let m = metrics_of(Some(&fixture("docker-stopped")), None, LIMITS);
        assert_eq!(m, Metrics::not_running());
        assert_eq!(metrics_of(None, None, LIMITS), Metrics::not_running());
        assert!(!m.running && m.memory_bytes.is_none() && m.pids.is_none());
    }

    #[test]
    fn unreported_fields_are_none_and_sums_saturate() {
        let s: ContainerStatsResponse = serde_json::from_str(
            r#"{"read":"2026-12-07T02:19:49.5Z","memory_stats":{"usage":1000,"stats":{"inactive_file":400}},
                "networks":{"eth0":{"rx_bytes":18446744073709551615},"eth1":{"rx_bytes":5}},
                "blkio_stats":{"io_service_bytes_recursive":[
                  {"major":8,"minor":0,"op":"Read","value":4096},{"major":8,"minor":0,"op":"Write","value":8192},
                  {"major":8,"minor":0,"op":"Total","value":12288},{"major":8,"minor":16,"op":"read","value":1}]}}"#,
        )
        .unwrap();
        let m = metrics_of(Some(&s), None, Configured::default());
        assert!(m.running);
        // cgroup v2: usage less inactive_file.
        assert_eq!(m.memory_bytes, Some(600));
        assert_eq!(m.memory_limit_bytes, None);
        assert_eq!(m.cpu_time_ns, None);
        assert_eq!(m.cpu_percent, None);
        assert_eq!(m.online_cpus, None);
        assert_eq!(m.cpu_limit, None);
        assert_eq!(m.pids, None);
        assert_eq!(m.pids_limit, None);
        assert_eq!(m.network_rx_bytes, Some(u64::MAX));
        assert_eq!(m.network_tx_bytes, None);
        assert_eq!(m.block_read_bytes, Some(4097));
        assert_eq!(m.block_write_bytes, Some(8192));
        // An inactive count above the usage is not subtracted.
        let s: ContainerStatsResponse = serde_json::from_str(
            r#"{"read":"2026-12-07T02:19:49Z","memory_stats":{"usage":100,"stats":{"total_inactive_file":400}}}"#,
        )
        .unwrap();
        assert_eq!(
            metrics_of(Some(&s), None, Configured::default()).memory_bytes,
            Some(100)
        );
    }
}

//! Metrics: one sample of a session container's usage figures (`session.metrics()`,
//! `berth top`), and the rule that turns two samples into a CPU share
//! (`docs/design.md#usage-figures`). A figure the engine did not report is `None`, never 0.

/// One usage sample of a container, as `session.metrics()` reports it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metrics {
    /// Whether the engine sampled a running (or paused) container; `false`: it is not running
    /// (stopped by berth or never started) and every figure is `None`.
    pub running: bool,
    /// When the engine took the sample (its `read` time), in ms since the epoch.
    pub sampled_at_ms: Option<f64>,
    /// CPU share since the previous sample (this handle's, else the engine's own `precpu`),
    /// in percent of one CPU (200: two CPUs busy); `None` on a first sample with no earlier one.
    pub cpu_percent: Option<f64>,
    /// The CPU time the container's processes used since it started, in nanoseconds.
    pub cpu_time_ns: Option<u64>,
    /// The CPUs the engine reports online for the container (`online_cpus`).
    pub online_cpus: Option<u32>,
    /// The container's CPU limit in CPUs (`cpus` at create: `HostConfig.NanoCpus`, or
    /// `CpuQuota / CpuPeriod`); `None`: no limit.
    pub cpu_limit: Option<f64>,
    /// Memory in use, in bytes, the page cache's inactive files left out as `docker stats`
    /// does (`usage - total_inactive_file` on cgroup v1, `usage - inactive_file` on v2).
    pub memory_bytes: Option<u64>,
    /// The memory limit the engine reports, in bytes (the host's memory when none was set).
    pub memory_limit_bytes: Option<u64>,
    /// Processes (tasks) in the container's cgroup.
    pub pids: Option<u64>,
    /// The pids limit (the engine's, else the container's configured `PidsLimit`); `None`: no limit.
    pub pids_limit: Option<u64>,
    /// Bytes received, summed over the container's interfaces.
    pub network_rx_bytes: Option<u64>,
    /// Bytes sent, summed over the container's interfaces.
    pub network_tx_bytes: Option<u64>,
    /// Bytes read from block devices (the cgroup's `io_service_bytes_recursive` reads).
    pub block_read_bytes: Option<u64>,
    /// Bytes written to block devices (the cgroup's `io_service_bytes_recursive` writes).
    pub block_write_bytes: Option<u64>,
}

/// The limits a container was created with, read once per handle from its inspect (the
/// stats answer lacks the CPU limit, and Podman's the pids limit).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Configured {
    /// CPUs (`NanoCpus / 1e9`, else `CpuQuota / CpuPeriod`); `None`: no limit.
    pub cpus: Option<f64>,
    /// `PidsLimit` when positive; `None`: no limit.
    pub pids: Option<u64>,
}

impl Configured {
    /// The limits from `HostConfig`'s `NanoCpus`, `CpuQuota`, `CpuPeriod` and `PidsLimit`
    /// (0, negative or absent: no limit).
    pub(crate) fn from_host_config(
        nano_cpus: Option<i64>,
        cpu_quota: Option<i64>,
        cpu_period: Option<i64>,
        pids_limit: Option<i64>,
    ) -> Self {
        let cpus = match (nano_cpus, cpu_quota, cpu_period) {
            (Some(n), _, _) if n > 0 => Some(n as f64 / 1e9),
            (_, Some(q), Some(p)) if q > 0 && p > 0 => Some(q as f64 / p as f64),
            _ => None,
        };
        Configured {
            cpus,
            pids: pids_limit.filter(|&p| p > 0).map(|p| p as u64),
        }
    }
}

impl Metrics {
    /// The figures of a container that is not running: every one `None`.
    pub(crate) fn not_running() -> Self {
        Metrics::default()
    }

    /// The limits this sample carries, to fill in the next one without another inspect.
    pub fn configured(&self) -> Configured {
        Configured {
            cpus: self.cpu_limit,
            pids: self.pids_limit,
        }
    }
}

/// A CPU reading: cumulative CPU time and when it was taken.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CpuMark {
    /// Cumulative CPU time, in nanoseconds.
    pub cpu_ns: u64,
    /// When, in ms since the epoch.
    pub at_ms: f64,
}

impl CpuMark {
    /// The mark of a sample, when it has both figures.
    pub(crate) fn of(m: &Metrics) -> Option<CpuMark> {
        Some(CpuMark {
            cpu_ns: m.cpu_time_ns?,
            at_ms: m.sampled_at_ms?,
        })
    }
}

/// The CPU share between `before` and `now`, in percent of one CPU: the CPU time used over
/// the wall time between them. `None` when `now` is not after `before` or the CPU time went
/// backwards (another container under the same id, or a restarted one: its count restarted).
pub(crate) fn cpu_percent(before: CpuMark, now: CpuMark) -> Option<f64> {
    let wall_ms = now.at_ms - before.at_ms;
    if wall_ms.is_nan() || wall_ms <= 0.0 || now.cpu_ns < before.cpu_ns {
        return None;
    }
    let used_ms = (now.cpu_ns - before.cpu_ns) as f64 / 1e6;
    Some(used_ms / wall_ms * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_share_is_cpu_time_over_wall_time() {
        let a = CpuMark {
            cpu_ns: 1_000_000_000,
            at_ms: 10_000.0,
        };
        let b = CpuMark {
            cpu_ns: 1_500_000_000,
            at_ms: 11_000.0,
        };
        assert_eq!(cpu_percent(a, b), Some(50.0));
        // Two CPUs busy for 0.5 s.
        let c = CpuMark {
            cpu_ns: 2_500_000_000,
            at_ms: 11_500.0,
        };
        assert_eq!(cpu_percent(b, c), Some(200.0));
        // Paused: no CPU time between the samples.
        assert_eq!(
            cpu_percent(
                c,
                CpuMark {
                    at_ms: 12_000.0,
                    ..c
                }
            ),
            Some(0.0)
        );
        // Not after, or counting backwards: no share.
        assert_eq!(cpu_percent(b, a), None);
        assert_eq!(cpu_percent(b, b), None);
        assert_eq!(
            cpu_percent(
                b,
                CpuMark {
                    cpu_ns: 1,
                    at_ms: 12_000.0
                }
            ),
            None
        );
    }

    #[test]
    fn configured_limits_from_host_config() {
        let c = Configured::from_host_config(Some(1_500_000_000), None, None, Some(100));
        assert_eq!(c.cpus, Some(1.5));
        assert_eq!(c.pids, Some(100));
        let c = Configured::from_host_config(Some(0), Some(50_000), Some(100_000), Some(0));
        assert_eq!(c.cpus, Some(0.5));
        assert_eq!(c.pids, None);
        let c = Configured::from_host_config(None, Some(-1), Some(100_000), Some(-1));
        assert_eq!(c, Configured::default());
    }
}

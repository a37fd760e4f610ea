//! Cause of death: why a session's container is not running when berth did not stop it
//! (see `docs/design.md#cause-of-death`). Pure rules over what one inspect and the records say.

use serde_json::{json, Value};

use crate::model::lifetime::parse_engine_time;

/// `details.cause` of `E_SESSION_DEAD`: the kernel's memory limit killed the container.
pub(crate) const OOM_KILLED: &str = "oom-killed";
/// The container's init exited by itself (exit code below 128).
pub(crate) const EXITED: &str = "exited";
/// A signal ended the container (`docker kill`, a stop berth did not ask for, a signal
/// from inside): exit code 128 + signal.
pub(crate) const KILLED: &str = "killed";
/// The engine (or its host) restarted under the container: exit code 255 with no exit of
/// its own, which Docker and Podman record for a task they lost.
pub(crate) const ENGINE_RESTARTED: &str = "engine-restarted";
/// The container is gone, and berth did not remove it (its records are still there).
pub(crate) const REMOVED_OUTSIDE: &str = "removed-outside";

/// How much later than a deadline a keep-alive's exit still counts as that deadline's, in
/// milliseconds (the keep-alive checks its deadline every few seconds; the engine's clock and
/// the host's may differ a little).
pub(crate) const DEADLINE_EXIT_SLACK_MS: u64 = 60_000;

/// How a stopped container ended, as its inspect reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct EndState {
    /// berth's state word (`exited`, `dead`, `running`, ...).
    pub state: String,
    /// `State.OOMKilled`.
    pub oom_killed: bool,
    /// `State.ExitCode`.
    pub exit_code: i64,
    /// `State.StartedAt` (RFC 3339; the zero time when it never started).
    pub started_at: String,
    /// `State.FinishedAt` (RFC 3339; the zero time when it never stopped).
    pub finished_at: String,
}

/// Why a session's container is not running, when berth did not stop it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Death {
    /// One of [`OOM_KILLED`], [`EXITED`], [`KILLED`], [`ENGINE_RESTARTED`], [`REMOVED_OUTSIDE`].
    pub cause: &'static str,
    /// The container's exit code (`None` when it is gone).
    pub exit_code: Option<i64>,
    /// When it stopped (RFC 3339 as the engine wrote it; `None` when it is gone or unknown).
    pub finished_at: Option<String>,
    /// The tail of its log (stdout and stderr, lossy UTF-8, at most 4 KiB); empty when not read.
    pub log_tail: String,
}

impl Death {
    /// A container that is gone although its records are still there.
    pub fn removed_outside() -> Self {
        Death {
            cause: REMOVED_OUTSIDE,
            exit_code: None,
            finished_at: None,
            log_tail: String::new(),
        }
    }

    /// `{ cause, exitCode, finishedAt, logTail }` (`null` for what is unknown).
    pub fn to_json(&self) -> Value {
        json!({
            "cause": self.cause,
            "exitCode": self.exit_code,
            "finishedAt": self.finished_at,
            "logTail": self.log_tail,
        })
    }
}

fn ms(time: &str) -> Option<u64> {
    let t = parse_engine_time(time)?;
    Some(t.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis() as u64)
}

/// What berth knows about its own stops of a container: the latest stop it asked for
/// (`stop_recorded_ms`, ms since the epoch) and the session's deadline (`deadline_ms`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct OwnStops {
    /// When berth last asked the engine to stop the container (its stop record).
    pub stop_recorded_ms: Option<u64>,
    /// The session's current deadline (its keep-alive exits by itself after it).
    pub deadline_ms: Option<u64>,
}

/// Why the container ended, or `None` when it is not dead: it runs (or is paused, restarting,
/// being removed), it never started, or berth stopped it (a stop recorded after its last
/// start, or an exit at or after its deadline).
pub(crate) fn classify(end: &EndState, own: OwnStops) -> Option<Death> {
    if !matches!(end.state.as_str(), "exited" | "dead") {
        return None;
    }
    let finished = ms(&end.finished_at);
    let started = ms(&end.started_at);
    if started.is_none() && finished.is_none() {
        // Never started (a created container): nothing died.
        return None;
    }
    if let (Some(stop), Some(start)) = (own.stop_recorded_ms, started) {
        if stop >= start {
            return None;
        }
    }
    if let (Some(deadline), Some(end_ms)) = (own.deadline_ms, finished) {
        if deadline <= end_ms.saturating_add(DEADLINE_EXIT_SLACK_MS) {
            return None;
        }
    }
    let cause = if end.oom_killed {
        OOM_KILLED
    } else if end.exit_code == 255 {
        ENGINE_RESTARTED
    } else if end.exit_code > 128 {
        KILLED
    } else {
        EXITED
    };
    Some(Death {
        cause,
        exit_code: Some(end.exit_code),
        finished_at: finished.map(|_| end.finished_at.clone()),
        log_tail: String::new(),
    })
}

/// The `oom_kill` count in a cgroup memory file: `memory.events` (cgroup v2) or
/// `memory.oom_control` (cgroup v1), both `key value` lines. `None` when absent.
pub(crate) fn oom_kill_count(text: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let mut it = l.split_whitespace();
        (it.next()? == "oom_kill").then_some(())?;
        it.next()?.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "2026-12-06T16:00:00Z";
    const END: &str = "2026-12-06T16:10:00Z";
    const START_MS: u64 = 1_796_572_800_000;

    fn ended(exit_code: i64, oom: bool) -> EndState {
        EndState {
            state: "exited".into(),
            oom_killed: oom,
            exit_code,
            started_at: START.into(),
            finished_at: END.into(),
        }
    }

    #[test]
    fn causes() {
        let none = OwnStops::default();
        let cause = |e: EndState| classify(&e, none).map(|d| d.cause);
        assert_eq!(cause(ended(137, true)), Some(OOM_KILLED));
        assert_eq!(cause(ended(137, false)), Some(KILLED));
        assert_eq!(cause(ended(143, false)), Some(KILLED));
        assert_eq!(cause(ended(0, false)), Some(EXITED));
        assert_eq!(cause(ended(3, false)), Some(EXITED));
        assert_eq!(cause(ended(255, false)), Some(ENGINE_RESTARTED));
        let d = classify(&ended(3, false), none).unwrap();
        assert_eq!(d.exit_code, Some(3));
        assert_eq!(d.finished_at.as_deref(), Some(END));
    }

    #[test]
    fn alive_or_never_started_is_not_dead() {
        for state in ["running", "paused", "restarting", "removing", "created"] {
            let e = EndState {
                state: state.into(),
                ..ended(137, true)
            };
            assert_eq!(classify(&e, OwnStops::default()), None, "{state}");
        }
        let never = EndState {
            state: "exited".into(),
            started_at: "0001-01-01T00:00:00Z".into(),
            finished_at: "0001-01-01T00:00:00Z".into(),
            ..Default::default()
        };
        assert_eq!(classify(&never, OwnStops::default()), None);
    }

    #[test]
    fn berth_stops_are_not_deaths() {
        assert_eq!(ms(START), Some(START_MS));
        let stopped_by_berth = OwnStops {
            stop_recorded_ms: Some(START_MS + 1),
            deadline_ms: None,
        };
        assert_eq!(classify(&ended(143, false), stopped_by_berth), None);
        // A stop recorded before the last start is an earlier run's.
        let earlier = OwnStops {
            stop_recorded_ms: Some(START_MS - 1),
            deadline_ms: None,
        };
        assert_eq!(
            classify(&ended(137, false), earlier).map(|d| d.cause),
            Some(KILLED)
        );
        // The keep-alive's own exit at the deadline.
        let expired = OwnStops {
            stop_recorded_ms: None,
            deadline_ms: ms(END),
        };
        assert_eq!(classify(&ended(0, false), expired), None);
        // A deadline far after the death does not explain it.
        let later = OwnStops {
            stop_recorded_ms: None,
            deadline_ms: ms(END).map(|m| m + 3_600_000),
        };
        assert_eq!(
            classify(&ended(0, false), later).map(|d| d.cause),
            Some(EXITED)
        );
    }

    #[test]
    fn oom_counts() {
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n";
        let v2 = "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 0\n";
        assert_eq!(oom_kill_count(v1), Some(3));
        assert_eq!(oom_kill_count(v2), Some(2));
        assert_eq!(oom_kill_count("oom_kill_disable 0\n"), None);
        assert_eq!(oom_kill_count("oom_kill x"), None);
        assert_eq!(oom_kill_count(""), None);
    }
}

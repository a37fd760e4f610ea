//! Lifetime: when a stopped session has expired (`removeAfterStopMs`). Pure: no engine calls.
//!
//! A session created with `removeAfterStopMs: n` carries `n` in its labels (see
//! [`crate::model::labels::REMOVE_AFTER_STOP_MS`]). Once its container has been stopped (engine
//! state `exited`, or `created` with a `State.FinishedAt`, or `dead`) for `n` milliseconds,
//! it has expired: whoever finds it so (the owning process's own timer, any `reapOrphans`) removes
//! it (a listing shows it `expires_at` in the past and changes nothing), whatever its owner's liveness. A running, paused or restarting
//! container never expires by this rule; starting it again resets the clock (a new stop sets a
//! new `FinishedAt`).

use std::time::{Duration, SystemTime};

/// The longest retention a session may carry, in milliseconds (30 days).
pub const MAX_RETENTION_MS: u64 = 30 * 24 * 60 * 60 * 1000;

/// The rule of every lifetime in milliseconds (a create's `removeAfterStopMs` and `timeoutMs`,
/// `setTimeout`'s `ms`): 0 to [`MAX_RETENTION_MS`] (30 days). The one range and message; the
/// layers above check only that the value is a whole number.
///
/// # Errors
/// `E_INVALID_ARGUMENT` naming `field` when `ms` is over [`MAX_RETENTION_MS`].
pub fn validate_lifetime_ms(field: &str, ms: u64) -> crate::Result<()> {
    if ms > MAX_RETENTION_MS {
        return Err(crate::Error::invalid(
            field,
            format!(
                "must be a whole number of milliseconds from 0 to {MAX_RETENTION_MS} (30 days)"
            ),
        ));
    }
    Ok(())
}

/// The file inside the container holding the current deadline, in whole seconds since the
/// epoch (rounded up), written as root (directory `0755`, file `0644`: a non-root session
/// user reads it and cannot change it) on create and on every `setTimeout`.
pub(crate) const DEADLINE_FILE: &str = "/run/berth/deadline";

/// The directory of [`DEADLINE_FILE`] (a tmpfs when the root filesystem is read-only).
pub(crate) const DEADLINE_DIR: &str = "/run/berth";

/// The deadline keep-alive, a POSIX `sh` script: it waits in one-second steps and exits (so
/// the container stops, under its init process) once the deadline in [`DEADLINE_FILE`] has
/// passed. Before the file exists (the session is still being set up) it keeps running;
/// a later deadline written there is honoured at the next step.
///
/// Its loop never forks, so that a fork bomb at the pids limit cannot end it (a shell whose
/// fork fails exits: "can't fork"): it reads the deadline file with the `read` builtin,
/// keeps time by `/proc/uptime` (read with `read`; the epoch second is taken once, with
/// `date +%s`, at its start) and waits with `read -t 1` on a pipe it holds open both ways
/// (made by one `: |` at its start and reopened `<>` through `/proc/self/fd/0`, so it never
/// ends nor fills). It checks once at its start that such a wait lasts (a shell without
/// `read -t`, such as `dash`, runs the same loop under `bash` when the image has it). Where
/// none of this works (no `read -t`, no `/proc/uptime`, no `date`) it falls back to the loop
/// of `date +%s` and `sleep 1`, which forks, as before. Its clock counts from its start and
/// never runs ahead of the epoch: it stops at the deadline or within a second after it.
pub(crate) const KEEPALIVE_SCRIPT: &str = r#"s='f=/run/berth/deadline; m=0
k() { read u _ </proc/uptime && u=$((${u%%.*}*100+1${u#*.}-100)); }
: | {
if command exec 3<>/proc/self/fd/0 && t=$(date +%s) && k && a=$u &&
  { read -t 1 x <&3; k; [ $((u-a)) -ge 50 ]; }; then m=1; fi 2>/dev/null
while :; do
  d=; if [ -r "$f" ]; then read -r d <"$f"; fi
  if [ $m = 1 ]; then k; n=$((t+(u-a)/100)); else n=$(date +%s); fi
  if [ -n "$d" ] && [ "$n" -ge "$d" ] 2>/dev/null; then exit 0; fi
  if [ $m = 1 ]; then read -t 1 x <&3; else sleep 1; fi
done; }'
read -t 0 x </dev/null 2>/dev/null
if [ $? = 2 ] && command -v bash >/dev/null 2>&1; then exec bash -c "$s" berth-keepalive; fi
eval "$s""#;

/// The keep-alive entrypoint of a session created with `timeoutMs` and no custom entrypoint.
pub(crate) fn deadline_keepalive() -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        KEEPALIVE_SCRIPT.into(),
        "berth-keepalive".into(),
    ]
}

/// A deadline in ms since the epoch as the keep-alive reads it: whole seconds, rounded up
/// (the container never stops before the deadline).
pub(crate) fn deadline_secs(deadline_ms: u64) -> u64 {
    deadline_ms.div_ceil(1000)
}

/// The reason a removal for expiry reports (`reapOrphans`).
pub(crate) const EXPIRED: &str = "expired";

/// Parses an engine timestamp (`State.FinishedAt`): RFC 3339 with up to nanosecond
/// fractions, in UTC (`Z`) or with a numeric offset (`+01:00`, as Podman may send).
/// `None` for the engine's zero time (`0001-01-01T00:00:00Z`: never finished), for times
/// before 1970, and for anything unreadable.
pub(crate) fn parse_engine_time(s: &str) -> Option<SystemTime> {
    let s = s.trim();
    if s.is_empty() || s.starts_with("0001-") {
        return None;
    }
    if let Some(utc) = s.strip_suffix('Z').or_else(|| s.strip_suffix('z')) {
        return humantime::parse_rfc3339(&format!("{utc}Z")).ok();
    }
    // A numeric offset: the last six characters are `+hh:mm` or `-hh:mm`.
    let (base, offset) = s.split_at(s.len().checked_sub(6)?);
    let sign = match offset.as_bytes().first()? {
        b'+' => 1i64,
        b'-' => -1i64,
        _ => return None,
    };
    let hours: u64 = offset.get(1..3)?.parse().ok()?;
    let minutes: u64 = offset.get(4..6)?.parse().ok()?;
    if offset.as_bytes().get(3) != Some(&b':') || hours > 23 || minutes > 59 {
        return None;
    }
    let local = humantime::parse_rfc3339(&format!("{base}Z")).ok()?;
    let shift = Duration::from_secs(hours * 3600 + minutes * 60);
    // Local time = UTC + offset, so UTC = local - offset.
    if sign > 0 {
        local.checked_sub(shift)
    } else {
        local.checked_add(shift)
    }
}

/// Since when a container in engine state `state` (berth's state word: `exited`, `created`,
/// `dead`, `running`, ...) has been stopped, from its `State.FinishedAt`. `None` when it is
/// not stopped (running, paused, restarting, removing) or never ran to a stop.
pub(crate) fn stopped_since(state: &str, finished_at: &str) -> Option<SystemTime> {
    match state {
        "exited" | "created" | "dead" => parse_engine_time(finished_at),
        _ => None,
    }
}

/// How long until a session with retention `retention_ms` (its label; `None`: no retention)
/// expires, at `now`. `None`: it does not expire (no retention, or not stopped);
/// `Some(Duration::ZERO)`: it has expired.
pub(crate) fn time_left(
    retention_ms: Option<u64>,
    state: &str,
    finished_at: &str,
    now: SystemTime,
) -> Option<Duration> {
    let retention = Duration::from_millis(retention_ms?);
    let since = stopped_since(state, finished_at)?;
    let deadline = since.checked_add(retention)?;
    Some(deadline.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Whether a session has expired at `now` by its stop retention alone; see [`time_left`].
#[cfg(test)]
pub(crate) fn expired(
    retention_ms: Option<u64>,
    state: &str,
    finished_at: &str,
    now: SystemTime,
) -> bool {
    time_left(retention_ms, state, finished_at, now) == Some(Duration::ZERO)
}

/// When a session expires, in milliseconds since the epoch (`expiresAt`): the earlier of
/// its deadline (`deadline_ms`, from `timeoutMs`/`setTimeout`) and, when it is stopped and
/// has a `removeAfterStopMs` (`retention_ms`), its stop plus that retention. `None`: never.
pub(crate) fn expires_at(
    retention_ms: Option<u64>,
    state: &str,
    finished_at: &str,
    deadline_ms: Option<u64>,
) -> Option<u64> {
    let after_stop = retention_ms.and_then(|r| {
        let since = stopped_since(state, finished_at)?;
        let ms = since
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_millis() as u64;
        ms.checked_add(r)
    });
    match (after_stop, deadline_ms) {
        (Some(a), Some(d)) => Some(a.min(d)),
        (a, d) => a.or(d),
    }
}

/// Whether a session with expiry `expires_at_ms` (see [`expires_at`]) has expired at `now`.
pub(crate) fn passed(expires_at_ms: Option<u64>, now: SystemTime) -> bool {
    let now_ms = now
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    expires_at_ms.is_some_and(|at| at <= now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> SystemTime {
        humantime::parse_rfc3339(s).unwrap()
    }

    #[test]
    fn engine_times() {
        assert_eq!(
            parse_engine_time("2026-12-01T16:52:00.123456789Z"),
            Some(at("2026-12-01T16:52:00.123456789Z"))
        );
        assert_eq!(
            parse_engine_time("2026-12-01T17:52:00.5+01:00"),
            Some(at("2026-12-01T16:52:00.5Z"))
        );
        assert_eq!(
            parse_engine_time("2026-12-01T14:22:00-02:30"),
            Some(at("2026-12-01T16:52:00Z"))
        );
        assert_eq!(parse_engine_time("0001-01-01T00:00:00Z"), None);
        assert_eq!(parse_engine_time(""), None);
        assert_eq!(parse_engine_time("yesterday"), None);
        assert_eq!(parse_engine_time("2026-12-01T16:52:00+1:00"), None);
    }

    #[test]
    fn only_a_stopped_container_expires() {
        let stop = "2026-12-01T16:00:00Z";
        let later = at("2026-12-01T16:00:10Z");
        assert!(expired(Some(10_000), "exited", stop, later));
        assert!(expired(Some(0), "exited", stop, at(stop)));
        assert!(expired(Some(5_000), "created", stop, later));
        assert!(expired(Some(5_000), "dead", stop, later));
        assert!(!expired(Some(10_001), "exited", stop, later));
        assert!(!expired(Some(0), "running", stop, later));
        assert!(!expired(Some(0), "paused", stop, later));
        assert!(!expired(Some(0), "restarting", stop, later));
        assert!(!expired(None, "exited", stop, later));
        // Created and never started: no FinishedAt, no stop to count from.
        assert!(!expired(Some(0), "created", "0001-01-01T00:00:00Z", later));
    }

    #[test]
    fn time_left_counts_from_the_stop() {
        let stop = "2026-12-01T16:00:00Z";
        assert_eq!(
            time_left(Some(60_000), "exited", stop, at("2026-12-01T16:00:45Z")),
            Some(Duration::from_secs(15))
        );
        assert_eq!(
            time_left(Some(60_000), "exited", stop, at("2026-12-01T16:05:00Z")),
            Some(Duration::ZERO)
        );
        assert_eq!(time_left(Some(60_000), "running", stop, at(stop)), None);
        assert_eq!(time_left(None, "exited", stop, at(stop)), None);
    }

    #[test]
    fn expires_at_is_the_earlier_of_deadline_and_stop_retention() {
        let stop = "2026-12-01T16:00:00Z";
        let stop_ms = at(stop)
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        assert_eq!(
            expires_at(Some(1_000), "exited", stop, None),
            Some(stop_ms + 1_000)
        );
        assert_eq!(
            expires_at(Some(1_000), "exited", stop, Some(stop_ms + 10)),
            Some(stop_ms + 10)
        );
        assert_eq!(expires_at(Some(1_000), "running", stop, Some(7)), Some(7));
        assert_eq!(expires_at(None, "running", stop, None), None);
        assert!(passed(Some(stop_ms), at(stop)));
        assert!(!passed(Some(stop_ms + 1), at(stop)));
        assert!(!passed(None, at(stop)));
    }

    /// The keep-alive keeps running before the deadline and exits once it passed, under each
    /// shell installed here (`busybox sh`, `dash`: under `bash`, `bash`, `sh`).
    #[test]
    fn the_keepalive_exits_at_the_deadline_in_every_shell() {
        let dir = std::env::temp_dir().join(format!("berth-ka-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("deadline");
        let script = KEEPALIVE_SCRIPT.replace(DEADLINE_FILE, file.to_str().unwrap());
        let now = SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        for shell in [["busybox", "sh"], ["dash", ""], ["bash", ""], ["sh", ""]] {
            let mut cmd = std::process::Command::new(shell[0]);
            if !shell[1].is_empty() {
                cmd.arg(shell[1]);
            }
            std::fs::write(&file, format!("{}\n", now + 2)).unwrap();
            let started = std::time::Instant::now();
            let Ok(status) = cmd.args(["-c", &script, "berth-keepalive"]).status() else {
                continue; // this shell is not installed here
            };
            let took = started.elapsed();
            assert!(status.success(), "{shell:?}: {status}");
            assert!(took >= Duration::from_millis(900), "{shell:?}: {took:?}");
            assert!(took < Duration::from_secs(6), "{shell:?}: {took:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_longest_retention_is_thirty_days() {
        assert_eq!(MAX_RETENTION_MS, 2_592_000_000);
    }
}

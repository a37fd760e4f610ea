//! Exec launch: start an exec carrying a unique `BERTH_EXEC_ID` marker, read its exit code, kill its tree.
//!
//! Shared by the buffered [`crate::exec`] and the streaming [`crate::exec::stream`] forms, so
//! both mark, time out and kill a process tree the same way.
//!
//! Engine calls: `POST /containers/{id}/exec`, `POST /exec/{id}/start` (attached, no TTY, so
//! stdout and stderr stay framed apart), `GET /exec/{id}/json` for the exit code.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::time::Duration;

use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecOptions, StartExecResults};
use futures_util::{Stream, StreamExt};
use tokio::io::AsyncWrite;

use crate::engine::bounded::EXEC_CALL_TIMEOUT_MS;
use crate::engine::connection::{status, Engine};
use crate::engine::exec;
use crate::model::errors::{Error, Result};

/// The env variable that marks every process of one exec.
pub(crate) const EXEC_MARKER_ENV: &str = "BERTH_EXEC_ID";
const EXIT_CODE_POLL_MS: u64 = 50;
const EXIT_CODE_POLLS: u32 = 100;
/// How long the tree-kill exec may take, in milliseconds.
pub(crate) const KILL_TREE_TIMEOUT_MS: u64 = 10_000;
/// How long a killed command's output may go on before berth stops waiting for its end, in
/// milliseconds (20 s: the tree kill's own bound and then as much again). Only a command helper
/// that ignores its `KILL` (a forgery: the sandbox's root replaced it) or an engine that keeps
/// a killed exec's stream open gets there; the call then settles `E_ENGINE` instead of
/// waiting on a stream that never ends.
pub(crate) const KILLED_END_TIMEOUT_MS: u64 = 2 * KILL_TREE_TIMEOUT_MS;

/// When a command killed now must have ended ([`KILLED_END_TIMEOUT_MS`]).
pub(crate) fn killed_end_at() -> tokio::time::Instant {
    tokio::time::Instant::now() + Duration::from_millis(KILLED_END_TIMEOUT_MS)
}

/// The error of a killed command whose output did not end within [`KILLED_END_TIMEOUT_MS`].
pub(crate) fn killed_without_end() -> Error {
    Error::Engine {
        operation: "exec".into(),
        status: None,
        message: format!(
            "the command was killed but its output did not end within {KILLED_END_TIMEOUT_MS} ms \
             (a command helper that ignores its kill, or an engine that keeps the stream open)"
        ),
    }
}

/// The most an engine exec may carry in argv, env and working directory together, in bytes
/// (1 MiB, counted as `execve` does: each string and its NUL, `KEY=value` per variable). A
/// command over it is refused with `E_INVALID_ARGUMENT` before its exec is created. Measured
/// on Docker 20.10 and Podman 4 (runc 1.1): 1 MiB runs; past the container's `ARG_MAX`
/// (2 MiB with the default 8 MiB stack) the process fails with a short `E2BIG`. What wedges
/// `runc exec` is not the size but its error text: it echoes the program name (twice), the
/// working directory and the user, and an error over 64 KiB blocks the runtime on a full pipe
/// (the exec, then inspect and removal of its container, hang). Those three are each bounded
/// on every path (`PATH_MAX`, `MAX_USER_BYTES`), so an error stays under 13 KiB. The command
/// channel has its own, larger limit (`channel::validate_request_size`).
pub(crate) const MAX_ENGINE_EXEC_BYTES: usize = 1024 * 1024;

/// The framed output of an attached exec.
pub(crate) type ExecOutputStream =
    Pin<Box<dyn Stream<Item = std::result::Result<LogOutput, bollard::errors::Error>> + Send>>;
/// The stdin of an attached exec.
pub(crate) type ExecInput = Pin<Box<dyn AsyncWrite + Send>>;

/// What to run: argv (never a shell string) and its per-exec settings.
#[derive(Debug, Clone, Default)]
pub(crate) struct Launch<'a> {
    /// Program and arguments.
    pub argv: &'a [String],
    /// Working directory (absolute); the container's by default.
    pub cwd: Option<&'a str>,
    /// Extra environment variables.
    pub env: Option<&'a BTreeMap<String, String>>,
    /// User to run as; the container's by default.
    pub user: Option<&'a str>,
    /// Attach stdin (the caller must then write and shut it down, or drop it).
    pub stdin: bool,
}

impl<'a> Launch<'a> {
    /// The launch of `argv` with the per-exec settings of `opts`; `stdin` attaches stdin.
    pub(crate) fn of(argv: &'a [String], opts: &'a crate::exec::ExecOptions, stdin: bool) -> Self {
        Launch {
            argv,
            cwd: opts.cwd.as_deref(),
            env: Some(&opts.env),
            user: opts.user.as_deref(),
            stdin,
        }
    }
}

impl Launch<'_> {
    /// What this exec carries, in bytes, counted as `execve` does: argv and env strings with
    /// their NULs (`KEY=value` per variable), plus the working directory and the user.
    pub(crate) fn bytes(&self) -> usize {
        self.argv.iter().map(|a| a.len() + 1).sum::<usize>()
            + self
                .env
                .map_or(0, |e| e.iter().map(|(k, v)| k.len() + v.len() + 2).sum())
            + self.cwd.map_or(0, str::len)
            + self.user.map_or(0, str::len)
    }
}

/// Refuses an engine exec over [`MAX_ENGINE_EXEC_BYTES`]: `E_INVALID_ARGUMENT` (field `argv`)
/// naming its size and the limit in bytes.
pub(crate) fn validate_engine_size(spec: &Launch<'_>) -> Result<()> {
    let n = spec.bytes();
    if n > MAX_ENGINE_EXEC_BYTES {
        return Err(Error::invalid(
            "argv",
            format!(
                "argv, env and cwd come to {n} bytes, over the limit of {MAX_ENGINE_EXEC_BYTES} \
                 bytes for a command run through the engine (without the command channel)"
            ),
        ));
    }
    Ok(())
}

/// When an exec started now with `timeout_ms` must end (never without a timeout).
pub(crate) fn deadline_at(timeout_ms: Option<u64>) -> Option<tokio::time::Instant> {
    timeout_ms.map(|ms| tokio::time::Instant::now() + Duration::from_millis(ms))
}

/// The scope of one exec call: `engine` bounded by `cancel` (`E_ABORTED`) and, with a
/// timeout, by the deadline `at` (`E_EXEC_TIMEOUT` for `name`), so exec create and start are
/// bounded like the read loop.
pub(crate) fn scope(
    engine: &Engine,
    cancel: &tokio_util::sync::CancellationToken,
    name: &str,
    timeout_ms: Option<u64>,
    at: Option<tokio::time::Instant>,
) -> Engine {
    let scoped = engine.within(cancel, "exec");
    match at {
        Some(at) => scoped.until(crate::engine::bounded::Deadline {
            at,
            error: Error::ExecTimeout {
                container: name.to_string(),
                timeout_ms: timeout_ms.unwrap_or_default(),
                stdout: Vec::new(),
                stderr: Vec::new(),
            },
        }),
        None => scoped,
    }
}

/// Resolves at `at` (never without one): the deadline an exec's read loop selects on.
pub(crate) async fn deadline(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The mark every process of one exec carries, and the user the exec runs as: what
/// [`kill_tree`] needs to find and signal them.
#[derive(Debug, Clone)]
pub(crate) struct Marker {
    /// The random `BERTH_EXEC_ID` value.
    pub value: String,
    /// The exec's user (`None`: the container's).
    pub user: Option<String>,
}

/// Where a started command's exit code comes from.
pub(crate) enum Exit {
    /// The engine's exec id (for `GET /exec/{id}/json`).
    Engine(String),
    /// A command channel's reader ([`crate::exec::channel`]).
    Channel(tokio::sync::oneshot::Receiver<Result<i64>>),
}

impl Exit {
    /// The exit code, once the output ended: the engine's ([`exit_code`]) or the channel
    /// helper's (`waitpid`: the code, or 128 + the signal number, as the engines report it).
    /// Errors: `E_ENGINE` (no exit code; a channel that broke).
    pub(crate) async fn code(self, engine: &Engine) -> Result<i64> {
        match self {
            Exit::Engine(exec_id) => exit_code(engine, &exec_id).await,
            Exit::Channel(rx) => crate::exec::channel::exit_code(rx).await,
        }
    }
}

/// A started exec: where its exit code comes from, its marker, and its attached streams.
pub(crate) struct Launched {
    /// Where the exit code comes from.
    pub exit: Exit,
    /// The random `BERTH_EXEC_ID` value every process of this exec carries, and its user.
    pub marker: Marker,
    /// stdout and stderr frames, in order.
    pub output: ExecOutputStream,
    /// stdin (a sink that discards when `stdin` was not attached).
    pub input: ExecInput,
    /// Cancelled when the command is known to be gone whatever its output still holds: its
    /// channel's helper was lost, or its session was removed. A streaming reader stops waiting
    /// for unread output then ([`crate::exec::stream`]); never cancelled otherwise.
    pub gone: tokio_util::sync::CancellationToken,
}

/// Creates and starts an exec in container `id` with a fresh marker.
///
/// `POST /containers/{id}/exec` then `POST /exec/{exec id}/start` (attached, `Tty: false`).
/// Errors: `E_INVALID_ARGUMENT` (over [`MAX_ENGINE_EXEC_BYTES`], before any call), `E_ENGINE`
/// (409 when the container is not running, on Docker and Podman alike), `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn launch(engine: &Engine, id: &str, spec: &Launch<'_>) -> Result<Launched> {
    validate_engine_size(spec)?;
    let marker = Marker {
        value: hex::encode(rand::random::<[u8; 12]>()),
        user: spec.user.map(str::to_string),
    };
    let launched = start(engine, id, spec, &marker).await;
    if let Err(Error::Aborted { .. } | Error::ExecTimeout { .. }) = &launched {
        // The start may have reached the engine with its answer lost: kill whatever carries
        // the marker once the engine answers again.
        spawn_kill_tree(engine, id, &marker);
    }
    launched
}

/// Exec create and start for [`launch`], with the given `marker`.
async fn start(engine: &Engine, id: &str, spec: &Launch<'_>, marker: &Marker) -> Result<Launched> {
    let mut env: Vec<String> = spec
        .env
        .map(|e| e.iter().map(|(k, v)| format!("{k}={v}")).collect())
        .unwrap_or_default();
    env.push(format!("{EXEC_MARKER_ENV}={}", marker.value));
    let create = CreateExecOptions {
        attach_stdin: Some(spec.stdin),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        tty: Some(false),
        env: Some(env),
        cmd: Some(spec.argv.to_vec()),
        user: spec.user.map(str::to_string),
        working_dir: spec.cwd.map(str::to_string),
        ..Default::default()
    };
    let exec_id = match exec::create(engine, id, create, EXEC_CALL_TIMEOUT_MS).await? {
        Ok(r) => r.id,
        Err(e) => return Err(create_exec_failure(engine, id, e).await),
    };
    let attached = StartExecOptions {
        detach: false,
        tty: false,
        output_capacity: None,
    };
    let started = exec::start(engine, &exec_id, Some(attached), EXEC_CALL_TIMEOUT_MS)
        .await?
        .map_err(|e| engine.error("start exec", e))?;
    let StartExecResults::Attached { output, input } = started else {
        return Err(Error::Engine {
            operation: "start exec".into(),
            status: None,
            message: "engine did not attach the exec".into(),
        });
    };
    Ok(Launched {
        exit: Exit::Engine(exec_id),
        marker: marker.clone(),
        output,
        input,
        gone: tokio_util::sync::CancellationToken::new(),
    })
}

/// Classifies a refused `POST /containers/{id}/exec`. Docker answers 409 for a container
/// that is not running, Podman 500: both are confirmed by inspecting the container and
/// reported alike, as `E_ENGINE` with status 409 and the container's state.
async fn create_exec_failure(engine: &Engine, id: &str, e: bollard::errors::Error) -> Error {
    if !matches!(status(&e), Some(409) | Some(500)) {
        return engine.error("create exec", e);
    }
    match crate::engine::container::inspect(engine, id).await {
        Ok(Some(c)) if c.state.as_ref().and_then(|s| s.running) != Some(true) => Error::Engine {
            operation: "create exec".into(),
            status: Some(409),
            message: format!(
                "container `{}` is not running (state {})",
                c.name.as_deref().unwrap_or(id).trim_start_matches('/'),
                if c.raw_state.is_empty() {
                    "unknown"
                } else {
                    &c.raw_state
                }
            ),
        },
        _ => engine.error("create exec", e),
    }
}

/// Reads the exit code after the streams closed; polls briefly while the engine still says running.
///
/// `GET /exec/{id}/json`. Errors: `E_ENGINE` (no exit code after 5 s of polling, or an
/// engine error), `E_ENGINE_UNAVAILABLE`. Never made up.
pub(crate) async fn exit_code(engine: &Engine, exec_id: &str) -> Result<i64> {
    for _ in 0..EXIT_CODE_POLLS {
        let info = exec::inspect(engine, exec_id, EXEC_CALL_TIMEOUT_MS)
            .await?
            .map_err(|e| engine.error("inspect exec", e))?;
        if info.running != Some(true) {
            if let Some(code) = info.exit_code {
                return Ok(code);
            }
        }
        tokio::time::sleep(Duration::from_millis(EXIT_CODE_POLL_MS)).await;
    }
    Err(Error::Engine {
        operation: "inspect exec".into(),
        status: None,
        message: format!(
            "the engine reported no exit code for exec {exec_id} within {} ms",
            EXIT_CODE_POLL_MS * u64::from(EXIT_CODE_POLLS)
        ),
    })
}

/// The script a second exec runs to kill one exec's processes: every process carrying the
/// marker, and every process in the session of one that does (a child that dropped its
/// environment keeps its session; one that also called `setsid` escapes). Sessions 0 and 1
/// (the init's) and the script's own are never targeted, nor is PID 1. TERM, a short grace,
/// then KILL, collecting again before each round. The marker arrives as `$1`; nothing is
/// interpolated.
const KILL_SCRIPT: &str = r#"m="BERTH_EXEC_ID=$1"
me=$$
sids=""
sid_of() { read -r s < "/proc/$1/stat" 2>/dev/null || return 0; s=${s##*) }; set -- $s; echo "$4"; }
collect() {
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$p" = "$me" ] && continue
    tr '\0' '\n' < "$d/environ" 2>/dev/null | grep -qx "$m" || continue
    s=$(sid_of "$p")
    case "$s" in ""|0|1|"$me") ;; *) case " $sids " in *" $s "*) ;; *) sids="$sids $s" ;; esac ;; esac
  done
}
targets() {
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    case "$p" in 1|"$me") continue ;; esac
    if tr '\0' '\n' < "$d/environ" 2>/dev/null | grep -qx "$m"; then echo "$p"; continue; fi
    s=$(sid_of "$p")
    case " $sids " in *" $s "*) [ -n "$s" ] && echo "$p" ;; esac
  done
}
collect
for p in $(targets); do kill -TERM "$p" 2>/dev/null; done
sleep 0.2
collect
for p in $(targets); do kill -KILL "$p" 2>/dev/null; done
exit 0"#;

/// Kills the process tree of the exec marked `marker` in container `id`, and waits for the
/// killing exec to finish (at most 10 s). Best effort: needs `sh`, `tr`, `grep` and `kill` in
/// the image; an engine failure is ignored (the caller reports its own error).
///
/// The killing exec runs as the killed exec's own user: the same uid may read its processes'
/// `/proc/<pid>/environ` and signal them without any capability. (A root exec would need
/// `CAP_KILL` and `CAP_SYS_PTRACE` for another user's processes, and with `no-new-privileges`
/// in a container whose user is not root, Docker starts an exec as user 0 with none.)
///
/// `POST /containers/{id}/exec` (as the exec's user) and `POST /exec/{id}/start`.
pub(crate) async fn kill_tree(engine: &Engine, id: &str, marker: &Marker) {
    // Runs after the caller's abort or deadline: bounded by per-request timeouts only.
    let engine = &engine.detached();
    let argv = vec![
        "sh".to_string(),
        "-c".into(),
        KILL_SCRIPT.into(),
        "berth-kill".into(),
        marker.value.clone(),
    ];
    let create = CreateExecOptions {
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        tty: Some(false),
        cmd: Some(argv),
        user: marker.user.clone(),
        ..Default::default()
    };
    let Ok(Ok(created)) = exec::create(engine, id, create, EXEC_CALL_TIMEOUT_MS).await else {
        return;
    };
    if let Ok(Ok(StartExecResults::Attached { mut output, .. })) =
        exec::start(engine, &created.id, None, EXEC_CALL_TIMEOUT_MS).await
    {
        let drain = async { while output.next().await.is_some() {} };
        let _ = tokio::time::timeout(Duration::from_millis(KILL_TREE_TIMEOUT_MS), drain).await;
    }
}

/// [`kill_tree`] as a background task, so a timed-out or aborted exec settles at once even
/// when the engine does not answer; the kill runs as soon as (and if) the engine answers.
pub(crate) fn spawn_kill_tree(engine: &Engine, id: &str, marker: &Marker) {
    let (engine, id, marker) = (engine.detached(), id.to_string(), marker.clone());
    tokio::spawn(async move { kill_tree(&engine, &id, &marker).await });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_exec_is_bounded_by_what_it_carries() {
        let argv = vec!["sh".to_string(), "-c".into(), "x".repeat(500_000)];
        let env = BTreeMap::from([("K".to_string(), "v".repeat(500_000))]);
        let mut spec = Launch {
            argv: &argv,
            env: Some(&env),
            cwd: Some("/w"),
            user: Some("1000"),
            stdin: false,
        };
        assert_eq!(spec.bytes(), 3 + 3 + 500_001 + 500_003 + 2 + 4);
        assert!(validate_engine_size(&spec).is_ok());
        let big = BTreeMap::from([("K".to_string(), "v".repeat(MAX_ENGINE_EXEC_BYTES))]);
        spec.env = Some(&big);
        let e = validate_engine_size(&spec).unwrap_err();
        assert_eq!(e.code(), "E_INVALID_ARGUMENT");
        assert!(
            e.to_string().contains("over the limit of 1048576 bytes"),
            "{e}"
        );
    }
}

//! Exec: run an argv in a container and collect its output as bytes.
//!
//! Engine calls: `POST /containers/{id}/exec`, `POST /exec/{id}/start` (attached,
//! no TTY, so stdout and stderr stay apart), `GET /exec/{id}/json` for the exit code.
//! Every exec carries a unique `BERTH_EXEC_ID` env marker; a timeout or abort kills
//! every process in the container that carries it, and every process in the session of
//! one that does (the engine starts each exec as a session leader, so children that
//! cleared their environment are found too), then rejects with the output so far. No
//! exit code is ever made up.

use std::collections::BTreeMap;
use std::time::Duration;

use bollard::exec::{CreateExecOptions, StartExecOptions, StartExecResults};
use futures_util::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

use crate::engine::{status, Engine};
use crate::errors::{Error, Result};
use crate::spec::{validate_argv, validate_container_path, validate_env, validate_user};

/// Default cap on each of stdout and stderr, in bytes (64 MiB).
pub const DEFAULT_MAX_BUFFER_BYTES: usize = 64 * 1024 * 1024;
/// The env variable that marks every process of one exec.
pub const EXEC_MARKER_ENV: &str = "BERTH_EXEC_ID";
const EXIT_CODE_POLL_MS: u64 = 50;
const EXIT_CODE_POLLS: u32 = 100;

/// Options of one exec.
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    /// Working directory (absolute); the container's by default.
    pub cwd: Option<String>,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
    /// User to run as; the container's by default.
    pub user: Option<String>,
    /// Bytes written to the process's stdin, which is then closed. No stdin is attached when `None`.
    pub stdin: Option<Vec<u8>>,
    /// Deadline in milliseconds; the process tree is killed when it passes.
    pub timeout_ms: Option<u64>,
    /// Cap on each of stdout and stderr, in bytes; output past it is dropped and `truncated` set.
    pub max_buffer_bytes: Option<usize>,
}

impl ExecOptions {
    /// Checks the options; `E_INVALID_ARGUMENT` naming the field.
    pub fn validate(&self) -> Result<()> {
        if let Some(c) = &self.cwd {
            validate_container_path("cwd", c)?;
        }
        validate_env("env", &self.env)?;
        if let Some(u) = &self.user {
            validate_user(u)?;
        }
        if self.timeout_ms == Some(0) {
            return Err(Error::invalid(
                "timeoutMs",
                "must be a positive number of milliseconds",
            ));
        }
        Ok(())
    }
}

/// What an exec produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecOutput {
    /// The process's exit code, as the engine reports it.
    pub exit_code: i64,
    /// Standard output bytes.
    pub stdout: Vec<u8>,
    /// Standard error bytes.
    pub stderr: Vec<u8>,
    /// Whether either stream went past `max_buffer_bytes` and was cut.
    pub truncated: bool,
}

/// Runs `argv` in container `id` (named `name`, for messages) and buffers its output.
///
/// Errors: `E_INVALID_ARGUMENT` (bad argv or options, before any engine call),
/// `E_EXEC_TIMEOUT` / `E_ABORTED` (with the output so far, after killing the tree),
/// `E_ENGINE` (for example 409: the container is not running), `E_ENGINE_UNAVAILABLE`.
pub async fn exec(
    engine: &Engine,
    id: &str,
    name: &str,
    argv: &[String],
    opts: &ExecOptions,
    cancel: &CancellationToken,
) -> Result<ExecOutput> {
    validate_argv("argv", argv)?;
    opts.validate()?;
    let marker = hex::encode(rand::random::<[u8; 12]>());
    let mut env: Vec<String> = opts.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    env.push(format!("{EXEC_MARKER_ENV}={marker}"));
    let create = CreateExecOptions {
        attach_stdin: Some(opts.stdin.is_some()),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        tty: Some(false),
        env: Some(env),
        cmd: Some(argv.to_vec()),
        user: opts.user.clone(),
        working_dir: opts.cwd.clone(),
        ..Default::default()
    };
    let exec_id = match engine.docker.create_exec(id, create).await {
        Ok(r) => r.id,
        Err(e) => return Err(create_exec_failure(engine, id, name, e).await),
    };
    let started = engine
        .docker
        .start_exec(
            &exec_id,
            Some(StartExecOptions {
                detach: false,
                tty: false,
                output_capacity: None,
            }),
        )
        .await
        .map_err(|e| engine.error("start exec", e))?;
    let StartExecResults::Attached {
        mut output,
        mut input,
    } = started
    else {
        return Err(Error::Engine {
            operation: "start exec".into(),
            status: None,
            message: "engine did not attach the exec".into(),
        });
    };
    let writer = opts.stdin.clone().map(|bytes| {
        tokio::spawn(async move {
            // A process that never reads stdin may close it early: that is not an error.
            let _ = input.write_all(&bytes).await;
            let _ = input.shutdown().await;
        })
    });
    let cap = opts.max_buffer_bytes.unwrap_or(DEFAULT_MAX_BUFFER_BYTES);
    let mut out = ExecOutput::default();
    let deadline = opts
        .timeout_ms
        .map(|ms| tokio::time::Instant::now() + Duration::from_millis(ms));
    let sleep = async {
        match deadline {
            Some(d) => tokio::time::sleep_until(d).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(sleep);
    let interrupted: Option<Error> = loop {
        tokio::select! {
            chunk = output.next() => match chunk {
                None => break None,
                Some(Ok(bollard::container::LogOutput::StdErr { message })) => append(&mut out.stderr, &message, cap, &mut out.truncated),
                Some(Ok(bollard::container::LogOutput::StdOut { message } | bollard::container::LogOutput::Console { message })) => append(&mut out.stdout, &message, cap, &mut out.truncated),
                Some(Ok(_)) => {}
                // Podman resets the hijacked connection when the process exits with stdin bytes
                // unread (podman #7360): the stream ended; the exit code comes from inspect.
                Some(Err(e)) if opts.stdin.is_some()
                    && crate::engine::io_kind(&e) == Some(std::io::ErrorKind::ConnectionReset) => break None,
                Some(Err(e)) => break Some(engine.error("read exec output", e)),
            },
            _ = &mut sleep => break Some(Error::ExecTimeout {
                container: name.to_string(),
                timeout_ms: opts.timeout_ms.unwrap_or_default(),
                stdout: Vec::new(),
                stderr: Vec::new(),
            }),
            _ = cancel.cancelled() => break Some(Error::aborted("exec")),
        }
    };
    if let Some(w) = writer {
        w.abort();
    }
    if let Some(err) = interrupted {
        drop(output);
        kill_tree(engine, id, &marker).await;
        return Err(match err {
            Error::ExecTimeout {
                container,
                timeout_ms,
                ..
            } => Error::ExecTimeout {
                container,
                timeout_ms,
                stdout: out.stdout,
                stderr: out.stderr,
            },
            Error::Aborted { operation, .. } => Error::Aborted {
                operation,
                stdout: out.stdout,
                stderr: out.stderr,
            },
            other => other,
        });
    }
    out.exit_code = exit_code(engine, &exec_id).await?;
    Ok(out)
}

/// Classifies a refused `POST /containers/{id}/exec`. Docker answers 409 for a container
/// that is not running, Podman 500: both are confirmed by inspecting the container and
/// reported alike, as `E_ENGINE` with status 409 and the container's state.
async fn create_exec_failure(
    engine: &Engine,
    id: &str,
    name: &str,
    e: bollard::errors::Error,
) -> Error {
    if !matches!(status(&e), Some(409) | Some(500)) {
        return engine.error("create exec", e);
    }
    match crate::container::inspect(engine, id).await {
        Ok(Some(c)) if c.state.as_ref().and_then(|s| s.running) != Some(true) => Error::Engine {
            operation: "create exec".into(),
            status: Some(409),
            message: format!(
                "container `{name}` is not running (state {})",
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

fn append(buf: &mut Vec<u8>, bytes: &[u8], cap: usize, truncated: &mut bool) {
    let room = cap.saturating_sub(buf.len());
    if bytes.len() > room {
        *truncated = true;
    }
    buf.extend_from_slice(&bytes[..bytes.len().min(room)]);
}

/// Reads the exit code after the streams closed; polls briefly while the engine still says running.
async fn exit_code(engine: &Engine, exec_id: &str) -> Result<i64> {
    for _ in 0..EXIT_CODE_POLLS {
        let info = engine
            .docker
            .inspect_exec(exec_id)
            .await
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

/// Kills the process tree of one exec. Best effort: needs `sh`, `tr`, `grep` and `kill` in the image.
async fn kill_tree(engine: &Engine, id: &str, marker: &str) {
    let argv = vec![
        "sh".to_string(),
        "-c".into(),
        KILL_SCRIPT.into(),
        "berth-kill".into(),
        marker.into(),
    ];
    let create = CreateExecOptions {
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        tty: Some(false),
        cmd: Some(argv),
        user: Some("0".to_string()),
        ..Default::default()
    };
    let Ok(created) = engine.docker.create_exec(id, create).await else {
        return;
    };
    if let Ok(StartExecResults::Attached { mut output, .. }) =
        engine.docker.start_exec(&created.id, None).await
    {
        let drain = async { while output.next().await.is_some() {} };
        let _ = tokio::time::timeout(Duration::from_secs(10), drain).await;
    }
}

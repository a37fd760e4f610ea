//! Create: a fresh session container, never adopted; rolled back by id on any failure after creation.
//!
//! Engine calls, in order: `GET /images/{image}/json` (and `POST /images/create` when
//! missing, see [`crate::engine::images`]), `POST /containers/create?name=<name>` (the engine's name uniqueness is
//! the lock), `POST /containers/{id}/start`, for a non-root user with a
//! `workDir` or `writablePaths` the user-directory steps ([`crate::lifecycle::user_dirs`]),
//! the setup commands (over the session's command
//! channel when it can, else one exec each), then
//! with `timeoutMs` `PUT /containers/{id}/archive` (the keep-alive's deadline file) and
//! `POST /volumes/create` for the deadline record, then `POST /volumes/create` for the
//! readiness record and for the creator's holder record.

use std::collections::HashMap;
use std::time::SystemTime;

use bollard::models::{
    ContainerCreateBody, HostConfig, Mount as EngineMount, MountType, PortBinding,
};
use tokio_util::sync::CancellationToken;

use crate::engine::cancel::guard;
use crate::engine::connection::{status, Engine, EngineOptions};
use crate::engine::images::{ensure_image, PullOptions};
use crate::exec::{self, ExecOptions};
use crate::lifecycle::create_failure::create_failure;
use crate::lifecycle::opening::{self, Opening};
use crate::lifecycle::rollback;
use crate::lifecycle::running;
use crate::model::errors::{Error, Result};
use crate::model::identity;
use crate::model::labels;
use crate::model::spec::CreateSpec;
use crate::ownership::cleanup;
use crate::ownership::hold;
use crate::ownership::holders::Role;
use crate::ownership::records;
use crate::session::{Ownership, Session};

/// The operation an `E_ABORTED` names: the API call, as the TypeScript entry names it too.
const OPERATION: &str = "createSession";

/// Bytes of a failing setup command's stdout/stderr kept in the error (the tail).
pub(crate) const SETUP_OUTPUT_TAIL_BYTES: usize = 4096;

/// Creates session `spec.session_id`, starts it, runs its setup commands, marks it ready.
///
/// Fresh only: a taken name is `E_SESSION_EXISTS` with what holds it, and nothing
/// else is touched. Any failure after the engine created the container (start,
/// setup exit code, abort) removes that container by id and rejects with the first
/// cause; a failed removal is attached to the error and retried by the next call.
/// Every engine request is bounded by `cancel` and a per-request timeout
/// (`crate::engine::bounded`). After an abort the container the call made is removed by id
/// before it settles while the engine answers, else in the background and by the next call in
/// this process ([`rollback::rollback`]); a create whose answer was lost (abort, timeout or
/// broken connection while `POST /containers/create` was in flight) is found by its creation
/// nonce label and removed by id (`crate::ownership::cleanup`).
///
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_IMAGE_NOT_FOUND`,
/// `E_SESSION_EXISTS`, `E_SETUP_FAILED` (a setup command exited non-zero, or the container is
/// not running after start or after setup: its exit code and log tail), `E_ABORTED`,
/// `E_ENGINE`.
pub async fn create_session(
    spec: &CreateSpec,
    engine_opts: &EngineOptions,
    cancel: &CancellationToken,
) -> Result<Session> {
    let Opening {
        session_id,
        prefix,
        name,
    } = Opening::for_create(spec, engine_opts)?;
    let engine = opening::connect(engine_opts, cancel, OPERATION).await?;
    cleanup::retry_pending(&engine).await;
    let pull = PullOptions {
        platform: spec.platform.clone(),
        on_progress: spec.on_pull_progress.clone(),
    };
    guard(cancel, OPERATION, ensure_image(&engine, &spec.image, &pull)).await?;
    if cancel.is_cancelled() {
        return Err(Error::aborted(OPERATION));
    }

    let owner = identity::current();
    let (id, labels) = create_container(&engine, spec, &session_id, &prefix, &name, &[]).await?;

    let session = Session::new(
        engine.clone(),
        id.clone(),
        name.clone(),
        session_id.clone(),
        Ownership::Created,
        owner.cloned(),
    );
    match guard(cancel, OPERATION, finish(&engine, &session, spec, &labels)).await {
        Ok(record) => {
            let expires_at = match spec.timeout_ms {
                Some(_) => crate::ownership::deadlines::current(&engine, &id)
                    .await
                    .ok()
                    .flatten(),
                None => None,
            };
            Ok(session
                .with_record(record, Vec::new())
                .with_expires_at(expires_at)
                .into_process_duty(spec.remove_after_stop_ms)
                .with_deadline_timer(spec.timeout_ms.is_some()))
        }
        Err(first) => Err(rollback::rollback(&engine, &id, first).await),
    }
}

/// `POST /containers/create?name=<name>` from `spec` (plus `extra_mounts`), labelled with
/// schema-1 labels owned by this process, plus a fresh creation nonce. Returns the id and
/// the labels it carries. When the answer is lost (the request was cut short by the call's
/// bounds or its connection broke), the nonce is handed to the cleanup, which finds and
/// removes that container by id once the engine answers (`crate::ownership::cleanup`).
///
/// Errors: `E_SESSION_EXISTS` (name taken), `E_IMAGE_NOT_FOUND`, `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn create_container(
    engine: &Engine,
    spec: &CreateSpec,
    session_id: &str,
    prefix: &str,
    name: &str,
    extra_mounts: &[EngineMount],
) -> Result<(String, HashMap<String, String>)> {
    let created_at = humantime::format_rfc3339_millis(SystemTime::now()).to_string();
    let mut labels = labels::encode(spec, session_id, prefix, identity::current(), &created_at);
    let nonce = hex::encode(rand::random::<[u8; 16]>());
    labels.insert(labels::CREATE_NONCE.into(), nonce.clone());
    let body = container_body(spec, labels.clone(), extra_mounts);
    match crate::engine::calls::create(engine, Some(name), spec.platform.as_deref(), body).await {
        Ok(Ok(r)) => Ok((r.id, labels)),
        Ok(Err(e)) if status(&e).is_some() => {
            Err(create_failure(engine, session_id, name, &spec.image, e).await)
        }
        // No answer: the engine may have created it anyway.
        Ok(Err(e)) => {
            lost_create(engine, &nonce);
            Err(engine.error("create container", e))
        }
        Err(bounded) => {
            lost_create(engine, &nonce);
            Err(bounded)
        }
    }
}

/// [`crate::engine::netguard::isolate`] of a container just started; when it fails, a container
/// that stopped meanwhile (an entrypoint that exits at once: the guard finds no namespace to
/// join) is `E_SETUP_FAILED` ([`running::ensure_still_running`]), else the guard's error.
/// Boxed on its own: inline, it grew create's future past a debug test thread's stack.
async fn isolate_started(session: &Session, engine: &Engine) -> Result<()> {
    let Err(e) = Box::pin(crate::engine::netguard::isolate(engine, &session.id)).await else {
        return Ok(());
    };
    Box::pin(running::ensure_still_running(session, engine, "start")).await?;
    Err(e)
}

/// Installs the command helper and opens the setup user's channel ahead of the setup
/// commands, while the network guard runs: only when there are setup commands (the
/// channel carries them). Best effort: a channel that does not open leaves the commands to
/// the engine path, as it would have anyway.
async fn prepare_channel(session: &Session, engine: &Engine, spec: &CreateSpec) {
    if spec.setup_commands.is_empty() {
        return;
    }
    session
        .commands()
        .prepare(engine, &session.id, &spec.user)
        .await;
}

/// A create whose answer never came: its container (if the engine made one) is found by
/// `nonce` and removed, in the background and by the next call.
fn lost_create(engine: &Engine, nonce: &str) {
    cleanup::defer_nonce(engine, nonce);
    cleanup::retry_in_background(engine);
}

/// Start, the user's directories ([`crate::lifecycle::user_dirs`]), setup, readiness record (with the container's `labels`), creator's holder record
/// (its volume name returned). The container must be running right after the start and again
/// once setup and records are done ([`running::ensure_running`]: an inspect each, no wait
/// before them; the records are removed with the container when the last check fails).
/// Errors: `E_SETUP_FAILED`, `E_ENGINE`, `E_ENGINE_UNAVAILABLE`, `E_ABORTED`.
pub(crate) async fn finish(
    engine: &Engine,
    session: &Session,
    spec: &CreateSpec,
    labels: &HashMap<String, String>,
) -> Result<Option<String>> {
    let start = crate::engine::calls::start(engine, &session.id).await?;
    if let Err(e) = start {
        // A refused start (Podman refuses an entrypoint it cannot run): when the container
        // is not running, that is a failed setup with its exit code and log tail.
        if let Some(code) = status(&e) {
            let reason = match engine.error("start container", e) {
                Error::Engine { message, .. } => message,
                other => other.to_string(),
            };
            Box::pin(running::ensure_running_or(
                session,
                engine,
                "start",
                reason.clone(),
            ))
            .await?;
            return Err(Error::Engine {
                operation: "start container".into(),
                status: Some(code),
                message: reason,
            });
        }
        return Err(engine.error("start container", e));
    }
    // Boxed, as the steps below: each is a large future, and a debug build's test thread has
    // a small stack.
    Box::pin(running::ensure_running(session, engine, "start")).await?;
    // Off the local network before anything of the caller's runs in it; meanwhile (berth's own
    // steps, nothing of the caller's) a working directory or writable path the image lacks
    // is given to the user, and the setup's command channel is installed and opened. Each
    // step runs to its end (none is dropped half-way); the guard's failure comes first.
    let (isolated, dirs, ()) = tokio::join!(
        Box::pin(isolate_started(session, engine)),
        Box::pin(crate::lifecycle::user_dirs::give_to_user(
            engine,
            &session.id,
            spec,
        )),
        Box::pin(prepare_channel(session, engine, spec)),
    );
    isolated?;
    dirs?;
    let stage = match spec.setup_commands.is_empty() {
        true => "start",
        false => "setup",
    };
    // Boxed: the setup execs and the records are a large future of their own.
    match Box::pin(setup_and_record(engine, session, spec, labels)).await {
        // An engine error under the setup: 409 (the container is not running) from an engine
        // exec, or the command channel's helper gone with its container. When the container
        // exited, that is the failure to report.
        Err(e @ Error::Engine { .. }) => {
            Box::pin(running::ensure_still_running(session, engine, stage)).await?;
            Err(e)
        }
        Err(e) => Err(e),
        Ok(record) => {
            // An entrypoint that exits at once has had the setup and the records' time to do
            // so: no sleep of its own.
            Box::pin(running::ensure_running(session, engine, stage)).await?;
            // The run handed out is the one the guard wrote its rules into (a start behind
            // berth's back meanwhile gets them now): an inspect and `GET /volumes/{name}`.
            Box::pin(crate::engine::netguard::ensure(engine, &session.id)).await?;
            Ok(record)
        }
    }
}

/// The setup commands, then the deadline, readiness and holder records of [`finish`].
async fn setup_and_record(
    engine: &Engine,
    session: &Session,
    spec: &CreateSpec,
    labels: &HashMap<String, String>,
) -> Result<Option<String>> {
    let never = CancellationToken::new();
    for (index, argv) in spec.setup_commands.iter().enumerate() {
        let opts = ExecOptions {
            user: spec.user.clone(),
            cwd: spec.work_dir.clone(),
            ..Default::default()
        };
        // Over the session's command channel when it can (one engine exec for all of them).
        let channels = Some(session.commands());
        let out = exec::exec_via(
            engine,
            &session.id,
            &session.name,
            argv,
            &opts,
            &never,
            channels,
        )
        .await?;
        if out.exit_code != 0 {
            return Err(Error::SetupFailed {
                session_id: session.session_id.clone(),
                name: session.name.clone(),
                index,
                argv: argv.clone(),
                exit_code: out.exit_code,
                stdout: tail(&out.stdout),
                stderr: tail(&out.stderr),
            });
        }
    }
    if let Some(timeout_ms) = spec.timeout_ms {
        // Ready now: the deadline counts from here, recorded before readiness so that a
        // ready session with a timeout always has its deadline record.
        let deadline = crate::session::deadline_timer::now_ms().saturating_add(timeout_ms);
        // A root container's channel (the setup's, or opened now) is root's: the deadline
        // file is written over it instead of an engine exec of its own.
        let root = crate::engine::container::inspect(engine, &session.id)
            .await?
            .is_some_and(|c| c.runs_as_root());
        crate::session::keepalive::write_deadline(
            engine,
            &session.id,
            &session.name,
            labels,
            deadline,
            root.then(|| session.commands()),
        )
        .await?;
        crate::ownership::deadlines::set(engine, &session.id, deadline, labels).await?;
    }
    records::mark_ready(engine, &session.id, labels).await?;
    hold::register(engine, &session.id, Role::Creator, labels).await
}

fn tail(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[bytes.len().saturating_sub(SETUP_OUTPUT_TAIL_BYTES)..])
        .into_owned()
}

/// The `POST /containers/create` body: sleep entrypoint under an init process, ports on
/// 127.0.0.1, the spec's bind mounts followed by `extra_mounts`.
fn container_body(
    spec: &CreateSpec,
    labels: HashMap<String, String>,
    extra_mounts: &[EngineMount],
) -> ContainerCreateBody {
    let mut ports: Vec<u16> = spec.ports.clone();
    ports.sort_unstable();
    ports.dedup();
    let keys: Vec<String> = ports.iter().map(|p| format!("{p}/tcp")).collect();
    let bindings: HashMap<String, Option<Vec<PortBinding>>> = keys
        .iter()
        .map(|k| {
            (
                k.clone(),
                Some(vec![PortBinding {
                    host_ip: Some("127.0.0.1".into()),
                    host_port: Some(String::new()),
                }]),
            )
        })
        .collect();
    let mounts: Vec<EngineMount> = spec
        .mounts
        .iter()
        .map(|m| EngineMount {
            source: Some(m.source.clone()),
            target: Some(m.target.clone()),
            typ: Some(MountType::BIND),
            read_only: Some(m.read_only),
            ..Default::default()
        })
        .chain(extra_mounts.iter().cloned())
        .collect();
    let sec = &spec.security;
    let deadline_keepalive = spec.timeout_ms.is_some() && spec.entrypoint.is_none();
    let host_config = HostConfig {
        init: Some(true),
        port_bindings: (!bindings.is_empty()).then_some(bindings),
        mounts: (!mounts.is_empty()).then_some(mounts),
        cap_drop: (!sec.cap_drop.is_empty()).then(|| sec.cap_drop.clone()),
        security_opt: sec
            .no_new_privileges
            .then(|| vec!["no-new-privileges:true".to_string()]),
        readonly_rootfs: sec.read_only_root_filesystem.then_some(true),
        network_mode: sec.network_mode.clone(),
        memory: spec.limits.memory_bytes,
        nano_cpus: spec.limits.cpus.map(|c| (c * 1e9).round() as i64),
        pids_limit: spec.limits.pids_limit,
        // The deadline file needs a writable directory on a read-only root filesystem.
        tmpfs: (deadline_keepalive && sec.read_only_root_filesystem).then(|| {
            HashMap::from([(
                crate::model::lifetime::DEADLINE_DIR.to_string(),
                "mode=755".to_string(),
            )])
        }),
        ..Default::default()
    };
    // With `timeoutMs` and no custom entrypoint, the keep-alive stops at the deadline
    // (see `crate::model::lifetime::KEEPALIVE_SCRIPT`); otherwise the entrypoint digested in
    // the labels.
    let entrypoint = match deadline_keepalive {
        true => crate::model::lifetime::deadline_keepalive(),
        false => spec.effective_entrypoint(),
    };
    ContainerCreateBody {
        image: Some(spec.image.clone()),
        entrypoint: Some(entrypoint),
        cmd: Some(Vec::new()),
        env: Some(spec.env.iter().map(|(k, v)| format!("{k}={v}")).collect()),
        working_dir: spec.work_dir.clone(),
        user: spec.user.clone(),
        labels: Some(labels),
        exposed_ports: (!keys.is_empty()).then_some(keys),
        host_config: Some(host_config),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_publishes_on_loopback_only_with_init() {
        let spec = CreateSpec {
            image: "i".into(),
            ports: vec![8080, 8080, 80],
            ..Default::default()
        };
        let b = container_body(&spec, HashMap::new(), &[]);
        let hc = b.host_config.unwrap();
        assert_eq!(hc.init, Some(true));
        let pb = hc.port_bindings.unwrap();
        assert_eq!(pb.len(), 2);
        for v in pb.values() {
            assert_eq!(v.as_ref().unwrap()[0].host_ip.as_deref(), Some("127.0.0.1"));
        }
        assert_eq!(b.entrypoint.unwrap(), vec!["sleep", "2147483647"]);
        assert_eq!(b.cmd.unwrap(), Vec::<String>::new());
    }
}

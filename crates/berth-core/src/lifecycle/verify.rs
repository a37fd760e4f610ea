//! Verify: checks a session's container against its creation record and a spec, and repairs
//! what can be repaired in place (see [`crate::lifecycle::repair`]), then checks again.
//!
//! Engine calls: `GET /containers/{name or id}/json`, `GET /images/{id}/json` (provenance),
//! `GET /volumes/berth-ready-<id>` (the creation record), and, while the container runs,
//! `GET /volumes/berth-guard-<id>-<run>` (an isolated container's network guard record for
//! its current run, `network-unguarded` when missing) and execs (`POST /containers/{id}/exec`, `POST /exec/{id}/start`, `GET /exec/{id}/json`):
//! `cat /proc/1/comm` (exec works, PID 1 is an init) and one writable probe per declared
//! writable path (a probe file written, read back, removed; the path is an argument, never
//! part of a shell string).

use std::collections::BTreeMap;

use tokio_util::sync::CancellationToken;

use crate::engine::cancel::guard;
use crate::engine::connection::{Engine, EngineOptions};
use crate::engine::container::{inspect, Facts, Inspected};
use crate::exec::{self, ExecOptions};
use crate::lifecycle::opening::{self, Opening};
use crate::lifecycle::repair;
use crate::model::errors::{Error, Result};
use crate::model::findings::{self, code, Finding, Kind};
use crate::model::naming::DEFAULT_PREFIX;
use crate::model::spec::validate_writable_paths;
pub(crate) use crate::model::verification::{Expect, Verification};
use crate::ownership::provenance::not_berth_made;
use crate::ownership::records;
use crate::ownership::replacement::{absent, settle_name};

/// What `verifySession` is asked for.
#[derive(Debug, Clone, Default)]
pub struct VerifySpec {
    /// Session id, as UTF-16 code units.
    pub session_id: Vec<u16>,
    /// Name prefix (default `berth`), as UTF-16 code units.
    pub prefix: Option<Vec<u16>>,
    /// What to check beyond identity, state, init and exec.
    pub expect: Expect,
    /// Repair repairable findings and check again (a hard finding left then rejects).
    pub repair: bool,
}

/// The operation named in `E_ABORTED`.
const OPERATION: &str = "verifySession";

/// Verifies session `spec.session_id` (and with `repair`, repairs and verifies again).
///
/// Without `repair` it changes nothing (a writable probe's file is removed again) and
/// resolves `{ ok, findings }`. With `repair`, repairable findings are fixed in place and the
/// container checked again; a finding then left (hard, or one repair could not fix) rejects
/// with `E_VERIFY_FAILED` whose details list every finding. A container that is not this session's (any `identity-*`
/// finding) is never repaired.
///
/// A recreation of the session cut short by a dead process is finished or rolled back first
/// (see [`crate::ownership::replacement`]).
///
/// Engine calls: those of the module doc above (with `repair`, the repairs'); for a recreation
/// cut short, those of its recovery (`POST /containers/{id}/rename`, `DELETE /containers/{id}`,
/// `DELETE /volumes/{name}`).
///
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_SESSION_NOT_FOUND`,
/// `E_SESSION_BUSY` (`recreating`: a live recreation has the name empty right now),
/// `E_VERIFY_FAILED`, `E_ABORTED`, `E_ENGINE`.
pub async fn verify_session(
    spec: &VerifySpec,
    engine_opts: &EngineOptions,
    cancel: &CancellationToken,
) -> Result<Verification> {
    let Opening {
        session_id, name, ..
    } = Opening::new(&spec.session_id, spec.prefix.as_deref(), DEFAULT_PREFIX)?;
    validate_expect(&spec.expect)?;
    let engine = opening::connect(engine_opts, cancel, OPERATION).await?;
    guard(cancel, OPERATION, settle_name(&engine, &name)).await?;
    let run = verify(
        &engine,
        &name,
        &session_id,
        &name,
        &spec.expect,
        spec.repair,
    );
    match guard(cancel, OPERATION, run).await {
        Err(Error::SessionNotFound { .. }) => Err(absent(&engine, &session_id, &name).await?),
        r => r,
    }
}

/// Checks `expect`'s values before any engine call (`E_INVALID_ARGUMENT`, fields as `spec.<name>`).
pub(crate) fn validate_expect(expect: &Expect) -> Result<()> {
    validate_writable_paths("spec.writablePaths", &expect.writable_paths)?;
    for (i, m) in expect.mounts.iter().flatten().enumerate() {
        if !m.source.starts_with('/') {
            return Err(Error::invalid(
                format!("spec.mounts[{i}].source"),
                "must be an absolute host path",
            ));
        }
        crate::model::spec::validate_container_path(
            &format!("spec.mounts[{i}].target"),
            &m.target,
        )?;
    }
    if let Some(u) = &expect.user {
        crate::model::spec::validate_user(u)?;
    }
    Ok(())
}

/// Verifies the container `target` (a name or an id) of session `session_id`, named `name`;
/// with `repair`, repairs and verifies again, and rejects with `E_VERIFY_FAILED` when a hard
/// finding is left. Errors: `E_SESSION_NOT_FOUND`, `E_VERIFY_FAILED`, `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn verify(
    engine: &Engine,
    target: &str,
    session_id: &str,
    name: &str,
    expect: &Expect,
    repair: bool,
) -> Result<Verification> {
    let (c, first) = check(engine, target, session_id, name, expect).await?;
    let id = c.id.clone().unwrap_or_default();
    let foreign = first.iter().any(|f| f.code.starts_with("identity-"));
    let fixable = first.iter().any(|f| f.kind == Kind::Repairable);
    if !repair || foreign || !fixable {
        let v = outcome(id, first, None);
        return if repair {
            reject_hard(v, session_id, name)
        } else {
            Ok(v)
        };
    }
    repair::repair(engine, &c, &first, expect).await?;
    let (_, again) = check(engine, &id, session_id, name, expect).await?;
    reject_hard(outcome(id, first, Some(again)), session_id, name)
}

/// Findings before and (when repair ran) after repair, merged: those gone after are `repaired`.
fn outcome(id: String, before: Vec<Finding>, after: Option<Vec<Finding>>) -> Verification {
    let Some(after) = after else {
        let ok = before.is_empty();
        return Verification {
            id,
            ok,
            findings: before,
        };
    };
    let ok = after.is_empty();
    let mut findings: Vec<Finding> = before
        .into_iter()
        .filter(|b| b.kind == Kind::Repairable && !after.iter().any(|a| a.same(b)))
        .map(|b| Finding {
            repaired: true,
            ..b
        })
        .collect();
    findings.extend(after);
    Verification { id, ok, findings }
}

/// With repair, anything left unrepaired (a hard finding, or a repairable one repair could
/// not fix) rejects.
fn reject_hard(v: Verification, session_id: &str, name: &str) -> Result<Verification> {
    if !v.ok {
        return Err(Error::VerifyFailed {
            session_id: session_id.into(),
            name: name.into(),
            id: v.id,
            findings: v.findings,
        });
    }
    Ok(v)
}

/// One pass of every check over `target`. Returns the inspect answer and the findings.
/// Identity findings end the pass: nothing is probed in a container that is not ours.
/// Errors: `E_SESSION_NOT_FOUND`, `E_SESSION_BUSY` (`recreating`: looked up by name, the
/// container answered under another one), `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn check(
    engine: &Engine,
    target: &str,
    session_id: &str,
    name: &str,
    expect: &Expect,
) -> Result<(Inspected, Vec<Finding>)> {
    let c = inspect(engine, target)
        .await?
        .ok_or_else(|| Error::SessionNotFound {
            session_id: session_id.into(),
            name: name.into(),
        })?;
    let f = Facts::from_inspect(&c);
    if target == name && crate::ownership::replacement::renamed_meanwhile(&f, name) {
        return Err(crate::ownership::replacement::busy(
            session_id, name, &f.id, None,
        ));
    }
    let identity = identity_findings(engine, &c, &f, session_id).await?;
    if !identity.is_empty() {
        return Ok((c, identity));
    }
    let mut out = Vec::new();
    out.extend(findings::state_finding(f.state, &f.raw_state));
    let host = c.host_config.as_ref();
    let init_flag = host.and_then(|h| h.init).unwrap_or(false);
    if !init_flag {
        out.push(Finding::hard(
            code::INIT_MISSING,
            "the container was created without an init process (`HostConfig.Init`)".into(),
        ));
    }
    let mounts = c.mounts.clone().unwrap_or_default();
    let tmpfs: BTreeMap<String, String> = host
        .and_then(|h| h.tmpfs.clone())
        .unwrap_or_default()
        .into_iter()
        .collect();
    if let Some(expected) = &expect.mounts {
        out.extend(findings::mount_findings(expected, &mounts, &tmpfs));
    }
    if f.state != "running" {
        // Exec, writable paths and ports are checked once the container runs (after repair).
        return Ok((c, out));
    }
    if crate::engine::netguard::unguarded(engine, &c).await? {
        out.push(Finding::repairable(
            code::NETWORK_UNGUARDED,
            format!(
                "container {} is isolated, but nothing records that its current run (started {}) got the network guard's rules: it may reach the local network",
                f.id,
                c.state.as_ref().and_then(|s| s.started_at.as_deref()).unwrap_or("?")
            ),
        ));
    }
    let entry = c
        .config
        .as_ref()
        .and_then(|cfg| cfg.entrypoint.as_ref())
        .and_then(|e| e.first().cloned())
        .unwrap_or_default();
    match run(engine, &f, &["cat", "/proc/1/comm"], None).await {
        Ok((0, stdout)) => {
            let pid1 = stdout.trim();
            let program = entry.rsplit('/').next().unwrap_or_default();
            if init_flag && !program.is_empty() && pid1 == program {
                out.push(Finding::hard(
                    code::INIT_MISSING,
                    format!("PID 1 is the entrypoint `{pid1}`, not an init process"),
                ));
            }
        }
        Ok((exit, _)) => out.push(Finding::hard(
            code::EXEC_FAILED,
            format!("`cat /proc/1/comm` exited with {exit}"),
        )),
        Err(e) => {
            out.push(Finding::hard(
                code::EXEC_FAILED,
                format!("an exec in the container failed: {e}"),
            ));
            return Ok((c, out));
        }
    }
    let read_only_root = host.and_then(|h| h.readonly_rootfs).unwrap_or(false);
    for (i, path) in expect.writable_paths.iter().enumerate() {
        let exit = probe_writable(engine, &f, path, expect.user.as_deref()).await?;
        let ro = findings::read_only_at(path, &mounts, read_only_root);
        out.extend(findings::writable_finding(path, i, exit, ro));
    }
    if let Some(ports) = &expect.ports {
        out.extend(findings::port_findings(ports, &f.ports));
    }
    Ok((c, out))
}

/// Identity: berth's container for this session, recorded at creation with these labels.
async fn identity_findings(
    engine: &Engine,
    c: &Inspected,
    f: &Facts,
    session_id: &str,
) -> Result<Vec<Finding>> {
    let foreign = |why: String| Ok(vec![Finding::hard(code::IDENTITY_FOREIGN, why)]);
    let Some(m) = &f.managed else {
        return foreign(format!(
            "container `{}` does not carry berth's managed labels",
            f.name
        ));
    };
    if m.session_id != session_id {
        return foreign(format!(
            "container `{}` belongs to session {:?}",
            f.name, m.session_id
        ));
    }
    if let Some(why) = not_berth_made(engine, c, f).await? {
        return foreign(format!(
            "container `{}` carries berth's labels but berth did not create it ({why})",
            f.name
        ));
    }
    match records::creation_record(engine, &f.id).await? {
        None => Ok(vec![Finding::hard(
            code::IDENTITY_UNRECORDED,
            format!(
                "no creation record names container {} under `{}`: it is not the container berth created and set up there",
                f.id, f.name
            ),
        )
        .field("id")]),
        Some(None) => Ok(Vec::new()),
        Some(Some(recorded)) => {
            let now = c.labels();
            Ok(findings::label_findings(&recorded, &now).into_iter().collect())
        }
    }
}

/// Runs `argv` (as `user`, or the container's user) and returns its exit code and stdout.
pub(crate) async fn run(
    engine: &Engine,
    f: &Facts,
    argv: &[&str],
    user: Option<&str>,
) -> Result<(i64, String)> {
    let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
    let opts = ExecOptions {
        user: user.map(str::to_string),
        timeout_ms: Some(EXEC_TIMEOUT_MS),
        max_buffer_bytes: Some(64 * 1024),
        ..Default::default()
    };
    let never = CancellationToken::new();
    let out = exec::exec(engine, &f.id, &f.name, &argv, &opts, &never).await?;
    Ok((
        out.exit_code,
        String::from_utf8_lossy(&out.stdout).into_owned(),
    ))
}

/// Deadline of each verify and repair exec, in milliseconds.
pub(crate) const EXEC_TIMEOUT_MS: u64 = 30_000;

/// The writable probe: a constant script; the path and a random token are its arguments.
const PROBE: &str = r#"d="$1"; t="$2"; [ -d "$d" ] || exit 3; f="$d/.berth-probe-$t"; printf %s "$t" > "$f" 2>/dev/null || exit 4; r="$(cat "$f" 2>/dev/null)"; rm -f "$f"; [ "$r" = "$t" ] || exit 4"#;

/// Exit code of the writable probe of `path`: 0, [`findings::PROBE_MISSING`] or [`findings::PROBE_DENIED`].
async fn probe_writable(engine: &Engine, f: &Facts, path: &str, user: Option<&str>) -> Result<i64> {
    let token = hex::encode(rand::random::<[u8; 8]>());
    let argv = ["sh", "-c", PROBE, "berth-probe", path, &token];
    Ok(run(engine, f, &argv, user).await?.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(code: &'static str, kind: Kind) -> Finding {
        match kind {
            Kind::Hard => Finding::hard(code, String::new()),
            Kind::Repairable => Finding::repairable(code, String::new()),
        }
    }

    #[test]
    fn outcomes_mark_what_repair_fixed() {
        let v = outcome("i".into(), vec![f(code::MOUNT_MISSING, Kind::Hard)], None);
        assert!(!v.ok);
        assert!(!v.findings[0].repaired);
        // One fixed, one left, one new.
        let before = vec![
            f(code::STATE_STOPPED, Kind::Repairable),
            f(code::WRITABLE_DENIED, Kind::Repairable),
        ];
        let after = vec![
            f(code::WRITABLE_DENIED, Kind::Repairable),
            f(code::PORT_UNMAPPED, Kind::Hard),
        ];
        let v = outcome("i".into(), before.clone(), Some(after));
        let got: Vec<(&str, bool)> = v.findings.iter().map(|f| (f.code, f.repaired)).collect();
        assert_eq!(
            got,
            vec![
                (code::STATE_STOPPED, true),
                (code::WRITABLE_DENIED, false),
                (code::PORT_UNMAPPED, false)
            ]
        );
        assert!(!v.ok);
        let v = outcome("i".into(), before, Some(Vec::new()));
        assert!(v.ok && v.findings.iter().all(|f| f.repaired));
        assert!(outcome("i".into(), Vec::new(), None).ok);
    }
}

//! Repair: fixes repairable findings in place, by container id; verify checks again after.
//!
//! Engine calls: `POST /containers/{id}/start` (`state-stopped`), `POST /containers/{id}/unpause`
//! (`state-paused`), the network guard after either and for `network-unguarded`
//! (`GET /containers/{id}/json`, `GET /volumes/{name}`, and when the run has no guard record
//! the guard's helper run and record: `engine::netguard::ensure`), and for `writable-missing` / `writable-denied` two execs: `id -u`/`id -g`
//! as the session's user, then, as root, `mkdir -p`, `chown <uid>:<gid>` and `chmod u+rwx` of
//! the path (passed as an argument, never part of a shell string). Hard findings are left.
//!
//! When that root exec cannot `chown` (Docker starts an exec as user 0 without capabilities in
//! a container with `no-new-privileges` and a non-root user), the engine does it instead: a
//! root exec `mkdir -p`s the path and reads its mode (neither needs a capability under
//! root-owned parents), then `PUT /containers/{id}/archive` of one directory entry with the
//! user as owner and the mode plus `u+rwx` (the engine applies both to the existing directory).

use crate::engine::calls;
use crate::engine::connection::{status, Engine};
use crate::engine::container::{Facts, Inspected};
use crate::files::archive::{self, Owner};
use crate::lifecycle::verify::run;
use crate::model::errors::Result;
use crate::model::findings::{code, Finding};
use crate::model::verification::Expect;

/// Gives the path `$1` to `$2` (`uid:gid`) with `u+rwx`, creating it when missing.
const FIX_WRITABLE: &str = r#"mkdir -p -- "$1" && chown -- "$2" "$1" && chmod u+rwx -- "$1""#;
/// Creates the directory `$1` (and its parents) and prints its mode in octal.
const MAKE_AND_STAT: &str = r#"mkdir -p -- "$1" && stat -c %a -- "$1""#;

/// Repairs the repairable `findings` of container `c`. A repair that fails is not an error:
/// the next check reports the finding again. Errors (engine unreachable and the like):
/// `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn repair(
    engine: &Engine,
    c: &Inspected,
    findings: &[Finding],
    expect: &Expect,
) -> Result<()> {
    let f = Facts::from_inspect(c);
    let has = |code: &str| findings.iter().any(|x| x.code == code);
    if has(code::STATE_PAUSED) {
        if let Err(e) = calls::unpause(engine, &f.id).await? {
            if status(&e).is_none() {
                return Err(engine.error("unpause container", e));
            }
        }
    }
    if has(code::STATE_STOPPED) {
        if let Err(e) = calls::start(engine, &f.id).await? {
            if status(&e).is_none() {
                return Err(engine.error("start container", e));
            }
        }
    }
    // A start makes a new network namespace, and a run found without its guard record (also
    // one that was paused) has no rules: they go in again, before any repair exec runs.
    if has(code::STATE_STOPPED) || has(code::STATE_PAUSED) || has(code::NETWORK_UNGUARDED) {
        Box::pin(crate::engine::netguard::ensure(engine, &f.id)).await?;
    }
    let writable: Vec<&str> = findings
        .iter()
        .filter(|x| x.code == code::WRITABLE_MISSING || x.code == code::WRITABLE_DENIED)
        .filter_map(|x| x.path.as_deref())
        .collect();
    if writable.is_empty() {
        return Ok(());
    }
    let Some((uid, gid)) = user_ids(engine, &f, expect.user.as_deref()).await else {
        return Ok(());
    };
    let owner = format!("{uid}:{gid}");
    for path in writable {
        let argv = ["sh", "-c", FIX_WRITABLE, "berth-repair", path, &owner];
        // A failure shows in the check that follows.
        if !matches!(run(engine, &f, &argv, Some("0")).await, Ok((0, _))) {
            let _ = give_by_archive(engine, &f, path, uid, gid).await;
        }
    }
    Ok(())
}

/// The numeric uid and gid of `user` (the container's own user when `None`) as the engine
/// resolves them: `id -u` and `id -g` exec'd as that user. `None` when either does not work.
pub(crate) async fn user_ids(engine: &Engine, f: &Facts, user: Option<&str>) -> Option<(u64, u64)> {
    let (Ok((0, uid)), Ok((0, gid))) = (
        run(engine, f, &["id", "-u"], user).await,
        run(engine, f, &["id", "-g"], user).await,
    ) else {
        return None;
    };
    Some((uid.trim().parse().ok()?, gid.trim().parse().ok()?))
}

/// Creates `path` as root and gives it to `uid:gid` with `u+rwx` through the archive API (see
/// the module docs). Best effort: `Ok(false)` when a step did not work.
async fn give_by_archive(
    engine: &Engine,
    f: &Facts,
    path: &str,
    uid: u64,
    gid: u64,
) -> Result<bool> {
    let argv = ["sh", "-c", MAKE_AND_STAT, "berth-repair", path];
    let (0, mode) = run(engine, f, &argv, Some("0")).await? else {
        return Ok(false);
    };
    let Ok(mode) = u32::from_str_radix(mode.trim(), 8) else {
        return Ok(false);
    };
    give(
        engine,
        &f.id,
        path,
        (mode & 0o7777) | 0o700,
        Owner { uid, gid },
    )
    .await
}

/// `PUT /containers/{id}/archive` of one directory entry `path` with `mode`, owned by `owner`:
/// the engine creates the directory (missing parents as root, 0755) or gives the existing one
/// that owner and mode, with no capability needed in the container. `Ok(false)` when the
/// engine refused it. Errors: `E_ABORTED`, `E_ENGINE_UNAVAILABLE` (the call's bounds).
pub(crate) async fn give(
    engine: &Engine,
    id: &str,
    path: &str,
    mode: u32,
    owner: Owner,
) -> Result<bool> {
    let header = archive::dir_header(path, mode, owner)?;
    let empty = futures_util::stream::empty::<std::io::Result<bytes::Bytes>>();
    Ok(archive::upload(engine, id, header, 0, empty).await?.is_ok())
}

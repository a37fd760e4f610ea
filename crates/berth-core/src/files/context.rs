//! File context: the container a file call works on, and what berth learns once per session
//! about its filesystem (the user's numeric ids, the mounts only an exec reaches).
//!
//! One exec of `sh -c 'id -u; id -g; cat /proc/mounts'` (as the container's user) answers
//! both; without `sh`/`id`, or while the container is stopped, the inspected numeric `User`
//! and declared tmpfs mounts stand in. Engine calls: `GET /containers/{id}/json`, one exec.

use tokio_util::sync::CancellationToken;

use crate::engine::connection::Engine;
use crate::engine::container;
use crate::exec::{self, ExecOptions};
use crate::files::FileAccess;
use crate::model::errors::{Error, Result};

const PROBE_SCRIPT: &str = "id -u; id -g; cat /proc/mounts";
const PROBE_TIMEOUT_MS: u64 = 30_000;
/// Mount points the engine bind-mounts itself and serves through the archive API.
const ENGINE_FILES: [&str; 3] = ["/etc/hosts", "/etc/hostname", "/etc/resolv.conf"];

/// The container a file call works on.
#[derive(Clone, Copy)]
pub(crate) struct Target<'a> {
    /// The engine.
    pub engine: &'a Engine,
    /// Full container id.
    pub id: &'a str,
    /// Container name (messages).
    pub name: &'a str,
    /// Session id (messages).
    pub session_id: &'a str,
}

/// What berth learned once per session about the container's filesystem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FsContext {
    /// The container user's numeric uid.
    pub uid: u64,
    /// The container user's numeric gid.
    pub gid: u64,
    /// Mount points the archive API cannot reach (tmpfs and other non-volume mounts).
    pub exec_mounts: Vec<String>,
    /// Whether the probe's exec of `sh` answered (the image has `sh`).
    pub shell: bool,
}

impl FsContext {
    /// The user, as `uid:gid` (messages).
    pub(crate) fn user(&self) -> String {
        format!("{}:{}", self.uid, self.gid)
    }

    /// Whether file calls run as the session's user through [`crate::files::as_user`]: with
    /// [`FileAccess::User`] and a user other than root. Without `sh` that cannot be checked:
    /// `E_PERMISSION_DENIED` (fail closed; `files: 'engine'` lifts it).
    pub(crate) fn as_user(&self, access: FileAccess) -> Result<bool> {
        if access == FileAccess::Engine || self.uid == 0 {
            return Ok(false);
        }
        if !self.shell {
            return Err(Error::PermissionDenied {
                operation: "check (the image has no `sh`; files: 'engine' skips the check)".into(),
                path: "/".into(),
                user: self.user(),
            });
        }
        Ok(true)
    }

    /// Whether `path` lies on a mount only an exec can reach (longest mount prefix wins).
    pub(crate) fn needs_exec(&self, path: &str) -> bool {
        self.exec_mounts.iter().any(|m| under(path, m))
    }
}

fn under(path: &str, mount: &str) -> bool {
    path == mount || (path.starts_with(mount) && path.as_bytes().get(mount.len()) == Some(&b'/'))
}

/// Parses `PROBE_SCRIPT`'s output: uid, gid, and the mount points of `/proc/mounts` that are
/// neither `/` nor one of `reachable` (the container's volume and bind mount destinations).
pub(crate) fn parse_probe(stdout: &str, reachable: &[String]) -> Option<FsContext> {
    let mut lines = stdout.lines();
    let uid = lines.next()?.trim().parse().ok()?;
    let gid = lines.next()?.trim().parse().ok()?;
    let mut exec_mounts: Vec<String> = lines
        .filter_map(|l| l.split(' ').nth(1))
        .map(unescape_mount)
        .filter(|m| m != "/" && !reachable.contains(m) && !ENGINE_FILES.contains(&m.as_str()))
        .collect();
    exec_mounts.sort();
    exec_mounts.dedup();
    Some(FsContext {
        uid,
        gid,
        exec_mounts,
        shell: true,
    })
}

/// `/proc/mounts` escapes space, tab, newline and backslash as `\ooo`.
fn unescape_mount(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        if let (b'\\', Some(d)) = (b[i], octal) {
            out.push(d.iter().fold(0u8, |v, c| v.wrapping_mul(8) + (c - b'0')));
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Learns the container user's ids and the mount table (see the module docs). The flag is
/// true when the exec answered (worth caching for the session); false for the fallback from
/// inspect alone (a stopped container, an image without `sh`/`id`), which a later call retries.
///
/// `GET /containers/{id}/json`, then one exec. Errors: `E_SESSION_NOT_FOUND`, `E_ENGINE`.
pub(crate) async fn probe(t: Target<'_>) -> Result<(FsContext, bool)> {
    let c = container::inspect(t.engine, t.id)
        .await?
        .ok_or_else(|| gone(t))?;
    let reachable: Vec<String> = c
        .mounts
        .iter()
        .flatten()
        .filter_map(|m| m.destination.clone())
        .collect();
    let opts = ExecOptions {
        timeout_ms: Some(PROBE_TIMEOUT_MS),
        ..Default::default()
    };
    let argv = ["sh".to_string(), "-c".into(), PROBE_SCRIPT.into()];
    if let Ok(out) = exec::exec(
        t.engine,
        t.id,
        t.name,
        &argv,
        &opts,
        &CancellationToken::new(),
    )
    .await
    {
        if out.exit_code == 0 {
            if let Some(ctx) = parse_probe(&String::from_utf8_lossy(&out.stdout), &reachable) {
                return Ok((ctx, true));
            }
        }
    }
    // No `sh`/`id` (or not running): numeric `User` only, and the declared tmpfs mounts.
    let user = c
        .config
        .as_ref()
        .and_then(|c| c.user.clone())
        .unwrap_or_default();
    let mut ids = user.split(':').map(|p| p.parse::<u64>().ok());
    let uid = ids.next().flatten().unwrap_or(0);
    let gid = ids.next().flatten().unwrap_or(uid);
    let mut exec_mounts: Vec<String> = c
        .host_config
        .as_ref()
        .and_then(|h| h.tmpfs.as_ref())
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    exec_mounts.push("/dev".into());
    Ok((
        FsContext {
            uid,
            gid,
            exec_mounts,
            shell: false,
        },
        false,
    ))
}

/// `E_SESSION_NOT_FOUND` for the session `t` names.
pub(crate) fn gone(t: Target<'_>) -> Error {
    Error::SessionNotFound {
        session_id: t.session_id.to_string(),
        name: t.name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_output_gives_ids_and_the_mounts_only_exec_reaches() {
        let out = "1000\n1001\noverlay / overlay rw 0 0\nproc /proc proc rw 0 0\ntmpfs /dev tmpfs rw 0 0\n\
                   tmpfs /scratch\\040dir tmpfs rw 0 0\n/dev/sda1 /data ext4 rw 0 0\n/dev/sda1 /etc/hosts ext4 rw 0 0\n";
        let ctx = parse_probe(out, &["/data".to_string()]).unwrap();
        assert_eq!((ctx.uid, ctx.gid), (1000, 1001));
        assert_eq!(ctx.exec_mounts, vec!["/dev", "/proc", "/scratch dir"]);
        assert!(ctx.needs_exec("/dev/shm/x"));
        assert!(ctx.needs_exec("/scratch dir/f"));
        assert!(!ctx.needs_exec("/devices/x"));
        assert!(!ctx.needs_exec("/data/x"));
        assert!(!ctx.needs_exec("/tmp/x"));
        assert_eq!(parse_probe("x\n", &[]), None);
    }
}

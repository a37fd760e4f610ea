//! User directories: at create (and recreate), before the setup commands, the session's
//! working directory and its writable paths are given to the session's user when the image
//! does not ship them (`docs/design.md#user-directories`).
//!
//! The rule, for a session whose user is not root and whose root filesystem is writable:
//! - a path at or under a mount point (bind mount, volume, tmpfs) is never touched: its
//!   content is the host's or the volume's, not the image's;
//! - `workDir` is given to the user when the engine made it: it is a directory the
//!   container's filesystem diff lists as added (Docker makes a missing working directory at
//!   create, `root:root 0755`; Podman makes it at start, already the user's);
//! - a `writablePaths` entry is created and given to the user when it is absent, and given to
//!   the user when the diff lists it as added (made by the engine, e.g. as the working
//!   directory or one of its parents);
//! - a directory the image ships keeps its owner and mode (a writable path there that the
//!   user cannot write is left to `verifySession({ repair: true })`).
//!
//! "Given" is verify's repair mechanism: one directory entry owned by the user, with its mode
//! plus `u+rwx`, uploaded through the archive API ([`repair::give`]); the engine applies it,
//! so no capability is needed in the container (`no-new-privileges` leaves a root exec none).
//!
//! A container whose user is root (the spec's `user`, else the image's, empty or `0`/`root`)
//! needs none of it: after the inspect, nothing more is asked.
//!
//! Engine calls (each bounded by the create's scope): `GET /containers/{id}/json`,
//! `GET /containers/{id}/changes`, `HEAD /containers/{id}/archive?path=` per path; when a
//! path is to be given, two execs (`id -u`, `id -g` as the session's user) and one
//! `PUT /containers/{id}/archive` per path.

use std::collections::HashSet;

use bollard::models::ChangeType;

use crate::engine::connection::Engine;
use crate::engine::container::{inspect, is_root, Facts};
use crate::files::archive::{self, Owner, Stat};
use crate::lifecycle::repair;
use crate::model::errors::Result;
use crate::model::spec::CreateSpec;

/// Mode of a directory berth creates for the user.
const NEW_DIR_MODE: u32 = 0o755;

/// Gives `spec`'s working directory and writable paths to the session's user in the started
/// container `id`, by the rule in the module docs. A path the engine refuses to change is
/// left as it is (a setup command or `verifySession` shows it). Errors: `E_ABORTED`,
/// `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn give_to_user(engine: &Engine, id: &str, spec: &CreateSpec) -> Result<()> {
    let wanted: Vec<(String, bool)> = spec
        .work_dir
        .iter()
        .map(|w| (clean(w), false))
        .chain(spec.writable_paths.iter().map(|p| (clean(p), true)))
        .collect();
    if wanted.is_empty()
        || spec.user.as_deref().is_some_and(is_root)
        || spec.security.read_only_root_filesystem
    {
        return Ok(());
    }
    let Some(c) = inspect(engine, id).await? else {
        return Ok(());
    };
    // No `user` in the spec: the image's, which the container's config holds; root (or
    // none, which is root) owns what the engine made already, so nothing is asked of it.
    if c.runs_as_root() {
        return Ok(());
    }
    let f = Facts::from_inspect(&c);
    let mut mounted: Vec<String> = c
        .mounts
        .iter()
        .flatten()
        .filter_map(|m| m.destination.as_deref().map(clean))
        .collect();
    mounted.extend(
        c.host_config
            .as_ref()
            .and_then(|h| h.tmpfs.as_ref())
            .into_iter()
            .flat_map(|t| t.keys().map(|k| clean(k))),
    );
    let candidates: Vec<&(String, bool)> = wanted
        .iter()
        .filter(|(p, _)| p != "/" && !under_any(p, &mounted))
        .collect();
    if candidates.is_empty() {
        return Ok(());
    }
    let added = added_paths(engine, id).await?;
    let mut todo: Vec<(String, u32)> = Vec::new();
    for (path, writable) in candidates {
        if todo.iter().any(|(p, _)| p == path) {
            continue;
        }
        let mode = match archive::stat_with_mode(engine, id, path).await? {
            (Stat::Absent, _) if *writable => NEW_DIR_MODE,
            (Stat::Dir, mode) if added.contains(path) => mode,
            _ => continue,
        };
        todo.push((path.clone(), mode | 0o700));
    }
    if todo.is_empty() {
        return Ok(());
    }
    let Some((uid, gid)) = repair::user_ids(engine, &f, spec.user.as_deref()).await else {
        return Ok(());
    };
    if uid == 0 {
        return Ok(());
    }
    for (path, mode) in todo {
        repair::give(engine, id, &path, mode, Owner { uid, gid }).await?;
    }
    Ok(())
}

/// The paths the container's filesystem diff lists as added (not in the image); none when the
/// engine does not answer it. Errors: `E_ABORTED`, `E_ENGINE_UNAVAILABLE`.
async fn added_paths(engine: &Engine, id: &str) -> Result<HashSet<String>> {
    let changes = crate::engine::calls::changes(engine, id)
        .await?
        // An engine without the diff: nothing is known to be added, nothing is given.
        .unwrap_or_default();
    Ok(changes
        .into_iter()
        .flatten()
        .filter(|c| c.kind == ChangeType::_1)
        .map(|c| clean(&c.path))
        .collect())
}

/// An absolute path without empty, `.` components or a trailing slash (`..` is rejected by
/// the spec's validation before).
fn clean(path: &str) -> String {
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    format!("/{}", parts.join("/"))
}

/// `path` is one of `roots` or inside one.
fn under_any(path: &str, roots: &[String]) -> bool {
    roots.iter().any(|r| {
        r == "/"
            || path == r
            || path
                .strip_prefix(r.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_cleaned_and_mounts_cover_their_subtrees() {
        assert_eq!(clean("/workspace/"), "/workspace");
        assert_eq!(clean("//a/./b//"), "/a/b");
        assert_eq!(clean("/"), "/");
        let roots = vec!["/work".to_string(), "/data".to_string()];
        assert!(under_any("/work", &roots));
        assert!(under_any("/data/x", &roots));
        assert!(!under_any("/workspace", &roots));
        assert!(!under_any("/", &roots));
    }

    #[test]
    fn root_is_uid_zero_or_the_name() {
        assert!(is_root("root"));
        assert!(is_root("0:0"));
        assert!(is_root("0"));
        assert!(!is_root("1000:0"));
        assert!(!is_root("node"));
    }
}

//! Host escape: bind-mount sources that hand the sandbox the host, refused unless the caller
//! opts in with `allowHostEscape: true`.
//!
//! Refused: `/`; `/proc`, `/sys`, `/dev` and anything under them; the engine's own socket
//! (the path berth reached it on, and the usual ones: `/var/run/docker.sock`,
//! `/run/docker.sock`, `/run/podman/podman.sock`, `/var/run/podman/podman.sock`, the
//! rootless `$XDG_RUNTIME_DIR/docker.sock`, `$XDG_RUNTIME_DIR/podman/podman.sock`,
//! `/run/user/<uid>/...` and `~/.docker/run/docker.sock`); and any parent directory of those.
//! Paths are compared both as given and canonical (symlinks resolved on this host), so
//! `/var/run` (a link to `/run`) is caught as well. No engine call.

use std::path::{Path, PathBuf};

use crate::model::errors::{Error, Result};
use crate::model::spec::Mount;

/// Kernel filesystems whose every path is refused.
const KERNEL_TREES: [&str; 3] = ["/proc", "/sys", "/dev"];
/// Engine sockets refused wherever berth reached its engine.
const USUAL_SOCKETS: [&str; 4] = [
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/podman/podman.sock",
    "/var/run/podman/podman.sock",
];

/// Why `source` would hand the sandbox the host, or `None`. `sockets` are the engine sockets
/// to protect (absolute paths); everything is compared by path components.
pub(crate) fn escape_reason(source: &Path, sockets: &[PathBuf]) -> Option<String> {
    if source == Path::new("/") {
        return Some("it is the host's root filesystem".into());
    }
    for tree in KERNEL_TREES {
        let tree = Path::new(tree);
        if source.starts_with(tree) {
            return Some(format!("it is in the host's `{}`", tree.display()));
        }
    }
    for s in sockets {
        if s == source {
            return Some(format!("it is the engine socket `{}`", s.display()));
        }
        if s.starts_with(source) {
            return Some(format!("it contains the engine socket `{}`", s.display()));
        }
    }
    None
}

/// The sockets to protect: `endpoint` (a unix path or `unix://` URL), the usual ones and the
/// rootless ones, each as given and canonical when it exists.
pub(crate) fn engine_sockets(endpoint: Option<&str>) -> Vec<PathBuf> {
    let mut raw: Vec<PathBuf> = USUAL_SOCKETS.iter().map(PathBuf::from).collect();
    if let Some(e) = endpoint {
        let p = e.strip_prefix("unix://").unwrap_or(e);
        if p.starts_with('/') {
            raw.push(PathBuf::from(p));
        }
    }
    if let Ok(dir) = std::env::var("XDG_RUNTIME_DIR") {
        raw.push(Path::new(&dir).join("docker.sock"));
        raw.push(Path::new(&dir).join("podman/podman.sock"));
    }
    #[cfg(unix)]
    {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let uid = unsafe { libc::geteuid() };
        raw.push(PathBuf::from(format!("/run/user/{uid}/docker.sock")));
        raw.push(PathBuf::from(format!("/run/user/{uid}/podman/podman.sock")));
    }
    if let Ok(home) = std::env::var("HOME") {
        raw.push(Path::new(&home).join(".docker/run/docker.sock"));
    }
    let mut all = Vec::with_capacity(raw.len() * 2);
    for p in raw {
        if let Ok(c) = std::fs::canonicalize(&p) {
            all.push(c);
        }
        all.push(p);
    }
    all.sort();
    all.dedup();
    all
}

/// Refuses every mount whose source escapes to the host (see the module docs), comparing the
/// source as given and canonical. `E_INVALID_ARGUMENT` naming `mounts[i].source`.
pub(crate) fn check(mounts: &[Mount], sockets: &[PathBuf]) -> Result<()> {
    for (i, m) in mounts.iter().enumerate() {
        let given = PathBuf::from(&m.source);
        let canonical = std::fs::canonicalize(&given).ok();
        let reason = escape_reason(&given, sockets)
            .or_else(|| canonical.as_deref().and_then(|c| escape_reason(c, sockets)));
        if let Some(reason) = reason {
            return Err(Error::invalid(
                format!("mounts[{i}].source"),
                format!(
                    "binding `{}` would give the sandbox the host: {reason}; pass allowHostEscape: true to allow it",
                    m.source
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(p: &str) -> Option<String> {
        let sockets = vec![
            PathBuf::from("/run/docker.sock"),
            PathBuf::from("/run/user/1000/podman/podman.sock"),
        ];
        escape_reason(Path::new(p), &sockets)
    }

    #[test]
    fn the_host_root_kernel_trees_sockets_and_their_parents_are_refused() {
        for bad in [
            "/",
            "/proc",
            "/proc/1/root",
            "/sys",
            "/dev",
            "/dev/sda",
            "/run/docker.sock",
            "/run",
            "/run/user",
            "/run/user/1000/podman",
        ] {
            assert!(reason(bad).is_some(), "{bad}");
        }
        for ok in [
            "/work",
            "/home/me/project",
            "/devices",
            "/processes",
            "/run/user/1001",
            "/run/docker.sock.d",
            "/tmp",
        ] {
            assert_eq!(reason(ok), None, "{ok}");
        }
    }

    #[test]
    fn sockets_include_the_endpoint_and_the_usual_ones() {
        let s = engine_sockets(Some("unix:///srv/engine/e.sock"));
        assert!(s.contains(&PathBuf::from("/srv/engine/e.sock")));
        assert!(s.contains(&PathBuf::from("/var/run/docker.sock")));
        assert!(s.contains(&PathBuf::from("/run/podman/podman.sock")));
    }

    #[test]
    fn a_symlink_to_the_root_is_caught_by_its_canonical_path() {
        let dir = std::env::temp_dir().join(format!("berth-escape-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("host");
        std::os::unix::fs::symlink("/", &link).unwrap();
        let m = Mount {
            source: link.display().to_string(),
            target: "/host".into(),
            read_only: false,
        };
        let e = check(&[m], &[]).unwrap_err();
        assert_eq!(e.code(), "E_INVALID_ARGUMENT");
        assert!(e.to_string().contains("mounts[0].source"), "{e}");
        let fine = Mount {
            source: dir.display().to_string(),
            target: "/d".into(),
            read_only: false,
        };
        assert!(check(&[fine], &[]).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

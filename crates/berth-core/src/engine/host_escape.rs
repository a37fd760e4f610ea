//! Host escape: bind-mount sources that hand the sandbox the host, refused unless the caller
//! opts in with `allowHostEscape: true`.
//!
//! Refused, whatever the mount's mode:
//! - `/`; `/proc`, `/sys`, `/dev` and anything under them;
//! - a unix socket (stat after resolving symlinks: any socket, an engine's or not), and a
//!   directory holding one: the source equal to or a parent of a socket bound on this host
//!   (the paths in `/proc/net/unix`, abstract ones skipped), of the socket berth reached its
//!   engine on, and of the usual engine sockets (`/var/run/docker.sock`, `/run/docker.sock`,
//!   `/run/podman/podman.sock`, `/var/run/podman/podman.sock`, the rootless
//!   `$XDG_RUNTIME_DIR/docker.sock`, `$XDG_RUNTIME_DIR/podman/podman.sock`,
//!   `/run/user/<uid>/...` and `~/.docker/run/docker.sock`), which also stand in when
//!   `/proc/net/unix` cannot be read (not Linux) and for a remote engine;
//! - engine state and runtime directories ([`ENGINE_DIRS`]), anything under them and their
//!   parents (`/var/lib`, `/var`);
//! - the host's system configuration `/etc` and `/boot` themselves.
//!
//! Refused unless read-only: anything under `/etc` or `/boot` (a read-only `/etc/hosts` or
//! `/etc/ssl/certs` is fine; a writable `/etc/cron.d` is not).
//!
//! Paths are compared by components, both as given and canonical (symlinks resolved on this
//! host), so `/var/run` (a link to `/run`) is caught as well. Only berth's own host is seen:
//! the stat and `/proc/net/unix` are read for a local engine only. No engine call.

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

/// Engine state and runtime directories (container filesystems, volumes, the engines' and
/// containerd's sockets): refused with everything under them and every parent, in any mode.
/// The `/var/run` spellings are for hosts (or remote engines) where it is not a link to `/run`.
pub(crate) const ENGINE_DIRS: [&str; 9] = [
    "/var/lib/docker",
    "/var/lib/containers",
    "/var/lib/containerd",
    "/run/docker",
    "/run/containerd",
    "/run/containers",
    "/var/run/docker",
    "/var/run/containerd",
    "/var/run/containers",
];
/// Host system configuration: the directory itself is refused in any mode, anything under it
/// unless read-only.
pub(crate) const SYSTEM_CONFIG: [&str; 2] = ["/etc", "/boot"];

/// Why `source`, mounted read-only or not, would hand the sandbox the host, or `None`.
/// `sockets` are the unix sockets to protect (absolute paths); everything is compared by path
/// components. Pure: no filesystem access.
pub(crate) fn escape_reason(source: &Path, read_only: bool, sockets: &[PathBuf]) -> Option<String> {
    if source == Path::new("/") {
        return Some("it is the host's root filesystem".into());
    }
    for tree in KERNEL_TREES {
        let tree = Path::new(tree);
        if source.starts_with(tree) {
            return Some(format!("it is in the host's `{}`", tree.display()));
        }
    }
    for dir in ENGINE_DIRS {
        let dir = Path::new(dir);
        if source.starts_with(dir) {
            return Some(format!(
                "it is in the engine state directory `{}`",
                dir.display()
            ));
        }
        if dir.starts_with(source) {
            return Some(format!(
                "it contains the engine state directory `{}`",
                dir.display()
            ));
        }
    }
    for dir in SYSTEM_CONFIG {
        let dir = Path::new(dir);
        if source == dir {
            return Some(format!(
                "it is the host's system configuration `{}` (bind single entries under it read-only instead)",
                dir.display()
            ));
        }
        if source.starts_with(dir) && !read_only {
            return Some(format!(
                "it is in the host's system configuration `{}` and writable (readOnly: true is allowed)",
                dir.display()
            ));
        }
    }
    for s in sockets {
        if s == source {
            return Some(format!("it is the unix socket `{}`", s.display()));
        }
        if s.starts_with(source) {
            return Some(format!("it contains the unix socket `{}`", s.display()));
        }
    }
    None
}

/// The socket paths bound in this network namespace, from the text of `/proc/net/unix`: the
/// path column of each line, absolute ones only (abstract `@...` and relative ones skipped).
/// Pure.
pub(crate) fn parse_proc_net_unix(text: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for line in text.lines().skip(1) {
        // Num RefCount Protocol Flags Type St Inode [Path]; a path may hold spaces.
        let mut rest = line;
        for _ in 0..7 {
            rest = rest.trim_start();
            rest = rest.find(char::is_whitespace).map_or("", |i| &rest[i..]);
        }
        let path = rest.trim_start();
        if path.starts_with('/') {
            out.push(PathBuf::from(path));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The sockets to protect: the usual engine sockets and the rootless ones, and for a local
/// engine (`local_endpoint`: a unix path or `unix://` URL; `None` for a remote one) that
/// endpoint and every socket in `/proc/net/unix` when it can be read. Each as given and
/// canonical when it exists.
pub(crate) fn engine_sockets(local_endpoint: Option<&str>) -> Vec<PathBuf> {
    let mut raw: Vec<PathBuf> = USUAL_SOCKETS.iter().map(PathBuf::from).collect();
    if let Some(e) = local_endpoint {
        let p = e.strip_prefix("unix://").unwrap_or(e);
        if p.starts_with('/') {
            raw.push(PathBuf::from(p));
        }
        if let Ok(text) = std::fs::read_to_string("/proc/net/unix") {
            raw.extend(parse_proc_net_unix(&text));
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
    raw.sort();
    raw.dedup();
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

/// True when `path` is a unix socket, symlinks followed.
fn is_socket(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(path).is_ok_and(|m| m.file_type().is_socket())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Refuses every mount whose source escapes to the host (see the module docs), comparing the
/// source as given and canonical; with `local` (the engine shares this filesystem) a source
/// that is a unix socket is refused too. `E_INVALID_ARGUMENT` naming `mounts[i].source`.
pub(crate) fn check(mounts: &[Mount], sockets: &[PathBuf], local: bool) -> Result<()> {
    for (i, m) in mounts.iter().enumerate() {
        let given = PathBuf::from(&m.source);
        let canonical = std::fs::canonicalize(&given).ok();
        let reason = escape_reason(&given, m.read_only, sockets)
            .or_else(|| {
                canonical
                    .as_deref()
                    .and_then(|c| escape_reason(c, m.read_only, sockets))
            })
            .or_else(|| (local && is_socket(&given)).then(|| "it is a unix socket".to_string()));
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

    fn reason_rw(p: &str, read_only: bool) -> Option<String> {
        let sockets = vec![
            PathBuf::from("/run/docker.sock"),
            PathBuf::from("/run/user/1000/podman/podman.sock"),
            PathBuf::from("/run/berth-podman/podman.sock"),
            PathBuf::from("/tmp/.X11-unix/X0"),
        ];
        escape_reason(Path::new(p), read_only, &sockets)
    }

    fn reason(p: &str) -> Option<String> {
        reason_rw(p, false)
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
            "/run/berth-podman",
            "/run/berth-podman/podman.sock",
            "/tmp",
            "/tmp/.X11-unix",
        ] {
            assert!(reason(bad).is_some(), "{bad}");
            assert!(reason_rw(bad, true).is_some(), "read-only {bad}");
        }
        for ok in [
            "/work",
            "/home/me/project",
            "/devices",
            "/processes",
            "/run/user/1001",
            "/run/docker.sock.d",
            "/tmp/project",
        ] {
            assert_eq!(reason(ok), None, "{ok}");
        }
    }

    #[test]
    fn engine_state_dirs_everything_under_them_and_their_parents_are_refused_in_any_mode() {
        for bad in [
            "/var/lib/docker",
            "/var/lib/docker/volumes/v/_data",
            "/var/lib/containers",
            "/var/lib/containers/storage",
            "/var/lib/containerd",
            "/run/containerd",
            "/run/containerd/containerd.sock",
            "/run/docker",
            "/run/docker/containerd/containerd.sock",
            "/var/run/docker",
            "/var/run/docker/containerd",
            "/run/containers",
            "/var/lib",
            "/var",
        ] {
            let r = reason(bad).unwrap_or_else(|| panic!("{bad}"));
            assert!(r.contains("engine state directory"), "{bad}: {r}");
            assert!(reason_rw(bad, true).is_some(), "read-only {bad}");
        }
        for ok in [
            "/var/lib/dockerfiles",
            "/var/log",
            "/var/lib/apt",
            "/run/docker-ish",
        ] {
            assert_eq!(reason(ok), None, "{ok}");
        }
    }

    #[test]
    fn etc_and_boot_are_refused_and_entries_under_them_only_when_writable() {
        for dir in ["/etc", "/boot"] {
            let r = reason_rw(dir, true).unwrap_or_else(|| panic!("{dir}"));
            assert!(r.contains("system configuration"), "{r}");
            assert!(reason(dir).is_some(), "{dir}");
        }
        for rw in ["/etc/cron.d", "/etc/passwd", "/etc/hosts", "/boot/grub"] {
            let r = reason(rw).unwrap_or_else(|| panic!("{rw}"));
            assert!(r.contains("readOnly: true"), "{r}");
        }
        for ro in [
            "/etc/hosts",
            "/etc/timezone",
            "/etc/ssl/certs",
            "/boot/config",
        ] {
            assert_eq!(reason_rw(ro, true), None, "{ro}");
        }
        for ok in ["/etcetera", "/bootstrap", "/home/me/etc"] {
            assert_eq!(reason(ok), None, "{ok}");
        }
    }

    #[test]
    fn proc_net_unix_gives_the_bound_paths_only() {
        let text = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 23456 /run/docker.sock\n\
            0000000000000000: 00000002 00000000 00010000 0001 01    17 /run/containerd/containerd.sock\n\
            0000000000000000: 00000003 00000000 00000000 0001 03 34567\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 45678 @/tmp/.X11-unix/X0\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 45679 relative.sock\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 45680 /tmp/with space/s.sock\n\
            0000000000000000: 00000003 00000000 00000000 0001 03 45681 /run/docker.sock\n";
        assert_eq!(
            parse_proc_net_unix(text),
            vec![
                PathBuf::from("/run/containerd/containerd.sock"),
                PathBuf::from("/run/docker.sock"),
                PathBuf::from("/tmp/with space/s.sock"),
            ]
        );
        assert!(parse_proc_net_unix("").is_empty());
    }

    #[test]
    fn sockets_include_the_endpoint_and_the_usual_ones() {
        let s = engine_sockets(Some("unix:///srv/engine/e.sock"));
        assert!(s.contains(&PathBuf::from("/srv/engine/e.sock")));
        assert!(s.contains(&PathBuf::from("/var/run/docker.sock")));
        assert!(s.contains(&PathBuf::from("/run/podman/podman.sock")));
        let remote = engine_sockets(None);
        assert!(remote.contains(&PathBuf::from("/var/run/docker.sock")));
    }

    /// A fresh directory under the system temp dir, removed when dropped.
    struct TempDir(PathBuf);
    impl TempDir {
        fn new(name: &str) -> Self {
            let p = std::env::temp_dir().join(format!(
                "berth-escape-{name}-{}",
                hex::encode(rand::random::<[u8; 6]>())
            ));
            std::fs::create_dir_all(&p).unwrap();
            TempDir(std::fs::canonicalize(p).unwrap())
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn mount(source: &Path, read_only: bool) -> Mount {
        Mount {
            source: source.display().to_string(),
            target: "/m".into(),
            read_only,
        }
    }

    #[test]
    fn a_symlink_to_the_root_is_caught_by_its_canonical_path() {
        let dir = TempDir::new("root");
        let link = dir.0.join("host");
        std::os::unix::fs::symlink("/", &link).unwrap();
        let e = check(&[mount(&link, true)], &[], true).unwrap_err();
        assert_eq!(e.code(), "E_INVALID_ARGUMENT");
        assert!(e.to_string().contains("mounts[0].source"), "{e}");
        assert!(check(&[mount(&dir.0, false)], &[], true).is_ok());
    }

    #[test]
    fn a_socket_any_link_to_it_and_a_directory_holding_a_bound_one_are_refused() {
        let dir = TempDir::new("sock");
        std::fs::create_dir(dir.0.join("d")).unwrap();
        let sock = dir.0.join("d/any.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let link = dir.0.join("link.sock");
        std::os::unix::fs::symlink(&sock, &link).unwrap();
        let file = dir.0.join("plain");
        std::fs::write(&file, "x").unwrap();
        for (i, p) in [&sock, &link].into_iter().enumerate() {
            let ms = vec![mount(&file, false), mount(p, true)];
            let e = check(&ms, &[], true).unwrap_err().to_string();
            assert!(e.contains("mounts[1].source"), "{i}: {e}");
            assert!(e.contains("is a unix socket"), "{i}: {e}");
        }
        // The stat is for a local engine only.
        assert!(check(&[mount(&sock, true)], &[], false).is_ok());
        assert!(check(&[mount(&file, false)], &[], true).is_ok());
        // Bound in this network namespace: `/proc/net/unix` lists it, so its parents are refused.
        if std::fs::read_to_string("/proc/net/unix").is_ok() {
            let sockets = engine_sockets(Some("/var/run/docker.sock"));
            assert!(sockets.contains(&sock), "{sockets:?}");
            let e = check(&[mount(&dir.0, true)], &sockets, true)
                .unwrap_err()
                .to_string();
            assert!(e.contains("contains the unix socket"), "{e}");
            assert!(check(&[mount(&file, false)], &sockets, true).is_ok());
            // Not for a remote engine: its host is not this one.
            assert!(!engine_sockets(None).contains(&sock));
        }
    }
}

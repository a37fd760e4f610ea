//! Bind sources: host paths given as bind-mount sources, checked on this filesystem before use.
//!
//! A source must be absolute and exist. When the caller names roots (`mountRoots`), the
//! source must resolve inside one of them, and no segment of it may be a symlink that
//! escapes them: a symlinked segment may lead into a root, or toward one (a segment above a
//! root, such as `/var/run` -> `/run` for a root under it), never elsewhere. Every error names
//! the segment at fault. Only a local engine shares this filesystem, so callers check only
//! then (see [`check_mounts`]).

use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use crate::engine::connection::EngineOptions;
use crate::engine::discovery::Host;
use crate::engine::host_escape;
use crate::model::errors::{Error, Result};
use crate::model::spec::{CreateSpec, Mount};

/// Checks the mount sources of `spec` when the engine `options` select is local (a unix
/// socket: it shares this filesystem); a remote engine's host cannot be seen from here.
/// No engine call: the endpoint is chosen as [`crate::engine::connection::connect`] would.
///
/// Errors: `E_INVALID_ARGUMENT` (see [`check_mounts`]; also a bad `engine` option).
/// Mounts that would hand the sandbox the host are refused first, for any engine, unless
/// `allowHostEscape` ([`crate::engine::host_escape`]).
pub(crate) fn check_for_engine(spec: &CreateSpec, options: &EngineOptions) -> Result<()> {
    if spec.mounts.is_empty() && spec.mount_roots.is_empty() {
        return Ok(());
    }
    let candidate = crate::engine::connection::choose(options, &Host::current())?;
    let remote = crate::engine::connection::remote_host_of(&candidate.endpoint).is_some();
    if !spec.security.allow_host_escape {
        let endpoint = (!remote).then_some(candidate.endpoint.as_str());
        host_escape::check(
            &spec.mounts,
            &host_escape::engine_sockets(endpoint),
            !remote,
        )?;
    }
    if remote {
        return Ok(());
    }
    check_mounts(&spec.mounts, &spec.mount_roots)
}

/// Checks every mount source of a spec (`mounts[i].source`) against `roots`.
///
/// Errors: `E_INVALID_ARGUMENT` naming `mounts[i].source` and the segment at fault; a root
/// that does not exist is `E_INVALID_ARGUMENT` naming `mountRoots[j]`.
pub(crate) fn check_mounts(mounts: &[Mount], roots: &[String]) -> Result<()> {
    let roots = canonical_roots(roots)?;
    for (i, m) in mounts.iter().enumerate() {
        check(&m.source, &roots, &format!("mounts[{i}].source"))?;
    }
    Ok(())
}

/// The canonical form of each root (`mountRoots[j]`): absolute, existing, symlinks resolved.
pub(crate) fn canonical_roots(roots: &[String]) -> Result<Vec<PathBuf>> {
    roots
        .iter()
        .enumerate()
        .map(|(j, r)| {
            let field = format!("mountRoots[{j}]");
            if !r.starts_with('/') {
                return Err(Error::invalid(field, "must be an absolute host path"));
            }
            std::fs::canonicalize(r).map_err(|e| {
                Error::invalid(field, format!("host path `{r}` cannot be resolved: {e}"))
            })
        })
        .collect()
}

/// Checks one host path `source` (reported as `field`) against canonical `roots` (none: only
/// absolute and existing are required).
///
/// Errors: `E_INVALID_ARGUMENT` with the segment at fault: missing, a dangling symlink, a
/// symlink that resolves outside every root, or a source outside every root.
pub(crate) fn check(source: &str, roots: &[PathBuf], field: &str) -> Result<()> {
    let path = Path::new(source);
    if !path.is_absolute() {
        return Err(Error::invalid(field, "must be an absolute host path"));
    }
    let mut segment = PathBuf::from("/");
    for part in path.components() {
        match part {
            Component::RootDir | Component::CurDir => continue,
            Component::ParentDir => {
                return Err(Error::invalid(
                    field,
                    format!("host path `{source}` must not contain `..`"),
                ))
            }
            Component::Normal(p) => segment.push(p),
            Component::Prefix(_) => continue,
        }
        let shown = segment.display();
        let meta = match std::fs::symlink_metadata(&segment) {
            Ok(m) => m,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(Error::invalid(
                    field,
                    format!("host path `{source}` does not exist: segment `{shown}` is missing"),
                ))
            }
            Err(e) => {
                return Err(Error::invalid(
                    field,
                    format!("host path `{source}`: segment `{shown}` cannot be read: {e}"),
                ))
            }
        };
        if !meta.file_type().is_symlink() {
            continue;
        }
        let target = std::fs::canonicalize(&segment).map_err(|_| {
            Error::invalid(
                field,
                format!("host path `{source}`: segment `{shown}` is a symlink whose target does not exist"),
            )
        })?;
        if !roots.is_empty()
            && !roots
                .iter()
                .any(|r| target.starts_with(r) || r.starts_with(&target))
        {
            return Err(Error::invalid(
                field,
                format!(
                    "host path `{source}`: segment `{shown}` is a symlink to `{}`, outside the allowed roots ({})",
                    target.display(),
                    list(roots)
                ),
            ));
        }
    }
    if roots.is_empty() {
        return Ok(());
    }
    let resolved = std::fs::canonicalize(path).map_err(|e| {
        Error::invalid(
            field,
            format!("host path `{source}` cannot be resolved: {e}"),
        )
    })?;
    if !roots.iter().any(|r| resolved.starts_with(r)) {
        return Err(Error::invalid(
            field,
            format!(
                "host path `{source}` resolves to `{}`, outside the allowed roots ({})",
                resolved.display(),
                list(roots)
            ),
        ));
    }
    Ok(())
}

fn list(roots: &[PathBuf]) -> String {
    roots
        .iter()
        .map(|r| format!("`{}`", r.display()))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A fresh directory under the system temp dir, removed when dropped.
    struct TempDir(PathBuf);
    impl TempDir {
        fn new() -> Self {
            let p = std::env::temp_dir().join(format!(
                "berth-bind-{}",
                hex::encode(rand::random::<[u8; 8]>())
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

    fn reason(r: Result<()>) -> String {
        match r {
            Err(Error::InvalidArgument { field, reason }) => format!("{field}: {reason}"),
            other => panic!("expected invalid argument, got {other:?}"),
        }
    }

    #[test]
    fn sources_must_exist_and_stay_in_their_roots() {
        let tmp = TempDir::new();
        let base = tmp.0.clone();
        let root = base.join("root");
        let outside = base.join("outside");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        symlink(&outside, root.join("escape")).unwrap();
        symlink(root.join("a"), root.join("inner")).unwrap();
        symlink(base.join("nowhere"), root.join("dangling")).unwrap();
        let roots = vec![root.clone()];
        let s = |p: &Path| p.to_str().unwrap().to_string();

        assert!(check(&s(&root.join("a/b")), &roots, "m").is_ok());
        assert!(check(&s(&root.join("inner/b")), &roots, "m").is_ok());
        assert!(
            check(&s(&outside), &[], "m").is_ok(),
            "no roots: existing is enough"
        );
        assert!(check(&s(&root.join("escape")), &[], "m").is_ok());

        let missing = reason(check(&s(&root.join("a/zz/c")), &roots, "mounts[0].source"));
        assert!(missing.starts_with("mounts[0].source: "), "{missing}");
        assert!(
            missing.contains(&format!(
                "segment `{}` is missing",
                root.join("a/zz").display()
            )),
            "{missing}"
        );

        let escape = reason(check(&s(&root.join("escape")), &roots, "m"));
        assert!(
            escape.contains(&format!(
                "segment `{}` is a symlink to `{}`",
                root.join("escape").display(),
                outside.display()
            )),
            "{escape}"
        );

        let dangling = reason(check(&s(&root.join("dangling")), &roots, "m"));
        assert!(
            dangling.contains("symlink whose target does not exist"),
            "{dangling}"
        );

        let out = reason(check(&s(&outside), &roots, "m"));
        assert!(out.contains("outside the allowed roots"), "{out}");

        assert!(reason(check("relative", &roots, "m")).contains("absolute"));
        assert!(reason(check(&format!("{}/../x", s(&root)), &roots, "m")).contains("`..`"));
    }

    #[test]
    fn a_symlink_above_a_root_leads_toward_it() {
        let tmp = TempDir::new();
        let base = tmp.0.clone();
        std::fs::create_dir_all(base.join("real/root/x")).unwrap();
        symlink(base.join("real"), base.join("link")).unwrap();
        let roots =
            canonical_roots(&[base.join("link/root").to_str().unwrap().to_string()]).unwrap();
        assert!(check(base.join("link/root/x").to_str().unwrap(), &roots, "m").is_ok());
        assert!(canonical_roots(&["rel".into()]).is_err());
        let bad =
            reason(canonical_roots(&[base.join("none").to_str().unwrap().into()]).map(|_| ()));
        assert!(bad.starts_with("mountRoots[0]: "), "{bad}");
    }
}

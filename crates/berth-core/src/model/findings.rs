//! Findings: what verify reports about a session's container, with stable codes, and the pure
//! rules that turn inspect facts into findings.

use std::collections::{BTreeMap, HashMap};

use bollard::models::MountPoint;
use serde_json::{json, Value};

use crate::model::labels::LABEL_NAMESPACE;
use crate::model::spec::Mount;

/// Whether berth can fix a finding in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Fixed in place by repair (start, unpause, the network guard's rules, ownership and mode
    /// of a writable path).
    Repairable,
    /// Only a new container fixes it (`recreateSession`), or the container is not ours.
    Hard,
}

impl Kind {
    /// `repairable` or `hard`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Repairable => "repairable",
            Kind::Hard => "hard",
        }
    }
}

/// The stable finding codes.
pub(crate) mod code {
    /// Hard: not berth's container for this session (unmanaged, another session, labels from an image).
    pub(crate) const IDENTITY_FOREIGN: &str = "identity-foreign";
    /// Hard: no creation record names this container id: not the container berth created under the name.
    pub(crate) const IDENTITY_UNRECORDED: &str = "identity-unrecorded";
    /// Hard: the container's labels differ from those recorded at its creation.
    pub(crate) const IDENTITY_LABELS: &str = "identity-labels";
    /// Repairable: created or exited; started by repair.
    pub(crate) const STATE_STOPPED: &str = "state-stopped";
    /// Repairable: paused; unpaused by repair.
    pub(crate) const STATE_PAUSED: &str = "state-paused";
    /// Hard: dead, being removed, restarting, or a state berth does not know.
    pub(crate) const STATE_UNUSABLE: &str = "state-unusable";
    /// Hard: no init process runs as PID 1.
    pub(crate) const INIT_MISSING: &str = "init-missing";
    /// Hard: an exec in the container failed.
    pub(crate) const EXEC_FAILED: &str = "exec-failed";
    /// Hard: a spec mount is not mounted at its target.
    pub(crate) const MOUNT_MISSING: &str = "mount-missing";
    /// Hard: a spec mount's target holds another kind of mount (volume, tmpfs).
    pub(crate) const MOUNT_TYPE: &str = "mount-type";
    /// Hard: a spec mount's target is bound from another host path.
    pub(crate) const MOUNT_SOURCE: &str = "mount-source";
    /// Hard: a spec mount's read-only flag differs.
    pub(crate) const MOUNT_MODE: &str = "mount-mode";
    /// Repairable: a declared writable path does not exist; created by repair.
    pub(crate) const WRITABLE_MISSING: &str = "writable-missing";
    /// Repairable: a declared writable path cannot be written by the session's user; repair
    /// gives it to the user (`chown`, `u+rwx`).
    pub(crate) const WRITABLE_DENIED: &str = "writable-denied";
    /// Hard: a declared writable path lies on a read-only mount or a read-only root filesystem.
    pub(crate) const WRITABLE_READ_ONLY: &str = "writable-read-only";
    /// Repairable: an isolated container runs without a record that its current run got the
    /// network guard's rules (started by a process killed before its guard ran, by the
    /// engine's restart policy, by hand); repair applies them.
    pub(crate) const NETWORK_UNGUARDED: &str = "network-unguarded";
    /// Hard: a spec port is not published on the host.
    pub(crate) const PORT_UNMAPPED: &str = "port-unmapped";
}

/// One thing verify found wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Stable code (see [`code`]).
    pub code: &'static str,
    /// Repairable or hard.
    pub kind: Kind,
    /// What is wrong, naming the path or field.
    pub message: String,
    /// The container path concerned (mounts, writable paths).
    pub path: Option<String>,
    /// The spec field or label concerned (`mounts[0].readOnly`, `ports[1]`, `labels.team`).
    pub field: Option<String>,
    /// Set once repair fixed it (verified again).
    pub repaired: bool,
}

impl Finding {
    /// A hard finding.
    pub fn hard(code: &'static str, message: String) -> Self {
        Finding {
            code,
            kind: Kind::Hard,
            message,
            path: None,
            field: None,
            repaired: false,
        }
    }

    /// A repairable finding.
    pub fn repairable(code: &'static str, message: String) -> Self {
        Finding {
            kind: Kind::Repairable,
            ..Finding::hard(code, message)
        }
    }

    /// The same finding about container path `path`.
    pub fn at(self, path: &str) -> Self {
        Finding {
            path: Some(path.into()),
            ..self
        }
    }

    /// The same finding about spec field `field`.
    pub fn field(self, field: impl Into<String>) -> Self {
        Finding {
            field: Some(field.into()),
            ..self
        }
    }

    /// Whether `other` reports the same problem (code, path and field).
    pub fn same(&self, other: &Finding) -> bool {
        self.code == other.code && self.path == other.path && self.field == other.field
    }

    /// `{ code, kind, message, path?, field?, repaired }`, as JS sees it.
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "code": self.code,
            "kind": self.kind.as_str(),
            "message": self.message,
            "repaired": self.repaired,
        });
        if let Some(p) = &self.path {
            v["path"] = json!(p);
        }
        if let Some(f) = &self.field {
            v["field"] = json!(f);
        }
        v
    }
}

/// The finding for a container state (`docs/design.md#public-api`), if any.
pub(crate) fn state_finding(state: &str, raw: &str) -> Option<Finding> {
    match state {
        "running" => None,
        "paused" => Some(Finding::repairable(
            code::STATE_PAUSED,
            "the container is paused".into(),
        )),
        "created" | "exited" => Some(Finding::repairable(
            code::STATE_STOPPED,
            format!("the container is not running (state `{raw}`)"),
        )),
        _ => Some(Finding::hard(
            code::STATE_UNUSABLE,
            format!("the container is in state `{raw}`, which cannot be repaired in place"),
        )),
    }
}

/// Labels that differ between those recorded at creation and the container's now, one
/// finding naming every differing key (`field: labels.<first key>`): a recorded label missing
/// or changed, or a berth label (`dev.berth.*`) not recorded. Other extra labels are not
/// counted: the engine merges the image's labels into the container's.
pub(crate) fn label_findings(
    recorded: &HashMap<String, String>,
    now: &HashMap<String, String>,
) -> Option<Finding> {
    let keys: std::collections::BTreeSet<&String> = recorded
        .keys()
        .chain(now.keys().filter(|k| k.starts_with(LABEL_NAMESPACE)))
        .collect();
    let differing: Vec<&String> = keys
        .into_iter()
        .filter(|k| recorded.get(*k) != now.get(*k))
        .collect();
    let first = differing.first()?;
    let list: Vec<String> = differing.iter().map(|k| format!("`{k}`")).collect();
    Some(
        Finding::hard(
            code::IDENTITY_LABELS,
            format!(
                "the container's labels differ from those recorded at its creation: {}",
                list.join(", ")
            ),
        )
        .field(format!("labels.{first}")),
    )
}

/// Compares each spec mount with the container's mounts (inspect `Mounts`) and tmpfs mounts
/// (`HostConfig.Tmpfs` targets).
pub(crate) fn mount_findings(
    expected: &[Mount],
    mounts: &[MountPoint],
    tmpfs: &BTreeMap<String, String>,
) -> Vec<Finding> {
    let trim = |p: &str| {
        let t = p.trim_end_matches('/');
        if t.is_empty() {
            "/".to_string()
        } else {
            t.to_string()
        }
    };
    let mut out = Vec::new();
    for (i, m) in expected.iter().enumerate() {
        let target = trim(&m.target);
        let field = format!("mounts[{i}]");
        let found = mounts
            .iter()
            .find(|p| p.destination.as_deref().map(trim).as_deref() == Some(target.as_str()));
        let Some(p) = found else {
            let f = if tmpfs.keys().any(|t| trim(t) == target) {
                Finding::hard(
                    code::MOUNT_TYPE,
                    format!(
                        "`{target}` is a tmpfs mount, not a bind mount of `{}`",
                        m.source
                    ),
                )
            } else {
                Finding::hard(
                    code::MOUNT_MISSING,
                    format!(
                        "nothing is mounted at `{target}` (the spec binds `{}` there)",
                        m.source
                    ),
                )
            };
            out.push(f.at(&target).field(field));
            continue;
        };
        let typ = p.typ.as_deref().unwrap_or("");
        if typ != "bind" {
            out.push(
                Finding::hard(
                    code::MOUNT_TYPE,
                    format!(
                        "`{target}` is a `{typ}` mount, not a bind mount of `{}`",
                        m.source
                    ),
                )
                .at(&target)
                .field(format!("{field}.source")),
            );
            continue;
        }
        let source = p.source.as_deref().map(trim).unwrap_or_default();
        if source != trim(&m.source) {
            out.push(
                Finding::hard(
                    code::MOUNT_SOURCE,
                    format!(
                        "`{target}` is bound from `{source}`, not from `{}`",
                        m.source
                    ),
                )
                .at(&target)
                .field(format!("{field}.source")),
            );
        }
        let read_only = !p.rw.unwrap_or(true);
        if read_only != m.read_only {
            let (is, want) = if read_only {
                ("read-only", "read-write")
            } else {
                ("read-write", "read-only")
            };
            out.push(
                Finding::hard(
                    code::MOUNT_MODE,
                    format!("`{target}` is mounted {is}; the spec asks for {want}"),
                )
                .at(&target)
                .field(format!("{field}.readOnly")),
            );
        }
    }
    out
}

/// Whether container path `path` lies on something read-only: the mount covering it (the
/// longest destination that is `path` or a parent of it), or the root filesystem.
pub(crate) fn read_only_at(path: &str, mounts: &[MountPoint], read_only_root: bool) -> bool {
    let covers = |dest: &str| {
        let d = dest.trim_end_matches('/');
        d.is_empty() || path == d || path.starts_with(&format!("{d}/"))
    };
    mounts
        .iter()
        .filter(|m| m.destination.as_deref().is_some_and(covers))
        .max_by_key(|m| m.destination.as_deref().map(str::len).unwrap_or(0))
        .map(|m| !m.rw.unwrap_or(true))
        .unwrap_or(read_only_root)
}

/// Exit code of the writable probe when the directory is missing.
pub(crate) const PROBE_MISSING: i64 = 3;
/// Exit code of the writable probe when the file cannot be written or read back (the
/// probe's other failures; named for the tests).
#[cfg(test)]
pub(crate) const PROBE_DENIED: i64 = 4;

/// The finding for a writable path's probe exit code (`index` into `writablePaths`).
pub(crate) fn writable_finding(
    path: &str,
    index: usize,
    exit_code: i64,
    read_only: bool,
) -> Option<Finding> {
    let field = format!("writablePaths[{index}]");
    if exit_code == 0 {
        return None;
    }
    if read_only {
        return Some(
            Finding::hard(
                code::WRITABLE_READ_ONLY,
                format!("`{path}` lies on a read-only mount or root filesystem"),
            )
            .at(path)
            .field(field),
        );
    }
    let f = if exit_code == PROBE_MISSING {
        Finding::repairable(code::WRITABLE_MISSING, format!("`{path}` does not exist"))
    } else {
        Finding::repairable(
            code::WRITABLE_DENIED,
            format!("`{path}` is not writable by the session's user (probe exit code {exit_code})"),
        )
    };
    Some(f.at(path).field(field))
}

/// Spec ports without a published host port (`published`: `"8080/tcp"` -> address).
pub(crate) fn port_findings(
    expected: &[u16],
    published: &BTreeMap<String, String>,
) -> Vec<Finding> {
    expected
        .iter()
        .enumerate()
        .filter(|(_, p)| !published.contains_key(&format!("{p}/tcp")))
        .map(|(i, p)| {
            Finding::hard(
                code::PORT_UNMAPPED,
                format!("container port {p}/tcp is not published on the host"),
            )
            .field(format!("ports[{i}]"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(typ: &str, source: &str, dest: &str, rw: bool) -> MountPoint {
        MountPoint {
            typ: Some(typ.into()),
            source: Some(source.into()),
            destination: Some(dest.into()),
            rw: Some(rw),
            ..Default::default()
        }
    }

    fn m(source: &str, target: &str, read_only: bool) -> Mount {
        Mount {
            source: source.into(),
            target: target.into(),
            read_only,
        }
    }

    #[test]
    fn mounts_are_compared_by_type_source_and_mode() {
        let mounts = vec![
            point("bind", "/h/a", "/a", true),
            point("bind", "/h/other", "/b", true),
            point("volume", "/var/lib/x", "/c", true),
            point("bind", "/h/d/", "/d/", false),
        ];
        let tmpfs = BTreeMap::from([("/t".to_string(), String::new())]);
        let expected = vec![
            m("/h/a", "/a", false),
            m("/h/b", "/b", false),
            m("/h/c", "/c", false),
            m("/h/d", "/d", false),
            m("/h/e", "/e", false),
            m("/h/t", "/t", false),
        ];
        let got: Vec<(&str, Option<String>)> = mount_findings(&expected, &mounts, &tmpfs)
            .into_iter()
            .map(|f| (f.code, f.field))
            .collect();
        let want = [
            (code::MOUNT_SOURCE, "mounts[1].source"),
            (code::MOUNT_TYPE, "mounts[2].source"),
            (code::MOUNT_MODE, "mounts[3].readOnly"),
            (code::MOUNT_MISSING, "mounts[4]"),
            (code::MOUNT_TYPE, "mounts[5]"),
        ];
        assert_eq!(
            got,
            want.iter()
                .map(|(c, f)| (*c, Some(f.to_string())))
                .collect::<Vec<_>>()
        );
        let all = mount_findings(&expected, &mounts, &tmpfs);
        assert!(all.iter().all(|f| f.kind == Kind::Hard));
        assert!(all[2].message.contains("read-only"), "{}", all[2].message);
    }

    #[test]
    fn states_labels_ports_and_writable_paths() {
        assert_eq!(state_finding("running", "running"), None);
        assert_eq!(
            state_finding("paused", "paused").unwrap().code,
            code::STATE_PAUSED
        );
        let stopped = state_finding("exited", "stopped").unwrap();
        assert_eq!(
            (stopped.code, stopped.kind),
            (code::STATE_STOPPED, Kind::Repairable)
        );
        assert_eq!(state_finding("dead", "dead").unwrap().kind, Kind::Hard);

        let rec = HashMap::from([("a".to_string(), "1".to_string()), ("b".into(), "2".into())]);
        assert_eq!(label_findings(&rec, &rec.clone()), None);
        let mut now = rec.clone();
        now.insert("from-image".into(), "x".into());
        assert_eq!(
            label_findings(&rec, &now),
            None,
            "image labels merged in are not counted"
        );
        now.insert("b".into(), "3".into());
        now.insert("dev.berth.extra".into(), "x".into());
        let f = label_findings(&rec, &now).unwrap();
        assert_eq!(f.field.as_deref(), Some("labels.b"));
        assert!(
            f.message.contains("`b`, `dev.berth.extra`"),
            "{}",
            f.message
        );

        let published = BTreeMap::from([("80/tcp".to_string(), "127.0.0.1:1".to_string())]);
        let p = port_findings(&[80, 81], &published);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].field.as_deref(), Some("ports[1]"));

        let mounts = vec![
            point("bind", "/h", "/ro", false),
            point("bind", "/h2", "/ro/rw", true),
        ];
        assert!(read_only_at("/ro/x", &mounts, false));
        assert!(!read_only_at("/ro/rw/x", &mounts, true));
        assert!(read_only_at("/elsewhere", &mounts, true));
        assert!(!read_only_at("/rox", &mounts, false));

        assert_eq!(writable_finding("/w", 0, 0, true), None);
        assert_eq!(
            writable_finding("/w", 0, PROBE_MISSING, false)
                .unwrap()
                .code,
            code::WRITABLE_MISSING
        );
        assert_eq!(
            writable_finding("/w", 1, PROBE_DENIED, false)
                .unwrap()
                .field
                .as_deref(),
            Some("writablePaths[1]")
        );
        let ro = writable_finding("/w", 0, PROBE_DENIED, true).unwrap();
        assert_eq!((ro.code, ro.kind), (code::WRITABLE_READ_ONLY, Kind::Hard));
    }
}

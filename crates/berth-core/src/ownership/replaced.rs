//! Replaced: what replacing a container loses and keeps, read from the old container's inspect,
//! and the named volumes carried over to the new one.

use bollard::models::{Mount as EngineMount, MountType};

use crate::engine::container::Inspected;
use crate::model::spec::CreateSpec;

/// What a recreation lost and kept, from the old container's inspect.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Replaced {
    /// The old container's id (removed).
    pub previous_id: String,
    /// `writable-layer`, `processes`, `tmpfs` (with its target), `anonymous-volume` (with its target).
    pub lost: Vec<Item>,
    /// `bind` (host path `source` at `target`) and `volume` (named volume `source`, carried over to `target`).
    pub kept: Vec<Item>,
}

/// One thing a recreation lost or kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// `writable-layer`, `processes`, `tmpfs`, `anonymous-volume`, `bind` or `volume`.
    pub kind: &'static str,
    /// Host path (bind) or volume name (volume).
    pub source: Option<String>,
    /// Container path.
    pub target: Option<String>,
}

fn item(kind: &'static str, source: Option<String>, target: Option<String>) -> Item {
    Item {
        kind,
        source,
        target,
    }
}

/// Whether a volume name is an engine-generated (anonymous) one: 64 hex characters.
fn anonymous(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The old container's named volumes, mounted again at their targets unless the spec
/// mounts something there.
pub(crate) fn carried_volumes(old: &Inspected, spec: &CreateSpec) -> Vec<EngineMount> {
    old.mounts
        .iter()
        .flatten()
        .filter(|m| m.typ.as_deref() == Some("volume"))
        .filter_map(|m| Some((m.name.clone()?, m.destination.clone()?, m.rw)))
        .filter(|(n, t, _)| !anonymous(n) && !spec.mounts.iter().any(|s| &s.target == t))
        .map(|(n, t, rw)| EngineMount {
            source: Some(n),
            target: Some(t),
            typ: Some(MountType::VOLUME),
            read_only: Some(!rw.unwrap_or(true)),
            ..Default::default()
        })
        .collect()
}

/// What replacing `old` loses and keeps.
pub(crate) fn lost_and_kept(old: &Inspected) -> Replaced {
    let mut lost = vec![
        item("writable-layer", None, None),
        item("processes", None, None),
    ];
    let mut kept = Vec::new();
    for m in old.mounts.iter().flatten() {
        let target = m.destination.clone();
        match m.typ.as_deref() {
            Some("bind") => kept.push(item("bind", m.source.clone(), target)),
            Some("volume") => match &m.name {
                Some(n) if !anonymous(n) => kept.push(item("volume", Some(n.clone()), target)),
                _ => lost.push(item("anonymous-volume", None, target)),
            },
            Some("tmpfs") => lost.push(item("tmpfs", None, target)),
            _ => {}
        }
    }
    let mut tmpfs: Vec<String> = old
        .host_config
        .as_ref()
        .and_then(|h| h.tmpfs.as_ref())
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default();
    tmpfs.sort();
    for t in tmpfs {
        if !lost
            .iter()
            .any(|l| l.kind == "tmpfs" && l.target.as_deref() == Some(&t))
        {
            lost.push(item("tmpfs", None, Some(t)));
        }
    }
    Replaced {
        previous_id: old.id.clone().unwrap_or_default(),
        lost,
        kept,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bollard::models::{ContainerInspectResponse, HostConfig, MountPoint};
    use std::collections::HashMap;

    fn point(typ: &str, name: Option<&str>, source: &str, dest: &str) -> MountPoint {
        MountPoint {
            typ: Some(typ.into()),
            name: name.map(str::to_string),
            source: Some(source.into()),
            destination: Some(dest.into()),
            rw: Some(true),
            ..Default::default()
        }
    }

    #[test]
    fn says_what_is_lost_and_kept_and_carries_named_volumes() {
        let anon = "a".repeat(64);
        let old = Inspected {
            body: ContainerInspectResponse {
                id: Some("old".into()),
                mounts: Some(vec![
                    point("bind", None, "/host/w", "/w"),
                    point("volume", Some("cache"), "/var/lib/v/cache", "/cache"),
                    point("volume", Some(&anon), "/var/lib/v/a", "/anon"),
                    point("volume", Some("data"), "/var/lib/v/data", "/data"),
                ]),
                host_config: Some(HostConfig {
                    tmpfs: Some(HashMap::from([("/t".to_string(), String::new())])),
                    ..Default::default()
                }),
                ..Default::default()
            },
            raw_state: "running".into(),
        };
        let r = lost_and_kept(&old);
        let kinds = |v: &[Item]| v.iter().map(|x| x.kind).collect::<Vec<_>>();
        assert_eq!(
            kinds(&r.lost),
            ["writable-layer", "processes", "anonymous-volume", "tmpfs"]
        );
        assert_eq!(kinds(&r.kept), ["bind", "volume", "volume"]);
        assert_eq!(r.kept[0].source.as_deref(), Some("/host/w"));
        let spec = CreateSpec {
            mounts: vec![crate::model::spec::Mount {
                source: "/h".into(),
                target: "/data".into(),
                read_only: false,
            }],
            ..Default::default()
        };
        let carried = carried_volumes(&old, &spec);
        assert_eq!(carried.len(), 1);
        assert_eq!(carried[0].source.as_deref(), Some("cache"));
        assert_eq!(carried[0].target.as_deref(), Some("/cache"));
    }
}

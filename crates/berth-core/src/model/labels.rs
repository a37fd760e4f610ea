//! Labels: the frozen, versioned label schema every berth container carries (`docs/design.md#labels`).
//!
//! The engine can never change a container's labels, so this schema is fixed at
//! version 1. No env value and no secret ever goes into a label: per-field digests
//! are salted SHA-256 over a canonical encoding, with a per-container random salt.

use std::collections::{BTreeMap, HashMap};

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::model::identity::Owner;
use crate::model::spec::CreateSpec;

/// Every berth label key starts with this; callers may not set keys under it.
pub(crate) const LABEL_NAMESPACE: &str = "dev.berth.";
/// Schema version of the labels below.
pub(crate) const SCHEMA: &str = "dev.berth.schema";
/// The schema version this build writes and reads.
pub(crate) const SCHEMA_VERSION: &str = "1";
/// `"true"` on every berth-managed container.
pub(crate) const MANAGED: &str = "dev.berth.managed";
/// The exact session id (well-formed UTF-16, so any JS session id round-trips).
pub(crate) const SESSION_ID: &str = "dev.berth.session-id";
/// The raw name prefix.
pub(crate) const PREFIX: &str = "dev.berth.prefix";
/// Owner host id (machine id + boot id + pid namespace, hashed).
pub(crate) const OWNER_HOST_ID: &str = "dev.berth.owner.host-id";
/// Owner process id.
pub(crate) const OWNER_PID: &str = "dev.berth.owner.pid";
/// Owner process start time, in clock ticks since boot.
pub(crate) const OWNER_START_TIME: &str = "dev.berth.owner.start-time";
/// Owner per-process random instance id.
pub(crate) const OWNER_INSTANCE_ID: &str = "dev.berth.owner.instance-id";
/// The berth version that created the container.
pub(crate) const VERSION: &str = "dev.berth.version";
/// Creation time, RFC 3339 UTC, millisecond precision.
pub(crate) const CREATED_AT: &str = "dev.berth.created-at";
/// Random salt (32 hex chars) for the digests below.
pub(crate) const DIGEST_SALT: &str = "dev.berth.digest.salt";
/// Prefix of the per-field digest labels (`dev.berth.digest.image`, ...).
pub(crate) const DIGEST_PREFIX: &str = "dev.berth.digest.";
/// The spec fields that get a digest, in label order.
pub(crate) const DIGEST_FIELDS: [&str; 8] = [
    "image",
    "env",
    "workDir",
    "user",
    "ports",
    "mounts",
    "limits",
    "entrypoint",
];

/// A random value per create call (32 hex), so a container whose create answer was lost
/// (an abort or a timeout while `POST /containers/create` was in flight) is found and
/// removed by id. Added in schema 1 without changing it: older containers lack it, and no
/// decoder requires it.
pub(crate) const CREATE_NONCE: &str = "dev.berth.create-nonce";

/// The session's `removeAfterStopMs` (decimal milliseconds), when it was created with one:
/// a stopped container expires that long after its stop (see [`crate::model::lifetime`]). Added
/// within schema 1: a reader that does not know the key ignores it, its absence means no
/// retention, so old and new containers decode the same way.
pub(crate) const REMOVE_AFTER_STOP_MS: &str = "dev.berth.remove-after-stop-ms";

/// The session's `timeoutMs` (decimal milliseconds), when it was created with one: it
/// expires that long after it became ready, or at the deadline a later `setTimeout` set
/// (the deadline itself is a record, see [`crate::ownership::deadlines`]). Added within
/// schema 1 like [`REMOVE_AFTER_STOP_MS`]; its absence means no timeout.
pub(crate) const TIMEOUT_MS: &str = "dev.berth.timeout-ms";

/// `"deadline"` when the container runs berth's deadline keep-alive (created with
/// `timeoutMs` and no custom entrypoint; see [`crate::model::lifetime::KEEPALIVE_SCRIPT`]):
/// `setTimeout` then rewrites the deadline file inside it too.
pub(crate) const KEEP_ALIVE: &str = "dev.berth.keep-alive";

/// `"blocked"` when the session was created kept off the local network (the default; the
/// caller's `localNetwork: true` opts out): every start of the container writes the
/// isolation rules into its network namespace again (`engine::netguard`). Added within schema
/// 1 like [`TIMEOUT_MS`]; its absence (older containers, the opt-out) means no rules.
pub(crate) const LOCAL_NETWORK: &str = "dev.berth.local-network";
/// The value of [`LOCAL_NETWORK`] for an isolated session.
pub(crate) const LOCAL_NETWORK_BLOCKED: &str = "blocked";

/// Labels that mark an engine-side record (volume) belonging to a container.
pub(crate) const RECORD_KIND: &str = "dev.berth.record";
/// The container id a record belongs to.
pub(crate) const RECORD_CONTAINER_ID: &str = "dev.berth.container-id";

/// The berth labels of one managed container, decoded.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ManagedLabels {
    /// Schema version found.
    pub schema: String,
    /// The exact session id.
    pub session_id: String,
    /// The raw prefix.
    pub prefix: String,
    /// The owner, when every owner label parses.
    pub owner: Option<Owner>,
    /// Per-field digests by field name.
    pub digests: BTreeMap<String, String>,
    /// Digest salt.
    pub salt: String,
    /// `removeAfterStopMs` in milliseconds, when set at creation (see [`REMOVE_AFTER_STOP_MS`]).
    pub remove_after_stop_ms: Option<u64>,
    /// `timeoutMs` in milliseconds, when set at creation (see [`TIMEOUT_MS`]).
    pub timeout_ms: Option<u64>,
}

/// The labels to create a container with: caller labels first, then berth's.
pub(crate) fn encode(
    spec: &CreateSpec,
    session_id: &str,
    prefix: &str,
    owner: Option<&Owner>,
    created_at: &str,
) -> HashMap<String, String> {
    let mut l: HashMap<String, String> = spec.labels.clone().into_iter().collect();
    let salt = hex::encode(rand::random::<[u8; 16]>());
    l.insert(SCHEMA.into(), SCHEMA_VERSION.into());
    l.insert(MANAGED.into(), "true".into());
    l.insert(SESSION_ID.into(), session_id.into());
    l.insert(PREFIX.into(), prefix.into());
    if let Some(o) = owner {
        l.insert(OWNER_HOST_ID.into(), o.host_id.clone());
        l.insert(OWNER_PID.into(), o.pid.to_string());
        l.insert(OWNER_START_TIME.into(), o.start_time.clone());
        l.insert(OWNER_INSTANCE_ID.into(), o.instance_id.clone());
    }
    l.insert(VERSION.into(), env!("CARGO_PKG_VERSION").into());
    l.insert(CREATED_AT.into(), created_at.into());
    if let Some(ms) = spec.remove_after_stop_ms {
        l.insert(REMOVE_AFTER_STOP_MS.into(), ms.to_string());
    }
    if let Some(ms) = spec.timeout_ms {
        l.insert(TIMEOUT_MS.into(), ms.to_string());
        if spec.entrypoint.is_none() {
            l.insert(KEEP_ALIVE.into(), "deadline".into());
        }
    }
    if !spec.security.local_network {
        l.insert(LOCAL_NETWORK.into(), LOCAL_NETWORK_BLOCKED.into());
    }
    for field in DIGEST_FIELDS {
        l.insert(
            format!("{DIGEST_PREFIX}{field}"),
            field_digest(&salt, field, spec),
        );
    }
    l.insert(DIGEST_SALT.into(), salt);
    l
}

/// The caller's labels of a label map: every key outside berth's namespace [`LABEL_NAMESPACE`].
pub(crate) fn caller_labels(all: &HashMap<String, String>) -> HashMap<String, String> {
    all.iter()
        .filter(|(k, _)| !k.starts_with(LABEL_NAMESPACE))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The labels every record volume of a container carries (`docs/design.md#holders-and-records`):
/// the caller's labels (see [`caller_labels`]), and the container's session id
/// ([`SESSION_ID`]) and prefix ([`PREFIX`]) when `all` has them, so a reap narrowed by
/// labels or prefix finds a record whose container is gone. Idempotent.
pub(crate) fn record_labels(all: &HashMap<String, String>) -> HashMap<String, String> {
    let mut l = caller_labels(all);
    for k in [SESSION_ID, PREFIX] {
        if let Some(v) = all.get(k) {
            l.insert(k.into(), v.clone());
        }
    }
    l
}

/// Decodes berth's labels. `None` when the container is not managed by berth (or the
/// managed marker or session id is missing). A managed container whose owner labels
/// are partial or malformed decodes with `owner: None` (liveness `unknown`).
pub(crate) fn decode(labels: &HashMap<String, String>) -> Option<ManagedLabels> {
    if labels.get(MANAGED).map(String::as_str) != Some("true") {
        return None;
    }
    let session_id = labels.get(SESSION_ID)?.clone();
    let owner = (|| {
        let pid: u32 = labels.get(OWNER_PID)?.parse().ok()?;
        Some(Owner {
            host_id: labels.get(OWNER_HOST_ID)?.clone(),
            pid,
            start_time: labels.get(OWNER_START_TIME)?.clone(),
            instance_id: labels.get(OWNER_INSTANCE_ID)?.clone(),
        })
    })();
    let digests = DIGEST_FIELDS
        .iter()
        .filter_map(|f| {
            labels
                .get(&format!("{DIGEST_PREFIX}{f}"))
                .map(|d| (f.to_string(), d.clone()))
        })
        .collect();
    Some(ManagedLabels {
        schema: labels.get(SCHEMA).cloned().unwrap_or_default(),
        session_id,
        prefix: labels.get(PREFIX).cloned().unwrap_or_default(),
        owner,
        digests,
        salt: labels.get(DIGEST_SALT).cloned().unwrap_or_default(),
        remove_after_stop_ms: labels
            .get(REMOVE_AFTER_STOP_MS)
            .and_then(|v| v.parse().ok()),
        timeout_ms: labels.get(TIMEOUT_MS).and_then(|v| v.parse().ok()),
    })
}

/// The salted digest of one spec field (`image`, `env`, ...), 64 hex chars.
pub(crate) fn field_digest(salt: &str, field: &str, spec: &CreateSpec) -> String {
    let canonical = match field {
        "image" => json!(spec.image),
        "env" => json!(spec.env),
        "workDir" => json!(spec.work_dir),
        "user" => json!(spec.user),
        "ports" => {
            let mut p = spec.ports.clone();
            p.sort_unstable();
            p.dedup();
            json!(p)
        }
        "mounts" => {
            let mut m: Vec<_> = spec
                .mounts
                .iter()
                .map(|m| (m.source.clone(), m.target.clone(), m.read_only))
                .collect();
            m.sort();
            json!(m)
        }
        "limits" => json!([
            spec.limits.memory_bytes,
            spec.limits.cpus,
            spec.limits.pids_limit
        ]),
        "entrypoint" => json!(spec.effective_entrypoint()),
        _ => json!(null),
    };
    let mut h = Sha256::new();
    h.update(salt.as_bytes());
    h.update(b"\0");
    h.update(field.as_bytes());
    h.update(b"\0");
    h.update(canonical.to_string().as_bytes());
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_carry_caller_labels_session_id_and_prefix() {
        let all = HashMap::from([
            ("team".to_string(), "a".to_string()),
            (SESSION_ID.to_string(), "s-1".to_string()),
            (PREFIX.to_string(), "berth".to_string()),
            (MANAGED.to_string(), "true".to_string()),
            (DIGEST_SALT.to_string(), "salt".to_string()),
        ]);
        let r = record_labels(&all);
        assert_eq!(
            r,
            HashMap::from([
                ("team".to_string(), "a".to_string()),
                (SESSION_ID.to_string(), "s-1".to_string()),
                (PREFIX.to_string(), "berth".to_string()),
            ])
        );
        assert_eq!(record_labels(&r), r, "idempotent");
    }

    fn spec() -> CreateSpec {
        let mut s = CreateSpec {
            image: "img:1".into(),
            ports: vec![8080, 80],
            ..Default::default()
        };
        s.env.insert("TOKEN".into(), "s3cr3t-value".into());
        s.labels.insert("team".into(), "a".into());
        s
    }

    fn owner() -> Owner {
        Owner {
            host_id: "h".repeat(32),
            pid: 42,
            start_time: "12345".into(),
            instance_id: "i".repeat(32),
        }
    }

    #[test]
    fn round_trip() {
        let l = encode(
            &spec(),
            "sess 😀",
            "berth",
            Some(&owner()),
            "2026-01-01T00:00:00.000Z",
        );
        assert_eq!(l["team"], "a");
        assert_eq!(l[SCHEMA], "1");
        let d = decode(&l).unwrap();
        assert_eq!(d.session_id, "sess 😀");
        assert_eq!(d.prefix, "berth");
        assert_eq!(d.owner, Some(owner()));
        assert_eq!(d.digests.len(), DIGEST_FIELDS.len());
        assert_eq!(d.digests["env"], field_digest(&d.salt, "env", &spec()));
        assert_eq!(d.remove_after_stop_ms, None);
        assert!(!l.contains_key(REMOVE_AFTER_STOP_MS));
    }

    #[test]
    fn retention_round_trips_and_a_bad_value_is_no_retention() {
        let s = CreateSpec {
            remove_after_stop_ms: Some(600_000),
            ..spec()
        };
        let mut l = encode(&s, "s", "berth", Some(&owner()), "t");
        assert_eq!(l[REMOVE_AFTER_STOP_MS], "600000");
        assert_eq!(decode(&l).unwrap().remove_after_stop_ms, Some(600_000));
        l.insert(REMOVE_AFTER_STOP_MS.into(), "-1".into());
        assert_eq!(decode(&l).unwrap().remove_after_stop_ms, None);
    }

    #[test]
    fn no_env_value_in_any_label() {
        let l = encode(&spec(), "s", "berth", Some(&owner()), "t");
        assert!(l.values().all(|v| !v.contains("s3cr3t")));
    }

    #[test]
    fn digests_detect_changes_and_ignore_port_order() {
        let salt = "00";
        let mut other = spec();
        other.ports = vec![80, 8080];
        assert_eq!(
            field_digest(salt, "ports", &spec()),
            field_digest(salt, "ports", &other)
        );
        other.image = "img:2".into();
        assert_ne!(
            field_digest(salt, "image", &spec()),
            field_digest(salt, "image", &other)
        );
        assert_ne!(
            field_digest("01", "image", &spec()),
            field_digest(salt, "image", &spec())
        );
    }

    #[test]
    fn unmanaged_and_malformed() {
        let mut l: HashMap<String, String> = HashMap::new();
        assert!(decode(&l).is_none());
        l.insert(MANAGED.into(), "true".into());
        assert!(decode(&l).is_none(), "no session id");
        l.insert(SESSION_ID.into(), "x".into());
        l.insert(OWNER_PID.into(), "not-a-pid".into());
        let d = decode(&l).unwrap();
        assert_eq!(d.owner, None);
    }
}

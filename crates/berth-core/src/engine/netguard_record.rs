//! Netguard record: which run of an isolated container got its network guard's rules, kept on
//! the engine side where nothing in the sandbox can write (see
//! `docs/design.md#network-isolation`, "Which run has its rules").
//!
//! The rules live in the container's network namespace, which a stop ends: every start (by
//! berth, by the engine's restart policy, by `docker start` behind berth's back) begins a run
//! without them. One run is told from another by the engine's `State.StartedAt` (both engines
//! set it on every start, to the nanosecond). After the guard's helper has written the rules,
//! berth creates the empty volume `berth-guard-<container id>-<16 hex of SHA-256(StartedAt)>`
//! labelled with the container id and that `StartedAt`. A running isolated container whose
//! current `StartedAt` has no such record is a run without its rules. Checking costs one
//! `GET /volumes/{name}`. The records are berth records like the others (`dev.berth.record`,
//! `dev.berth.container-id`), so they go with the container
//! (`ownership::records::remove_records`, the reaper's record sweep).

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use crate::engine::connection::{status, Engine};
use crate::engine::volumes;
use crate::model::errors::Result;
use crate::model::labels::{MANAGED, RECORD_CONTAINER_ID, RECORD_KIND};

/// `dev.berth.record` value of a guard record.
pub(crate) const KIND_GUARD: &str = "guard";
/// The container's `State.StartedAt` whose run got its rules, exactly as the engine wrote it.
const STARTED_AT: &str = "dev.berth.record.started-at";

/// The record's volume name for the run of `container_id` that started at `started_at`.
pub(crate) fn volume(container_id: &str, started_at: &str) -> String {
    let digest = Sha256::digest(started_at.as_bytes());
    format!("berth-guard-{container_id}-{}", hex::encode(&digest[..8]))
}

/// Whether `name`/`labels` are the guard record of the run of `container_id` that started at
/// `started_at`.
pub(crate) fn is_record_of(
    name: &str,
    labels: &HashMap<String, String>,
    container_id: &str,
    started_at: &str,
) -> bool {
    name == volume(container_id, started_at)
        && labels.get(RECORD_KIND).map(String::as_str) == Some(KIND_GUARD)
        && labels.get(RECORD_CONTAINER_ID).map(String::as_str) == Some(container_id)
        && labels.get(STARTED_AT).map(String::as_str) == Some(started_at)
}

/// Whether the run of `container_id` that started at `started_at` got its rules (its record
/// exists). `GET /volumes/{name}`. Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn has(engine: &Engine, container_id: &str, started_at: &str) -> Result<bool> {
    let name = volume(container_id, started_at);
    match volumes::inspect(engine, &name).await? {
        Ok(v) => Ok(is_record_of(&v.name, &v.labels, container_id, started_at)),
        Err(e) if status(&e) == Some(404) => Ok(false),
        Err(e) => Err(engine.error("read network guard record", e)),
    }
}

/// Records that the run of `container_id` that started at `started_at` has its rules, then
/// deletes the records of its earlier runs. `extra`: the container's labels (the record carries
/// its caller labels, session id and prefix, so a narrowed reap finds it). Call it only once
/// the rules are in. `POST /volumes/create` (an existing record counts as done), then
/// `GET /volumes?filters=...` and `DELETE /volumes/{name}` per earlier record.
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn record(
    engine: &Engine,
    container_id: &str,
    started_at: &str,
    extra: &HashMap<String, String>,
) -> Result<()> {
    let mut labels = crate::model::labels::record_labels(extra);
    labels.extend([
        (MANAGED.to_string(), "true".to_string()),
        (RECORD_KIND.to_string(), KIND_GUARD.to_string()),
        (RECORD_CONTAINER_ID.to_string(), container_id.to_string()),
        (STARTED_AT.to_string(), started_at.to_string()),
    ]);
    let name = volume(container_id, started_at);
    match volumes::create(engine, &name, labels).await? {
        Ok(_) => {}
        // Taken (409; Podman 4 answers 500 when two creates of one name race): a concurrent
        // guard of the same run wrote it, when the volume is there.
        Err(e) if matches!(status(&e), Some(409) | Some(500)) => {
            if !has(engine, container_id, started_at).await? {
                return Err(engine.error("record network guard", e));
            }
        }
        Err(e) => return Err(engine.error("record network guard", e)),
    }
    // Earlier runs' records. A concurrent guard of a later run may lose its record here: the
    // next check then applies the rules again (idempotent), never the other way round.
    let filter = vec![
        format!("{RECORD_KIND}={KIND_GUARD}"),
        format!("{RECORD_CONTAINER_ID}={container_id}"),
    ];
    for (other, _) in volumes::list_labelled(engine, filter, "list network guard records").await? {
        if other != name {
            volumes::delete(engine, &other, "remove network guard record").await?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_record_per_run_and_only_its_own_counts() {
        let a = "2026-12-07T02:04:46.123456789Z";
        let b = "2026-12-07T02:04:46.123456788Z";
        let name = volume("c1", a);
        assert!(name.starts_with("berth-guard-c1-"));
        assert_eq!(name.len(), "berth-guard-c1-".len() + 16);
        assert_ne!(name, volume("c1", b));
        let labels = HashMap::from([
            (RECORD_KIND.to_string(), KIND_GUARD.to_string()),
            (RECORD_CONTAINER_ID.to_string(), "c1".to_string()),
            (STARTED_AT.to_string(), a.to_string()),
        ]);
        assert!(is_record_of(&name, &labels, "c1", a));
        assert!(!is_record_of(&name, &labels, "c1", b));
        assert!(!is_record_of(&name, &labels, "c2", a));
        let mut other_kind = labels.clone();
        other_kind.insert(RECORD_KIND.into(), "ready".into());
        assert!(!is_record_of(&name, &other_kind, "c1", a));
    }
}

//! Deadline records: a session's current deadline (`timeoutMs`, `setTimeout`), kept where
//! every client of the engine sees it.
//!
//! The `timeoutMs` a session was created with is fixed in its labels
//! ([`crate::model::labels::TIMEOUT_MS`]). The deadline itself is absolute (milliseconds since
//! the epoch) and changes with `setTimeout`, so it lives in record volumes, one per setting:
//! `berth-deadline-<container id>-<n>`, labelled with the container id, the generation `n`
//! and the deadline. Create writes generation 0 (ready time + `timeoutMs`) just before the
//! readiness record; every `setTimeout` writes the next generation. The current deadline
//! is the one of the highest generation. A volume name can be created once, and the engine
//! answers a taken name with the first writer's labels, so two writers racing for one
//! generation are told apart by a random nonce (compare-and-set): the loser takes the next.
//! The records go with the container ([`crate::ownership::records::remove_records`]).

use std::collections::HashMap;

use crate::engine::connection::Engine;
use crate::model::errors::{Error, Result};
use crate::model::labels::{MANAGED, RECORD_CONTAINER_ID, RECORD_KIND};
use crate::ownership::records;

/// `dev.berth.record` value of a deadline record.
pub(crate) const KIND_DEADLINE: &str = "deadline";
/// The deadline a record sets, in milliseconds since the epoch (decimal).
const DEADLINE_AT: &str = "dev.berth.record.deadline-at";
/// The record's generation (decimal, 0 for the one written at create).
const GENERATION: &str = "dev.berth.record.generation";
/// A random value telling two writers of one generation apart.
const NONCE: &str = "dev.berth.record.nonce";

/// How many generations a writer tries before it gives up (only a burst of concurrent
/// `setTimeout` calls on one session takes more than one).
const MAX_ATTEMPTS: u32 = 32;

fn volume(container_id: &str, generation: u64) -> String {
    format!("berth-deadline-{container_id}-{generation}")
}

/// `(generation, deadline ms)` of one deadline record, when `name`/`labels` are one for
/// `container_id`.
pub(crate) fn decode(
    name: &str,
    labels: &HashMap<String, String>,
    container_id: &str,
) -> Option<(u64, u64)> {
    let generation =
        records::decode_numbered(name, labels, container_id, KIND_DEADLINE, GENERATION, |g| {
            volume(container_id, g)
        })?;
    Some((generation, labels.get(DEADLINE_AT)?.parse().ok()?))
}

/// The current deadline from a container's record volumes (as [`records::list`] returns
/// them): the deadline of the highest generation, `None` when there is no deadline record.
pub(crate) fn current_of(
    volumes: &[(String, HashMap<String, String>)],
    container_id: &str,
) -> Option<(u64, u64)> {
    volumes
        .iter()
        .filter_map(|(n, l)| decode(n, l, container_id))
        .max_by_key(|(g, _)| *g)
}

/// The current deadline of container `id`, in ms since the epoch; `None`: it has none.
/// `GET /volumes?filters=...`. Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn current(engine: &Engine, container_id: &str) -> Result<Option<u64>> {
    let all = records::list(engine, Some(container_id)).await?;
    Ok(current_of(&all, container_id).map(|(_, d)| d))
}

/// Records `deadline_ms` as the current deadline of container `id`: the next generation
/// after the highest one found, compare-and-set against concurrent writers.
/// `extra`: the container's labels; the record carries its caller labels, session id and
/// prefix ([`crate::model::labels::record_labels`]), so a narrowed reap finds it.
/// `GET /volumes?filters=...`, then `POST /volumes/create` (once per generation tried).
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn set(
    engine: &Engine,
    container_id: &str,
    deadline_ms: u64,
    extra: &HashMap<String, String>,
) -> Result<()> {
    let all = records::list(engine, Some(container_id)).await?;
    let first = current_of(&all, container_id).map_or(0, |(g, _)| g + 1);
    let nonce = hex::encode(rand::random::<[u8; 16]>());
    for generation in first..first + u64::from(MAX_ATTEMPTS) {
        let mut labels = crate::model::labels::record_labels(extra);
        labels.extend([
            (MANAGED.to_string(), "true".to_string()),
            (RECORD_KIND.to_string(), KIND_DEADLINE.to_string()),
            (RECORD_CONTAINER_ID.to_string(), container_id.to_string()),
            (GENERATION.to_string(), generation.to_string()),
            (DEADLINE_AT.to_string(), deadline_ms.to_string()),
            (NONCE.to_string(), nonce.clone()),
        ]);
        let name = volume(container_id, generation);
        let found = records::create(engine, &name, labels, "record session deadline").await?;
        if found.get(NONCE) == Some(&nonce) {
            return Ok(());
        }
    }
    Err(Error::Engine {
        operation: "record session deadline".into(),
        status: None,
        message: "too many concurrent deadline changes".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, g: u64, at: u64) -> (String, HashMap<String, String>) {
        (
            volume(id, g),
            HashMap::from([
                (RECORD_KIND.to_string(), KIND_DEADLINE.to_string()),
                (RECORD_CONTAINER_ID.to_string(), id.to_string()),
                (GENERATION.to_string(), g.to_string()),
                (DEADLINE_AT.to_string(), at.to_string()),
            ]),
        )
    }

    #[test]
    fn the_highest_generation_wins() {
        let id = "a".repeat(64);
        let other = "b".repeat(64);
        let vols = vec![
            record(&id, 0, 1_000),
            record(&id, 2, 500),
            record(&id, 1, 9_000),
            record(&other, 7, 1),
        ];
        assert_eq!(current_of(&vols, &id), Some((2, 500)));
        assert_eq!(current_of(&vols[3..], &id), None);
        // A record whose name does not match its generation does not count.
        let mut forged = record(&id, 5, 1);
        forged.0 = volume(&id, 6);
        assert_eq!(current_of(&[forged], &id), None);
    }
}

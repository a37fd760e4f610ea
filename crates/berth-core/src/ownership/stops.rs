//! Stop records: when berth itself asked the engine to stop a container, kept where every
//! client of the engine sees it, so that a stopped container is told apart from a dead one
//! (see `docs/design.md#cause-of-death`).
//!
//! One empty volume per stop, `berth-stop-<container id>-<ms since the epoch>`, labelled with
//! the container id and the time, written right before `POST /containers/{id}/stop`. A stop
//! record at or after the container's last `State.StartedAt` means berth stopped this run; an
//! older one is an earlier run's. The records go with the container
//! ([`crate::ownership::records::remove_records`]).

use std::collections::HashMap;

use crate::engine::connection::Engine;
use crate::model::errors::Result;
use crate::ownership::records;

/// `dev.berth.record` value of a stop record.
pub(crate) const KIND_STOP: &str = "stop";
/// When berth asked for the stop, in milliseconds since the epoch (decimal).
const STOPPED_AT: &str = "dev.berth.record.stopped-at";

fn volume(container_id: &str, at_ms: u64) -> String {
    format!("berth-stop-{container_id}-{at_ms}")
}

/// The time (ms since the epoch) of one stop record, when `name`/`labels` are one for
/// `container_id`.
pub(crate) fn decode(
    name: &str,
    labels: &HashMap<String, String>,
    container_id: &str,
) -> Option<u64> {
    records::decode_numbered(name, labels, container_id, KIND_STOP, STOPPED_AT, |at| {
        volume(container_id, at)
    })
}

/// Records that berth is about to stop container `id` now. `extra`: the container's labels
/// (the record carries its caller labels, session id and prefix, so a narrowed reap finds it).
/// `POST /volumes/create`. Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn record(
    engine: &Engine,
    container_id: &str,
    extra: &HashMap<String, String>,
) -> Result<()> {
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    records::create_numbered(
        engine,
        container_id,
        KIND_STOP,
        (STOPPED_AT, at),
        &volume(container_id, at),
        extra,
        "record session stop",
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::labels::{RECORD_CONTAINER_ID, RECORD_KIND};

    #[test]
    fn decodes_only_its_own_records() {
        let id = "a".repeat(64);
        let labels = HashMap::from([
            (RECORD_KIND.to_string(), KIND_STOP.to_string()),
            (RECORD_CONTAINER_ID.to_string(), id.clone()),
            (STOPPED_AT.to_string(), "1234".to_string()),
        ]);
        assert_eq!(decode(&volume(&id, 1234), &labels, &id), Some(1234));
        assert_eq!(decode(&volume(&id, 1235), &labels, &id), None);
        assert_eq!(decode(&volume(&id, 1234), &labels, &"b".repeat(64)), None);
    }
}

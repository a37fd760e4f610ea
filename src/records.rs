//! Records: engine-side facts about a container that its labels cannot hold (readiness),
//! kept as labelled volumes that every client of the engine can see.
//!
//! A container's labels are frozen at creation, so the "setup finished" mark lives in
//! an empty volume named `berth-ready-<container id>`, labelled with the container id.
//! Volumes are engine objects: they need no writable filesystem in the container and
//! survive the creating process.

use std::collections::HashMap;

use bollard::models::VolumeCreateRequest;

use crate::engine::{status, Engine};
use crate::errors::Result;
use crate::labels::{MANAGED, RECORD_CONTAINER_ID, RECORD_KIND};

fn ready_volume(container_id: &str) -> String {
    format!("berth-ready-{container_id}")
}

/// Marks the container's setup as finished. `POST /volumes/create`.
pub async fn mark_ready(engine: &Engine, container_id: &str) -> Result<()> {
    let labels = HashMap::from([
        (MANAGED.to_string(), "true".to_string()),
        (RECORD_KIND.to_string(), "ready".to_string()),
        (RECORD_CONTAINER_ID.to_string(), container_id.to_string()),
    ]);
    let req = VolumeCreateRequest {
        name: Some(ready_volume(container_id)),
        labels: Some(labels),
        ..Default::default()
    };
    engine
        .docker
        .create_volume(req)
        .await
        .map_err(|e| engine.error("mark session ready", e))?;
    Ok(())
}

/// Whether the container's setup finished. `GET /volumes/{name}`; a volume of that name
/// not labelled for this container does not count.
pub async fn is_ready(engine: &Engine, container_id: &str) -> Result<bool> {
    match engine
        .docker
        .inspect_volume(&ready_volume(container_id))
        .await
    {
        Ok(v) => Ok(
            v.labels.get(RECORD_CONTAINER_ID).map(String::as_str) == Some(container_id)
                && v.labels.get(RECORD_KIND).map(String::as_str) == Some("ready"),
        ),
        Err(e) if status(&e) == Some(404) => Ok(false),
        Err(e) => Err(engine.error("read session readiness", e)),
    }
}

/// Removes the records of a removed container. `DELETE /volumes/{name}`; absent counts as done.
pub async fn remove_records(engine: &Engine, container_id: &str) -> Result<()> {
    match engine
        .docker
        .remove_volume(
            &ready_volume(container_id),
            None::<bollard::query_parameters::RemoveVolumeOptions>,
        )
        .await
    {
        Ok(()) => Ok(()),
        Err(e) if status(&e) == Some(404) => Ok(()),
        Err(e) => Err(engine.error("remove session records", e)),
    }
}

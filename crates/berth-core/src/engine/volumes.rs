//! Berth's own volumes (session records, template use records): the labelled listing
//! (`GET /volumes`), inspect, create and deletion (`DELETE /volumes/{name}`) every kind goes
//! through.

use std::collections::HashMap;

use bollard::models::{Volume, VolumeCreateRequest};
use bollard::query_parameters::ListVolumesOptionsBuilder;

use crate::engine::bounded::{CHANGE_TIMEOUT_MS, READ_TIMEOUT_MS};
use crate::engine::connection::{status, Engine};
use crate::engine::Answer;
use crate::model::errors::Result;

/// Every volume carrying every label filter of `labels` (`key` or `key=value`), as
/// `(name, labels)`. Podman (4.3) ORs several `label` filters on volumes where Docker ANDs
/// them, so each filter is checked here again on what the engine returns.
/// `GET /volumes?filters={"label":[...]}`, bounded by [`READ_TIMEOUT_MS`]; `what` names the
/// listing in an engine error.
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn list_labelled(
    engine: &Engine,
    labels: Vec<String>,
    what: &str,
) -> Result<Vec<(String, HashMap<String, String>)>> {
    let wanted: Vec<(String, Option<String>)> = labels
        .iter()
        .map(|l| match l.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (l.clone(), None),
        })
        .collect();
    let filters = HashMap::from([("label".to_string(), labels)]);
    let opts = ListVolumesOptionsBuilder::default()
        .filters(&filters)
        .build();
    let r = engine
        .call(
            "GET /volumes",
            READ_TIMEOUT_MS,
            engine.docker.list_volumes(Some(opts)),
        )
        .await?
        .map_err(|e| engine.error(what, e))?;
    Ok(r.volumes
        .unwrap_or_default()
        .into_iter()
        .filter(|v| {
            wanted
                .iter()
                .all(|(k, want)| match (v.labels.get(k), want) {
                    (Some(have), Some(want)) => have == want,
                    (Some(_), None) => true,
                    (None, _) => false,
                })
        })
        .map(|v| (v.name, v.labels))
        .collect())
}

/// Deletes volume `name`; absent counts as done. `DELETE /volumes/{name}`, bounded by
/// [`CHANGE_TIMEOUT_MS`]; `what` names the volume in an engine error.
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn delete(engine: &Engine, name: &str, what: &str) -> Result<()> {
    match engine
        .call(
            "DELETE /volumes/{name}",
            CHANGE_TIMEOUT_MS,
            engine
                .docker
                .remove_volume(name, None::<bollard::query_parameters::RemoveVolumeOptions>),
        )
        .await?
    {
        Ok(()) => Ok(()),
        Err(e) if status(&e) == Some(404) => Ok(()),
        Err(e) => Err(engine.error(what, e)),
    }
}

/// `GET /volumes/{name}`, bounded by [`READ_TIMEOUT_MS`]; 404 when there is none.
/// Errors (outer): `E_ENGINE_UNAVAILABLE`, the scope's `E_ABORTED` or deadline error.
pub(crate) async fn inspect(engine: &Engine, name: &str) -> Result<Answer<Volume>> {
    engine
        .call(
            "GET /volumes/{name}",
            READ_TIMEOUT_MS,
            engine.docker.inspect_volume(name),
        )
        .await
}

/// `POST /volumes/create` of a local volume `name` carrying `labels`, bounded by
/// [`CHANGE_TIMEOUT_MS`]; a name already taken is the engine's 409 (Podman: 500).
/// Errors (outer): `E_ENGINE_UNAVAILABLE`, the scope's `E_ABORTED` or deadline error.
pub(crate) async fn create(
    engine: &Engine,
    name: &str,
    labels: HashMap<String, String>,
) -> Result<Answer<Volume>> {
    let req = VolumeCreateRequest {
        name: Some(name.to_string()),
        labels: Some(labels),
        ..Default::default()
    };
    engine
        .call(
            "POST /volumes/create",
            CHANGE_TIMEOUT_MS,
            engine.docker.create_volume(req),
        )
        .await
}

//! Records: engine-side facts about a container that its labels cannot hold (readiness,
//! holders, the duty to remove), kept as labelled volumes that every client of the engine can see.
//!
//! A container's labels are frozen at creation, so the "setup finished" mark lives in
//! an empty volume named `berth-ready-<container id>`, labelled with the container id;
//! holder and duty records (format in [`crate::ownership::holders`]) sit beside it. Volumes are
//! engine objects: they need no writable filesystem in the container, survive the
//! process that wrote them, and every client of the engine (another user, another
//! container sharing the socket) lists them by an exact label filter.

use std::collections::HashMap;

use crate::engine::connection::{status, Engine};
use crate::engine::volumes;
use crate::model::errors::Result;
use crate::model::labels::{MANAGED, RECORD_CONTAINER_ID, RECORD_KIND};
use crate::ownership::holders::{self, Record};

/// `dev.berth.record` value of the readiness record.
pub(crate) const KIND_READY: &str = "ready";

fn ready_volume(container_id: &str) -> String {
    format!("berth-ready-{container_id}")
}

/// Label of the readiness record holding the container's labels at creation (a JSON object),
/// which `verify` compares with the container's labels now.
pub(crate) const CREATION_LABELS: &str = "dev.berth.record.labels";

/// Marks the container's setup as finished. `POST /volumes/create`. `container_labels` are
/// every label the container was created with: its caller labels, session id and prefix are
/// copied onto the record (see [`crate::model::labels::record_labels`]) and the whole set is recorded as JSON under
/// [`CREATION_LABELS`].
pub(crate) async fn mark_ready(
    engine: &Engine,
    container_id: &str,
    container_labels: &HashMap<String, String>,
) -> Result<()> {
    let mut labels: HashMap<String, String> = crate::model::labels::record_labels(container_labels);
    let sorted: std::collections::BTreeMap<_, _> = container_labels.iter().collect();
    labels.insert(
        CREATION_LABELS.into(),
        serde_json::to_string(&sorted).unwrap_or_default(),
    );
    labels.insert(MANAGED.into(), "true".into());
    labels.insert(RECORD_KIND.into(), KIND_READY.into());
    labels.insert(RECORD_CONTAINER_ID.into(), container_id.into());
    create(
        engine,
        &ready_volume(container_id),
        labels,
        "mark session ready",
    )
    .await?;
    Ok(())
}

/// Whether the container's setup finished. `GET /volumes/{name}`; a volume of that name
/// not labelled for this container does not count.
#[cfg(test)]
pub(crate) async fn is_ready(engine: &Engine, container_id: &str) -> Result<bool> {
    match volumes::inspect(engine, &ready_volume(container_id)).await? {
        Ok(v) => Ok(is_ready_record(&v.name, &v.labels, container_id)),
        Err(e) if status(&e) == Some(404) => Ok(false),
        Err(e) => Err(engine.error("read session readiness", e)),
    }
}

/// What the readiness record of container `container_id` says: `None` when there is none
/// (or it is not labelled for this container), else the labels recorded at creation (`None`
/// inside for a record written before they were recorded). `GET /volumes/{name}`.
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn creation_record(
    engine: &Engine,
    container_id: &str,
) -> Result<Option<Option<HashMap<String, String>>>> {
    match volumes::inspect(engine, &ready_volume(container_id)).await? {
        Ok(v) if is_ready_record(&v.name, &v.labels, container_id) => Ok(Some(
            v.labels
                .get(CREATION_LABELS)
                .and_then(|j| serde_json::from_str(j).ok()),
        )),
        Ok(_) => Ok(None),
        Err(e) if status(&e) == Some(404) => Ok(None),
        Err(e) => Err(engine.error("read session readiness", e)),
    }
}

fn is_ready_record(name: &str, labels: &HashMap<String, String>, container_id: &str) -> bool {
    name == ready_volume(container_id)
        && labels.get(RECORD_CONTAINER_ID).map(String::as_str) == Some(container_id)
        && labels.get(RECORD_KIND).map(String::as_str) == Some(KIND_READY)
}

/// The number (generation, time) a numbered record of one container carries under `key`, when
/// `name`/`labels` are a record of `kind` for `container_id` whose name is `volume(number)`:
/// the one decoding rule of the stop, settled and deadline records.
pub(crate) fn decode_numbered(
    name: &str,
    labels: &HashMap<String, String>,
    container_id: &str,
    kind: &str,
    key: &str,
    volume: impl Fn(u64) -> String,
) -> Option<u64> {
    if labels.get(RECORD_KIND).map(String::as_str) != Some(kind)
        || labels.get(RECORD_CONTAINER_ID).map(String::as_str) != Some(container_id)
    {
        return None;
    }
    let n: u64 = labels.get(key)?.parse().ok()?;
    (name == volume(n)).then_some(n)
}

/// Creates the numbered record `volume` of `kind` for `container_id`, carrying `(key, number)`
/// and the container's record labels from `extra` (caller labels, session id and
/// prefix, so a narrowed reap finds it). `POST /volumes/create` ([`create`]); an existing
/// record counts as done. Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn create_numbered(
    engine: &Engine,
    container_id: &str,
    kind: &str,
    (key, number): (&str, u64),
    volume: &str,
    extra: &HashMap<String, String>,
    operation: &str,
) -> Result<()> {
    let mut labels = crate::model::labels::record_labels(extra);
    labels.extend([
        (MANAGED.to_string(), "true".to_string()),
        (RECORD_KIND.to_string(), kind.to_string()),
        (RECORD_CONTAINER_ID.to_string(), container_id.to_string()),
        (key.to_string(), number.to_string()),
    ]);
    create(engine, volume, labels, operation).await?;
    Ok(())
}

/// Creates the volume `name` with `labels`, or finds it: the engine answers an existing
/// name with the existing volume and its first creator's labels, which are returned.
/// That makes "create, then compare the labels read back" a compare-and-set.
/// `POST /volumes/create`. An engine that refuses a taken name instead (409; Podman 4
/// answers 500 "volume already exists" when two creates of one name race) is answered by
/// `GET /volumes/{name}`: the refusal counts as "taken" only when the volume is there,
/// never by the message text.
pub(crate) async fn create(
    engine: &Engine,
    name: &str,
    labels: HashMap<String, String>,
    operation: &str,
) -> Result<HashMap<String, String>> {
    match volumes::create(engine, name, labels).await? {
        Ok(v) => Ok(v.labels),
        Err(e) if matches!(status(&e), Some(409) | Some(500)) => {
            match volumes::inspect(engine, name).await? {
                Ok(v) => Ok(v.labels),
                Err(_) => Err(engine.error(operation, e)),
            }
        }
        Err(e) => Err(engine.error(operation, e)),
    }
}

/// Deletes record `name`; absent counts as done. `DELETE /volumes/{name}`.
pub(crate) async fn delete(engine: &Engine, name: &str) -> Result<()> {
    crate::engine::volumes::delete(engine, name, "remove session record").await
}

/// Every berth record volume (of one container when `container_id` is given), as
/// `(name, labels)`. `GET /volumes?filters={"label":["dev.berth.record", ...]}`.
pub(crate) async fn list(
    engine: &Engine,
    container_id: Option<&str>,
) -> Result<Vec<(String, HashMap<String, String>)>> {
    let mut label = vec![RECORD_KIND.to_string()];
    if let Some(id) = container_id {
        label.push(format!("{RECORD_CONTAINER_ID}={id}"));
    }
    crate::engine::volumes::list_labelled(engine, label, "list session records").await
}

/// What the records say about one container: readiness and its holder and duty records.
#[derive(Debug, Clone, Default)]
pub(crate) struct ContainerRecords {
    /// Whether the readiness record exists.
    pub ready: bool,
    /// Holder and duty records (refused ones included).
    pub holds: Vec<Record>,
    /// Every record volume name of the container (readiness included).
    pub volumes: Vec<String>,
    /// The current deadline record, `(generation, ms since the epoch)` (see
    /// [`crate::ownership::deadlines`]).
    pub deadline: Option<(u64, u64)>,
    /// When berth last asked the engine to stop the container, in ms since the epoch (see
    /// [`crate::ownership::stops`]).
    pub stopped_at: Option<u64>,
    /// Duty generations whose handover finished (see [`crate::ownership::settled`]).
    pub settled: Vec<u64>,
}

impl ContainerRecords {
    /// The current deadline, in ms since the epoch.
    pub(crate) fn deadline_ms(&self) -> Option<u64> {
        self.deadline.map(|(_, d)| d)
    }

    /// berth's own stops of the container, for [`crate::model::death::classify`].
    pub(crate) fn own_stops(&self) -> crate::model::death::OwnStops {
        crate::model::death::OwnStops {
            stop_recorded_ms: self.stopped_at,
            deadline_ms: self.deadline_ms(),
        }
    }
}

/// Groups record volumes by the container id they name.
pub(crate) fn group(
    volumes: Vec<(String, HashMap<String, String>)>,
) -> HashMap<String, ContainerRecords> {
    let mut by_id: HashMap<String, ContainerRecords> = HashMap::new();
    for (name, labels) in volumes {
        let Some(id) = labels.get(RECORD_CONTAINER_ID).cloned() else {
            continue;
        };
        let entry = by_id.entry(id.clone()).or_default();
        entry.volumes.push(name.clone());
        if is_ready_record(&name, &labels, &id) {
            entry.ready = true;
        } else if let Some(d) = crate::ownership::deadlines::decode(&name, &labels, &id) {
            if entry.deadline.is_none_or(|(g, _)| g < d.0) {
                entry.deadline = Some(d);
            }
        } else if let Some(at) = crate::ownership::stops::decode(&name, &labels, &id) {
            entry.stopped_at = entry.stopped_at.max(Some(at));
        } else if let Some(g) = crate::ownership::settled::decode(&name, &labels, &id) {
            entry.settled.push(g);
        } else if let Some(r) = holders::decode(&name, &labels) {
            entry.holds.push(r);
        }
    }
    by_id
}

/// The records of one container. `GET /volumes?filters=...`.
pub(crate) async fn of_container(engine: &Engine, container_id: &str) -> Result<ContainerRecords> {
    let all = list(engine, Some(container_id)).await?;
    Ok(group(all).remove(container_id).unwrap_or_default())
}

/// Removes every record of a removed container (readiness, holders, duty generations).
/// `GET /volumes?filters=...`, then `DELETE /volumes/{name}` each; absent counts as done.
pub(crate) async fn remove_records(engine: &Engine, container_id: &str) -> Result<()> {
    let mut names: Vec<String> = list(engine, Some(container_id))
        .await?
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let ready = ready_volume(container_id);
    if !names.contains(&ready) {
        names.push(ready);
    }
    for name in names {
        delete(engine, &name).await?;
    }
    Ok(())
}

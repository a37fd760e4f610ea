//! Calls by id: create, start or unpause, rename, changes, stop, remove; engine calls by
//! container id (create by its new name), never a destructive one by name.

use std::time::Duration;

use bollard::models::{ContainerCreateBody, ContainerCreateResponse, FilesystemChange};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, RemoveContainerOptionsBuilder, RenameContainerOptions,
    StopContainerOptionsBuilder,
};

use crate::engine::bounded::STOP_EXTRA_MS;
use crate::engine::bounded::{CHANGE_TIMEOUT_MS, READ_TIMEOUT_MS};
use crate::engine::connection::{status, Engine};
use crate::engine::container::{inspect, list_by_labels};
use crate::engine::container::{Facts, Inspected};
use crate::engine::Answer;
use crate::model::errors::{Error, Result};

/// How long to wait for a removal someone else started, in milliseconds.
pub(crate) const REMOVAL_IN_PROGRESS_WAIT_MS: u64 = 30_000;
const POLL_MS: u64 = 100;

/// What a removal found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Removal {
    /// This call removed the container.
    Removed,
    /// The engine no longer had it (or another removal finished it).
    Absent,
}

/// Force-removes the container `id` with its anonymous volumes (not its records: see
/// `ownership::removal::remove_by_id`).
///
/// `DELETE /containers/{id}?force=true&v=true`. 404 is [`Removal::Absent`]; a removal
/// already in progress (409, or Podman's 500 confirmed by inspect) is waited for. A refusal
/// while network-guard helpers of `id` are left (Podman keeps a container another joined) removes
/// those first (`GET /containers/json` by `dev.berth.helper.for`, `DELETE` each by id) and
/// tries again once.
/// Errors: `E_ENGINE` / `E_ENGINE_UNAVAILABLE`; the container is then still there.
pub(crate) async fn remove_container(engine: &Engine, id: &str) -> Result<Removal> {
    match Box::pin(remove_once(engine, id)).await {
        Err(first @ Error::Engine { .. }) => {
            // Podman refuses to remove a container another one joined (`networkMode:
            // container:<id>`), even exited: a network-guard helper that a killed process left.
            // Its helpers go first (by id), then the removal is tried once more.
            let helpers = list_by_labels(
                engine,
                &[format!(
                    "{}={id}",
                    crate::engine::netguard_helper::HELPER_FOR_LABEL
                )],
            )
            .await?;
            let ids: Vec<String> = helpers.into_iter().filter_map(|l| l.summary.id).collect();
            if ids.is_empty() {
                return Err(first);
            }
            for h in &ids {
                Box::pin(remove_once(engine, h)).await?;
            }
            Box::pin(remove_once(engine, id)).await
        }
        other => other,
    }
}

/// One `DELETE /containers/{id}?force=true&v=true` of [`remove_container`].
async fn remove_once(engine: &Engine, id: &str) -> Result<Removal> {
    let opts = RemoveContainerOptionsBuilder::default()
        .force(true)
        .v(true)
        .build();
    let outcome = match engine
        .call(
            "DELETE /containers/{id}",
            CHANGE_TIMEOUT_MS,
            engine.docker.remove_container(id, Some(opts)),
        )
        .await?
    {
        Ok(()) => Removal::Removed,
        Err(e) if status(&e) == Some(404) => Removal::Absent,
        Err(e) if matches!(status(&e), Some(409) | Some(500)) => {
            // Ambiguous: decide by what the engine now says about this id.
            match inspect(engine, id).await? {
                None => Removal::Absent,
                Some(c) if is_removing(&c) => wait_gone(engine, id).await?,
                Some(_) => return Err(engine.error("remove container", e)),
            }
        }
        Err(e) => return Err(engine.error("remove container", e)),
    };
    Ok(outcome)
}

fn is_removing(c: &bollard::models::ContainerInspectResponse) -> bool {
    c.state
        .as_ref()
        .and_then(|s| s.status)
        .is_some_and(|s| s == bollard::models::ContainerStateStatusEnum::REMOVING)
}

async fn wait_gone(engine: &Engine, id: &str) -> Result<Removal> {
    let deadline = tokio::time::Instant::now() + Duration::from_millis(REMOVAL_IN_PROGRESS_WAIT_MS);
    loop {
        if inspect(engine, id).await?.is_none() {
            return Ok(Removal::Absent);
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::Engine {
                operation: "remove container".into(),
                status: Some(409),
                message: format!("removal of {id} already in progress did not finish within {REMOVAL_IN_PROGRESS_WAIT_MS} ms"),
            });
        }
        tokio::time::sleep(Duration::from_millis(POLL_MS)).await;
    }
}

/// What a stop found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The container is stopped (it may have been already).
    Stopped,
    /// The engine no longer had it.
    Absent,
}

/// Stops container `id`: SIGTERM, then SIGKILL after `timeout_ms` (rounded up to whole
/// seconds, the Engine API's unit). `POST /containers/{id}/stop?t=<s>`.
pub(crate) async fn stop_by_id(engine: &Engine, id: &str, timeout_ms: u64) -> Result<Stop> {
    let secs = i32::try_from(timeout_ms.div_ceil(1000)).unwrap_or(i32::MAX);
    let opts = StopContainerOptionsBuilder::default().t(secs).build();
    // The engine answers after the grace period: the request may take that long, and more.
    match engine
        .call(
            "POST /containers/{id}/stop",
            timeout_ms.saturating_add(STOP_EXTRA_MS),
            engine.docker.stop_container(id, Some(opts)),
        )
        .await?
    {
        Ok(()) => Ok(Stop::Stopped),
        Err(e) if status(&e) == Some(404) => Ok(Stop::Absent),
        Err(e) => Err(engine.error("stop container", e)),
    }
}

/// Wakes container `c` (as just inspected): starts it when stopped or unpauses it when paused,
/// by id; then makes sure the run it leaves running has its isolation rules
/// (`engine::netguard::ensure`): a start makes a new network namespace, and a run found
/// running may have been started by a process killed before its guard ran, by the engine's
/// restart policy or by hand. A run whose guard record is in place costs one
/// `GET /volumes/{name}`.
/// Errors: `E_ENGINE` (404: the container is gone), `E_ENGINE_UNAVAILABLE`, `E_ABORTED`.
pub(crate) async fn wake(engine: &Engine, c: &Inspected) -> Result<()> {
    let f = Facts::from_inspect(c);
    match f.state {
        "running" | "restarting" => {}
        "paused" => unpause(engine, &f.id)
            .await?
            .map_err(|e| engine.error("unpause container", e))?,
        _ => {
            start(engine, &f.id)
                .await?
                .map_err(|e| engine.error("start container", e))?;
            Box::pin(crate::engine::netguard::ensure(engine, &f.id)).await?;
            return Ok(());
        }
    }
    // Running or paused: the same run as inspected (a pause keeps the namespace).
    Box::pin(crate::engine::netguard::ensure_inspected(engine, c)).await?;
    Ok(())
}

/// `POST /containers/{id}/start`, bounded by [`CHANGE_TIMEOUT_MS`]; the isolation rules are
/// the caller's next step (`engine::netguard::isolate`). Errors (outer): `E_ENGINE_UNAVAILABLE`,
/// the scope's `E_ABORTED` or deadline error; the engine's refusal is the inner error.
pub(crate) async fn start(engine: &Engine, id: &str) -> Result<Answer<()>> {
    engine
        .call(
            "POST /containers/{id}/start",
            CHANGE_TIMEOUT_MS,
            engine.docker.start_container(id, None),
        )
        .await
}

/// `POST /containers/{id}/unpause`, bounded by [`CHANGE_TIMEOUT_MS`]. Errors (outer): as
/// [`start`].
pub(crate) async fn unpause(engine: &Engine, id: &str) -> Result<Answer<()>> {
    engine
        .call(
            "POST /containers/{id}/unpause",
            CHANGE_TIMEOUT_MS,
            engine.docker.unpause_container(id),
        )
        .await
}

/// `POST /containers/{id}/rename?name=<name>`, bounded by [`CHANGE_TIMEOUT_MS`]. Errors
/// (outer): as [`start`].
pub(crate) async fn rename(engine: &Engine, id: &str, name: &str) -> Result<Answer<()>> {
    let opts = RenameContainerOptions { name: name.into() };
    engine
        .call(
            "POST /containers/{id}/rename",
            CHANGE_TIMEOUT_MS,
            engine.docker.rename_container(id, opts),
        )
        .await
}

/// `POST /containers/create[?name=<name>][&platform=<platform>]` with `body` (unnamed when
/// `name` is `None`: the engine makes one up), bounded by
/// [`CHANGE_TIMEOUT_MS`]. Errors (outer): as [`start`]; the caller decides what a lost answer
/// means (the engine may have created it anyway).
pub(crate) async fn create(
    engine: &Engine,
    name: Option<&str>,
    platform: Option<&str>,
    body: ContainerCreateBody,
) -> Result<Answer<ContainerCreateResponse>> {
    let mut opts = CreateContainerOptionsBuilder::default();
    if let Some(n) = name {
        opts = opts.name(n);
    }
    if let Some(p) = platform {
        opts = opts.platform(p);
    }
    engine
        .call(
            "POST /containers/create",
            CHANGE_TIMEOUT_MS,
            engine.docker.create_container(Some(opts.build()), body),
        )
        .await
}

/// `GET /containers/{id}/changes`: the container's filesystem diff against its image, bounded
/// by [`READ_TIMEOUT_MS`]. Errors (outer): as [`start`].
pub(crate) async fn changes(
    engine: &Engine,
    id: &str,
) -> Result<Answer<Option<Vec<FilesystemChange>>>> {
    engine
        .call(
            "GET /containers/{id}/changes",
            READ_TIMEOUT_MS,
            engine.docker.container_changes(id),
        )
        .await
}

//! Top: the processes of a running container, and how many (`GET /containers/{id}/top`).

use crate::engine::bounded::READ_TIMEOUT_MS;
use bollard::models::ContainerTopResponse;

use crate::engine::connection::Engine;
use crate::engine::Answer;
use crate::model::errors::Result;

/// The number of processes in running container `id`, as the engine lists them (the host's
/// `ps` on Docker, the container's on Podman); `Ok(None)` when the engine will not list them
/// (the container is not running any more, or is gone: the caller's inspect tells which).
///
/// `GET /containers/{id}/top`. Errors: `E_ENGINE_UNAVAILABLE`, `E_ABORTED` (the scope's
/// signal), the scope's deadline error.
pub(crate) async fn process_count(engine: &Engine, id: &str) -> Result<Option<usize>> {
    Ok(list(engine, id)
        .await?
        .ok()
        .map(|top| top.processes.map(|p| p.len()).unwrap_or(0)))
}

/// The processes of running container `id`, as the engine answers: its own error when it will
/// not list them (404 gone, 409 or Podman's 500 not running).
///
/// `GET /containers/{id}/top`, bounded by [`READ_TIMEOUT_MS`]. Errors (outer):
/// `E_ENGINE_UNAVAILABLE`, the scope's `E_ABORTED` or deadline error.
pub(crate) async fn list(engine: &Engine, id: &str) -> Result<Answer<ContainerTopResponse>> {
    engine
        .call(
            "GET /containers/{id}/top",
            READ_TIMEOUT_MS,
            engine
                .docker
                .top_processes(id, None::<bollard::query_parameters::TopOptions>),
        )
        .await
}

//! Top: how many processes a running container has (`GET /containers/{id}/top`).

use crate::engine::bounded::READ_TIMEOUT_MS;
use crate::engine::connection::Engine;
use crate::model::errors::Result;

/// The number of processes in running container `id`, as the engine lists them (the host's
/// `ps` on Docker, the container's on Podman); `Ok(None)` when the engine will not list them
/// (the container is not running any more, or is gone: the caller's inspect tells which).
///
/// `GET /containers/{id}/top`. Errors: `E_ENGINE_UNAVAILABLE`, `E_ABORTED` (the scope's
/// signal), the scope's deadline error.
pub(crate) async fn process_count(engine: &Engine, id: &str) -> Result<Option<usize>> {
    let answer = engine
        .call(
            "GET /containers/{id}/top",
            READ_TIMEOUT_MS,
            engine
                .docker
                .top_processes(id, None::<bollard::query_parameters::TopOptions>),
        )
        .await?;
    Ok(answer
        .ok()
        .map(|top| top.processes.map(|p| p.len()).unwrap_or(0)))
}

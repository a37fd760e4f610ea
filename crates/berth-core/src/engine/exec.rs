//! Exec endpoints by id: create one in a container, start it attached, inspect it.
//!
//! One function per endpoint, each bounded by the engine's scope (the caller's signal and
//! deadline) and the timeout given; the inner result is the engine's own answer, so callers
//! decide on its status. The marker, the exit code rule and the tree kill live in
//! `crate::exec::launch`.

use bollard::exec::{CreateExecOptions, CreateExecResults, StartExecOptions, StartExecResults};
use bollard::models::ExecInspectResponse;

use crate::engine::connection::Engine;
use crate::engine::Answer;
use crate::model::errors::Result;

/// `POST /containers/{id}/exec` with `options`, bounded by `timeout_ms`.
/// Errors (outer): `E_ENGINE_UNAVAILABLE` (no answer in time), the scope's `E_ABORTED` or
/// deadline error.
pub(crate) async fn create(
    engine: &Engine,
    id: &str,
    options: CreateExecOptions<String>,
    timeout_ms: u64,
) -> Result<Answer<CreateExecResults>> {
    engine
        .call(
            "POST /containers/{id}/exec",
            timeout_ms,
            engine.docker.create_exec(id, options),
        )
        .await
}

/// `POST /exec/{id}/start`, attached (no detach, no TTY unless `options` say so), bounded by
/// `timeout_ms` until the engine answers; the streams then run on. Errors (outer): as [`create`].
pub(crate) async fn start(
    engine: &Engine,
    exec_id: &str,
    options: Option<StartExecOptions>,
    timeout_ms: u64,
) -> Result<Answer<StartExecResults>> {
    engine
        .call(
            "POST /exec/{id}/start",
            timeout_ms,
            engine.docker.start_exec(exec_id, options),
        )
        .await
}

/// `GET /exec/{id}/json`, bounded by `timeout_ms`. Errors (outer): as [`create`].
pub(crate) async fn inspect(
    engine: &Engine,
    exec_id: &str,
    timeout_ms: u64,
) -> Result<Answer<ExecInspectResponse>> {
    engine
        .call(
            "GET /exec/{id}/json",
            timeout_ms,
            engine.docker.inspect_exec(exec_id),
        )
        .await
}

//! Rollback: what a create that failed after the engine made its container owes, removed by
//! id (`docs/design.md#ownership-and-removal`, `docs/design.md#engines`).

use std::time::Duration;

use crate::engine::bounded::CLEANUP_WAIT_MS;
use crate::engine::connection::Engine;
use crate::model::errors::Error;
use crate::ownership::{cleanup, removal};

/// Removes what this call created; the first error stays first.
///
/// Without the caller's bounds. After an abort or a deadline the removal is awaited only while
/// the engine is answering ([`Engine::answering`]), and for at most [`CLEANUP_WAIT_MS`], so the
/// session id is free again when the call settles; when the engine left a request unanswered
/// (or did not answer in time) the call settles at once and the removal is left to the
/// background cleanup and the next call (`crate::ownership::cleanup`). A failed removal is
/// attached to the error and deferred.
pub(crate) async fn rollback(engine: &Engine, id: &str, first: Error) -> Error {
    let answering = engine.answering();
    let engine = &engine.detached();
    let interrupted = matches!(first.code(), "E_ABORTED" | "E_EXEC_TIMEOUT");
    if first.code() == "E_ENGINE_UNAVAILABLE" || (interrupted && !answering) {
        cleanup::defer(engine, id);
        cleanup::retry_in_background(engine);
        return first;
    }
    let removing = removal::remove_by_id(engine, id);
    let removed = match interrupted {
        true => {
            match tokio::time::timeout(Duration::from_millis(CLEANUP_WAIT_MS), removing).await {
                Ok(r) => r,
                Err(_) => {
                    cleanup::defer(engine, id);
                    cleanup::retry_in_background(engine);
                    return first;
                }
            }
        }
        false => removing.await,
    };
    match removed {
        Ok(_) => first,
        Err(cleanup_err) => {
            cleanup::defer(engine, id);
            first.with_cleanup(cleanup_err)
        }
    }
}

//! Removal: a container removed by id together with the records the engine keeps about it.

use crate::engine::calls::{remove_container, Removal};
use crate::engine::connection::Engine;
use crate::model::errors::Result;
use crate::ownership::records;

/// Force-removes the container `id` with its anonymous volumes, then its records.
///
/// `DELETE /containers/{id}?force=true&v=true` (see [`remove_container`]), then the record
/// volumes that name `id` (see [`records::remove_records`]).
/// Errors: `E_ENGINE` / `E_ENGINE_UNAVAILABLE`; the container is then still there, or its
/// records are.
pub(crate) async fn remove_by_id(engine: &Engine, id: &str) -> Result<Removal> {
    let outcome = remove_container(engine, id).await?;
    records::remove_records(engine, id).await?;
    Ok(outcome)
}

//! Provenance: whether a container carrying berth's labels was made by berth, or only
//! inherited those labels (an image committed from a berth container keeps its labels,
//! and every container run from that image carries them).

use bollard::models::ContainerInspectResponse;

use crate::engine::connection::{status, Engine};
use crate::engine::container::Facts;
use crate::model::errors::Result;
use crate::model::labels::DIGEST_SALT;
use crate::model::naming::container_name;

/// Why a container with berth's labels is not a berth session, or `None` when it is one.
///
/// Two checks: its name is the one berth derives from its own session-id and prefix
/// labels (`name-mismatch` otherwise), and its per-container random digest salt is not the
/// one its image carries (`labels-from-image` otherwise: the labels were copied by a
/// commit, not written by berth at create). An image that is gone cannot be compared and
/// does not count against the container. Engine call: `GET /images/{id}/json`.
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn not_berth_made(
    engine: &Engine,
    c: &ContainerInspectResponse,
    f: &Facts,
) -> Result<Option<&'static str>> {
    let Some(m) = &f.managed else {
        return Ok(Some("unmanaged"));
    };
    let id: Vec<u16> = m.session_id.encode_utf16().collect();
    let prefix: Vec<u16> = m.prefix.encode_utf16().collect();
    if container_name(&id, Some(&prefix)) != f.name {
        return Ok(Some("name-mismatch"));
    }
    let Some(image) = c.image.as_deref().filter(|i| !i.is_empty()) else {
        return Ok(None);
    };
    match crate::engine::images::inspect(engine, image).await? {
        Ok(i) => {
            let inherited = i
                .config
                .and_then(|c| c.labels)
                .and_then(|l| l.get(DIGEST_SALT).cloned())
                .is_some_and(|salt| !m.salt.is_empty() && salt == m.salt);
            Ok(inherited.then_some("labels-from-image"))
        }
        Err(e) if status(&e) == Some(404) => Ok(None),
        Err(e) => Err(engine.error("inspect image", e)),
    }
}

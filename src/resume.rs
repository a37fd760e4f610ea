//! Resume: the only path that adopts an existing session container.
//!
//! Engine calls: `GET /containers/{name}/json`, `GET /volumes/berth-ready-<id>`, then by
//! id `POST /containers/{id}/start` (stopped) or `POST /containers/{id}/unpause` (paused).

use tokio_util::sync::CancellationToken;

use crate::container::{inspect, Facts};
use crate::create::guard;
use crate::engine::{self, Engine, EngineOptions};
use crate::errors::{Error, Result};
use crate::identity::{liveness, Liveness};
use crate::naming::{container_name, DEFAULT_PREFIX};
use crate::records;
use crate::session::{Ownership, Session};
use crate::spec::{validate_prefix, validate_session_id};

/// What `resumeSession` is asked for.
#[derive(Debug, Clone, Default)]
pub struct ResumeSpec {
    /// Session id, as UTF-16 code units.
    pub session_id: Vec<u16>,
    /// Name prefix (default `berth`), as UTF-16 code units.
    pub prefix: Option<Vec<u16>>,
}

/// Adopts the existing container of a session, starting or unpausing it as needed.
///
/// The filesystem of a stopped container is kept. The handle is `adopted`: it stops and
/// removes nothing unless forced.
///
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_SESSION_NOT_FOUND` (absent or
/// being removed), `E_FOREIGN_CONTAINER` (not berth's, or another session's),
/// `E_SESSION_BUSY` (`reason: 'initialising'`: setup still running under a live or
/// unknown owner), `E_SESSION_INCOMPLETE` (setup never finished and its owner is dead),
/// `E_ABORTED`, `E_ENGINE`.
pub async fn resume_session(
    spec: &ResumeSpec,
    engine_opts: &EngineOptions,
    cancel: &CancellationToken,
) -> Result<Session> {
    let session_id = validate_session_id(&spec.session_id)?;
    let prefix_units: Vec<u16> = spec
        .prefix
        .clone()
        .unwrap_or_else(|| DEFAULT_PREFIX.encode_utf16().collect());
    validate_prefix(&prefix_units)?;
    let name = container_name(&spec.session_id, Some(&prefix_units));
    guard(cancel, "resumeSession", async {
        let engine = engine::connect(engine_opts).await?;
        adopt(&engine, &session_id, &name).await
    })
    .await
}

async fn adopt(engine: &Engine, session_id: &str, name: &str) -> Result<Session> {
    let not_found = || Error::SessionNotFound {
        session_id: session_id.into(),
        name: name.into(),
    };
    let c = inspect(engine, name).await?.ok_or_else(not_found)?;
    let f = Facts::from_inspect(&c);
    let Some(managed) = &f.managed else {
        return Err(Error::ForeignContainer {
            session_id: session_id.into(),
            name: name.into(),
            id: f.id.clone(),
            reason: "the container does not carry berth's managed labels".into(),
        });
    };
    if managed.session_id != session_id {
        return Err(Error::ForeignContainer {
            session_id: session_id.into(),
            name: name.into(),
            id: f.id.clone(),
            reason: format!("the container belongs to session {:?}", managed.session_id),
        });
    }
    if !records::is_ready(engine, &f.id).await? {
        let owner_dead = f.owner().is_some_and(|o| liveness(o) == Liveness::Dead);
        return Err(if owner_dead {
            Error::SessionIncomplete {
                session_id: session_id.into(),
                name: name.into(),
                id: f.id.clone(),
                owner: f.owner_json(),
            }
        } else {
            Error::SessionBusy {
                session_id: session_id.into(),
                name: name.into(),
                id: f.id.clone(),
                reason: "initialising".into(),
                owner: f.owner_json(),
            }
        });
    }
    match f.state {
        "running" | "restarting" => {}
        "paused" => engine
            .docker
            .unpause_container(&f.id)
            .await
            .map_err(|e| engine.error("unpause container", e))?,
        "removing" => return Err(not_found()),
        _ => {
            engine
                .docker
                .start_container(&f.id, None)
                .await
                .map_err(|e| match engine::status(&e) {
                    Some(404) => not_found(),
                    _ => engine.error("start container", e),
                })?
        }
    }
    Ok(Session::new(
        engine.clone(),
        f.id.clone(),
        f.name.clone(),
        session_id.into(),
        Ownership::Adopted,
        f.owner().cloned(),
    ))
}

//! Create failures: a refused `POST /containers/create` classified by status and a follow-up
//! inspect, never by message text (`docs/design.md#engines`).

use crate::engine::connection::{status, Engine};
use crate::engine::container::{inspect, Facts};
use crate::engine::discovery::EngineKind;
use crate::model::errors::{Error, Holder};

/// Classifies a failed `POST /containers/create`: a taken name (409; Docker 17.09: 400;
/// Podman 4: 500) is confirmed by inspecting the name, never by message text.
///
/// The engine reserves a name before the container it names can be inspected, so a
/// loser of a create race may briefly see 404 on the name: the inspect is retried for
/// up to [`NAME_HOLDER_WAIT_MS`]. A 409 stays `E_SESSION_EXISTS` even when the holder
/// never became visible (it is then reported with an empty id and state `unknown`).
pub(crate) async fn create_failure(
    engine: &Engine,
    session_id: &str,
    name: &str,
    image: &str,
    e: bollard::errors::Error,
) -> Error {
    let code = status(&e);
    if matches!(code, Some(400) | Some(409) | Some(500)) {
        let deadline =
            tokio::time::Instant::now() + std::time::Duration::from_millis(NAME_HOLDER_WAIT_MS);
        loop {
            match inspect(engine, name).await {
                Ok(Some(c)) => return exists(session_id, &Facts::from_inspect(&c)),
                Ok(None) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await
                }
                Ok(None) | Err(_) => break,
            }
        }
        if code == Some(409) {
            return Error::SessionExists {
                session_id: session_id.into(),
                holder: Holder {
                    name: name.into(),
                    id: String::new(),
                    state: "unknown".into(),
                    managed: false,
                    session_id: None,
                    owner: serde_json::Value::Null,
                },
            };
        }
    }
    let err = engine.error("create container", e);
    match (code, err) {
        (Some(404), err) => Error::ImageNotFound {
            image: image.into(),
            reason: err.to_string(),
        },
        // Not a taken name (the inspect above found none). Podman refuses the create itself
        // when its init binary is missing: say how to fix that beside the engine's message.
        (
            Some(500),
            Error::Engine {
                operation,
                status,
                message,
            },
        ) if engine.kind == EngineKind::Podman => Error::Engine {
            operation,
            status,
            message: with_init_hint(&message),
        },
        (_, err) => err,
    }
}

/// The message of a create Podman refused (HTTP 500) while the name was free: the engine's
/// own message plus how to fix a missing init binary, Podman's usual reason.
pub(crate) fn with_init_hint(message: &str) -> String {
    format!("{message} (berth runs an init process as PID 1: if Podman's init is missing, install `catatonit` or set `init_path` in containers.conf)")
}

/// How long a create that lost the name waits for the holder to become inspectable, in milliseconds.
pub(crate) const NAME_HOLDER_WAIT_MS: u64 = 2_000;

fn exists(session_id: &str, f: &Facts) -> Error {
    Error::SessionExists {
        session_id: session_id.into(),
        holder: Holder {
            name: f.name.clone(),
            id: f.id.clone(),
            state: f.state.into(),
            managed: f.managed.is_some(),
            session_id: f.managed.as_ref().map(|m| m.session_id.clone()),
            owner: f.owner_json(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn podman_create_refusals_say_how_to_fix_a_missing_init() {
        assert_eq!(
            with_init_hint("container create: container-init binary not found on the host"),
            "container create: container-init binary not found on the host (berth runs an init process as PID 1: if Podman's init is missing, install `catatonit` or set `init_path` in containers.conf)"
        );
    }
}

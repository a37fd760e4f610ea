//! Ports: the host address the engine published for a container port.

use std::time::Duration;

use crate::engine::connection::Engine;
use crate::engine::container::{inspect, Facts};
use crate::model::errors::{Error, Result};

/// How many times to re-read an empty port mapping right after start.
pub(crate) const PORT_RETRIES: u32 = 20;
/// Pause between those reads, in milliseconds.
pub(crate) const PORT_RETRY_MS: u64 = 100;

/// `"127.0.0.1:49153"` for container port `port`/tcp of container `id`; for a remote
/// engine (`tcp://host:port`) the engine's host instead of a loopback address.
///
/// Reads `GET /containers/{id}/json` (`NetworkSettings.Ports`), retrying briefly while
/// the engine has not filled the mapping. Errors: `E_INVALID_ARGUMENT` when the port
/// was never published; `E_ENGINE` with status 409 when the container is not running,
/// and without a status when a running container's binding never appears;
/// `E_SESSION_NOT_FOUND` when the container is gone.
pub(crate) async fn host_address(
    engine: &Engine,
    id: &str,
    session_id: &str,
    name: &str,
    port: u16,
) -> Result<String> {
    let key = format!("{port}/tcp");
    for attempt in 0..=PORT_RETRIES {
        let Some(c) = inspect(engine, id).await? else {
            return Err(Error::SessionNotFound {
                session_id: session_id.into(),
                name: name.into(),
            });
        };
        let published = c
            .host_config
            .as_ref()
            .and_then(|h| h.port_bindings.as_ref())
            .is_some_and(|b| b.contains_key(&key));
        if !published {
            return Err(Error::invalid("port", format!("port {key} is not published by container `{name}`; list it in `ports` at creation")));
        }
        let facts = Facts::from_inspect(&c);
        // Checked first: Podman keeps a stopped container's last bindings in its inspect.
        if !matches!(facts.state, "running" | "restarting") {
            return Err(Error::Engine {
                operation: "read published port".into(),
                status: Some(409),
                message: format!(
                    "container `{name}` is not running (state {}): its ports have no host binding",
                    facts.raw_state
                ),
            });
        }
        if let Some(addr) = facts.ports.get(&key) {
            return Ok(engine.reachable_address(addr));
        }
        if attempt < PORT_RETRIES {
            tokio::time::sleep(Duration::from_millis(PORT_RETRY_MS)).await;
        }
    }
    Err(Error::Engine {
        operation: "read published port".into(),
        status: None,
        message: format!(
            "port {key} of container `{name}` has no host binding (is the container running?)"
        ),
    })
}

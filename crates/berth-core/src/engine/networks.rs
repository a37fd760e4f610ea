//! Network: a session container's outbound access, switched between its own network and none.
//!
//! Engine calls: `GET /containers/{id}/json` (the networks attached now, and the network mode
//! chosen at creation), `POST /networks/{name}/disconnect` and `POST /networks/{name}/connect`,
//! always naming the container by id. The network mode in the container's host config never
//! changes, so it is the one record of which network "allow-all" means: berth keeps no state.

use bollard::models::{NetworkConnectRequest, NetworkDisconnectRequest};

use crate::engine::bounded::CHANGE_TIMEOUT_MS;
use crate::engine::connection::{status, Engine};
use crate::engine::container::inspect;
use crate::model::errors::{Error, Result};

/// The outbound access a session container can be given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetworkPolicy {
    /// Attached to the network chosen at creation (`networkMode`, default the engine's bridge).
    AllowAll,
    /// Attached to no network: loopback only, published ports unreachable.
    DenyAll,
}

impl NetworkPolicy {
    /// Parses the harness's `mode` (`allow-all`, `deny-all`). `custom` (host and CIDR rules)
    /// needs a firewall berth does not run: `E_INVALID_ARGUMENT`, like any other value.
    pub fn parse(mode: &str) -> Result<NetworkPolicy> {
        match mode {
            "allow-all" => Ok(NetworkPolicy::AllowAll),
            "deny-all" => Ok(NetworkPolicy::DenyAll),
            "custom" => Err(Error::invalid(
                "mode",
                "berth cannot enforce host or CIDR rules (that needs a firewall outside the container); use 'allow-all' or 'deny-all'",
            )),
            other => Err(Error::invalid(
                "mode",
                format!("{other:?} is not a network policy; use 'allow-all' or 'deny-all'"),
            )),
        }
    }
}

/// What the network mode chosen at creation allows.
#[derive(Debug, PartialEq, Eq)]
enum Mode<'a> {
    /// A network of its own, attached and detached at will (Docker's `default` and an empty
    /// mode are its `bridge`).
    Network(&'a str),
    /// `none`: never attached to anything; "deny-all" holds already.
    Isolated,
    /// `host`, `container:<id>`: another's network stack, which cannot be switched.
    Shared(String),
}

fn mode_of(network_mode: &str) -> Mode<'_> {
    match network_mode {
        "" | "default" => Mode::Network("bridge"),
        "none" => Mode::Isolated,
        "host" => Mode::Shared("the container was created with networkMode \"host\"".into()),
        m if m.starts_with("container:") || m.starts_with("ns:") => {
            Mode::Shared(format!("the container shares another's network ({m})"))
        }
        m => Mode::Network(m),
    }
}

/// Applies `policy` to container `id`: `DenyAll` disconnects it from every network it is
/// attached to; `AllowAll` connects it to its own network when it is attached to none.
/// Idempotent: a container already in that state gets no connect or disconnect call.
///
/// A container created with networkMode `none` is denied already; it cannot be allowed.
///
/// Errors: `E_INVALID_ARGUMENT` when the container's network mode cannot be switched
/// (`host`, another container's network; `none` for `AllowAll`); `E_SESSION_NOT_FOUND` when the container is
/// gone (via `not_found`); `E_ENGINE` (e.g. Podman refusing to disconnect a rootless
/// container's only network), `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn set_policy(
    engine: &Engine,
    id: &str,
    policy: NetworkPolicy,
    not_found: impl Fn() -> Error,
) -> Result<()> {
    let c = inspect(engine, id).await?.ok_or_else(&not_found)?;
    let mode = c
        .body
        .host_config
        .as_ref()
        .and_then(|h| h.network_mode.clone())
        .unwrap_or_default();
    let own =
        match (mode_of(&mode), policy) {
            (Mode::Network(own), _) => own,
            (Mode::Isolated, NetworkPolicy::DenyAll) => return Ok(()),
            (Mode::Isolated, NetworkPolicy::AllowAll) => return Err(Error::invalid(
                "mode",
                "the container was created with networkMode \"none\": it has no network to attach",
            )),
            (Mode::Shared(why), _) => return Err(Error::invalid("mode", why)),
        };
    let attached: Vec<String> = c
        .body
        .network_settings
        .and_then(|n| n.networks)
        .map(|n| n.into_keys().collect())
        .unwrap_or_default();
    let gone = |e: bollard::errors::Error, operation: &str| match status(&e) {
        Some(404) => not_found(),
        _ => engine.error(operation, e),
    };
    match policy {
        NetworkPolicy::DenyAll => {
            for network in attached {
                let req = NetworkDisconnectRequest {
                    container: id.to_string(),
                    force: Some(true),
                };
                if let Err(e) = engine
                    .call(
                        "POST /networks/{id}/disconnect",
                        CHANGE_TIMEOUT_MS,
                        engine.docker.disconnect_network(&network, req),
                    )
                    .await?
                {
                    // Already detached by a concurrent call: the state asked for holds.
                    if status(&e) == Some(404) && inspect(engine, id).await?.is_some() {
                        continue;
                    }
                    return Err(gone(e, "disconnect container from network"));
                }
            }
        }
        NetworkPolicy::AllowAll => {
            if attached.is_empty() {
                let req = NetworkConnectRequest {
                    container: id.to_string(),
                    ..Default::default()
                };
                engine
                    .call(
                        "POST /networks/{id}/connect",
                        CHANGE_TIMEOUT_MS,
                        engine.docker.connect_network(own, req),
                    )
                    .await?
                    .map_err(|e| gone(e, "connect container to network"))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies() {
        assert_eq!(
            NetworkPolicy::parse("allow-all").unwrap(),
            NetworkPolicy::AllowAll
        );
        assert_eq!(
            NetworkPolicy::parse("deny-all").unwrap(),
            NetworkPolicy::DenyAll
        );
        for bad in ["custom", "", "Allow-All", "none"] {
            assert_eq!(
                NetworkPolicy::parse(bad).unwrap_err().code(),
                "E_INVALID_ARGUMENT",
                "{bad}"
            );
        }
    }

    #[test]
    fn modes() {
        assert_eq!(mode_of("default"), Mode::Network("bridge"));
        assert_eq!(mode_of(""), Mode::Network("bridge"));
        assert_eq!(mode_of("bridge"), Mode::Network("bridge"));
        assert_eq!(mode_of("agents-net"), Mode::Network("agents-net"));
        assert_eq!(mode_of("none"), Mode::Isolated);
        for shared in ["host", "container:0123abcd", "ns:/proc/1/ns/net"] {
            assert!(matches!(mode_of(shared), Mode::Shared(_)), "{shared}");
        }
    }
}

//! Engine info: what berth is connected to (kind, version, API version, endpoint, rootless).

use crate::engine::bounded::READ_TIMEOUT_MS;
use crate::engine::connection::{self, EngineKind, EngineOptions};
use crate::model::errors::Result;

/// What `engineInfo()` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineInfo {
    /// `docker` or `podman` (from `GET /version` `Components[].Name`).
    pub kind: EngineKind,
    /// The engine's version (`20.10.24+dfsg1`, `4.3.1`).
    pub version: String,
    /// The negotiated Engine API version (`1.41`).
    pub api_version: String,
    /// The endpoint berth uses (`unix:///var/run/docker.sock`, `tcp://host:2375`).
    pub endpoint: String,
    /// Whether the engine runs rootless (`GET /info` `SecurityOptions` has `name=rootless`).
    pub rootless: bool,
    /// Whether the engine is reached over the network (its ports are published on its host).
    pub remote: bool,
    /// Which discovery rule chose the endpoint (`socketPath option`, `DOCKER_HOST`,
    /// `Docker context "x"`, `Docker socket`, ...).
    pub strategy: String,
}

/// Connects as every operation does and describes the engine.
///
/// Engine API: `GET /version` (once per endpoint per process), `GET /info`.
/// Every request is bounded by `cancel` and a per-request timeout.
/// Errors: `E_INVALID_ARGUMENT` (bad `engine`), `E_ENGINE_UNAVAILABLE`, `E_ABORTED`, `E_ENGINE`.
pub async fn engine_info(
    options: &EngineOptions,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<EngineInfo> {
    // The rule connect() follows for these options (its cache is keyed by endpoint, not rule).
    let strategy = connection::choose(options, &crate::engine::discovery::Host::current())?.source;
    let engine = crate::engine::cancel::guard(cancel, "engineInfo", connection::connect(options))
        .await?
        .within(cancel, "engineInfo");
    let security: Vec<String> = match engine
        .call("GET /info", READ_TIMEOUT_MS, engine.docker.info())
        .await?
    {
        Ok(info) => info.security_options.unwrap_or_default(),
        // An engine's /info may carry values bollard's enums refuse: read the raw answer.
        Err(bollard::errors::Error::JsonDataError { contents, .. }) => {
            security_options_of(&contents)
        }
        Err(e) => return Err(engine.error("read engine info", e)),
    };
    Ok(EngineInfo {
        kind: engine.kind,
        version: engine.version.clone(),
        api_version: engine.api_version.clone(),
        endpoint: engine.endpoint.clone(),
        rootless: is_rootless(&security),
        remote: engine.is_remote(),
        strategy,
    })
}

/// `SecurityOptions` of a raw `GET /info` answer.
pub(crate) fn security_options_of(info_json: &str) -> Vec<String> {
    serde_json::from_str::<serde_json::Value>(info_json)
        .ok()
        .and_then(|v| v.get("SecurityOptions").cloned())
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}

/// Whether `SecurityOptions` (`name=seccomp,profile=default`, `name=rootless`) say rootless.
pub(crate) fn is_rootless(security_options: &[String]) -> bool {
    security_options
        .iter()
        .any(|o| o.split(',').any(|kv| kv == "name=rootless"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rootless_from_security_options() {
        assert!(!is_rootless(&["name=seccomp,profile=default".into()]));
        assert!(is_rootless(&[
            "name=seccomp,profile=default".into(),
            "name=rootless".into()
        ]));
        assert!(is_rootless(&["name=rootless,foo=bar".into()]));
        assert_eq!(
            security_options_of(r#"{"SecurityOptions":["name=rootless"],"Isolation":"weird"}"#),
            vec!["name=rootless".to_string()]
        );
        assert!(security_options_of("{}").is_empty());
    }
}

//! Container: inspect by name or id, and the facts berth reads from an inspect.

use std::collections::BTreeMap;

use bollard::models::{ContainerInspectResponse, ContainerStateStatusEnum};

use crate::engine::{status, Engine};
use crate::errors::Result;
use crate::identity::Owner;
use crate::labels::{self, ManagedLabels};

/// `GET /containers/{name_or_id}/json`; `Ok(None)` on 404.
pub async fn inspect(
    engine: &Engine,
    name_or_id: &str,
) -> Result<Option<ContainerInspectResponse>> {
    match engine.docker.inspect_container(name_or_id, None).await {
        Ok(c) => Ok(Some(c)),
        Err(e) if status(&e) == Some(404) => Ok(None),
        Err(e) => Err(engine.error("inspect container", e)),
    }
}

/// The facts of one inspected container that lifecycle decisions use.
#[derive(Debug, Clone)]
pub struct Facts {
    /// Full 64-hex id.
    pub id: String,
    /// Name without the leading `/`.
    pub name: String,
    /// SPEC §8 state (`created`, `running`, ..., `unknown`).
    pub state: &'static str,
    /// The engine's own state string.
    pub raw_state: String,
    /// The image reference the container was created from.
    pub image: String,
    /// The resolved id (`sha256:...`) of the image the container runs.
    pub image_id: String,
    /// The container's labels outside berth's namespace (the caller's).
    pub caller_labels: std::collections::HashMap<String, String>,
    /// Creation time as the engine reports it (RFC 3339).
    pub created_at: String,
    /// berth's labels, when managed.
    pub managed: Option<ManagedLabels>,
    /// Published ports: `"8080/tcp"` -> `"127.0.0.1:49153"` (first binding of each).
    pub ports: BTreeMap<String, String>,
}

impl Facts {
    /// Reads the facts out of an inspect answer.
    pub fn from_inspect(c: &ContainerInspectResponse) -> Self {
        let raw_state = c
            .state
            .as_ref()
            .and_then(|s| s.status)
            .map(|s| s.to_string())
            .unwrap_or_default();
        let state = match c.state.as_ref().and_then(|s| s.status) {
            Some(ContainerStateStatusEnum::CREATED) => "created",
            Some(ContainerStateStatusEnum::RUNNING) => "running",
            Some(ContainerStateStatusEnum::PAUSED) => "paused",
            Some(ContainerStateStatusEnum::RESTARTING) => "restarting",
            Some(ContainerStateStatusEnum::EXITED) => "exited",
            Some(ContainerStateStatusEnum::REMOVING) => "removing",
            Some(ContainerStateStatusEnum::DEAD) => "dead",
            _ => "unknown",
        };
        let config = c.config.as_ref();
        let empty = Default::default();
        let label_map = config.and_then(|c| c.labels.as_ref()).unwrap_or(&empty);
        let mut ports = BTreeMap::new();
        if let Some(map) = c.network_settings.as_ref().and_then(|n| n.ports.as_ref()) {
            for (key, bindings) in map {
                let first = bindings.as_ref().and_then(|b| {
                    b.iter()
                        .find(|b| b.host_port.as_deref().is_some_and(|p| !p.is_empty()))
                });
                if let Some(b) = first {
                    let ip = match b.host_ip.as_deref() {
                        None | Some("") | Some("0.0.0.0") | Some("::") => "127.0.0.1",
                        Some(ip) => ip,
                    };
                    ports.insert(
                        key.clone(),
                        format!("{ip}:{}", b.host_port.as_deref().unwrap_or_default()),
                    );
                }
            }
        }
        Facts {
            id: c.id.clone().unwrap_or_default(),
            name: c
                .name
                .clone()
                .unwrap_or_default()
                .trim_start_matches('/')
                .to_string(),
            state,
            raw_state,
            image: config.and_then(|c| c.image.clone()).unwrap_or_default(),
            image_id: c.image.clone().unwrap_or_default(),
            caller_labels: label_map
                .iter()
                .filter(|(k, _)| !k.starts_with(labels::LABEL_NAMESPACE))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            created_at: c.created.clone().unwrap_or_default(),
            managed: labels::decode(label_map),
            ports,
        }
    }

    /// The recorded owner, when managed and fully labelled.
    pub fn owner(&self) -> Option<&Owner> {
        self.managed.as_ref().and_then(|m| m.owner.as_ref())
    }

    /// The owner as JSON (`PeekResult.owner`), `null` when unknown.
    pub fn owner_json(&self) -> serde_json::Value {
        self.owner()
            .map(Owner::to_json)
            .unwrap_or(serde_json::Value::Null)
    }
}

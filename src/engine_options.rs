//! Engine options (`engineInfo`, `ensureImage`, and the three engine fields every options object carries) and what `engineInfo` and a pull report.

use std::collections::HashMap;

use napi::bindgen_prelude::Either;
use napi_derive::napi;

use berth_core::js_integer_opt;
use berth_core::EngineInfo;
use berth_core::EngineOptions;
use berth_core::EngineSelector;
use berth_core::PullOptions;
use berth_core::Result;
use berth_core::{validate_platform, PullProgress};

/// Where the engine is, for `engineInfo`.
#[napi(object)]
pub struct BindingEngineOptions {
    /// Engine unix socket path (or `unix://` / `tcp://` URL); wins over `engine`, `DOCKER_HOST` and discovery.
    pub socket_path: Option<String>,
    /// `'docker'`, `'podman'`, or a per-platform map (`{ linux: 'podman' }`).
    pub engine: Option<Either<String, HashMap<String, String>>>,
    /// How long the engine's first answer may take, in milliseconds. @default 10000
    pub connect_timeout_ms: Option<f64>,
}

/// Options of `ensureImage`.
#[napi(object)]
pub struct BindingEnsureImageOptions {
    /// `os/arch[/variant]` to pull for (`linux/amd64`). @default the engine's
    pub platform: Option<String>,
    /// Engine unix socket path (or `unix://` / `tcp://` URL); wins over `engine`, `DOCKER_HOST` and discovery.
    pub socket_path: Option<String>,
    /// `'docker'`, `'podman'`, or a per-platform map (`{ linux: 'podman' }`).
    pub engine: Option<Either<String, HashMap<String, String>>>,
    /// How long the engine's first answer may take, in milliseconds. @default 10000
    pub connect_timeout_ms: Option<f64>,
}

/// One image pull progress event.
#[napi(object)]
pub struct BindingPullProgress {
    /// The layer (or tag) the event is about, when the engine names one.
    pub layer: Option<String>,
    /// Bytes of that layer done so far, when reported.
    pub current: Option<f64>,
    /// The layer's size in bytes, when reported.
    pub total: Option<f64>,
    /// The engine's status word (`Downloading`, `Pull complete`, ...).
    pub status: String,
}

impl From<PullProgress> for BindingPullProgress {
    fn from(p: PullProgress) -> Self {
        BindingPullProgress {
            layer: p.layer,
            current: p.current.map(|c| c as f64),
            total: p.total.map(|t| t as f64),
            status: p.status,
        }
    }
}

/// What `engineInfo` reports.
#[napi(object)]
pub struct BindingEngineInfo {
    /// `docker` or `podman`.
    pub kind: String,
    /// The engine's version (`20.10.24`, `4.3.1`).
    pub version: String,
    /// The negotiated Engine API version (`1.41`).
    pub api_version: String,
    /// The endpoint in use (`unix:///var/run/docker.sock`, `tcp://host:2375`).
    pub endpoint: String,
    /// Whether the engine runs rootless.
    pub rootless: bool,
    /// Whether the engine is reached over the network.
    pub remote: bool,
    /// Which discovery rule chose the endpoint (`DOCKER_HOST`, `Docker socket`, ...).
    pub strategy: String,
}

impl From<EngineInfo> for BindingEngineInfo {
    fn from(i: EngineInfo) -> Self {
        BindingEngineInfo {
            kind: i.kind.as_str().into(),
            version: i.version,
            api_version: i.api_version,
            endpoint: i.endpoint,
            rootless: i.rootless,
            remote: i.remote,
            strategy: i.strategy,
        }
    }
}

/// The core engine options from the binding's three fields.
pub fn engine_options(
    socket_path: Option<String>,
    engine: Option<Either<String, HashMap<String, String>>>,
    connect_timeout_ms: Option<f64>,
) -> Result<EngineOptions> {
    Ok(EngineOptions {
        socket_path,
        engine: engine.map(|e| match e {
            Either::A(name) => EngineSelector::Name(name),
            Either::B(map) => EngineSelector::PerPlatform(map.into_iter().collect()),
        }),
        connect_timeout_ms: js_integer_opt("connectTimeoutMs", connect_timeout_ms)?,
    })
}

impl BindingEngineOptions {
    /// The core engine options.
    pub fn into_core(self) -> Result<EngineOptions> {
        engine_options(self.socket_path, self.engine, self.connect_timeout_ms)
    }
}

impl BindingEnsureImageOptions {
    /// The core engine and pull options (the progress sink is added by the caller).
    pub fn into_core(self) -> Result<(EngineOptions, PullOptions)> {
        if let Some(p) = &self.platform {
            validate_platform(p)?;
        }
        Ok((
            engine_options(self.socket_path, self.engine, self.connect_timeout_ms)?,
            PullOptions {
                platform: self.platform,
                on_progress: None,
            },
        ))
    }
}

//! Discovery: which engine endpoint the options and the host select (precedence: `docs/design.md#engines`).
//!
//! Order: `socketPath`, then `engine` (Docker: `DOCKER_HOST`, its context, its sockets;
//! Podman: `CONTAINER_HOST`, its sockets), then `DOCKER_HOST` / `CONTAINER_HOST`, then the
//! current Docker context, then the platform's usual sockets (the first that exists).
//! Each step is a small strategy answering "not applicable" (`None`) or a candidate
//! (testcontainers-node `container-runtime/strategies`). Everything the strategies read
//! from the host (env, home, platform, files) comes through [`Host`], so tests inject it.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::model::errors::{Error, Result};

/// A container engine berth knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// Docker Engine (also Docker Desktop, Colima, OrbStack).
    Docker,
    /// Podman's Docker-compatible API service.
    Podman,
}

impl EngineKind {
    /// `docker` or `podman`.
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Docker => "docker",
            EngineKind::Podman => "podman",
        }
    }
}

/// Engine names the `engine` option accepts.
pub(crate) const ENGINE_NAMES: [&str; 2] = ["docker", "podman"];
/// Platform keys of a per-platform `engine` map (Node's `process.platform`).
pub(crate) const PLATFORMS: [&str; 3] = ["linux", "darwin", "win32"];

/// The engines berth can reach on `platform`: Podman on Windows runs behind a per-machine
/// named pipe berth does not discover, so only Docker is supported there.
pub(crate) fn supported_engines(platform: &str) -> &'static [&'static str] {
    match platform {
        "win32" => &["docker"],
        _ => &["docker", "podman"],
    }
}

/// The `engine` option as the caller gave it, before validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineSelector {
    /// `'docker'` or `'podman'` (anything else is rejected).
    Name(String),
    /// `{ linux: 'podman', darwin: 'docker' }`: the entry for this platform applies; a
    /// platform without an entry has no preference.
    PerPlatform(BTreeMap<String, String>),
}

/// Resolves the `engine` option for `platform`.
///
/// Errors: `E_INVALID_ARGUMENT` (field `engine` or `engine.<platform>`) for an unknown
/// engine name or platform key, listing the valid values, and for an engine this
/// platform does not support, listing the ones it does.
pub(crate) fn resolve_selector(sel: &EngineSelector, platform: &str) -> Result<Option<EngineKind>> {
    let parse = |field: &str, name: &str, applies: bool| -> Result<Option<EngineKind>> {
        let kind = match name {
            "docker" => EngineKind::Docker,
            "podman" => EngineKind::Podman,
            other => {
                return Err(Error::invalid(
                    field,
                    format!(
                        "unknown engine {other:?}; expected one of {}",
                        ENGINE_NAMES.join(", ")
                    ),
                ))
            }
        };
        if !applies {
            return Ok(None);
        }
        let supported = supported_engines(platform);
        if !supported.contains(&name) {
            return Err(Error::invalid(
                field,
                format!(
                    "engine {name:?} is not supported on {platform}; supported there: {}",
                    supported.join(", ")
                ),
            ));
        }
        Ok(Some(kind))
    };
    match sel {
        EngineSelector::Name(n) => parse("engine", n, true),
        EngineSelector::PerPlatform(map) => {
            let mut chosen = None;
            for (p, n) in map {
                if !PLATFORMS.contains(&p.as_str()) {
                    return Err(Error::invalid(
                        format!("engine.{p}"),
                        format!("unknown platform; expected one of {}", PLATFORMS.join(", ")),
                    ));
                }
                if let Some(k) = parse(&format!("engine.{p}"), n, p == platform)? {
                    chosen = Some(k);
                }
            }
            Ok(chosen)
        }
    }
}

/// TLS material for a `tcp://` endpoint (`DOCKER_TLS_VERIFY` + `DOCKER_CERT_PATH`, or a context's TLS dir).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Tls {
    /// Directory holding `ca.pem`, `cert.pem` and `key.pem`.
    pub cert_dir: PathBuf,
}

/// An endpoint a strategy picked, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// `unix:///var/run/docker.sock`, `tcp://host:2376`, ...
    pub endpoint: String,
    /// Which strategy picked it (`socketPath option`, `DOCKER_HOST`, `Docker context "x"`, ...).
    pub source: String,
    /// The engine this strategy expects there, when it knows (`/version` decides in the end).
    pub kind: Option<EngineKind>,
    /// TLS material, for `tcp://` endpoints that asked for it.
    pub tls: Option<Tls>,
}

/// Reads a file's text (`None` when unreadable).
pub(crate) type ReadFile = Box<dyn Fn(&Path) -> Option<String> + Send + Sync>;
/// Whether a path exists.
pub(crate) type PathExists = Box<dyn Fn(&Path) -> bool + Send + Sync>;

/// What discovery reads from the host; [`Host::current`] reads the real one.
pub(crate) struct Host {
    /// Environment variables.
    pub env: HashMap<String, String>,
    /// The home directory.
    pub home: Option<PathBuf>,
    /// Node-style platform name: `linux`, `darwin`, `win32`.
    pub platform: String,
    /// Whether this process runs as root (uid 0).
    pub root: bool,
    /// Whether a path exists (a socket, a file).
    pub exists: PathExists,
    /// A file's text, `None` when unreadable.
    pub read: ReadFile,
}

impl Host {
    /// The host this process runs on.
    pub(crate) fn current() -> Self {
        let platform = match std::env::consts::OS {
            "macos" => "darwin",
            "windows" => "win32",
            other => other,
        };
        Host {
            env: std::env::vars().collect(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            platform: platform.into(),
            root: is_root(),
            exists: Box::new(|p| p.exists()),
            read: Box::new(|p| std::fs::read_to_string(p).ok()),
        }
    }

    fn var(&self, k: &str) -> Option<&str> {
        self.env
            .get(k)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    fn docker_config_dir(&self) -> Option<PathBuf> {
        match self.var("DOCKER_CONFIG") {
            Some(d) => Some(PathBuf::from(d)),
            None => self.home.as_ref().map(|h| h.join(".docker")),
        }
    }
}

#[cfg(unix)]
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false)
}

#[cfg(not(unix))]
fn is_root() -> bool {
    false
}

/// The caller's engine choice, resolved: `socketPath` and `engine`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Wanted {
    /// An explicit endpoint (`socketPath`): a path, or a URL (`unix://`, `tcp://`).
    pub socket_path: Option<String>,
    /// The engine the caller asked for (already resolved for this platform).
    pub kind: Option<EngineKind>,
}

/// One discovery step: `None` when it does not apply.
type Strategy = fn(&Wanted, &Host) -> Option<Candidate>;

const STRATEGIES: [Strategy; 6] = [
    from_socket_path,
    from_engine_option,
    from_docker_host,
    from_container_host,
    from_docker_context,
    from_usual_sockets,
];

/// The endpoint the strategies choose, or every endpoint they looked at when none applies.
pub(crate) fn choose(wanted: &Wanted, host: &Host) -> std::result::Result<Candidate, Vec<String>> {
    if let Some(c) = STRATEGIES.iter().find_map(|s| s(wanted, host)) {
        return Ok(c);
    }
    Err(usual_sockets(wanted.kind, host)
        .into_iter()
        .map(|(p, label, _)| format!("{} ({label})", p.display()))
        .collect())
}

fn from_socket_path(w: &Wanted, _h: &Host) -> Option<Candidate> {
    let p = w.socket_path.as_ref()?;
    Some(Candidate {
        endpoint: if p.contains("://") {
            p.clone()
        } else {
            format!("unix://{p}")
        },
        source: "socketPath option".into(),
        kind: w.kind,
        tls: None,
    })
}

/// `engine: 'docker'` → `DOCKER_HOST`, then the Docker context, then Docker's sockets;
/// `engine: 'podman'` → `CONTAINER_HOST`, then Podman's sockets. Nothing of the other
/// engine's environment is used.
fn from_engine_option(w: &Wanted, h: &Host) -> Option<Candidate> {
    let kind = w.kind?;
    let unpinned = Wanted {
        socket_path: None,
        kind: Some(kind),
    };
    let found = match kind {
        EngineKind::Docker => from_docker_host(&unpinned, h)
            .or_else(|| from_docker_context(&unpinned, h))
            .or_else(|| from_usual_sockets(&unpinned, h)),
        EngineKind::Podman => {
            from_container_host(&unpinned, h).or_else(|| from_usual_sockets(&unpinned, h))
        }
    };
    found.map(|c| Candidate {
        source: format!("engine option ({}): {}", kind.as_str(), c.source),
        ..c
    })
}

fn from_docker_host(w: &Wanted, h: &Host) -> Option<Candidate> {
    if w.kind == Some(EngineKind::Podman) {
        return None;
    }
    let endpoint = h.var("DOCKER_HOST")?.to_string();
    let tls = h
        .var("DOCKER_TLS_VERIFY")
        .filter(|v| *v != "0")
        .and_then(|_| {
            let dir = h
                .var("DOCKER_CERT_PATH")
                .map(PathBuf::from)
                .or_else(|| h.docker_config_dir())?;
            Some(Tls { cert_dir: dir })
        });
    Some(Candidate {
        endpoint,
        source: "DOCKER_HOST".into(),
        kind: w.kind,
        tls,
    })
}

fn from_container_host(w: &Wanted, h: &Host) -> Option<Candidate> {
    if w.kind == Some(EngineKind::Docker) {
        return None;
    }
    Some(Candidate {
        endpoint: h.var("CONTAINER_HOST")?.to_string(),
        source: "CONTAINER_HOST".into(),
        kind: Some(EngineKind::Podman),
        tls: None,
    })
}

/// The current Docker context: `DOCKER_CONTEXT`, else `currentContext` in
/// `$DOCKER_CONFIG/config.json` (default `~/.docker`). `default` means "no context".
/// Its endpoint is `Endpoints.docker.Host` in `contexts/meta/<sha256(name)>/meta.json`;
/// TLS material, when the context has some, is in `contexts/tls/<sha256(name)>/docker/`.
fn from_docker_context(w: &Wanted, h: &Host) -> Option<Candidate> {
    if w.kind == Some(EngineKind::Podman) {
        return None;
    }
    let dir = h.docker_config_dir()?;
    let name = match h.var("DOCKER_CONTEXT") {
        Some(n) => n.to_string(),
        None => {
            let config = (h.read)(&dir.join("config.json"))?;
            let v: serde_json::Value = serde_json::from_str(&config).ok()?;
            v.get("currentContext")?.as_str()?.to_string()
        }
    };
    if name.is_empty() || name == "default" {
        return None;
    }
    let digest = hex::encode(Sha256::digest(name.as_bytes()));
    let meta = (h.read)(&dir.join("contexts/meta").join(&digest).join("meta.json"))?;
    let v: serde_json::Value = serde_json::from_str(&meta).ok()?;
    let endpoint = v
        .pointer("/Endpoints/docker/Host")?
        .as_str()
        .filter(|s| !s.is_empty())?
        .to_string();
    let tls_dir = dir.join("contexts/tls").join(&digest).join("docker");
    let tls = ((h.exists)(&tls_dir.join("ca.pem"))).then_some(Tls { cert_dir: tls_dir });
    Some(Candidate {
        endpoint,
        source: format!("Docker context {name:?}"),
        kind: Some(EngineKind::Docker),
        tls,
    })
}

/// The platform's usual sockets for `kind` (both engines when `None`), in the order tried:
/// path, label, engine.
pub(crate) fn usual_sockets(
    kind: Option<EngineKind>,
    h: &Host,
) -> Vec<(PathBuf, &'static str, EngineKind)> {
    use EngineKind::{Docker, Podman};
    let home = |rel: &str| h.home.as_ref().map(|d| d.join(rel));
    let xdg = |rel: &str| h.var("XDG_RUNTIME_DIR").map(|d| Path::new(d).join(rel));
    let mut all: Vec<(Option<PathBuf>, &'static str, EngineKind)> = Vec::new();
    match h.platform.as_str() {
        "linux" => {
            all.push((Some("/var/run/docker.sock".into()), "Docker", Docker));
            all.push((xdg("docker.sock"), "rootless Docker", Docker));
            all.push((
                home(".docker/desktop/docker.sock"),
                "Docker Desktop",
                Docker,
            ));
            if h.root {
                all.push((
                    Some("/run/podman/podman.sock".into()),
                    "rootful Podman",
                    Podman,
                ));
            }
            all.push((xdg("podman/podman.sock"), "rootless Podman", Podman));
            if !h.root {
                all.push((
                    Some("/run/podman/podman.sock".into()),
                    "rootful Podman",
                    Podman,
                ));
            }
        }
        "darwin" => {
            all.push((home(".docker/run/docker.sock"), "Docker Desktop", Docker));
            all.push((home(".colima/default/docker.sock"), "Colima", Docker));
            all.push((home(".orbstack/run/docker.sock"), "OrbStack", Docker));
            all.push((Some("/var/run/docker.sock".into()), "Docker", Docker));
            all.push((
                home(".local/share/containers/podman/machine/podman.sock"),
                "Podman machine",
                Podman,
            ));
            all.push((
                home(".local/share/containers/podman/machine/qemu/podman.sock"),
                "Podman machine (qemu)",
                Podman,
            ));
        }
        _ => {}
    }
    all.into_iter()
        .filter(|(_, _, k)| kind.is_none_or(|want| want == *k))
        .filter_map(|(p, l, k)| p.map(|p| (p, l, k)))
        .collect()
}

fn from_usual_sockets(w: &Wanted, h: &Host) -> Option<Candidate> {
    if h.platform == "win32" && w.kind != Some(EngineKind::Podman) {
        return Some(Candidate {
            endpoint: "npipe:////./pipe/docker_engine".into(),
            source: "Docker Desktop named pipe".into(),
            kind: Some(EngineKind::Docker),
            tls: None,
        });
    }
    usual_sockets(w.kind, h)
        .into_iter()
        .find(|(p, _, _)| (h.exists)(p))
        .map(|(p, label, kind)| Candidate {
            endpoint: format!("unix://{}", p.display()),
            source: format!("{label} socket"),
            kind: Some(kind),
            tls: None,
        })
}

#[cfg(test)]
#[path = "discovery_tests.rs"]
mod tests;

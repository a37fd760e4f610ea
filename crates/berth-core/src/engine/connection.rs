//! Engine: connecting to the container engine discovery chose, and classifying its failures.
//!
//! [`crate::engine::discovery`] picks the endpoint (precedence: `docs/design.md#engines`); this module speaks to it:
//! `unix://` sockets, `tcp://` / `http://` (TLS when the Docker environment or context asks
//! for it). The API version is negotiated once per endpoint (bollard speaks 1.53 first;
//! Debian's Docker 20.10 and Podman 4.3 speak 1.41), the engine kind is read from
//! `GET /version`, and the connected engine is cached for the process.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use bollard::{Docker, API_DEFAULT_VERSION};

pub(crate) use crate::engine::discovery::EngineKind;
use crate::engine::discovery::{self, Candidate, EngineSelector, Host, Wanted};
use crate::model::errors::{Error, Result};

/// bollard's own request timeout, in seconds (send until response headers): only a backstop.
/// Every request is bounded by its own per-request timeout (`crate::engine::bounded`), which
/// for a large upload is longer than any flat value would be.
pub(crate) const REQUEST_TIMEOUT_SECS: u64 = 3_600;
/// Default time the first `GET /version` of an endpoint may take before the engine counts
/// as unavailable, in milliseconds (the `connectTimeoutMs` option overrides it).
pub(crate) const CONNECT_TIMEOUT_MS: u64 = 10_000;
/// The oldest Engine API berth supports.
pub(crate) const MIN_API_VERSION: (usize, usize) = (1, 41);

/// How the caller asked to reach the engine.
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    /// Path (or `unix://` / `tcp://` URL) of the engine's endpoint; wins over everything else.
    pub socket_path: Option<String>,
    /// `'docker'`, `'podman'` or a per-platform map; validated when connecting.
    pub engine: Option<EngineSelector>,
    /// How long the first answer may take, in milliseconds. Default [`CONNECT_TIMEOUT_MS`].
    pub connect_timeout_ms: Option<u64>,
}

/// The longest `connect_timeout_ms`, in milliseconds (2^31 - 1, about 24.8 days).
pub(crate) const MAX_CONNECT_TIMEOUT_MS: u64 = i32::MAX as u64;

impl EngineOptions {
    /// Checks the options before any connection: `connect_timeout_ms` from 1 to
    /// [`MAX_CONNECT_TIMEOUT_MS`] (the one range and message; `engine` is checked when choosing).
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` naming `connectTimeoutMs`.
    pub fn validate(&self) -> Result<()> {
        if self
            .connect_timeout_ms
            .is_some_and(|t| !(1..=MAX_CONNECT_TIMEOUT_MS).contains(&t))
        {
            return Err(Error::invalid(
                "connectTimeoutMs",
                format!(
                    "must be a whole number of milliseconds from 1 to {MAX_CONNECT_TIMEOUT_MS}"
                ),
            ));
        }
        Ok(())
    }
}

/// A connected engine: a negotiated client plus what it is and where it lives.
#[derive(Clone)]
pub(crate) struct Engine {
    /// The bollard client, API version already negotiated. Only `engine/` reaches it: every
    /// other module calls the engine through the endpoint functions there.
    pub(in crate::engine) docker: Docker,
    /// `unix:///path` or `tcp://host:port` of the endpoint, for messages and cache keys.
    pub endpoint: String,
    /// Docker or Podman, from `GET /version` (`Components[].Name`).
    pub kind: EngineKind,
    /// The engine's version string (`20.10.24+dfsg1`, `4.3.1`).
    pub version: String,
    /// The negotiated Engine API version (`1.41`).
    pub api_version: String,
    /// The engine's host for a `tcp://` endpoint (ports published there are reached on it);
    /// `None` for a local socket.
    pub remote_host: Option<String>,
    /// The call scope every request is bounded by (`crate::engine::bounded`); none by default.
    pub(crate) bounds: std::sync::Arc<crate::engine::bounded::Bounds>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("endpoint", &self.endpoint)
            .field("kind", &self.kind)
            .field("version", &self.version)
            .finish()
    }
}

/// The host part of a `tcp://`, `http://` or `https://` endpoint (IPv6 without brackets).
pub(crate) fn remote_host_of(endpoint: &str) -> Option<String> {
    let rest = ["tcp://", "http://", "https://"]
        .iter()
        .find_map(|s| endpoint.strip_prefix(s))?;
    let authority = rest.split('/').next().unwrap_or(rest);
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or(v6)
    } else {
        authority.rsplit_once(':').map_or(authority, |(h, _)| h)
    };
    (!host.is_empty()).then(|| host.to_string())
}

/// `E_ENGINE_UNAVAILABLE` messages, one builder per cause, so every message is unit-tested.
pub(crate) mod unavailable {
    use super::*;

    /// No endpoint applies: nothing in the options or the environment, and no usual socket exists.
    pub(crate) fn none_found(tried: &[String]) -> Error {
        Error::EngineUnavailable {
            tried: tried.join(", "),
            reason: "no engine socket found".into(),
            hint: "start Docker or Podman (rootless Podman: `systemctl --user start podman.socket`), or pass `socketPath` / `engine`, or set DOCKER_HOST / CONTAINER_HOST".into(),
        }
    }

    /// The unix socket discovery chose does not exist.
    pub(crate) fn socket_absent(tried: &str, path: &str, kind: Option<EngineKind>) -> Error {
        let hint = match kind {
            Some(EngineKind::Podman) => "start Podman's API service (`systemctl start podman.socket`, rootless: `systemctl --user start podman.socket`, or `podman system service --time=0 unix://<path>`), or pass `socketPath`",
            _ => "start the engine (Docker: `systemctl start docker` or start Docker Desktop / Colima / OrbStack), or pass `socketPath` / `engine`, or set DOCKER_HOST",
        };
        Error::EngineUnavailable {
            tried: tried.into(),
            reason: format!("socket {path} does not exist"),
            hint: hint.into(),
        }
    }

    /// The socket exists but this process may not open it.
    pub(crate) fn permission_denied(tried: &str, path: &str) -> Error {
        Error::EngineUnavailable {
            tried: tried.into(),
            reason: format!("permission denied on {path}"),
            hint: "add your user to the `docker` group (`sudo usermod -aG docker $USER`, then log in again), or use a rootless engine's socket (`engine: 'podman'` for rootless Podman)".into(),
        }
    }

    /// The socket exists but nothing accepts connections on it (a stale socket).
    pub(crate) fn refused(tried: &str, endpoint: &str) -> Error {
        Error::EngineUnavailable {
            tried: tried.into(),
            reason: format!("nothing accepts connections on {endpoint}"),
            hint: "the engine is not running: start it (a socket file left behind by a stopped engine answers nothing)".into(),
        }
    }

    /// The engine accepted the connection but did not answer in time.
    pub(crate) fn no_answer(tried: &str, what: &str, timeout_ms: u64) -> Error {
        Error::EngineUnavailable {
            tried: tried.into(),
            reason: format!("no answer to {what} within {timeout_ms} ms"),
            hint: "check that the engine is healthy (it accepted the connection but did not answer), or raise `connectTimeoutMs`".into(),
        }
    }

    /// The engine speaks an API older than berth's minimum.
    pub(crate) fn too_old(tried: &str, reported: &str) -> Error {
        Error::EngineUnavailable {
            tried: tried.into(),
            reason: format!(
                "the engine reported API version {reported}, older than berth's minimum {}.{}",
                MIN_API_VERSION.0, MIN_API_VERSION.1
            ),
            hint: "upgrade the engine (Docker 20.10 or later, Podman 4.3 or later)".into(),
        }
    }

    /// Any other failure to reach the engine.
    pub(crate) fn other(tried: &str, reason: String) -> Error {
        Error::EngineUnavailable {
            tried: tried.into(),
            reason,
            hint: "check that the engine is running and reachable".into(),
        }
    }
}

/// Resolves the options against `host`: the engine kind asked for, then the candidate.
pub(crate) fn choose(options: &EngineOptions, host: &Host) -> Result<Candidate> {
    let kind = match &options.engine {
        Some(sel) => discovery::resolve_selector(sel, &host.platform)?,
        None => None,
    };
    let wanted = Wanted {
        socket_path: options.socket_path.clone(),
        kind,
    };
    discovery::choose(&wanted, host).map_err(|tried| unavailable::none_found(&tried))
}

fn cache() -> &'static Mutex<HashMap<String, Engine>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Engine>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Connects (or reuses the cached connection) to the engine the options select.
///
/// Calls `GET /version` twice per endpoint per process and tokio runtime (negotiation, then
/// the kind).
/// Errors: `E_INVALID_ARGUMENT` (`connect_timeout_ms` out of range, see
/// [`EngineOptions::validate`]; unknown `engine`, or one this platform does not support;
/// an endpoint scheme berth cannot speak), `E_ENGINE_UNAVAILABLE` (no endpoint found, socket
/// absent, permission denied, nothing listening, no answer within `connect_timeout_ms`, API
/// older than 1.41).
pub(crate) async fn connect(options: &EngineOptions) -> Result<Engine> {
    options.validate()?;
    let c = choose(options, &Host::current())?;
    // The same endpoint with other TLS material is another connection. Kept-alive
    // connections are driven by tasks of the runtime that opened them and die with it: each
    // runtime gets its own client (the napi addon has one runtime; Rust callers may have many).
    let runtime = tokio::runtime::Handle::try_current()
        .map(|h| h.id().to_string())
        .unwrap_or_default();
    let key = match &c.tls {
        Some(t) => format!("{} tls={} rt={runtime}", c.endpoint, t.cert_dir.display()),
        None => format!("{} rt={runtime}", c.endpoint),
    };
    if let Some(e) = cache().lock().expect("engine cache poisoned").get(&key) {
        return Ok(e.clone());
    }
    let timeout_ms = options.connect_timeout_ms.unwrap_or(CONNECT_TIMEOUT_MS);
    let engine = open(&c, timeout_ms).await?;
    cache()
        .lock()
        .expect("engine cache poisoned")
        .insert(key, engine.clone());
    Ok(engine)
}

/// Opens the candidate's endpoint, negotiates and identifies the engine (no cache).
pub(crate) async fn open(c: &Candidate, timeout_ms: u64) -> Result<Engine> {
    let tried = format!("{} from {}", c.endpoint, c.source);
    let client = client_for(c, &tried)?;
    let local_path = c.endpoint.strip_prefix("unix://");
    let failed = |e: bollard::errors::Error| match (io_kind(&e), local_path) {
        (Some(std::io::ErrorKind::PermissionDenied), Some(p)) => {
            unavailable::permission_denied(&tried, p)
        }
        (Some(std::io::ErrorKind::ConnectionRefused), _) => {
            unavailable::refused(&tried, &c.endpoint)
        }
        (Some(std::io::ErrorKind::NotFound), Some(p)) => {
            unavailable::socket_absent(&tried, p, c.kind)
        }
        _ => unavailable::other(&tried, e.to_string()),
    };
    let deadline = Duration::from_millis(timeout_ms);
    let negotiated = tokio::time::timeout(deadline, client.negotiate_version())
        .await
        .map_err(|_| unavailable::no_answer(&tried, "GET /version", timeout_ms))?
        .map_err(failed)?;
    let v = negotiated.client_version();
    if (v.major_version, v.minor_version) < MIN_API_VERSION {
        return Err(unavailable::too_old(
            &tried,
            &format!("{}.{}", v.major_version, v.minor_version),
        ));
    }
    let version = tokio::time::timeout(deadline, negotiated.version())
        .await
        .map_err(|_| unavailable::no_answer(&tried, "GET /version", timeout_ms))?
        .map_err(failed)?;
    let podman = version
        .components
        .iter()
        .flatten()
        .any(|comp| comp.name.to_ascii_lowercase().contains("podman"));
    Ok(Engine {
        docker: negotiated,
        endpoint: c.endpoint.clone(),
        kind: if podman {
            EngineKind::Podman
        } else {
            EngineKind::Docker
        },
        version: version.version.unwrap_or_default(),
        api_version: format!("{}.{}", v.major_version, v.minor_version),
        remote_host: remote_host_of(&c.endpoint),
        bounds: Default::default(),
    })
}

/// The bollard client for a unix socket; a missing socket is reported before any request.
#[cfg(unix)]
fn unix_client(c: &Candidate, tried: &str, path: &str) -> Result<Docker> {
    if let Err(e) = std::fs::metadata(path) {
        return Err(match e.kind() {
            std::io::ErrorKind::PermissionDenied => unavailable::permission_denied(tried, path),
            _ => unavailable::socket_absent(tried, path, c.kind),
        });
    }
    // Keep-alive connections (bollard's own unix client opens one per request).
    crate::engine::transport::connect(path, REQUEST_TIMEOUT_SECS, API_DEFAULT_VERSION)
        .map_err(|e| unavailable::other(tried, e.to_string()))
}

/// bollard speaks unix sockets only on unix: elsewhere such an endpoint is bad input.
#[cfg(not(unix))]
fn unix_client(c: &Candidate, _tried: &str, _path: &str) -> Result<Docker> {
    Err(Error::invalid(
        c.source.clone(),
        format!(
            "endpoint `{}` is a unix socket, which berth cannot reach on this platform; use npipe:// or tcp://",
            c.endpoint
        ),
    ))
}

/// The bollard client for an endpoint, not yet connected. A missing unix socket is
/// reported here, before any request.
fn client_for(c: &Candidate, tried: &str) -> Result<Docker> {
    let ep = c.endpoint.as_str();
    if let Some(path) = ep.strip_prefix("unix://") {
        return unix_client(c, tried, path);
    }
    if ep.starts_with("tcp://") || ep.starts_with("http://") || ep.starts_with("https://") {
        if let Some(tls) = &c.tls {
            let dir = &tls.cert_dir;
            return Docker::connect_with_ssl(
                ep,
                &dir.join("key.pem"),
                &dir.join("cert.pem"),
                &dir.join("ca.pem"),
                REQUEST_TIMEOUT_SECS,
                API_DEFAULT_VERSION,
            )
            .map_err(|e| {
                unavailable::other(
                    tried,
                    format!(
                        "TLS setup with the certificates in {} failed: {e}",
                        dir.display()
                    ),
                )
            });
        }
        if ep.starts_with("https://") {
            return Err(Error::invalid(
                c.source.clone(),
                format!("endpoint `{ep}` needs TLS: set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH (ca.pem, cert.pem, key.pem)"),
            ));
        }
        return Docker::connect_with_http(ep, REQUEST_TIMEOUT_SECS, API_DEFAULT_VERSION)
            .map_err(|e| unavailable::other(tried, e.to_string()));
    }
    #[cfg(windows)]
    if ep.starts_with("npipe://") {
        return Docker::connect_with_named_pipe(ep, REQUEST_TIMEOUT_SECS, API_DEFAULT_VERSION)
            .map_err(|e| unavailable::other(tried, e.to_string()));
    }
    Err(Error::invalid(
        c.source.clone(),
        format!("endpoint `{ep}` has a scheme berth cannot speak; use unix://, tcp://, http:// or https://"),
    ))
}

/// The I/O error kind at the root of a bollard failure, when there is one.
pub(crate) fn io_kind(e: &bollard::errors::Error) -> Option<std::io::ErrorKind> {
    // `IOError` is `#[error(transparent)]`: its `source()` skips the io::Error itself.
    if let bollard::errors::Error::IOError { err } = e {
        return Some(err.kind());
    }
    let mut src: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = src {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        src = s.source();
    }
    None
}

/// The HTTP status of an engine answer, when there was one.
pub(crate) fn status(e: &bollard::errors::Error) -> Option<u16> {
    match e {
        bollard::errors::Error::DockerResponseServerError { status_code, .. } => Some(*status_code),
        _ => None,
    }
}

impl Engine {
    /// Maps a bollard failure during `operation` to berth's error: an answer with a
    /// status is `E_ENGINE`; a failed connection or a timeout is `E_ENGINE_UNAVAILABLE`.
    pub(crate) fn error(&self, operation: &str, e: bollard::errors::Error) -> Error {
        use bollard::errors::Error as B;
        match e {
            B::DockerResponseServerError {
                status_code,
                message,
            } => Error::Engine {
                operation: operation.into(),
                status: Some(status_code),
                message,
            },
            B::RequestTimeoutError => {
                unavailable::no_answer(&self.endpoint, operation, REQUEST_TIMEOUT_SECS * 1000)
            }
            // A transport failure (connection refused, socket gone, connection reset): the
            // engine never answered, whatever the request was.
            B::HyperResponseError { .. }
            | B::HyperLegacyError { .. }
            | B::IOError { .. }
            | B::SocketNotFoundError(_) => {
                unavailable::other(&self.endpoint, format!("{operation}: {e}"))
            }
            other => Error::Engine {
                operation: operation.into(),
                status: None,
                message: other.to_string(),
            },
        }
    }

    /// Whether the engine is reached over the network (its published ports live on its host).
    pub(crate) fn is_remote(&self) -> bool {
        self.remote_host.is_some()
    }

    /// A published address as seen from this process: for a remote engine, a loopback or
    /// unspecified host IP is replaced by the engine's host (`127.0.0.1:49153` →
    /// `10.0.0.5:49153`); a local engine's address is kept.
    pub(crate) fn reachable_address(&self, addr: &str) -> String {
        let Some(host) = &self.remote_host else {
            return addr.to_string();
        };
        let Some((ip, port)) = addr.rsplit_once(':') else {
            return addr.to_string();
        };
        let ip = ip.trim_start_matches('[').trim_end_matches(']');
        let local =
            ip.is_empty() || ip == "0.0.0.0" || ip == "::" || ip == "::1" || ip.starts_with("127.");
        if !local {
            return addr.to_string();
        }
        if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        }
    }
}

#[cfg(test)]
#[path = "connection_tests.rs"]
mod tests;

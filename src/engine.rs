//! Engine: finding and connecting to the container engine, and classifying its failures.
//!
//! Discovery is an ordered list of strategies (explicit `socketPath`, then
//! `DOCKER_HOST`, then the platform's default sockets); the first that applies
//! decides, and an explicit choice never silently falls back. The API version is
//! negotiated once per endpoint (bollard speaks 1.53 first; Debian's Docker 20.10
//! speaks 1.41) and the connected client is cached for the process.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use bollard::{Docker, API_DEFAULT_VERSION};

use crate::errors::{Error, Result};

/// Request timeout for ordinary engine calls, in seconds (send until response headers).
pub const REQUEST_TIMEOUT_SECS: u64 = 120;
/// How long the first `GET /version` of an endpoint may take before the engine counts as unavailable, in milliseconds.
pub const CONNECT_TIMEOUT_MS: u64 = 10_000;
/// The oldest Engine API berth supports.
pub const MIN_API_VERSION: (usize, usize) = (1, 41);

/// How the caller asked to reach the engine.
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    /// Path of the engine's unix socket; wins over everything else.
    pub socket_path: Option<String>,
}

/// A connected engine: a negotiated client plus where it lives.
#[derive(Clone)]
pub struct Engine {
    /// The bollard client, API version already negotiated.
    pub docker: Docker,
    /// `unix:///path` of the endpoint, for messages and cache keys.
    pub endpoint: String,
}

/// One way of finding the engine: `None` when it does not apply.
type Strategy = fn(&EngineOptions, &dyn Fn(&str) -> Option<String>) -> Option<Candidate>;

/// An endpoint a strategy picked, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// `unix:///var/run/docker.sock`, ...
    pub endpoint: String,
    /// Which strategy picked it (`socketPath option`, `DOCKER_HOST`, `default socket`).
    pub source: &'static str,
}

const STRATEGIES: [Strategy; 3] = [from_socket_path, from_docker_host, from_default_socket];

fn from_socket_path(o: &EngineOptions, _env: &dyn Fn(&str) -> Option<String>) -> Option<Candidate> {
    let p = o.socket_path.as_ref()?;
    let endpoint = if p.contains("://") {
        p.clone()
    } else {
        format!("unix://{p}")
    };
    Some(Candidate {
        endpoint,
        source: "socketPath option",
    })
}

fn from_docker_host(_o: &EngineOptions, env: &dyn Fn(&str) -> Option<String>) -> Option<Candidate> {
    let h = env("DOCKER_HOST").filter(|h| !h.is_empty())?;
    Some(Candidate {
        endpoint: h,
        source: "DOCKER_HOST",
    })
}

fn from_default_socket(
    _o: &EngineOptions,
    _env: &dyn Fn(&str) -> Option<String>,
) -> Option<Candidate> {
    Some(Candidate {
        endpoint: "unix:///var/run/docker.sock".into(),
        source: "default socket",
    })
}

/// The endpoint the strategies choose, given an environment reader.
pub fn choose(options: &EngineOptions, env: &dyn Fn(&str) -> Option<String>) -> Candidate {
    STRATEGIES
        .iter()
        .find_map(|s| s(options, env))
        .expect("the default-socket strategy always applies")
}

/// Connects (or reuses the cached connection) to the engine the options select.
///
/// Calls `GET /version` once per endpoint per process to negotiate the API version.
/// Errors: `E_ENGINE_UNAVAILABLE` (socket absent, permission denied, no answer within
/// [`CONNECT_TIMEOUT_MS`], API older than 1.41), `E_INVALID_ARGUMENT` (an endpoint
/// scheme berth cannot speak).
pub async fn connect(options: &EngineOptions) -> Result<Engine> {
    let c = choose(options, &|k| std::env::var(k).ok());
    static CACHE: OnceLock<Mutex<HashMap<String, Docker>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(d) = cache
        .lock()
        .expect("engine cache poisoned")
        .get(&c.endpoint)
    {
        return Ok(Engine {
            docker: d.clone(),
            endpoint: c.endpoint,
        });
    }
    let tried = format!("{} from {}", c.endpoint, c.source);
    let Some(path) = c.endpoint.strip_prefix("unix://") else {
        return Err(Error::invalid(
            c.source,
            format!("endpoint `{}` is not a unix:// socket; only unix sockets are supported by this build", c.endpoint),
        ));
    };
    let unavailable = |reason: String, hint: &str| Error::EngineUnavailable {
        tried: tried.clone(),
        reason,
        hint: hint.into(),
    };
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(unavailable(
                format!("socket {path} does not exist"),
                "start the engine (for Docker: `dockerd` or `systemctl start docker`), or pass `socketPath` / set DOCKER_HOST",
            ))
        }
        _ => {}
    }
    let docker = Docker::connect_with_unix(path, REQUEST_TIMEOUT_SECS, API_DEFAULT_VERSION)
        .map_err(|e| unavailable(e.to_string(), "check the socket path"))?;
    let negotiated = tokio::time::timeout(Duration::from_millis(CONNECT_TIMEOUT_MS), docker.negotiate_version())
        .await
        .map_err(|_| unavailable(format!("no answer within {CONNECT_TIMEOUT_MS} ms"), "check that the engine is running and healthy"))?
        .map_err(|e| {
            let permission = io_kind(&e) == Some(std::io::ErrorKind::PermissionDenied);
            if permission {
                unavailable(
                    format!("permission denied on {path}"),
                    "add your user to the `docker` group (then log in again), or use a rootless engine's socket",
                )
            } else {
                unavailable(e.to_string(), "check that the engine is running (`docker info`)")
            }
        })?;
    let v = negotiated.client_version();
    if (v.major_version, v.minor_version) < MIN_API_VERSION {
        return Err(unavailable(
            format!(
                "engine API {}.{} is older than berth's minimum 1.41",
                v.major_version, v.minor_version
            ),
            "upgrade the engine (Docker 20.10+ or Podman 4.3+)",
        ));
    }
    cache
        .lock()
        .expect("engine cache poisoned")
        .insert(c.endpoint.clone(), negotiated.clone());
    Ok(Engine {
        docker: negotiated,
        endpoint: c.endpoint,
    })
}

fn io_kind(e: &bollard::errors::Error) -> Option<std::io::ErrorKind> {
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
pub fn status(e: &bollard::errors::Error) -> Option<u16> {
    match e {
        bollard::errors::Error::DockerResponseServerError { status_code, .. } => Some(*status_code),
        _ => None,
    }
}

impl Engine {
    /// Maps a bollard failure during `operation` to berth's error: an answer with a
    /// status is `E_ENGINE`; a failed connection or a timeout is `E_ENGINE_UNAVAILABLE`.
    pub fn error(&self, operation: &str, e: bollard::errors::Error) -> Error {
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
            B::RequestTimeoutError => Error::EngineUnavailable {
                tried: self.endpoint.clone(),
                reason: format!("no answer to {operation} within {REQUEST_TIMEOUT_SECS} s"),
                hint: "check that the engine is healthy".into(),
            },
            // A transport failure (connection refused, socket gone, connection reset): the
            // engine never answered, whatever the request was.
            B::HyperResponseError { .. }
            | B::HyperLegacyError { .. }
            | B::IOError { .. }
            | B::SocketNotFoundError(_) => Error::EngineUnavailable {
                tried: self.endpoint.clone(),
                reason: format!("{operation}: {e}"),
                hint: "check that the engine is running (`docker info`)".into(),
            },
            other => Error::Engine {
                operation: operation.into(),
                status: None,
                message: other.to_string(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn precedence() {
        let opts = EngineOptions {
            socket_path: Some("/tmp/x.sock".into()),
        };
        let env = env_with(&[("DOCKER_HOST", "unix:///run/other.sock")]);
        assert_eq!(
            choose(&opts, &env),
            Candidate {
                endpoint: "unix:///tmp/x.sock".into(),
                source: "socketPath option"
            }
        );
        assert_eq!(
            choose(&EngineOptions::default(), &env).source,
            "DOCKER_HOST"
        );
        let none = env_with(&[("DOCKER_HOST", "")]);
        assert_eq!(
            choose(&EngineOptions::default(), &none).endpoint,
            "unix:///var/run/docker.sock"
        );
    }

    #[tokio::test]
    async fn missing_socket_is_unavailable_and_names_what_was_tried() {
        let opts = EngineOptions {
            socket_path: Some("/nonexistent/berth.sock".into()),
        };
        let e = connect(&opts).await.err().unwrap();
        assert_eq!(e.code(), "E_ENGINE_UNAVAILABLE");
        let msg = e.to_string();
        assert!(
            msg.contains("/nonexistent/berth.sock") && msg.contains("socketPath option"),
            "{msg}"
        );
    }

    #[tokio::test]
    async fn a_socket_nobody_listens_on_is_unavailable() {
        let dir = std::env::temp_dir().join(format!("berth-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("dead.sock");
        let _ = std::fs::remove_file(&path);
        drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
        let opts = EngineOptions {
            socket_path: Some(path.to_string_lossy().into_owned()),
        };
        let e = connect(&opts).await.err().unwrap();
        assert_eq!(e.code(), "E_ENGINE_UNAVAILABLE", "{e}");
        let _ = std::fs::remove_dir_all(dir);
    }
}

//! Unit tests of engine connection: every `E_ENGINE_UNAVAILABLE` message, fake engines on
//! unix sockets (silent, old API, Podman's `/version`), remote-host rules.

use super::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixListener;

/// A socket path in a directory of its own, removed when the guard drops.
struct TmpSock {
    dir: std::path::PathBuf,
    path: std::path::PathBuf,
}

impl Drop for TmpSock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn tmp_sock(name: &str) -> TmpSock {
    let dir = std::env::temp_dir().join(format!("berth-engine-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    TmpSock { dir, path }
}

fn opts(path: &std::path::Path) -> EngineOptions {
    EngineOptions {
        socket_path: Some(path.to_string_lossy().into_owned()),
        connect_timeout_ms: Some(300),
        ..Default::default()
    }
}

/// Serves every request with `body` as JSON (or never answers when `None`).
fn fake_engine(path: &std::path::Path, body: Option<&'static str>) {
    let listener = UnixListener::bind(path).unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let mut seen = Vec::new();
                loop {
                    let n = s.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    seen.extend_from_slice(&buf[..n]);
                    if seen.windows(4).any(|w| w == b"\r\n\r\n") {
                        break;
                    }
                }
                let Some(body) = body else {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    return;
                };
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(reply.as_bytes()).await;
            });
        }
    });
}

fn unavailable_parts(e: &Error) -> (String, String, String) {
    match e {
        Error::EngineUnavailable {
            tried,
            reason,
            hint,
        } => (tried.clone(), reason.clone(), hint.clone()),
        other => panic!("expected E_ENGINE_UNAVAILABLE, got {other:?}"),
    }
}

#[test]
fn every_unavailable_message() {
    let e = unavailable::none_found(&[
        "/var/run/docker.sock (Docker)".into(),
        "/run/podman/podman.sock (rootful Podman)".into(),
    ]);
    assert_eq!(e.code(), "E_ENGINE_UNAVAILABLE");
    assert_eq!(
        e.to_string(),
        "container engine unavailable: no engine socket found (tried /var/run/docker.sock (Docker), /run/podman/podman.sock (rootful Podman)); start Docker or Podman (rootless Podman: `systemctl --user start podman.socket`), or pass `socketPath` / `engine`, or set DOCKER_HOST / CONTAINER_HOST"
    );
    let e = unavailable::socket_absent("unix:///x.sock from socketPath option", "/x.sock", None);
    assert_eq!(
        e.to_string(),
        "container engine unavailable: socket /x.sock does not exist (tried unix:///x.sock from socketPath option); start the engine (Docker: `systemctl start docker` or start Docker Desktop / Colima / OrbStack), or pass `socketPath` / `engine`, or set DOCKER_HOST"
    );
    let (_, _, hint) = unavailable_parts(&unavailable::socket_absent(
        "t",
        "/p",
        Some(EngineKind::Podman),
    ));
    assert!(hint.starts_with("start Podman's API service"), "{hint}");
    let e = unavailable::permission_denied(
        "unix:///var/run/docker.sock from Docker socket",
        "/var/run/docker.sock",
    );
    assert_eq!(
        e.to_string(),
        "container engine unavailable: permission denied on /var/run/docker.sock (tried unix:///var/run/docker.sock from Docker socket); add your user to the `docker` group (`sudo usermod -aG docker $USER`, then log in again), or use a rootless engine's socket (`engine: 'podman'` for rootless Podman)"
    );
    let e = unavailable::refused("t", "unix:///dead.sock");
    assert_eq!(
        e.to_string(),
        "container engine unavailable: nothing accepts connections on unix:///dead.sock (tried t); the engine is not running: start it (a socket file left behind by a stopped engine answers nothing)"
    );
    let e = unavailable::no_answer("t", "GET /version", 300);
    assert_eq!(
        e.to_string(),
        "container engine unavailable: no answer to GET /version within 300 ms (tried t); check that the engine is healthy (it accepted the connection but did not answer), or raise `connectTimeoutMs`"
    );
    let e = unavailable::too_old("t", "1.40");
    assert_eq!(
        e.to_string(),
        "container engine unavailable: the engine reported API version 1.40, older than berth's minimum 1.41 (tried t); upgrade the engine (Docker 20.10 or later, Podman 4.3 or later)"
    );
    let e = unavailable::other("t", "boom".into());
    assert_eq!(e.to_string(), "container engine unavailable: boom (tried t); check that the engine is running and reachable");
}

#[tokio::test]
async fn missing_socket_names_what_was_tried() {
    let e = connect(&opts(std::path::Path::new("/nonexistent/berth.sock")))
        .await
        .unwrap_err();
    let (tried, reason, _) = unavailable_parts(&e);
    assert_eq!(
        tried,
        "unix:///nonexistent/berth.sock from socketPath option"
    );
    assert_eq!(reason, "socket /nonexistent/berth.sock does not exist");
}

#[tokio::test]
async fn a_socket_nobody_listens_on_is_refused() {
    let sock = tmp_sock("dead.sock");
    let path = &sock.path;
    drop(std::os::unix::net::UnixListener::bind(path).unwrap());
    let e = connect(&opts(path)).await.unwrap_err();
    let (_, reason, _) = unavailable_parts(&e);
    assert_eq!(
        reason,
        format!("nothing accepts connections on unix://{}", path.display())
    );
}

#[tokio::test]
async fn a_silent_engine_times_out_with_the_option() {
    let sock = tmp_sock("silent.sock");
    let path = &sock.path;
    fake_engine(path, None);
    let e = connect(&opts(path)).await.unwrap_err();
    let (_, reason, _) = unavailable_parts(&e);
    assert_eq!(reason, "no answer to GET /version within 300 ms");
}

#[tokio::test]
async fn an_old_api_is_refused_saying_what_the_engine_reported() {
    let sock = tmp_sock("old.sock");
    let path = &sock.path;
    fake_engine(
        path,
        Some(r#"{"Version":"19.03.15","ApiVersion":"1.40","MinAPIVersion":"1.12"}"#),
    );
    let e = connect(&opts(path)).await.unwrap_err();
    let (_, reason, _) = unavailable_parts(&e);
    assert_eq!(
        reason,
        "the engine reported API version 1.40, older than berth's minimum 1.41"
    );
}

#[tokio::test]
async fn podman_is_recognised_by_its_version_components() {
    let sock = tmp_sock("podman.sock");
    let path = &sock.path;
    fake_engine(
        path,
        Some(
            r#"{"Version":"4.3.1","ApiVersion":"1.41","Components":[{"Name":"Podman Engine","Version":"4.3.1"}]}"#,
        ),
    );
    let e = connect(&opts(path)).await.unwrap();
    assert_eq!(e.kind, EngineKind::Podman);
    assert_eq!(e.version, "4.3.1");
    assert_eq!(e.api_version, "1.41");
    assert!(!e.is_remote());
}

#[tokio::test]
async fn unknown_engine_names_are_invalid_before_any_connection() {
    let o = EngineOptions {
        engine: Some(EngineSelector::Name("lxc".into())),
        ..Default::default()
    };
    let e = connect(&o).await.unwrap_err();
    assert_eq!(e.code(), "E_INVALID_ARGUMENT");
}

#[tokio::test]
async fn unknown_schemes_are_invalid() {
    let o = EngineOptions {
        socket_path: Some("ssh://me@host".into()),
        ..Default::default()
    };
    let e = connect(&o).await.unwrap_err();
    assert_eq!(e.code(), "E_INVALID_ARGUMENT");
    assert!(e.to_string().contains("unix://, tcp://"), "{e}");
}

#[test]
fn io_kinds_are_found_through_transparent_wrappers() {
    let reset = bollard::errors::Error::IOError {
        err: std::io::Error::from(std::io::ErrorKind::ConnectionReset),
    };
    assert_eq!(io_kind(&reset), Some(std::io::ErrorKind::ConnectionReset));
    assert_eq!(io_kind(&bollard::errors::Error::RequestTimeoutError), None);
}

#[test]
fn remote_hosts() {
    assert_eq!(
        remote_host_of("tcp://10.0.0.5:2375").as_deref(),
        Some("10.0.0.5")
    );
    assert_eq!(
        remote_host_of("tcp://docker.example:2376").as_deref(),
        Some("docker.example")
    );
    assert_eq!(
        remote_host_of("https://[fd00::1]:2376").as_deref(),
        Some("fd00::1")
    );
    assert_eq!(remote_host_of("tcp://h").as_deref(), Some("h"));
    assert_eq!(remote_host_of("unix:///var/run/docker.sock"), None);
}

#[test]
fn published_addresses_of_a_remote_engine_name_its_host() {
    let engine = |endpoint: &str| Engine {
        docker: Docker::connect_with_http("tcp://10.0.0.5:2375", 1, API_DEFAULT_VERSION).unwrap(),
        endpoint: endpoint.into(),
        kind: EngineKind::Docker,
        version: "20.10".into(),
        api_version: "1.41".into(),
        remote_host: remote_host_of(endpoint),
        bounds: Default::default(),
    };
    let remote = engine("tcp://10.0.0.5:2375");
    assert!(remote.is_remote());
    assert_eq!(
        remote.reachable_address("127.0.0.1:49153"),
        "10.0.0.5:49153"
    );
    assert_eq!(remote.reachable_address("0.0.0.0:49153"), "10.0.0.5:49153");
    assert_eq!(remote.reachable_address("[::]:49153"), "10.0.0.5:49153");
    assert_eq!(
        remote.reachable_address("192.168.1.9:49153"),
        "192.168.1.9:49153"
    );
    let v6 = engine("tcp://[fd00::1]:2375");
    assert_eq!(v6.reachable_address("127.0.0.1:80"), "[fd00::1]:80");
    let local = engine("unix:///var/run/docker.sock");
    assert!(!local.is_remote());
    assert_eq!(
        local.reachable_address("127.0.0.1:49153"),
        "127.0.0.1:49153"
    );
}

#[tokio::test]
async fn connect_timeout_is_checked_below_at_and_above_its_bounds_before_any_connection() {
    let with = |t| EngineOptions {
        socket_path: Some("/nonexistent-berth.sock".into()),
        connect_timeout_ms: Some(t),
        ..Default::default()
    };
    for t in [1, 1000, MAX_CONNECT_TIMEOUT_MS] {
        assert!(with(t).validate().is_ok(), "{t}");
    }
    for t in [0, MAX_CONNECT_TIMEOUT_MS + 1, u64::MAX] {
        let e = with(t).validate().unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument { field, .. } if field == "connectTimeoutMs"),
            "{e}"
        );
        // Refused before the missing socket is even tried.
        let e = connect(&with(t)).await.err().unwrap();
        assert_eq!(e.code(), "E_INVALID_ARGUMENT", "{t}");
    }
}

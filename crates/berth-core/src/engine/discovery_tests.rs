//! Unit tests of discovery: precedence, Docker contexts, usual sockets, TLS, engine names.
use super::*;
use std::collections::HashSet;

fn host(env: &[(&str, &str)], files: &[(&str, &str)], sockets: &[&str], platform: &str) -> Host {
    let files: HashMap<PathBuf, String> = files
        .iter()
        .map(|(p, c)| (PathBuf::from(p), c.to_string()))
        .collect();
    let mut present: HashSet<PathBuf> = sockets.iter().map(PathBuf::from).collect();
    present.extend(files.keys().cloned());
    Host {
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        home: Some("/home/u".into()),
        platform: platform.into(),
        root: false,
        exists: Box::new(move |p| present.contains(p)),
        read: Box::new(move |p| files.get(p).cloned()),
    }
}

fn pick(w: &Wanted, h: &Host) -> (String, String) {
    let c = choose(w, h).expect("a candidate");
    (c.endpoint, c.source)
}

fn podman() -> Wanted {
    Wanted {
        socket_path: None,
        kind: Some(EngineKind::Podman),
    }
}

#[test]
fn socket_path_wins_over_everything() {
    let h = host(
        &[("DOCKER_HOST", "tcp://x:1")],
        &[],
        &["/var/run/docker.sock"],
        "linux",
    );
    let w = Wanted {
        socket_path: Some("/tmp/x.sock".into()),
        kind: Some(EngineKind::Podman),
    };
    assert_eq!(
        pick(&w, &h),
        ("unix:///tmp/x.sock".into(), "socketPath option".into())
    );
    let w = Wanted {
        socket_path: Some("tcp://10.0.0.2:2375".into()),
        kind: None,
    };
    assert_eq!(pick(&w, &h).0, "tcp://10.0.0.2:2375");
}

#[test]
fn engine_option_wins_over_the_other_engines_env() {
    let h = host(
        &[
            ("DOCKER_HOST", "unix:///d.sock"),
            ("XDG_RUNTIME_DIR", "/run/user/1000"),
        ],
        &[],
        &["/var/run/docker.sock", "/run/user/1000/podman/podman.sock"],
        "linux",
    );
    let (ep, src) = pick(&podman(), &h);
    assert_eq!(ep, "unix:///run/user/1000/podman/podman.sock");
    assert!(
        src.starts_with("engine option (podman)") && src.contains("rootless Podman"),
        "{src}"
    );
    let h = host(
        &[
            ("CONTAINER_HOST", "unix:///p.sock"),
            ("DOCKER_HOST", "unix:///d.sock"),
        ],
        &[],
        &[],
        "linux",
    );
    assert_eq!(pick(&podman(), &h).0, "unix:///p.sock");
    let docker = Wanted {
        socket_path: None,
        kind: Some(EngineKind::Docker),
    };
    assert_eq!(pick(&docker, &h).0, "unix:///d.sock");
}

#[test]
fn env_then_context_then_sockets() {
    let none = Wanted::default();
    let h = host(
        &[
            ("DOCKER_HOST", "tcp://h:2375"),
            ("CONTAINER_HOST", "unix:///p.sock"),
        ],
        &[],
        &[],
        "linux",
    );
    assert_eq!(
        pick(&none, &h),
        ("tcp://h:2375".into(), "DOCKER_HOST".into())
    );
    let h = host(&[("CONTAINER_HOST", "unix:///p.sock")], &[], &[], "linux");
    assert_eq!(
        pick(&none, &h),
        ("unix:///p.sock".into(), "CONTAINER_HOST".into())
    );
    let h = host(
        &[("DOCKER_HOST", "")],
        &[],
        &["/var/run/docker.sock"],
        "linux",
    );
    assert_eq!(pick(&none, &h).0, "unix:///var/run/docker.sock");
}

#[test]
fn docker_context_from_env_or_config() {
    let digest = hex::encode(Sha256::digest(b"remote"));
    let meta = format!("/home/u/.docker/contexts/meta/{digest}/meta.json");
    let body = r#"{"Name":"remote","Endpoints":{"docker":{"Host":"tcp://10.1.2.3:2375","SkipTLSVerify":false}}}"#;
    let h = host(
        &[],
        &[
            (
                "/home/u/.docker/config.json",
                r#"{"currentContext":"remote"}"#,
            ),
            (&meta, body),
        ],
        &["/var/run/docker.sock"],
        "linux",
    );
    assert_eq!(
        pick(&Wanted::default(), &h),
        (
            "tcp://10.1.2.3:2375".into(),
            "Docker context \"remote\"".into()
        )
    );
    // DOCKER_CONTEXT=default means no context: the usual sockets decide.
    let h2 = host(
        &[("DOCKER_CONTEXT", "default")],
        &[
            (
                "/home/u/.docker/config.json",
                r#"{"currentContext":"remote"}"#,
            ),
            (&meta, body),
        ],
        &["/var/run/docker.sock"],
        "linux",
    );
    assert_eq!(
        pick(&Wanted::default(), &h2).0,
        "unix:///var/run/docker.sock"
    );
    // DOCKER_CONFIG moves the config directory.
    let meta3 = format!("/cfg/contexts/meta/{digest}/meta.json");
    let h3 = host(
        &[("DOCKER_CONFIG", "/cfg"), ("DOCKER_CONTEXT", "remote")],
        &[(&meta3, body)],
        &[],
        "linux",
    );
    assert_eq!(pick(&Wanted::default(), &h3).0, "tcp://10.1.2.3:2375");
    // Podman never reads Docker's context.
    assert!(choose(&podman(), &h3).is_err());
}

#[test]
fn usual_sockets_in_order_and_what_was_tried() {
    let h = host(
        &[],
        &[],
        &[
            "/home/u/.orbstack/run/docker.sock",
            "/home/u/.colima/default/docker.sock",
        ],
        "darwin",
    );
    assert_eq!(
        pick(&Wanted::default(), &h),
        (
            "unix:///home/u/.colima/default/docker.sock".into(),
            "Colima socket".into()
        )
    );
    let h = host(&[], &[], &["/home/u/.docker/run/docker.sock"], "darwin");
    assert_eq!(pick(&Wanted::default(), &h).1, "Docker Desktop socket");
    let h = host(
        &[("XDG_RUNTIME_DIR", "/run/user/7")],
        &[],
        &["/run/user/7/docker.sock"],
        "linux",
    );
    assert_eq!(pick(&Wanted::default(), &h).1, "rootless Docker socket");
    let mut h = host(&[], &[], &["/run/podman/podman.sock"], "linux");
    h.root = true;
    assert_eq!(
        pick(&Wanted::default(), &h),
        (
            "unix:///run/podman/podman.sock".into(),
            "rootful Podman socket".into()
        )
    );
    let h = host(&[("XDG_RUNTIME_DIR", "/run/user/7")], &[], &[], "linux");
    let tried = choose(&Wanted::default(), &h).unwrap_err();
    assert_eq!(tried[0], "/var/run/docker.sock (Docker)");
    assert!(
        tried
            .iter()
            .any(|t| t == "/run/user/7/podman/podman.sock (rootless Podman)"),
        "{tried:?}"
    );
    let tried = choose(&podman(), &h).unwrap_err();
    assert!(tried.iter().all(|t| t.contains("Podman")), "{tried:?}");
}

#[test]
fn tls_when_docker_asks_for_it() {
    let h = host(
        &[
            ("DOCKER_HOST", "tcp://h:2376"),
            ("DOCKER_TLS_VERIFY", "1"),
            ("DOCKER_CERT_PATH", "/certs"),
        ],
        &[],
        &[],
        "linux",
    );
    let c = choose(&Wanted::default(), &h).unwrap();
    assert_eq!(
        c.tls,
        Some(Tls {
            cert_dir: "/certs".into()
        })
    );
    let h = host(
        &[("DOCKER_HOST", "tcp://h:2376"), ("DOCKER_TLS_VERIFY", "1")],
        &[],
        &[],
        "linux",
    );
    assert_eq!(
        choose(&Wanted::default(), &h).unwrap().tls,
        Some(Tls {
            cert_dir: "/home/u/.docker".into()
        })
    );
    let h = host(&[("DOCKER_HOST", "tcp://h:2375")], &[], &[], "linux");
    assert_eq!(choose(&Wanted::default(), &h).unwrap().tls, None);
}

#[test]
fn windows_uses_the_docker_pipe() {
    let h = host(&[], &[], &[], "win32");
    assert_eq!(
        pick(&Wanted::default(), &h).0,
        "npipe:////./pipe/docker_engine"
    );
}

#[test]
fn selector_rules() {
    let name = |n: &str| EngineSelector::Name(n.into());
    assert_eq!(
        resolve_selector(&name("podman"), "linux").unwrap(),
        Some(EngineKind::Podman)
    );
    let e = resolve_selector(&name("lxc"), "linux").unwrap_err();
    assert_eq!(e.code(), "E_INVALID_ARGUMENT");
    assert_eq!(
        e.to_string(),
        "invalid argument `engine`: unknown engine \"lxc\"; expected one of docker, podman"
    );
    let e = resolve_selector(&name("podman"), "win32").unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid argument `engine`: engine \"podman\" is not supported on win32; supported there: docker"
    );
    let map = |pairs: &[(&str, &str)]| {
        EngineSelector::PerPlatform(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    };
    let m = map(&[("linux", "podman"), ("darwin", "docker")]);
    assert_eq!(
        resolve_selector(&m, "linux").unwrap(),
        Some(EngineKind::Podman)
    );
    assert_eq!(
        resolve_selector(&m, "darwin").unwrap(),
        Some(EngineKind::Docker)
    );
    assert_eq!(
        resolve_selector(&map(&[("darwin", "docker")]), "linux").unwrap(),
        None
    );
    // Another platform's entry is still checked, but not for this platform's support.
    assert_eq!(
        resolve_selector(&map(&[("win32", "docker"), ("linux", "docker")]), "linux").unwrap(),
        Some(EngineKind::Docker)
    );
    let e = resolve_selector(&map(&[("win32", "podman")]), "win32").unwrap_err();
    assert!(
        e.to_string().contains("`engine.win32`")
            && e.to_string().contains("supported there: docker"),
        "{e}"
    );
    let e = resolve_selector(&map(&[("linux", "rkt")]), "linux").unwrap_err();
    assert!(
        e.to_string()
            .contains("`engine.linux`: unknown engine \"rkt\""),
        "{e}"
    );
    let e = resolve_selector(&map(&[("freebsd", "docker")]), "linux").unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid argument `engine.freebsd`: unknown platform; expected one of linux, darwin, win32"
    );
}

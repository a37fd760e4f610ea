//! Spec: what a session is created from, and the checks run before any engine call.

use std::collections::BTreeMap;

use crate::model::errors::{Error, Result};
use crate::model::labels::LABEL_NAMESPACE;
use crate::model::lifetime::validate_lifetime_ms;

/// Smallest CPU limit the engine honours, in CPUs (its `NanoCpus` granularity).
pub(crate) const MIN_CPUS: f64 = 0.01;
/// Largest CPU limit accepted, in CPUs.
pub(crate) const MAX_CPUS: f64 = 1024.0;

/// The longest path, in bytes (Linux's `PATH_MAX`, 4096, less the terminating NUL): a working
/// directory, a mount target, a program name (`argv[0]`) and a file path are each refused past it.
pub(crate) const MAX_PATH_BYTES: usize = 4095;
/// The longest name of one path component, in bytes (Linux's `NAME_MAX`).
pub(crate) const MAX_NAME_BYTES: usize = 255;
/// The longest `user` accepted, in bytes (`name[:group]`; real names and ids never come near
/// it). The runtime echoes the user in its error when it cannot find it, and an error over
/// 64 KiB wedges `runc exec` (`docs/design.md#engine-exec-size`).
pub(crate) const MAX_USER_BYTES: usize = 256;

/// The most processes `pidsLimit` may allow: Linux's `PID_MAX_LIMIT` on 64-bit (2^22), the
/// highest `pid_max` a kernel accepts.
pub(crate) const MAX_PIDS_LIMIT: i64 = 4_194_304;
/// The most ports one session may publish.
pub(crate) const MAX_PORTS: usize = 1024;
/// The longest `KEY=value` of the container's environment, in bytes with its NUL: Linux's
/// `MAX_ARG_STRLEN` (32 pages). A longer one fails the entrypoint's `execve` with `E2BIG`.
pub(crate) const MAX_ENV_ENTRY_BYTES: usize = 128 * 1024;
/// The most the container's environment may hold in all, in bytes (each `KEY=value` and its
/// NUL): 1 MiB, half the container's `ARG_MAX` (2 MiB with the default 8 MiB stack), so every
/// process started in it (the entrypoint, each exec, which inherits it) keeps room for its argv.
pub(crate) const MAX_ENV_BYTES: usize = 1024 * 1024;
/// The most the caller's labels may hold in all, in bytes (keys and values): berth copies them
/// onto its record volumes and helper containers, and every listing carries them.
pub(crate) const MAX_LABELS_BYTES: usize = 64 * 1024;
/// The longest `networkMode`, in bytes (a network name or `container:<id>`).
pub(crate) const MAX_NETWORK_MODE_BYTES: usize = 256;
/// The capability names of capabilities(7) (Linux 5.9+), without their `CAP_` prefix.
pub(crate) const CAPABILITIES: [&str; 41] = [
    "CHOWN",
    "DAC_OVERRIDE",
    "DAC_READ_SEARCH",
    "FOWNER",
    "FSETID",
    "KILL",
    "SETGID",
    "SETUID",
    "SETPCAP",
    "LINUX_IMMUTABLE",
    "NET_BIND_SERVICE",
    "NET_BROADCAST",
    "NET_ADMIN",
    "NET_RAW",
    "IPC_LOCK",
    "IPC_OWNER",
    "SYS_MODULE",
    "SYS_RAWIO",
    "SYS_CHROOT",
    "SYS_PTRACE",
    "SYS_PACCT",
    "SYS_ADMIN",
    "SYS_BOOT",
    "SYS_NICE",
    "SYS_RESOURCE",
    "SYS_TIME",
    "SYS_TTY_CONFIG",
    "MKNOD",
    "LEASE",
    "AUDIT_WRITE",
    "AUDIT_CONTROL",
    "SETFCAP",
    "MAC_OVERRIDE",
    "MAC_ADMIN",
    "SYSLOG",
    "WAKE_ALARM",
    "BLOCK_SUSPEND",
    "AUDIT_READ",
    "PERFMON",
    "BPF",
    "CHECKPOINT_RESTORE",
];

/// Longest session id accepted, in UTF-16 code units.
pub(crate) const MAX_SESSION_ID_UNITS: usize = 256;

/// The default keep-alive entrypoint: sleeps for about 68 years under the init process.
pub(crate) const DEFAULT_ENTRYPOINT: [&str; 2] = ["sleep", "2147483647"];

/// A bind mount of a host path into the container.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Mount {
    /// Absolute host path.
    pub source: String,
    /// Absolute path inside the container.
    pub target: String,
    /// Mount read-only.
    pub read_only: bool,
}

/// Resource limits (`docs/design.md#security-defaults`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limits {
    /// Memory limit, in bytes.
    pub memory_bytes: Option<i64>,
    /// CPU quota, in CPUs (1.5 = one and a half cores).
    pub cpus: Option<f64>,
    /// Maximum number of processes.
    pub pids_limit: Option<i64>,
}

/// Hardening options (`docs/design.md#security-defaults`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Security {
    /// Capabilities to drop (`ALL`, `NET_RAW`, ...).
    pub cap_drop: Vec<String>,
    /// Set `no-new-privileges`.
    pub no_new_privileges: bool,
    /// Mount the root filesystem read-only.
    pub read_only_root_filesystem: bool,
    /// Network mode (`bridge`, `none`, `host`, a network name).
    pub network_mode: Option<String>,
    /// Let the sandbox reach the local network: the engine's bridges and gateways (the
    /// host's services), other containers, private and link-local ranges. `false` (the
    /// default) keeps it off them (`engine::netguard`); `networkMode` `host` or another
    /// container's network needs `true`.
    pub local_network: bool,
    /// Allow bind mounts that hand the sandbox the host (`/`, `/proc`, `/sys`, `/dev`, unix
    /// sockets and their parents, engine state dirs, `/etc`, `/boot`, writable paths under
    /// them): see `engine::host_escape` in this crate.
    pub allow_host_escape: bool,
}

/// Everything `createSession` creates a container from.
#[derive(Debug, Clone, Default)]
pub struct CreateSpec {
    /// The session id, as UTF-16 code units (validated by [`validate_session_id`]).
    pub session_id: Vec<u16>,
    /// Name prefix (default `berth`), as UTF-16 code units.
    pub prefix: Option<Vec<u16>>,
    /// Image reference.
    pub image: String,
    /// Working directory for the container and every exec.
    pub work_dir: Option<String>,
    /// Container ports to publish on 127.0.0.1 (TCP).
    pub ports: Vec<u16>,
    /// Environment variables.
    pub env: BTreeMap<String, String>,
    /// User (`name`, `uid`, `uid:gid`).
    pub user: Option<String>,
    /// Setup commands, each an argv, run in order after start.
    pub setup_commands: Vec<Vec<String>>,
    /// Bind mounts.
    pub mounts: Vec<Mount>,
    /// Host directories bind sources must resolve inside (checked on this filesystem when the
    /// engine is local, see `engine::bind_source` in this crate); empty: any existing absolute path.
    pub mount_roots: Vec<String>,
    /// Container paths the session's user must be able to write; checked by verify
    /// (a probe file written, read back and removed) and repaired in place (created,
    /// owned by the user, `u+rwx`).
    pub writable_paths: Vec<String>,
    /// Extra labels (outside berth's namespace).
    pub labels: BTreeMap<String, String>,
    /// Keep-alive entrypoint; [`DEFAULT_ENTRYPOINT`] when `None`.
    pub entrypoint: Option<Vec<String>>,
    /// Resource limits.
    pub limits: Limits,
    /// Hardening options.
    pub security: Security,
    /// `os/arch[/variant]` to pull and create for (`linux/amd64`); the engine's own by default.
    pub platform: Option<String>,
    /// Receives image pull progress when the image has to be pulled.
    pub on_pull_progress: Option<crate::model::pull::ProgressSink>,
    /// Remove the container once it has been stopped this long, in milliseconds (at most
    /// [`crate::model::lifetime::MAX_RETENTION_MS`]); `None`: a stopped session stays until removed.
    pub remove_after_stop_ms: Option<u64>,
    /// The session expires this long after it became ready, in milliseconds (at most
    /// [`crate::model::lifetime::MAX_RETENTION_MS`]); `None`: no timeout. Fixed in a label;
    /// `setTimeout` moves the deadline (see [`crate::ownership::deadlines`]).
    pub timeout_ms: Option<u64>,
}

impl CreateSpec {
    /// The entrypoint the container runs.
    pub fn effective_entrypoint(&self) -> Vec<String> {
        self.entrypoint
            .clone()
            .unwrap_or_else(|| DEFAULT_ENTRYPOINT.iter().map(|s| s.to_string()).collect())
    }

    /// Checks every field; the first problem is an `E_INVALID_ARGUMENT` naming the field.
    pub fn validate(&self) -> Result<()> {
        validate_session_id(&self.session_id)?;
        if let Some(p) = &self.prefix {
            validate_prefix(p)?;
        }
        validate_image(&self.image)?;
        if let Some(ms) = self.remove_after_stop_ms {
            validate_lifetime_ms("removeAfterStopMs", ms)?;
        }
        if let Some(ms) = self.timeout_ms {
            validate_lifetime_ms("timeoutMs", ms)?;
        }
        if let Some(w) = &self.work_dir {
            validate_container_path("workDir", w)?;
            if w.split('/').any(|p| p == "..") {
                return Err(Error::invalid(
                    "workDir",
                    "must not contain `..` components",
                ));
            }
        }
        if self.ports.len() > MAX_PORTS {
            return Err(Error::invalid(
                "ports",
                format!(
                    "lists {} ports, over the limit of {MAX_PORTS}",
                    self.ports.len()
                ),
            ));
        }
        for (i, p) in self.ports.iter().enumerate() {
            if *p == 0 {
                return Err(Error::invalid(
                    format!("ports[{i}]"),
                    "must be an integer in 1..65535",
                ));
            }
            if self.ports[..i].contains(p) {
                return Err(Error::invalid(
                    format!("ports[{i}]"),
                    format!("lists port {p} twice"),
                ));
            }
        }
        validate_env("env", &self.env)?;
        validate_container_env(&self.env)?;
        if let Some(u) = &self.user {
            validate_user(u)?;
        }
        for (i, argv) in self.setup_commands.iter().enumerate() {
            validate_argv(&format!("setupCommands[{i}]"), argv)?;
        }
        for (i, m) in self.mounts.iter().enumerate() {
            if !m.source.starts_with('/') {
                return Err(Error::invalid(
                    format!("mounts[{i}].source"),
                    "must be an absolute host path",
                ));
            }
            validate_container_path(&format!("mounts[{i}].target"), &m.target)?;
            if m.target == "/" {
                return Err(Error::invalid(
                    format!("mounts[{i}].target"),
                    "cannot mount over `/`",
                ));
            }
        }
        for (i, r) in self.mount_roots.iter().enumerate() {
            if !r.starts_with('/') || r.contains('\0') {
                return Err(Error::invalid(
                    format!("mountRoots[{i}]"),
                    "must be an absolute host path",
                ));
            }
        }
        validate_writable_paths("writablePaths", &self.writable_paths)?;
        let label_bytes: usize = self.labels.iter().map(|(k, v)| k.len() + v.len()).sum();
        if label_bytes > MAX_LABELS_BYTES {
            return Err(Error::invalid(
                "labels",
                format!("hold {label_bytes} bytes, over the limit of {MAX_LABELS_BYTES} bytes (keys and values together)"),
            ));
        }
        for (k, v) in &self.labels {
            if k.is_empty() || k.starts_with(LABEL_NAMESPACE) {
                return Err(Error::invalid(
                    format!("labels[{k:?}]"),
                    format!("label keys must be non-empty and outside the reserved `{LABEL_NAMESPACE}` namespace"),
                ));
            }
            if k.contains('\0') || v.contains('\0') {
                return Err(Error::invalid(
                    format!("labels[{k:?}]"),
                    "must not contain NUL",
                ));
            }
        }
        if let Some(e) = &self.entrypoint {
            validate_argv("entrypoint", e)?;
        }
        if let Some(m) = self.limits.memory_bytes {
            if m < 6 * 1024 * 1024 {
                return Err(Error::invalid(
                    "memoryBytes",
                    "must be at least 6 MiB (6291456 bytes), the engine's minimum",
                ));
            }
        }
        if let Some(c) = self.limits.cpus {
            if !(c.is_finite() && (MIN_CPUS..=MAX_CPUS).contains(&c)) {
                return Err(Error::invalid(
                    "cpus",
                    format!("must be a number of CPUs from {MIN_CPUS} to {MAX_CPUS} (smaller rounds to no limit at all)"),
                ));
            }
        }
        if let Some(p) = self.limits.pids_limit {
            pids_limit("pidsLimit", p as f64)?;
        }
        if let Some(p) = &self.platform {
            crate::model::pull::validate_platform(p)?;
        }
        for (i, c) in self.security.cap_drop.iter().enumerate() {
            validate_capability(&format!("capDrop[{i}]"), c)?;
        }
        if let Some(n) = &self.security.network_mode {
            if n.len() > MAX_NETWORK_MODE_BYTES {
                return Err(Error::invalid(
                    "networkMode",
                    format!(
                        "is {} bytes, over the limit of {MAX_NETWORK_MODE_BYTES} bytes",
                        n.len()
                    ),
                ));
            }
            if n.is_empty() || n.contains('\0') {
                return Err(Error::invalid(
                    "networkMode",
                    "must be a non-empty network mode",
                ));
            }
            if n == "host" && !self.ports.is_empty() {
                return Err(Error::invalid(
                    "ports",
                    "cannot be published with networkMode 'host' (the container uses the host's ports directly)",
                ));
            }
            let shared = n == "host" || n.starts_with("container:") || n.starts_with("ns:");
            if shared && !self.security.local_network {
                return Err(Error::invalid(
                    "networkMode",
                    format!("{n:?} shares a network namespace berth cannot keep off the local network; pass localNetwork: true to opt in"),
                ));
            }
        }
        Ok(())
    }
}

/// Session ids: 1 to 256 UTF-16 code units, no control characters, no lone surrogates.
pub(crate) fn validate_session_id(units: &[u16]) -> Result<String> {
    if units.is_empty() || units.len() > MAX_SESSION_ID_UNITS {
        return Err(Error::invalid(
            "sessionId",
            format!(
                "must be 1 to {MAX_SESSION_ID_UNITS} UTF-16 code units long (got {})",
                units.len()
            ),
        ));
    }
    let s = String::from_utf16(units)
        .map_err(|_| Error::invalid("sessionId", "must not contain lone surrogates"))?;
    if let Some(c) = s.chars().find(|c| c.is_control()) {
        return Err(Error::invalid(
            "sessionId",
            format!(
                "must not contain control characters (found U+{:04X})",
                c as u32
            ),
        ));
    }
    Ok(s)
}

/// Prefixes: 1 to 64 UTF-16 code units, well-formed, no control characters.
pub(crate) fn validate_prefix(units: &[u16]) -> Result<String> {
    if units.is_empty() {
        return Err(Error::invalid(
            "prefix",
            "must not be empty (leave it out for the default `berth`)",
        ));
    }
    if units.len() > 64 {
        return Err(Error::invalid(
            "prefix",
            "must be at most 64 UTF-16 code units long",
        ));
    }
    let s = String::from_utf16(units)
        .map_err(|_| Error::invalid("prefix", "must not contain lone surrogates"))?;
    if s.chars().any(|c| c.is_control()) {
        return Err(Error::invalid(
            "prefix",
            "must not contain control characters",
        ));
    }
    Ok(s)
}

/// Image references, by the grammar of distribution/reference (what the engine parses):
/// `[domain[:port]/]path[/path...][:tag][@algorithm:hex]`, path components lowercase
/// alphanumerics joined by `.`, `_`, `__` or runs of `-`; tags `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
/// Anything else is `E_INVALID_ARGUMENT` here rather than the engine's 400.
pub(crate) fn validate_image(image: &str) -> Result<()> {
    let bad = |why: &str| Err(Error::invalid("image", format!("{why} (got {image:?})")));
    if image.trim().is_empty() {
        return Err(Error::invalid(
            "image",
            "must be a non-empty image reference",
        ));
    }
    let (name_tag, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    if let Some(d) = digest {
        let ok = d.split_once(':').is_some_and(|(algo, hex)| {
            !algo.is_empty()
                && algo
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"+._-".contains(&b))
                && hex.len() >= 32
                && hex.bytes().all(|b| b.is_ascii_hexdigit())
        });
        if !ok {
            return bad("has a malformed digest; expected `@algorithm:hex`");
        }
    }
    let last_slash = name_tag.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match name_tag[last_slash..].rfind(':') {
        Some(i) => (
            &name_tag[..last_slash + i],
            Some(&name_tag[last_slash + i + 1..]),
        ),
        None => (name_tag, None),
    };
    if let Some(t) = tag {
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let ok = !t.is_empty()
            && t.len() <= 128
            && word(t.as_bytes()[0])
            && t.bytes().all(|b| word(b) || b == b'.' || b == b'-');
        if !ok {
            return bad(
                "has an invalid tag; tags are letters, digits, `_`, `.` and `-`, at most 128",
            );
        }
    }
    if name.is_empty() || name.len() > 255 {
        return bad("must name a repository of 1 to 255 characters");
    }
    let mut components: Vec<&str> = name.split('/').collect();
    let first = components[0];
    if components.len() > 1
        && (first.contains('.')
            || first.contains(':')
            || first == "localhost"
            || first.bytes().any(|b| b.is_ascii_uppercase()))
    {
        if !valid_domain(first) {
            return bad("has an invalid registry host");
        }
        components.remove(0);
    }
    if !components.iter().all(|c| valid_path_component(c)) {
        return bad(
            "repository names are lowercase letters and digits separated by `.`, `_`, `__` or `-`",
        );
    }
    Ok(())
}

fn valid_domain(domain: &str) -> bool {
    let (host, port) = match domain.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || domain.starts_with('[') => (h, Some(p)),
        _ => (domain, None),
    };
    if port.is_some_and(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    if host.starts_with('[') && host.ends_with(']') {
        return host[1..host.len() - 1]
            .parse::<std::net::Ipv6Addr>()
            .is_ok();
    }
    !host.is_empty()
        && host.split('.').all(|part| {
            !part.is_empty()
                && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !part.starts_with('-')
                && !part.ends_with('-')
        })
}

fn valid_path_component(c: &str) -> bool {
    let b = c.as_bytes();
    let alnum = |x: u8| x.is_ascii_lowercase() || x.is_ascii_digit();
    if b.is_empty() || !alnum(b[0]) || !alnum(b[b.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if alnum(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && !alnum(b[i]) {
            i += 1;
        }
        let sep = &c[start..i];
        if !(sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|x| x == b'-')) {
            return false;
        }
    }
    true
}

/// Environment maps: keys non-empty, without `=` or NUL; values without NUL. Never echoes a value.
pub(crate) fn validate_env(field: &str, env: &BTreeMap<String, String>) -> Result<()> {
    for (k, v) in env {
        if k.is_empty() || k.contains('=') || k.contains('\0') {
            return Err(Error::invalid(
                format!("{field}[{k:?}]"),
                "keys must be non-empty and contain no `=` or NUL",
            ));
        }
        if v.contains('\0') {
            return Err(Error::invalid(
                format!("{field}[{k:?}]"),
                "values must not contain NUL (value not shown)",
            ));
        }
    }
    Ok(())
}

/// The container's environment as the entrypoint's `execve` takes it: each `KEY=value` with its
/// NUL at most [`MAX_ENV_ENTRY_BYTES`], all of them at most [`MAX_ENV_BYTES`]. Never echoes a value.
fn validate_container_env(env: &BTreeMap<String, String>) -> Result<()> {
    let mut total = 0usize;
    for (k, v) in env {
        let entry = k.len() + 1 + v.len() + 1;
        if entry > MAX_ENV_ENTRY_BYTES {
            return Err(Error::invalid(
                format!("env[{k:?}]"),
                format!("`KEY=value` takes {entry} bytes, over the limit of {MAX_ENV_ENTRY_BYTES} bytes for one variable (Linux's MAX_ARG_STRLEN; value not shown)"),
            ));
        }
        total += entry;
    }
    if total > MAX_ENV_BYTES {
        return Err(Error::invalid(
            "env",
            format!("takes {total} bytes, over the limit of {MAX_ENV_BYTES} bytes for the whole environment (each `KEY=value` and its NUL)"),
        ));
    }
    Ok(())
}

/// A capability name of capabilities(7), with or without `CAP_`, any case (`net_raw`,
/// `CAP_NET_RAW`), or `ALL`, as the engine takes them.
pub(crate) fn validate_capability(field: &str, name: &str) -> Result<()> {
    let upper = name.to_ascii_uppercase();
    let bare = upper.strip_prefix("CAP_").unwrap_or(&upper);
    if upper == "ALL" || CAPABILITIES.contains(&bare) {
        return Ok(());
    }
    let shown: String = name.chars().take(64).collect();
    Err(Error::invalid(
        field,
        format!("{shown:?} is not a capability of capabilities(7) (such as `NET_RAW`, `CAP_SYS_ADMIN`) nor `ALL`"),
    ))
}

/// Users: `name`, `uid`, `name:group` or `uid:gid`, no whitespace.
pub(crate) fn validate_user(user: &str) -> Result<()> {
    if user.len() > MAX_USER_BYTES {
        return Err(Error::invalid(
            "user",
            format!(
                "is {} bytes, over the limit of {MAX_USER_BYTES} bytes",
                user.len()
            ),
        ));
    }
    if user.is_empty()
        || user.chars().any(|c| c.is_whitespace() || c.is_control())
        || user.matches(':').count() > 1
    {
        return Err(Error::invalid(
            "user",
            "must be `user`, `uid`, `user:group` or `uid:gid`",
        ));
    }
    Ok(())
}

/// Argv lists: at least one element, the first non-empty, no NUL anywhere.
pub(crate) fn validate_argv(field: &str, argv: &[String]) -> Result<()> {
    if argv.first().is_none_or(|a| a.is_empty()) {
        return Err(Error::invalid(
            field,
            "must be a non-empty argv whose first element names a program",
        ));
    }
    if argv.iter().any(|a| a.contains('\0')) {
        return Err(Error::invalid(field, "arguments must not contain NUL"));
    }
    if argv[0].len() > MAX_PATH_BYTES {
        return Err(Error::invalid(
            format!("{field}[0]"),
            format!(
                "names a program of {} bytes, over the limit of {MAX_PATH_BYTES} bytes (PATH_MAX)",
                argv[0].len()
            ),
        ));
    }
    Ok(())
}

/// Container paths: absolute, no NUL, at most [`MAX_PATH_BYTES`] in all and [`MAX_NAME_BYTES`]
/// per component (Linux's `PATH_MAX` less its NUL, and `NAME_MAX`).
pub(crate) fn validate_container_path(field: &str, path: &str) -> Result<()> {
    if !path.starts_with('/') || path.contains('\0') {
        return Err(Error::invalid(
            field,
            "must be an absolute path inside the container",
        ));
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(Error::invalid(
            field,
            format!(
                "is a path of {} bytes, over the limit of {MAX_PATH_BYTES} bytes (PATH_MAX)",
                path.len()
            ),
        ));
    }
    if let Some(long) = path.split('/').find(|p| p.len() > MAX_NAME_BYTES) {
        return Err(Error::invalid(
            field,
            format!(
                "has a name of {} bytes, over the limit of {MAX_NAME_BYTES} bytes (NAME_MAX)",
                long.len()
            ),
        ));
    }
    Ok(())
}

/// Writable paths (`field[i]`): absolute container paths, not `/`, without `..`, each once.
pub fn validate_writable_paths(field: &str, paths: &[String]) -> Result<()> {
    for (i, p) in paths.iter().enumerate() {
        let f = format!("{field}[{i}]");
        validate_container_path(&f, p)?;
        if p.trim_end_matches('/').is_empty() {
            return Err(Error::invalid(f, "cannot be `/`"));
        }
        if p.split('/').any(|s| s == "..") {
            return Err(Error::invalid(f, "must not contain `..`"));
        }
        if paths[..i].contains(p) {
            return Err(Error::invalid(f, "is listed twice"));
        }
    }
    Ok(())
}

/// Ports: 1..=65535.
pub(crate) fn validate_port(field: &str, port: i64) -> Result<u16> {
    u16::try_from(port)
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| Error::invalid(field, "must be an integer in 1..65535"))
}

/// The `pidsLimit` rule, for a create spec and a resume spec alike: a whole number of processes,
/// at least 1 (Docker reads 0 and -1 as "no limit", which berth never passes on by accident).
/// The TypeScript layer checks only that it is a number; this is the one range and message.
///
/// # Errors
/// `E_INVALID_ARGUMENT` naming `field`, "must be a whole number of processes, at least 1".
pub fn pids_limit(field: &str, n: f64) -> Result<i64> {
    if !n.is_finite() || n.fract() != 0.0 || n < 1.0 || n > MAX_PIDS_LIMIT as f64 {
        return Err(Error::invalid(
            field,
            format!("must be a whole number of processes from 1 to {MAX_PIDS_LIMIT} (Linux's PID_MAX_LIMIT)"),
        ));
    }
    Ok(n as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    fn spec() -> CreateSpec {
        CreateSpec {
            session_id: units("s1"),
            image: "busybox:1".into(),
            ..Default::default()
        }
    }

    #[test]
    fn paths_programs_and_users_are_bounded_by_what_linux_allows() {
        let at_limit = format!("/{}", vec!["d".repeat(254); 17].join("/"));
        let at_limit = &at_limit[..MAX_PATH_BYTES];
        assert!(validate_container_path("cwd", at_limit).is_ok());
        for bad in [
            format!("{at_limit}x"),
            format!("/{}", "x".repeat(300_000)),
            format!("/w/{}", "n".repeat(MAX_NAME_BYTES + 1)),
        ] {
            let e = validate_container_path("cwd", &bad).unwrap_err();
            assert_eq!(e.code(), "E_INVALID_ARGUMENT");
            let m = e.to_string();
            assert!(m.contains("cwd") && m.contains("over the limit"), "{m}");
        }
        let program = |n: usize| vec![format!("/{}", "p".repeat(n - 1)), "arg".into()];
        assert!(validate_argv("argv", &program(MAX_PATH_BYTES)).is_ok());
        let e = validate_argv("argv", &program(MAX_PATH_BYTES + 1)).unwrap_err();
        assert!(
            e.to_string().contains("argv[0]") && e.to_string().contains("4095"),
            "{e}"
        );
        // Later arguments are the command's data: only the program name is a path.
        assert!(validate_argv("argv", &["sh".into(), "x".repeat(100_000)]).is_ok());
        assert!(validate_user(&"u".repeat(MAX_USER_BYTES)).is_ok());
        let e = validate_user(&"u".repeat(300_000)).unwrap_err();
        assert!(
            e.to_string()
                .contains("300000 bytes, over the limit of 256"),
            "{e}"
        );
    }

    #[test]
    fn ports_capabilities_and_network_modes_are_checked() {
        let mut s = spec();
        s.ports = vec![80, 443, 80];
        let e = s.validate().unwrap_err();
        assert!(
            e.to_string().contains("ports[2]") && e.to_string().contains("twice"),
            "{e}"
        );
        s.ports = (1..=1025).collect();
        assert!(s
            .validate()
            .unwrap_err()
            .to_string()
            .contains("over the limit of 1024"));
        s.ports = (1..=1024).collect();
        assert!(s.validate().is_ok());
        let mut s = spec();
        s.security.cap_drop = vec!["ALL".into(), "net_raw".into(), "CAP_SYS_ADMIN".into()];
        assert!(s.validate().is_ok());
        for bad in ["NOPE", "CAP_", "", "NET RAW"] {
            s.security.cap_drop = vec!["ALL".into(), bad.into()];
            let e = s.validate().unwrap_err();
            assert!(e.to_string().contains("capDrop[1]"), "{e}");
        }
        let mut s = spec();
        s.security.network_mode = Some("n".repeat(300_000));
        let e = s.validate().unwrap_err();
        assert!(
            e.to_string().contains("networkMode") && e.to_string().contains("256"),
            "{e}"
        );
        s.security.network_mode = Some("n".repeat(256));
        assert!(s.validate().is_ok());
    }

    #[test]
    fn pids_limit_is_a_whole_number_from_1() {
        assert_eq!(pids_limit("pidsLimit", 1.0).unwrap(), 1);
        assert_eq!(pids_limit("pidsLimit", 4096.0).unwrap(), 4096);
        assert_eq!(
            pids_limit("pidsLimit", 4_194_304.0).unwrap(),
            MAX_PIDS_LIMIT
        );
        for bad in [
            0.0,
            -1.0,
            1.5,
            f64::NAN,
            f64::INFINITY,
            1e300,
            2f64.powi(40),
            4_194_305.0,
        ] {
            let e = pids_limit("spec.pidsLimit", bad).unwrap_err();
            assert_eq!(e.code(), "E_INVALID_ARGUMENT", "{bad}");
            assert!(e.to_string().contains("spec.pidsLimit"), "{e}");
        }
        let mut s = spec();
        s.limits.pids_limit = Some(-1);
        let e = s.validate().unwrap_err();
        assert_eq!(
            e.to_string(),
            pids_limit("pidsLimit", -1.0).unwrap_err().to_string()
        );
    }

    #[test]
    fn session_ids() {
        assert!(validate_session_id(&units("a")).is_ok());
        assert!(validate_session_id(&units(&"x".repeat(256))).is_ok());
        assert!(validate_session_id(&units(&"x".repeat(257))).is_err());
        assert!(validate_session_id(&[]).is_err());
        assert!(validate_session_id(&units("a\nb")).is_err());
        assert!(validate_session_id(&units("a\u{7f}")).is_err());
        assert!(validate_session_id(&[0x61, 0xd800]).is_err());
        assert!(validate_session_id(&[0xdc00]).is_err());
        assert_eq!(validate_session_id(&units("😀 ok")).unwrap(), "😀 ok");
    }

    #[test]
    fn bad_inputs_name_their_field() {
        let field = |s: CreateSpec| match s.validate() {
            Err(Error::InvalidArgument { field, .. }) => field,
            other => panic!("expected invalid argument, got {other:?}"),
        };
        assert!(spec().validate().is_ok());
        assert_eq!(
            field(CreateSpec {
                image: " ".into(),
                ..spec()
            }),
            "image"
        );
        assert_eq!(
            field(CreateSpec {
                ports: vec![80, 0],
                ..spec()
            }),
            "ports[1]"
        );
        let mut s = spec();
        s.env.insert("A=B".into(), "x".into());
        assert!(field(s).starts_with("env["));
        let mut s = spec();
        s.env.insert(String::new(), "x".into());
        assert!(field(s).starts_with("env["));
        let mut s = spec();
        s.env.insert("SECRET".into(), "hunter2\0".into());
        let e = s.validate().unwrap_err();
        assert!(!e.to_string().contains("hunter2"));
        // One variable at Linux's MAX_ARG_STRLEN (with `=` and NUL) passes; one byte more is refused
        // naming the variable and never its value; the whole environment is bounded too.
        let mut s = spec();
        s.env
            .insert("K".into(), "v".repeat(MAX_ENV_ENTRY_BYTES - 3));
        assert!(s.validate().is_ok());
        s.env
            .insert("K".into(), "v".repeat(MAX_ENV_ENTRY_BYTES - 2));
        let e = s.validate().unwrap_err();
        assert_eq!(e.code(), "E_INVALID_ARGUMENT");
        assert!(e.to_string().contains("env[\"K\"]") && e.to_string().contains("131072"));
        assert!(!e.to_string().contains("vvvv"));
        let mut s = spec();
        for i in 0..9 {
            s.env.insert(format!("V{i}"), "v".repeat(120 * 1024));
        }
        assert_eq!(field(s), "env");
        let mut s = spec();
        s.labels.insert("big".into(), "x".repeat(MAX_LABELS_BYTES));
        assert_eq!(field(s), "labels");
        let mut s = spec();
        s.labels
            .insert("fits".into(), "x".repeat(MAX_LABELS_BYTES - 4));
        assert!(s.validate().is_ok());
        assert_eq!(
            field(CreateSpec {
                work_dir: Some("rel".into()),
                ..spec()
            }),
            "workDir"
        );
        assert_eq!(
            field(CreateSpec {
                setup_commands: vec![vec![]],
                ..spec()
            }),
            "setupCommands[0]"
        );
        assert_eq!(
            field(CreateSpec {
                mounts: vec![Mount {
                    source: "rel".into(),
                    target: "/x".into(),
                    read_only: false
                }],
                ..spec()
            }),
            "mounts[0].source"
        );
        let mut s = spec();
        s.labels.insert("dev.berth.managed".into(), "x".into());
        assert!(field(s).starts_with("labels["));
        assert_eq!(
            field(CreateSpec {
                user: Some("a b".into()),
                ..spec()
            }),
            "user"
        );
        let mut s = spec();
        s.limits.cpus = Some(0.0);
        assert_eq!(field(s), "cpus");
        let mut s = spec();
        s.limits.cpus = Some(1e-12);
        assert_eq!(field(s), "cpus");
        let mut s = spec();
        s.limits.cpus = Some(0.01);
        assert!(s.validate().is_ok());
    }

    #[test]
    fn image_references() {
        for ok in [
            "busybox",
            "busybox:1.36",
            "berth-test/busybox:1",
            "library/ubuntu:22.04",
            "localhost:5000/a/b:2",
            "127.0.0.1:5000/x",
            "Registry.Example.com/team/app:v1.2-rc_3",
            "ghcr.io/o/r@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "a__b/c--d/e.f",
            "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ] {
            assert!(validate_image(ok).is_ok(), "{ok}");
        }
        for bad in [
            "UPPER:1",
            "a b",
            "a/",
            "/a",
            "a//b",
            "a:",
            "a:-x",
            "a@sha256:xyz",
            "a..b",
            "-a",
            "a/B",
            ":tag",
            "host:port/x",
            "a@",
        ] {
            assert!(validate_image(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn mount_sources_are_not_checked_on_this_filesystem() {
        // The engine may be remote: only the engine can say whether a host path exists.
        let s = CreateSpec {
            mounts: vec![Mount {
                source: "/nonexistent/berth/on/this/machine".into(),
                target: "/work".into(),
                read_only: true,
            }],
            ..spec()
        };
        assert!(s.validate().is_ok());
    }

    #[test]
    fn writable_paths_and_mount_roots_are_checked() {
        let field = |s: CreateSpec| match s.validate() {
            Err(Error::InvalidArgument { field, .. }) => field,
            other => panic!("expected invalid argument, got {other:?}"),
        };
        let ok = CreateSpec {
            writable_paths: vec!["/work".into(), "/tmp/x".into()],
            mount_roots: vec!["/srv".into()],
            ..spec()
        };
        assert!(ok.validate().is_ok());
        for (bad, at) in [
            (vec!["rel"], "writablePaths[0]"),
            (vec!["/"], "writablePaths[0]"),
            (vec!["/a", "/a/../b"], "writablePaths[1]"),
            (vec!["/a", "/a"], "writablePaths[1]"),
        ] {
            let s = CreateSpec {
                writable_paths: bad.iter().map(|p| p.to_string()).collect(),
                ..spec()
            };
            assert_eq!(field(s), at);
        }
        let s = CreateSpec {
            mount_roots: vec!["srv".into()],
            ..spec()
        };
        assert_eq!(field(s), "mountRoots[0]");
    }

    #[test]
    fn platforms_are_checked() {
        let ok = CreateSpec {
            platform: Some("linux/arm64/v8".into()),
            ..spec()
        };
        assert!(ok.validate().is_ok());
        let bad = CreateSpec {
            platform: Some("arm64".into()),
            ..spec()
        };
        assert!(
            matches!(bad.validate(), Err(Error::InvalidArgument { field, .. }) if field == "platform")
        );
    }

    #[test]
    fn ports() {
        assert_eq!(validate_port("p", 1).unwrap(), 1);
        assert_eq!(validate_port("p", 65535).unwrap(), 65535);
        assert!(validate_port("p", 0).is_err());
        assert!(validate_port("p", 65536).is_err());
        assert!(validate_port("p", -1).is_err());
    }

    #[test]
    fn lifetimes_and_memory_are_checked_here_below_at_and_above_their_bounds() {
        use crate::model::lifetime::MAX_RETENTION_MS;
        let field = |s: CreateSpec| match s.validate() {
            Err(Error::InvalidArgument { field, .. }) => Some(field),
            _ => None,
        };
        for ms in [0, 1, MAX_RETENTION_MS] {
            let mut s = spec();
            s.remove_after_stop_ms = Some(ms);
            s.timeout_ms = Some(ms);
            assert_eq!(field(s), None, "{ms}");
        }
        let mut s = spec();
        s.remove_after_stop_ms = Some(MAX_RETENTION_MS + 1);
        assert_eq!(field(s).as_deref(), Some("removeAfterStopMs"));
        let mut s = spec();
        s.timeout_ms = Some(MAX_RETENTION_MS + 1);
        let e = s.validate().unwrap_err().to_string();
        assert!(
            e.contains("`timeoutMs`") && e.contains("from 0 to 2592000000 (30 days)"),
            "{e}"
        );
        for (bytes, ok) in [
            (i64::MIN, false),
            (-1, false),
            (0, false),
            (6_291_455, false),
            (6_291_456, true),
            (i64::MAX, true),
        ] {
            let mut s = spec();
            s.limits.memory_bytes = Some(bytes);
            assert_eq!(field(s).is_none(), ok, "{bytes}");
        }
    }
}

//! Options and results as JavaScript objects, and their one conversion into core types.

use std::collections::{BTreeMap, HashMap};

use napi::bindgen_prelude::{Buffer, Either, Utf16String};
use napi_derive::napi;

use crate::discovery::EngineSelector;
use crate::drift::{DriftSpec, OnDrift};
use crate::engine::EngineOptions;
use crate::engine_info::EngineInfo;
use crate::errors::{Error, Result};
use crate::exec::{ExecOptions, ExecOutput};
use crate::identity::{liveness, Owner};
use crate::image::{validate_platform, PullOptions, PullProgress};
use crate::peek::PeekResult;
use crate::resume::ResumeSpec;
use crate::spec::{whole_number, CreateSpec, Limits, Mount, Security};

/// A bind mount of a host path into the container.
#[napi(object)]
pub struct BindingMount {
    /// Absolute host path.
    pub source: String,
    /// Absolute path inside the container.
    pub target: String,
    /// Mount read-only. @default false
    pub read_only: Option<bool>,
}

/// Options of `createSession`, as the TypeScript entry passes them.
#[napi(object)]
pub struct BindingCreateOptions {
    /// Session id: 1 to 256 UTF-16 code units, no control characters, no lone surrogates.
    pub session_id: Utf16String,
    /// Image reference; pulled when missing.
    pub image: String,
    /// Container name prefix. @default 'berth'
    pub prefix: Option<Utf16String>,
    /// Working directory (absolute) of the container and its execs.
    pub work_dir: Option<String>,
    /// Container TCP ports to publish on 127.0.0.1 (each 1..65535).
    pub ports: Option<Vec<f64>>,
    /// Environment variables. Values never reach labels or error messages.
    pub env: Option<HashMap<String, String>>,
    /// User (`name`, `uid`, `uid:gid`).
    pub user: Option<String>,
    /// Setup commands, each an argv, run in order after start.
    pub setup_commands: Option<Vec<Vec<String>>>,
    /// Bind mounts.
    pub mounts: Option<Vec<BindingMount>>,
    /// Host directories bind sources must resolve inside (checked when the engine is local). @default any existing path
    pub mount_roots: Option<Vec<String>>,
    /// Container paths the session's user must be able to write (checked by verify, repaired in place).
    pub writable_paths: Option<Vec<String>>,
    /// Extra labels (keys outside `dev.berth.`).
    pub labels: Option<HashMap<String, String>>,
    /// Keep-alive entrypoint. @default ['sleep', '2147483647']
    pub entrypoint: Option<Vec<String>>,
    /// Network mode (`bridge`, `none`, a network name).
    pub network_mode: Option<String>,
    /// Capabilities to drop.
    pub cap_drop: Option<Vec<String>>,
    /// Set `no-new-privileges`. @default false
    pub no_new_privileges: Option<bool>,
    /// Mount the root filesystem read-only. @default false
    pub read_only_root_filesystem: Option<bool>,
    /// Memory limit, in bytes (at least 6 MiB).
    pub memory_bytes: Option<f64>,
    /// CPU limit, in CPUs (1.5 = one and a half).
    pub cpus: Option<f64>,
    /// Maximum number of processes.
    pub pids_limit: Option<f64>,
    /// `os/arch[/variant]` to pull and create for (`linux/amd64`). @default the engine's
    pub platform: Option<String>,
    /// Engine unix socket path (or `unix://` / `tcp://` URL); wins over `engine`, `DOCKER_HOST` and discovery.
    pub socket_path: Option<String>,
    /// `'docker'`, `'podman'`, or a per-platform map (`{ linux: 'podman' }`).
    pub engine: Option<Either<String, HashMap<String, String>>>,
    /// How long the engine's first answer may take, in milliseconds. @default 10000
    pub connect_timeout_ms: Option<f64>,
}

/// Options of `resumeSession`.
#[napi(object)]
pub struct BindingResumeOptions {
    /// Session id.
    pub session_id: Utf16String,
    /// Container name prefix. @default 'berth'
    pub prefix: Option<Utf16String>,
    /// `E_SESSION_BUSY` when a live or unknown process other than this one holds the session. @default false
    pub exclusive: Option<bool>,
    /// Take the duty to remove over when its holder is dead (`ownership: 'inherited'`). @default false
    pub take_over: Option<bool>,
    /// Create-spec fields to compare with the creation digests.
    pub spec: Option<BindingResumeSpec>,
    /// `'report'` (drift listed on the session) or `'error'` (`E_SPEC_DRIFT`, nothing adopted). @default 'report'
    pub on_drift: Option<String>,
    /// Verify the container (and repair it in place) against `spec`; a hard finding left is `E_VERIFY_FAILED`. @default false
    pub verify: Option<bool>,
    /// Engine unix socket path (or `unix://` / `tcp://` URL); wins over `engine`, `DOCKER_HOST` and discovery.
    pub socket_path: Option<String>,
    /// `'docker'`, `'podman'`, or a per-platform map (`{ linux: 'podman' }`).
    pub engine: Option<Either<String, HashMap<String, String>>>,
    /// How long the engine's first answer may take, in milliseconds. @default 10000
    pub connect_timeout_ms: Option<f64>,
}

/// The create-spec fields a resume can compare (others are accepted and not compared).
/// Naming any of `memoryBytes`, `cpus`, `pidsLimit` compares the three limits as one field.
#[napi(object)]
pub struct BindingResumeSpec {
    /// Image reference; compared by resolved image id when the reference differs.
    pub image: Option<String>,
    /// Environment variables (compared by digest; values never leave the process).
    pub env: Option<HashMap<String, String>>,
    /// Working directory.
    pub work_dir: Option<String>,
    /// User.
    pub user: Option<String>,
    /// Published container ports (order does not matter).
    pub ports: Option<Vec<f64>>,
    /// Bind mounts.
    pub mounts: Option<Vec<BindingMount>>,
    /// Keep-alive entrypoint.
    pub entrypoint: Option<Vec<String>>,
    /// Memory limit, in bytes.
    pub memory_bytes: Option<f64>,
    /// CPU limit, in CPUs.
    pub cpus: Option<f64>,
    /// Maximum number of processes.
    pub pids_limit: Option<f64>,
    /// Container paths the session's user must be able to write (verify only; no digest).
    pub writable_paths: Option<Vec<String>>,
}

/// Options of `peek`.
#[napi(object)]
pub struct BindingPeekOptions {
    /// Container name prefix. @default 'berth'
    pub prefix: Option<Utf16String>,
    /// Engine unix socket path (or `unix://` / `tcp://` URL); wins over `engine`, `DOCKER_HOST` and discovery.
    pub socket_path: Option<String>,
    /// `'docker'`, `'podman'`, or a per-platform map (`{ linux: 'podman' }`).
    pub engine: Option<Either<String, HashMap<String, String>>>,
    /// How long the engine's first answer may take, in milliseconds. @default 10000
    pub connect_timeout_ms: Option<f64>,
}

/// Options of `Session.exec`.
#[napi(object)]
pub struct BindingExecOptions {
    /// Working directory (absolute).
    pub cwd: Option<String>,
    /// Extra environment variables.
    pub env: Option<HashMap<String, String>>,
    /// User to run as.
    pub user: Option<String>,
    /// Bytes written to stdin, which is then closed.
    pub stdin: Option<Buffer>,
    /// Deadline, in milliseconds; the process tree is killed when it passes (`E_EXEC_TIMEOUT`).
    pub timeout_ms: Option<f64>,
    /// Cap on each of stdout and stderr, in bytes. @default 67108864
    pub max_buffer_bytes: Option<f64>,
}

/// Options of `Session.writeFile` and `Session.createFileWriter`.
#[napi(object)]
pub struct BindingWriteFileOptions {
    /// File mode bits (0..0o7777). @default 0o644
    pub mode: Option<u32>,
}

/// Options of `Session.stop`.
#[napi(object)]
pub struct BindingStopOptions {
    /// Stop even when this handle does not own the container. @default false
    pub force: Option<bool>,
    /// Grace period before SIGKILL, in milliseconds (rounded up to seconds). @default 10000
    pub timeout_ms: Option<f64>,
}

/// Options of `Session.remove`.
#[napi(object)]
pub struct BindingRemoveOptions {
    /// Remove even when this handle does not own the container. @default false
    pub force: Option<bool>,
}

/// A session's recorded owner.
#[napi(object)]
pub struct BindingOwner {
    /// Machine id + boot id + pid namespace, hashed.
    pub host_id: String,
    /// Process id.
    pub pid: u32,
    /// Process start time, in clock ticks since boot.
    pub start_time: String,
    /// Random per-process instance id.
    pub instance_id: String,
    /// `alive`, `dead` or `unknown`, as seen from this process now.
    pub liveness: String,
}

/// What `peek` reports.
#[napi(object)]
pub struct BindingPeekResult {
    /// Container name.
    pub name: String,
    /// Full container id.
    pub id: String,
    /// Session id from the labels; absent when unmanaged.
    pub session_id: Option<String>,
    /// Whether berth manages the container.
    pub managed: bool,
    /// Whether its setup finished.
    pub ready: bool,
    /// `created`, `running`, `paused`, `restarting`, `exited`, `removing`, `dead` or `unknown`.
    pub state: String,
    /// The engine's own state string.
    pub raw_state: String,
    /// Image reference.
    pub image: String,
    /// Creation time (RFC 3339).
    pub created_at: String,
    /// Recorded owner; absent when unmanaged or unreadable.
    pub owner: Option<BindingOwner>,
    /// `"8080/tcp"` -> `"127.0.0.1:49153"`.
    pub ports: HashMap<String, String>,
}

/// The buffered result of an exec.
#[napi(object)]
pub struct BindingExecResult {
    /// Exit code, as the engine reports it.
    pub exit_code: i64,
    /// Standard output.
    pub stdout: Buffer,
    /// Standard error.
    pub stderr: Buffer,
    /// Whether output went past `maxBufferBytes` and was cut.
    pub truncated: bool,
}

/// The result of `stop`.
#[napi(object)]
pub struct BindingStopResult {
    /// Whether the container is stopped now.
    pub stopped: bool,
    /// `not-owner`, `absent` or `already-removed`.
    pub reason: Option<String>,
}

/// The result of `release`.
#[napi(object)]
pub struct BindingReleaseResult {
    /// Whether this call dropped the handle's holder record.
    pub released: bool,
    /// `owner` or `already-released`.
    pub reason: Option<String>,
}

/// The result of `remove`.
#[napi(object)]
pub struct BindingRemoveResult {
    /// Whether this call removed the container.
    pub removed: bool,
    /// `not-owner`, `absent` or `already-removed`.
    pub reason: Option<String>,
}

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
        connect_timeout_ms: connect_timeout_ms
            .map(|t| whole_number("connectTimeoutMs", t, 1, i64::from(i32::MAX)).map(|t| t as u64))
            .transpose()?,
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

fn sorted(m: Option<HashMap<String, String>>) -> BTreeMap<String, String> {
    m.unwrap_or_default().into_iter().collect()
}

impl BindingCreateOptions {
    /// The core spec and engine options. Numbers are checked here; everything else in core.
    pub fn into_core(self) -> Result<(CreateSpec, EngineOptions)> {
        let ports = self
            .ports
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(i, p)| whole_number(&format!("ports[{i}]"), *p, 1, 65535).map(|p| p as u16))
            .collect::<Result<Vec<u16>>>()?;
        let limits = Limits {
            memory_bytes: self
                .memory_bytes
                .map(|m| whole_number("memoryBytes", m, 0, i64::MAX))
                .transpose()?,
            cpus: self.cpus,
            pids_limit: self
                .pids_limit
                .map(|p| whole_number("pidsLimit", p, 1, i64::MAX))
                .transpose()?,
        };
        let spec = CreateSpec {
            session_id: self.session_id.to_vec(),
            prefix: self.prefix.map(|p| p.to_vec()),
            image: self.image,
            work_dir: self.work_dir,
            ports,
            env: sorted(self.env),
            user: self.user,
            setup_commands: self.setup_commands.unwrap_or_default(),
            mounts: self
                .mounts
                .unwrap_or_default()
                .into_iter()
                .map(|m| Mount {
                    source: m.source,
                    target: m.target,
                    read_only: m.read_only.unwrap_or(false),
                })
                .collect(),
            mount_roots: self.mount_roots.unwrap_or_default(),
            writable_paths: self.writable_paths.unwrap_or_default(),
            labels: sorted(self.labels),
            entrypoint: self.entrypoint,
            limits,
            security: Security {
                cap_drop: self.cap_drop.unwrap_or_default(),
                no_new_privileges: self.no_new_privileges.unwrap_or(false),
                read_only_root_filesystem: self.read_only_root_filesystem.unwrap_or(false),
                network_mode: self.network_mode,
            },
            platform: self.platform,
            on_pull_progress: None,
        };
        Ok((
            spec,
            engine_options(self.socket_path, self.engine, self.connect_timeout_ms)?,
        ))
    }
}

impl BindingResumeOptions {
    /// The core resume spec and engine options. Numbers, `onDrift` and `connectTimeoutMs` are checked here.
    pub fn into_core(self) -> Result<(ResumeSpec, EngineOptions)> {
        let on_drift = match self.on_drift.as_deref() {
            None | Some("report") => OnDrift::Report,
            Some("error") => OnDrift::Error,
            Some(_) => return Err(Error::invalid("onDrift", "expected 'report' or 'error'")),
        };
        Ok((
            ResumeSpec {
                session_id: self.session_id.to_vec(),
                prefix: self.prefix.map(|p| p.to_vec()),
                exclusive: self.exclusive.unwrap_or(false),
                take_over: self.take_over.unwrap_or(false),
                spec: self.spec.map(BindingResumeSpec::into_core).transpose()?,
                on_drift,
                verify: self.verify.unwrap_or(false),
            },
            engine_options(self.socket_path, self.engine, self.connect_timeout_ms)?,
        ))
    }
}

impl BindingResumeSpec {
    /// The named fields as a drift spec (digest field names in `fields`).
    pub fn into_core(self) -> Result<DriftSpec> {
        let mut d = DriftSpec::default();
        let s = &mut d.spec;
        if let Some(i) = self.image {
            s.image = i;
            d.fields.push("image");
        }
        if let Some(e) = self.env {
            s.env = e.into_iter().collect();
            d.fields.push("env");
        }
        if self.work_dir.is_some() {
            s.work_dir = self.work_dir;
            d.fields.push("workDir");
        }
        if self.user.is_some() {
            s.user = self.user;
            d.fields.push("user");
        }
        if let Some(p) = self.ports {
            s.ports = p
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    whole_number(&format!("spec.ports[{i}]"), *p, 1, 65535).map(|p| p as u16)
                })
                .collect::<Result<_>>()?;
            d.fields.push("ports");
        }
        if let Some(m) = self.mounts {
            s.mounts = m
                .into_iter()
                .map(|m| Mount {
                    source: m.source,
                    target: m.target,
                    read_only: m.read_only.unwrap_or(false),
                })
                .collect();
            d.fields.push("mounts");
        }
        if self.entrypoint.is_some() {
            s.entrypoint = self.entrypoint;
            d.fields.push("entrypoint");
        }
        if self.memory_bytes.is_some() || self.cpus.is_some() || self.pids_limit.is_some() {
            s.limits = Limits {
                memory_bytes: self
                    .memory_bytes
                    .map(|m| whole_number("spec.memoryBytes", m, 0, i64::MAX))
                    .transpose()?,
                cpus: self.cpus,
                pids_limit: self
                    .pids_limit
                    .map(|p| whole_number("spec.pidsLimit", p, 1, i64::MAX))
                    .transpose()?,
            };
            d.fields.push("limits");
        }
        s.writable_paths = self.writable_paths.unwrap_or_default();
        Ok(d)
    }
}

impl BindingExecOptions {
    /// The core exec options.
    pub fn into_core(self) -> Result<ExecOptions> {
        Ok(ExecOptions {
            cwd: self.cwd,
            env: sorted(self.env),
            user: self.user,
            stdin: self.stdin.map(|b| b.to_vec()),
            timeout_ms: self
                .timeout_ms
                .map(|t| whole_number("timeoutMs", t, 1, i64::MAX).map(|t| t as u64))
                .transpose()?,
            max_buffer_bytes: self
                .max_buffer_bytes
                .map(|m| whole_number("maxBufferBytes", m, 0, i64::MAX).map(|m| m as usize))
                .transpose()?,
        })
    }
}

/// Converts an owner for JavaScript, with its liveness as seen now.
pub fn owner_js(o: &Owner) -> BindingOwner {
    BindingOwner {
        host_id: o.host_id.clone(),
        pid: o.pid,
        start_time: o.start_time.clone(),
        instance_id: o.instance_id.clone(),
        liveness: liveness(o).as_str().to_string(),
    }
}

impl From<PeekResult> for BindingPeekResult {
    fn from(p: PeekResult) -> Self {
        BindingPeekResult {
            owner: p.owner.as_ref().map(owner_js),
            name: p.name,
            id: p.id,
            session_id: p.session_id,
            managed: p.managed,
            ready: p.ready,
            state: p.state.to_string(),
            raw_state: p.raw_state,
            image: p.image,
            created_at: p.created_at,
            ports: p.ports.into_iter().collect(),
        }
    }
}

impl From<ExecOutput> for BindingExecResult {
    fn from(o: ExecOutput) -> Self {
        BindingExecResult {
            exit_code: o.exit_code,
            stdout: o.stdout.into(),
            stderr: o.stderr.into(),
            truncated: o.truncated,
        }
    }
}

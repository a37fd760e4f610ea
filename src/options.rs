//! Options of `createSession`, `resumeSession` (and `recreateSession`, which takes the create options): one `into_core` each into the core spec.

use std::collections::{BTreeMap, HashMap};

use super::engine_options::engine_options;
use napi::bindgen_prelude::{Either, Utf16String};
use napi_derive::napi;

use berth_core::EngineOptions;
use berth_core::ResumeSpec;
use berth_core::{js_integer, js_integer_opt, pids_limit, CreateSpec, Limits, Mount, Security};
use berth_core::{DriftSpec, OnDrift, ResumeFields};
use berth_core::{Error, Result};

/// Default `pidsLimit` of a created session: enough for builds and test runners, not for a fork bomb.
pub const DEFAULT_PIDS_LIMIT: i64 = 4096;
/// Capabilities dropped unless `capDrop` is given (Docker keeps `NET_RAW`: raw sockets, spoofing).
pub const DEFAULT_CAP_DROP: [&str; 1] = ["NET_RAW"];

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
    /// Let the sandbox reach the local network: the engine's bridges and gateways (the host's services), other containers, private and link-local ranges. `false` keeps it off them (rules in its own network namespace that nothing in it can change); `networkMode` `host` or `container:<id>` needs `true`. @default false
    pub local_network: Option<bool>,
    /// Capabilities to drop. @default ['NET_RAW'] (give `[]` to keep every default capability, e.g. for `ping`)
    pub cap_drop: Option<Vec<String>>,
    /// Set `no-new-privileges` (blocks `sudo`/setuid binaries); `false` opts out. @default true
    pub no_new_privileges: Option<bool>,
    /// Allow bind mounts that hand the sandbox the host: `/`, `/proc`, `/sys`, `/dev`, a unix socket or a parent of one, engine state dirs (`/var/lib/docker`, `/run/containerd`, ...), `/etc`, `/boot`, or a writable path under `/etc` or `/boot`. @default false
    pub allow_host_escape: Option<bool>,
    /// Mount the root filesystem read-only. @default false
    pub read_only_root_filesystem: Option<bool>,
    /// Memory limit, in bytes (at least 6 MiB).
    pub memory_bytes: Option<f64>,
    /// CPU limit, in CPUs (1.5 = one and a half).
    pub cpus: Option<f64>,
    /// Maximum number of processes. @default 4096
    pub pids_limit: Option<f64>,
    /// `os/arch[/variant]` to pull and create for (`linux/amd64`). @default the engine's
    pub platform: Option<String>,
    /// Remove the container once it has been stopped this long, in milliseconds (whole, 0 to 30 days). @default never
    pub remove_after_stop_ms: Option<f64>,
    /// The session expires this long after it became ready, in milliseconds (whole, 0 to 30 days). @default never
    pub timeout_ms: Option<f64>,
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
    /// Internal (the drop-in `@berth/core/container`): the handle holds only what it made itself, never this process's duty. @default false
    pub per_handle: Option<bool>,
    /// Internal (the harness provider `@berth/core/harness`): take the duty over from its holder whether it lives or not; of overlapping handovers one wins, the others release their record and are `E_SESSION_BUSY` (`taken-over`). @default false
    pub handover: Option<bool>,
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

pub(crate) fn sorted(m: Option<HashMap<String, String>>) -> BTreeMap<String, String> {
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
            .map(|(i, p)| js_integer(&format!("ports[{i}]"), *p))
            .collect::<Result<Vec<u16>>>()?;
        let limits = Limits {
            memory_bytes: js_integer_opt("memoryBytes", self.memory_bytes)?,
            cpus: self.cpus,
            pids_limit: Some(
                self.pids_limit
                    .map(|p| pids_limit("pidsLimit", p))
                    .transpose()?
                    .unwrap_or(DEFAULT_PIDS_LIMIT),
            ),
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
                cap_drop: self
                    .cap_drop
                    .unwrap_or_else(|| DEFAULT_CAP_DROP.iter().map(|c| c.to_string()).collect()),
                no_new_privileges: self.no_new_privileges.unwrap_or(true),
                allow_host_escape: self.allow_host_escape.unwrap_or(false),
                read_only_root_filesystem: self.read_only_root_filesystem.unwrap_or(false),
                network_mode: self.network_mode,
                local_network: self.local_network.unwrap_or(false),
            },
            platform: self.platform,
            on_pull_progress: None,
            remove_after_stop_ms: js_integer_opt("removeAfterStopMs", self.remove_after_stop_ms)?,
            timeout_ms: js_integer_opt("timeoutMs", self.timeout_ms)?,
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
                per_handle: self.per_handle.unwrap_or(false),
                handover: self.handover.unwrap_or(false),
                spec: self.spec.map(BindingResumeSpec::into_core).transpose()?,
                on_drift,
                verify: self.verify.unwrap_or(false),
            },
            engine_options(self.socket_path, self.engine, self.connect_timeout_ms)?,
        ))
    }
}

impl BindingResumeSpec {
    /// The named fields as a drift spec (the rule is the core's [`DriftSpec::named`]).
    pub fn into_core(self) -> Result<DriftSpec> {
        let ports = self
            .ports
            .map(|p| {
                p.iter()
                    .enumerate()
                    .map(|(i, p)| js_integer(&format!("spec.ports[{i}]"), *p))
                    .collect::<Result<Vec<u16>>>()
            })
            .transpose()?;
        let memory_bytes = js_integer_opt("spec.memoryBytes", self.memory_bytes)?;
        let pids_limit = self
            .pids_limit
            .map(|p| pids_limit("spec.pidsLimit", p))
            .transpose()?;
        Ok(DriftSpec::named(ResumeFields {
            image: self.image,
            env: self.env.map(|e| e.into_iter().collect()),
            work_dir: self.work_dir,
            user: self.user,
            ports,
            mounts: self.mounts.map(|m| {
                m.into_iter()
                    .map(|m| Mount {
                        source: m.source,
                        target: m.target,
                        read_only: m.read_only.unwrap_or(false),
                    })
                    .collect()
            }),
            entrypoint: self.entrypoint,
            memory_bytes,
            cpus: self.cpus,
            pids_limit,
            writable_paths: self.writable_paths.unwrap_or_default(),
        }))
    }
}

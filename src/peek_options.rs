//! Options and result of `peek` (the result also lists sessions).

use std::collections::HashMap;

use napi::bindgen_prelude::{Either, Utf16String};
use napi_derive::napi;

use berth_core::PeekResult;
use berth_core::{liveness, Owner};

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
    /// When the session expires, in milliseconds since the epoch; absent: never.
    pub expires_at: Option<f64>,
    /// `held`, `parked`, `expired` or `orphan`; absent when unmanaged.
    pub lifecycle: Option<String>,
    /// Why the container is not running when berth did not stop it; absent otherwise.
    pub death: Option<BindingDeath>,
}

/// Why a session's container died (`PeekResult.death`; `E_SESSION_DEAD`'s details add `logTail`).
#[napi(object)]
pub struct BindingDeath {
    /// `oom-killed`, `exited`, `killed`, `engine-restarted` or `removed-outside`.
    pub cause: String,
    /// The container's exit code; absent when it is gone.
    pub exit_code: Option<i64>,
    /// When it stopped (RFC 3339, as the engine wrote it); absent when gone or unknown.
    pub finished_at: Option<String>,
}

impl From<berth_core::Death> for BindingDeath {
    fn from(d: berth_core::Death) -> Self {
        BindingDeath {
            cause: d.cause.to_string(),
            exit_code: d.exit_code,
            finished_at: d.finished_at,
        }
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
            expires_at: p.expires_at.map(|ms| ms as f64),
            lifecycle: p.lifecycle.map(str::to_string),
            death: p.death.map(BindingDeath::from),
        }
    }
}

//! verifySession and recreateSession: their options, results and the two exports.

use std::collections::HashMap;

use napi::bindgen_prelude::{Either, PromiseRaw, Utf16String};
use napi::Env;
use napi_derive::napi;

use super::cancel::{token_of, CancelToken};
use super::engine_options::engine_options;
use super::errors::js;
use super::functions::{sink, PullProgressFn};
use super::options::{BindingCreateOptions, BindingResumeSpec};
use super::session::BindingSession;
use berth_core::EngineOptions;
use berth_core::Expect;
use berth_core::RecreateSpec;
use berth_core::Result;
use berth_core::VerifySpec;

/// Options of `verifySession`.
#[napi(object)]
pub struct BindingVerifyOptions {
    /// Container name prefix. @default 'berth'
    pub prefix: Option<Utf16String>,
    /// What to check beyond identity, state, init and exec: `mounts`, `ports`, `writablePaths`, `user`.
    pub spec: Option<BindingResumeSpec>,
    /// Repair repairable findings in place and check again; a hard finding left rejects. @default true
    pub repair: Option<bool>,
    /// Engine unix socket path (or `unix://` / `tcp://` URL); wins over `engine`, `DOCKER_HOST` and discovery.
    pub socket_path: Option<String>,
    /// `'docker'`, `'podman'`, or a per-platform map (`{ linux: 'podman' }`).
    pub engine: Option<Either<String, HashMap<String, String>>>,
    /// How long the engine's first answer may take, in milliseconds. @default 10000
    pub connect_timeout_ms: Option<f64>,
}

/// One verify finding.
#[napi(object)]
pub struct BindingFinding {
    /// Stable code (`state-stopped`, `mount-missing`, ...).
    pub code: String,
    /// `repairable` or `hard`.
    pub kind: String,
    /// What is wrong, naming the path or field.
    pub message: String,
    /// The container path concerned.
    pub path: Option<String>,
    /// The spec field or label concerned.
    pub field: Option<String>,
    /// Whether repair fixed it.
    pub repaired: bool,
}

/// What `verifySession` reports.
#[napi(object)]
pub struct BindingVerification {
    /// The container id verified.
    pub id: String,
    /// Whether nothing is left unrepaired.
    pub ok: bool,
    /// Repaired findings (`repaired: true`) and those left.
    pub findings: Vec<BindingFinding>,
}

impl From<berth_core::Verification> for BindingVerification {
    fn from(v: berth_core::Verification) -> Self {
        BindingVerification {
            id: v.id,
            ok: v.ok,
            findings: v
                .findings
                .into_iter()
                .map(|f| BindingFinding {
                    code: f.code.into(),
                    kind: f.kind.as_str().into(),
                    message: f.message,
                    path: f.path,
                    field: f.field,
                    repaired: f.repaired,
                })
                .collect(),
        }
    }
}

/// One thing a recreation lost or kept.
#[napi(object)]
pub struct BindingReplacedItem {
    /// `writable-layer`, `processes`, `tmpfs`, `anonymous-volume` (lost); `bind`, `volume` (kept).
    pub kind: String,
    /// Host path (bind) or volume name (volume).
    pub source: Option<String>,
    /// Container path.
    pub target: Option<String>,
}

/// What a recreation lost and kept.
#[napi(object)]
pub struct BindingReplaced {
    /// The replaced (now removed) container's id.
    pub previous_id: String,
    /// Lost with the old container.
    pub lost: Vec<BindingReplacedItem>,
    /// Kept (bind mounts, named volumes carried over).
    pub kept: Vec<BindingReplacedItem>,
}

impl From<berth_core::Replaced> for BindingReplaced {
    fn from(r: berth_core::Replaced) -> Self {
        let items = |v: Vec<berth_core::ReplacedItem>| {
            v.into_iter()
                .map(|i| BindingReplacedItem {
                    kind: i.kind.into(),
                    source: i.source,
                    target: i.target,
                })
                .collect()
        };
        BindingReplaced {
            previous_id: r.previous_id,
            lost: items(r.lost),
            kept: items(r.kept),
        }
    }
}

impl BindingVerifyOptions {
    /// The core verify spec and engine options.
    pub fn into_core(self, session_id: Vec<u16>) -> Result<(VerifySpec, EngineOptions)> {
        let expect = match self.spec {
            Some(s) => {
                let d = s.into_core()?;
                berth_core::validate_writable_paths("spec.writablePaths", &d.spec.writable_paths)?;
                d.validate()?;
                d.expect()
            }
            None => Expect::default(),
        };
        Ok((
            VerifySpec {
                session_id,
                prefix: self.prefix.map(|p| p.to_vec()),
                expect,
                repair: self.repair.unwrap_or(true),
            },
            engine_options(self.socket_path, self.engine, self.connect_timeout_ms)?,
        ))
    }
}

/// Verifies a session's container, repairing in place what can be; see the TypeScript
/// `verifySession`. Converts [`berth_core::verify_session`]: see it for the engine calls and
/// errors; `token` aborts it (`E_ABORTED`).
#[napi(ts_return_type = "Promise<BindingVerification>")]
pub fn verify_session<'e>(
    env: &'e Env,
    session_id: Utf16String,
    options: Option<BindingVerifyOptions>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'e, BindingVerification>> {
    let id = session_id.to_vec();
    let converted = match options {
        Some(o) => o.into_core(id),
        None => Ok((
            VerifySpec {
                session_id: id,
                repair: true,
                ..Default::default()
            },
            EngineOptions::default(),
        )),
    };
    let cancel = token_of(token);
    env.spawn_future(async move {
        let (spec, engine) = js(converted)?;
        js(berth_core::verify_session(&spec, &engine, &cancel).await).map(Into::into)
    })
}

/// Replaces a session's container with a new one from `options`, with rollback; see the
/// TypeScript `recreateSession`. Converts [`berth_core::recreate_session`]: see it for the
/// engine calls and errors; `token` aborts it (`E_ABORTED`).
#[napi(
    ts_args_type = "options: BindingCreateOptions, takeOver?: boolean | undefined | null, token?: CancelToken | undefined | null, onPullProgress?: ((progress: BindingPullProgress) => void) | undefined | null",
    ts_return_type = "Promise<BindingSession>"
)]
pub fn recreate_session<'e>(
    env: &'e Env,
    options: BindingCreateOptions,
    take_over: Option<bool>,
    token: Option<&CancelToken>,
    on_pull_progress: Option<PullProgressFn>,
) -> napi::Result<PromiseRaw<'e, BindingSession>> {
    let converted = options.into_core();
    let cancel = token_of(token);
    env.spawn_future(async move {
        let (mut spec, engine) = js(converted)?;
        spec.on_pull_progress = on_pull_progress.map(sink);
        let r = RecreateSpec {
            spec,
            take_over: take_over.unwrap_or(false),
        };
        js(berth_core::recreate_session(&r, &engine, &cancel).await).map(BindingSession::new)
    })
}

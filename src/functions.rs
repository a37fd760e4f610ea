//! Exported functions: containerName, createSession, resumeSession, peek, ensureImage, engineInfo.

use std::sync::Arc;

use napi::bindgen_prelude::{PromiseRaw, Unknown, Utf16String};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Env;
use napi_derive::napi;

use super::cancel::{token_of, CancelToken};
use super::engine_options::{
    engine_options, BindingEngineInfo, BindingEngineOptions, BindingEnsureImageOptions,
    BindingPullProgress,
};
use super::errors::js;
use super::options::{BindingCreateOptions, BindingResumeOptions};
use super::peek_options::{BindingPeekOptions, BindingPeekResult};
use super::session::BindingSession;
use berth_core::ProgressSink;
use berth_core::{container_name as derive_name, DEFAULT_PREFIX};

/// The container name of a session: pure, exact over UTF-16 code units (lone surrogates too).
/// `prefix` defaults to `'berth'`; pass `'please'` for the scheme's own default.
#[napi]
pub fn container_name(session_id: Utf16String, prefix: Option<Utf16String>) -> String {
    let default: Vec<u16> = DEFAULT_PREFIX.encode_utf16().collect();
    derive_name(&session_id, Some(prefix.as_deref().unwrap_or(&default)))
}

/// Creates a fresh session container; see the TypeScript `createSession` for the contract.
/// Converts [`berth_core::create_session`]: see it for the engine calls and errors. The numbers
/// of `options` are converted by [`BindingCreateOptions::into_core`] (`E_INVALID_ARGUMENT` for
/// one that does not fit its type); `token` aborts it (`E_ABORTED`).
#[napi(
    ts_args_type = "options: BindingCreateOptions, token?: CancelToken | undefined | null, onPullProgress?: ((progress: BindingPullProgress) => void) | undefined | null",
    ts_return_type = "Promise<BindingSession>"
)]
pub fn create_session<'e>(
    env: &'e Env,
    options: BindingCreateOptions,
    token: Option<&CancelToken>,
    on_pull_progress: Option<PullProgressFn>,
) -> napi::Result<PromiseRaw<'e, BindingSession>> {
    let converted = options.into_core();
    let cancel = token_of(token);
    env.spawn_future(async move {
        let (mut spec, engine) = js(converted)?;
        spec.on_pull_progress = on_pull_progress.map(sink);
        js(berth_core::create_session(&spec, &engine, &cancel).await).map(BindingSession::new)
    })
}

/// Adopts an existing session container; see the TypeScript `resumeSession`. Converts
/// [`berth_core::resume_session`]: see it for the engine calls and errors; `token` aborts it
/// (`E_ABORTED`).
#[napi(ts_return_type = "Promise<BindingSession>")]
pub fn resume_session<'e>(
    env: &'e Env,
    options: BindingResumeOptions,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'e, BindingSession>> {
    let converted = options.into_core();
    let cancel = token_of(token);
    env.spawn_future(async move {
        let (spec, engine) = js(converted)?;
        js(berth_core::resume_session(&spec, &engine, &cancel).await).map(BindingSession::new)
    })
}

/// Inspects a session without side effects; resolves `null` when absent. Converts
/// [`berth_core::peek`]: see it for the engine calls and errors.
#[napi(ts_return_type = "Promise<BindingPeekResult | null>")]
pub fn peek<'e>(
    env: &'e Env,
    session_id: Utf16String,
    options: Option<BindingPeekOptions>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'e, Option<BindingPeekResult>>> {
    let cancel = token_of(token);
    let (prefix, engine) = match options {
        Some(o) => (
            o.prefix,
            engine_options(o.socket_path, o.engine, o.connect_timeout_ms),
        ),
        None => (None, Ok(Default::default())),
    };
    let id = session_id.to_vec();
    let prefix = prefix.map(|p| p.to_vec());
    env.spawn_future(async move {
        let engine = js(engine)?;
        js(berth_core::peek(&id, prefix.as_deref(), &engine, &cancel).await)
            .map(|p| p.map(Into::into))
    })
}

/// A JS progress callback: weak (it never keeps Node alive by itself), called without an
/// error argument, its return value ignored. Dropped when the pull's spec is dropped.
pub type PullProgressFn = ThreadsafeFunction<
    BindingPullProgress,
    Unknown<'static>,
    BindingPullProgress,
    napi::Status,
    false,
    true,
>;

pub(super) fn sink(f: PullProgressFn) -> ProgressSink {
    let f = Arc::new(f);
    ProgressSink(Arc::new(move |p| {
        f.call(p.into(), ThreadsafeFunctionCallMode::NonBlocking);
    }))
}

/// Makes sure an image is present, pulling it when missing; see the TypeScript `ensureImage`.
/// Converts [`berth_core::ensure_image_at`]: see it for the engine calls and errors.
#[napi(
    ts_args_type = "image: string, options?: BindingEnsureImageOptions | undefined | null, token?: CancelToken | undefined | null, onPullProgress?: ((progress: BindingPullProgress) => void) | undefined | null",
    ts_return_type = "Promise<void>"
)]
pub fn ensure_image<'e>(
    env: &'e Env,
    image: String,
    options: Option<BindingEnsureImageOptions>,
    token: Option<&CancelToken>,
    on_pull_progress: Option<PullProgressFn>,
) -> napi::Result<PromiseRaw<'e, ()>> {
    let cancel = token_of(token);
    let converted = options
        .map(BindingEnsureImageOptions::into_core)
        .unwrap_or_else(|| Ok(Default::default()));
    env.spawn_future(async move {
        let (engine, mut pull) = js(converted)?;
        pull.on_progress = on_pull_progress.map(sink);
        js(berth_core::ensure_image_at(&engine, &image, &pull, &cancel).await)
    })
}

/// Describes the engine the options select; see the TypeScript `engineInfo`. Converts
/// [`berth_core::engine_info`]: see it for the engine calls and errors.
#[napi(ts_return_type = "Promise<BindingEngineInfo>")]
pub fn engine_info<'e>(
    env: &'e Env,
    options: Option<BindingEngineOptions>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'e, BindingEngineInfo>> {
    let cancel = token_of(token);
    let converted = options
        .map(BindingEngineOptions::into_core)
        .unwrap_or_else(|| Ok(Default::default()));
    env.spawn_future(async move {
        let engine = js(converted)?;
        js(berth_core::engine_info(&engine, &cancel).await).map(Into::into)
    })
}

/// Sets the process-wide budget of buffered exec output, in bytes (what every buffered
/// `exec`/`execText`/harness `run` in flight may hold together); answers the previous budget.
/// Errors: `E_INVALID_ARGUMENT` (not a whole number of bytes from 0).
#[napi]
pub fn set_buffer_budget(bytes: f64) -> napi::Result<f64> {
    let bytes: u64 = js(berth_core::js_integer("bytes", bytes))?;
    let before = berth_core::buffer_budget();
    berth_core::set_buffer_budget(bytes);
    Ok(before as f64)
}

/// The process-wide budget of buffered exec output and what buffered calls hold now, in bytes.
#[napi(object)]
pub struct BindingBufferBudget {
    /// The budget, in bytes.
    pub budget_bytes: f64,
    /// What buffered calls in flight hold now, in bytes.
    pub held_bytes: f64,
}

/// The process-wide budget of buffered exec output and what calls hold of it now.
#[napi]
pub fn buffer_budget() -> BindingBufferBudget {
    BindingBufferBudget {
        budget_bytes: berth_core::buffer_budget() as f64,
        held_bytes: berth_core::buffered_bytes() as f64,
    }
}

/// Checks a create's lifetimes without creating anything (the harness provider checks them
/// when it is made): converts each to whole milliseconds, then the core's rule
/// ([`berth_core::validate_lifetime_ms`]). Errors: `E_INVALID_ARGUMENT` naming the field.
#[napi]
pub fn check_lifetimes(
    remove_after_stop_ms: Option<f64>,
    timeout_ms: Option<f64>,
) -> napi::Result<()> {
    for (field, ms) in [
        ("removeAfterStopMs", remove_after_stop_ms),
        ("timeoutMs", timeout_ms),
    ] {
        if let Some(ms) = js(berth_core::js_integer_opt::<u64>(field, ms))? {
            js(berth_core::validate_lifetime_ms(field, ms))?;
        }
    }
    Ok(())
}

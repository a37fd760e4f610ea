//! Exported functions: containerName, createSession, resumeSession, peek.

use napi::bindgen_prelude::{PromiseRaw, Utf16String};
use napi::Env;
use napi_derive::napi;

use super::cancel::{token_of, CancelToken};
use super::errors::js;
use super::options::{
    BindingCreateOptions, BindingPeekOptions, BindingPeekResult, BindingResumeOptions,
};
use super::session::BindingSession;
use crate::engine::EngineOptions;
use crate::naming::{container_name as derive_name, DEFAULT_PREFIX};

/// The container name of a session: pure, exact over UTF-16 code units (lone surrogates too).
/// `prefix` defaults to `'berth'`; pass `'please'` for the scheme's own default.
#[napi]
pub fn container_name(session_id: Utf16String, prefix: Option<Utf16String>) -> String {
    let default: Vec<u16> = DEFAULT_PREFIX.encode_utf16().collect();
    derive_name(&session_id, Some(prefix.as_deref().unwrap_or(&default)))
}

/// Creates a fresh session container; see the TypeScript `createSession` for the contract.
///
/// Engine API: `POST /containers/create`, `POST /containers/{id}/start`, execs, `POST /volumes/create`.
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_IMAGE_NOT_FOUND`, `E_SESSION_EXISTS`,
/// `E_SETUP_FAILED`, `E_ABORTED`, `E_ENGINE`.
#[napi(ts_return_type = "Promise<BindingSession>")]
pub fn create_session<'e>(
    env: &'e Env,
    options: BindingCreateOptions,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'e, BindingSession>> {
    let converted = options.into_core();
    let cancel = token_of(token);
    env.spawn_future(async move {
        let (spec, engine) = js(converted)?;
        js(crate::create::create_session(&spec, &engine, &cancel).await).map(BindingSession::new)
    })
}

/// Adopts an existing session container; see the TypeScript `resumeSession`.
///
/// Engine API: `GET /containers/{name}/json`, `GET /volumes?filters=...`, `GET /images/{ref}/json`
/// (drift), `POST /volumes/create` (holder record or duty claim), `POST /containers/{id}/start|unpause`.
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_SESSION_NOT_FOUND`, `E_FOREIGN_CONTAINER`,
/// `E_SESSION_BUSY`, `E_SESSION_INCOMPLETE`, `E_SPEC_DRIFT`, `E_ABORTED`, `E_ENGINE`.
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
        js(crate::resume::resume_session(&spec, &engine, &cancel).await).map(BindingSession::new)
    })
}

/// Inspects a session without side effects; resolves `null` when absent.
///
/// Engine API: `GET /containers/{name}/json`, `GET /volumes/{name}`.
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_ENGINE`.
#[napi(ts_return_type = "Promise<BindingPeekResult | null>")]
pub fn peek<'e>(
    env: &'e Env,
    session_id: Utf16String,
    options: Option<BindingPeekOptions>,
) -> napi::Result<PromiseRaw<'e, Option<BindingPeekResult>>> {
    let (prefix, socket_path) = options
        .map(|o| (o.prefix, o.socket_path))
        .unwrap_or((None, None));
    let id = session_id.to_vec();
    let prefix = prefix.map(|p| p.to_vec());
    env.spawn_future(async move {
        let engine = EngineOptions { socket_path };
        js(crate::peek::peek(&id, prefix.as_deref(), &engine).await).map(|p| p.map(Into::into))
    })
}

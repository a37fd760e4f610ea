//! adoptUnlabelled: the old backend's unlabelled container, adopted for `@berth/core/container`.

use std::collections::HashMap;

use napi::bindgen_prelude::{Either, PromiseRaw, Utf16String};
use napi::Env;
use napi_derive::napi;

use super::cancel::{token_of, CancelToken};
use super::engine_options::engine_options;
use super::errors::js;
use super::session::BindingSession;
use berth_core::EngineOptions;
use berth_core::LegacyAdoptSpec;
use berth_core::Result;

/// Options of `adoptUnlabelled`.
#[napi(object)]
pub struct BindingAdoptOptions {
    /// Session (sandbox) id: 1 to 256 UTF-16 code units, no control characters, no lone surrogates.
    pub session_id: Utf16String,
    /// Container name prefix. @default 'please'
    pub prefix: Option<Utf16String>,
    /// The image the container must run (by image id, or by its normalised reference).
    pub image: String,
    /// Engine unix socket path (or `unix://` / `tcp://` URL); wins over `engine`, `DOCKER_HOST` and discovery.
    pub socket_path: Option<String>,
    /// `'docker'`, `'podman'`, or a per-platform map (`{ linux: 'podman' }`).
    pub engine: Option<Either<String, HashMap<String, String>>>,
    /// How long the engine's first answer may take, in milliseconds. @default 10000
    pub connect_timeout_ms: Option<f64>,
}

impl BindingAdoptOptions {
    /// The core spec and engine options (`connectTimeoutMs` is checked here).
    fn into_core(self) -> Result<(LegacyAdoptSpec, EngineOptions)> {
        Ok((
            LegacyAdoptSpec {
                session_id: self.session_id.to_vec(),
                prefix: self.prefix.map(|p| p.to_vec()),
                image: self.image,
            },
            engine_options(self.socket_path, self.engine, self.connect_timeout_ms)?,
        ))
    }
}

/// Adopts the unlabelled container under the derived name when it runs `image`; the handle
/// is `adopted` (its `remove()`/`stop()` make no engine call). Converts
/// [`berth_core::adopt_unlabelled`]: see it for the engine calls and errors; `token` aborts it
/// (`E_ABORTED`).
#[napi(ts_return_type = "Promise<BindingSession>")]
pub fn adopt_unlabelled<'e>(
    env: &'e Env,
    options: BindingAdoptOptions,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'e, BindingSession>> {
    let converted = options.into_core();
    let cancel = token_of(token);
    env.spawn_future(async move {
        let (spec, engine) = js(converted)?;
        js(berth_core::adopt_unlabelled(&spec, &engine, &cancel).await).map(BindingSession::new)
    })
}

//! Template functions: templateExists, listTemplates, removeTemplate.

use std::collections::HashMap;

use napi::bindgen_prelude::{Either, PromiseRaw};
use napi::Env;
use napi_derive::napi;

use super::cancel::{token_of, CancelToken};
use super::engine_options::engine_options;
use super::errors::js;
use berth_core::EngineOptions;
use berth_core::TemplateRemoval as Removal;

/// Where the engine is, for the template functions.
#[napi(object)]
pub struct BindingTemplateOptions {
    /// Engine unix socket path (or `unix://` / `tcp://` URL); wins over `engine`, `DOCKER_HOST` and discovery.
    pub socket_path: Option<String>,
    /// `'docker'`, `'podman'`, or a per-platform map (`{ linux: 'podman' }`).
    pub engine: Option<Either<String, HashMap<String, String>>>,
    /// How long the engine's first answer may take, in milliseconds. @default 10000
    pub connect_timeout_ms: Option<f64>,
    /// Only templates whose image carries all of these labels (exact). @default no filter
    pub labels: Option<HashMap<String, String>>,
}

/// One template image.
#[napi(object)]
pub struct BindingTemplate {
    /// The key (image tag).
    pub key: String,
    /// `berth-template:<key>`.
    pub reference: String,
    /// Image id (`sha256:...`).
    pub id: String,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_ms: f64,
    /// Size in bytes.
    pub size: f64,
    /// Caller labels of the image (outside `dev.berth.`).
    pub labels: HashMap<String, String>,
}

fn engine_of(o: &Option<BindingTemplateOptions>) -> berth_core::Result<EngineOptions> {
    match o {
        Some(o) => engine_options(
            o.socket_path.clone(),
            o.engine.clone(),
            o.connect_timeout_ms,
        ),
        None => Ok(EngineOptions::default()),
    }
}

/// Whether the template `berth-template:<key>` exists.
///
/// Engine API: `GET /images/{ref}/json`. Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`,
/// `E_ABORTED` (`token`), `E_ENGINE`.
#[napi(ts_return_type = "Promise<boolean>")]
pub fn template_exists<'e>(
    env: &'e Env,
    key: String,
    options: Option<BindingTemplateOptions>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'e, bool>> {
    let cancel = token_of(token);
    let engine = engine_of(&options);
    env.spawn_future(
        async move { js(berth_core::template_exists(&js(engine)?, &key, &cancel).await) },
    )
}

/// Every template (optionally only those carrying `labels`).
///
/// Engine API: `GET /images/json?filters=`. Errors: `E_ENGINE_UNAVAILABLE`, `E_ABORTED`
/// (`token`), `E_ENGINE`.
#[napi(ts_return_type = "Promise<BindingTemplate[]>")]
pub fn list_templates<'e>(
    env: &'e Env,
    options: Option<BindingTemplateOptions>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'e, Vec<BindingTemplate>>> {
    let cancel = token_of(token);
    let engine = engine_of(&options);
    let mut labels: Vec<(String, String)> = options
        .and_then(|o| o.labels)
        .map(|l| l.into_iter().collect())
        .unwrap_or_default();
    labels.sort();
    env.spawn_future(async move {
        let list = js(berth_core::list_templates(&js(engine)?, &labels, &cancel).await)?;
        Ok(list
            .into_iter()
            .map(|t| BindingTemplate {
                key: t.key,
                reference: t.reference,
                id: t.id,
                created_ms: t.created as f64 * 1000.0,
                size: t.size as f64,
                labels: t.labels,
            })
            .collect())
    })
}

/// Removes the template `berth-template:<key>` unless a container uses it; resolves
/// `'removed'`, `'in-use'` or `'absent'`.
///
/// Engine API: `DELETE /images/{ref}` (never forced). Errors: `E_INVALID_ARGUMENT`,
/// `E_ENGINE_UNAVAILABLE`, `E_ABORTED` (`token`), `E_ENGINE`.
#[napi(ts_return_type = "Promise<'removed' | 'in-use' | 'absent'>")]
pub fn remove_template<'e>(
    env: &'e Env,
    key: String,
    options: Option<BindingTemplateOptions>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'e, String>> {
    let cancel = token_of(token);
    let engine = engine_of(&options);
    env.spawn_future(async move {
        Ok(
            match js(berth_core::remove_template(&js(engine)?, &key, &cancel).await)? {
                Removal::Removed => "removed",
                Removal::InUse => "in-use",
                Removal::Absent => "absent",
            }
            .to_string(),
        )
    })
}

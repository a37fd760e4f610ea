//! Template functions: templateExists, listTemplates, removeTemplate, pruneTemplates,
//! touchTemplate, imageId.

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
    /// Last use (commit, or a create from it), milliseconds since the epoch.
    pub last_used_ms: f64,
}

/// What `pruneTemplates` did, by template key.
#[napi(object)]
pub struct BindingTemplatePrune {
    /// Removed.
    pub removed: Vec<String>,
    /// Stale but kept: a container uses it.
    pub kept: Vec<String>,
    /// Used within `unusedForMs`: left alone.
    pub recent: Vec<String>,
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

fn labels_of(o: Option<BindingTemplateOptions>) -> Vec<(String, String)> {
    let mut labels: Vec<(String, String)> = o
        .and_then(|o| o.labels)
        .map(|l| l.into_iter().collect())
        .unwrap_or_default();
    labels.sort();
    labels
}

/// Whether the template `berth-template:<key>` exists. Converts
/// [`berth_core::template_exists`]: see it for the engine calls and errors.
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

/// Every template (optionally only those carrying `labels`). Converts
/// [`berth_core::list_templates`]: see it for the engine calls and errors.
#[napi(ts_return_type = "Promise<BindingTemplate[]>")]
pub fn list_templates<'e>(
    env: &'e Env,
    options: Option<BindingTemplateOptions>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'e, Vec<BindingTemplate>>> {
    let cancel = token_of(token);
    let engine = engine_of(&options);
    let labels = labels_of(options);
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
                last_used_ms: t.last_used_ms as f64,
            })
            .collect())
    })
}

/// Removes the template `berth-template:<key>` unless a container uses it; resolves
/// `'removed'`, `'in-use'` or `'absent'`. Converts [`berth_core::remove_template`]: see it for
/// the engine calls and errors.
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

/// Removes every template (carrying `labels`) last used at least `unusedForMs` ago (`null`:
/// any). Converts [`berth_core::prune_templates`]: see it for the engine calls and errors.
/// `unusedForMs` must be a whole number that fits a `u64` (`E_INVALID_ARGUMENT` otherwise).
#[napi(ts_return_type = "Promise<BindingTemplatePrune>")]
pub fn prune_templates<'e>(
    env: &'e Env,
    unused_for_ms: Option<f64>,
    options: Option<BindingTemplateOptions>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'e, BindingTemplatePrune>> {
    let cancel = token_of(token);
    let engine = engine_of(&options);
    let labels = labels_of(options);
    let age = unused_for_ms
        .map(|ms| berth_core::js_integer::<u64>("unusedForMs", ms))
        .transpose();
    env.spawn_future(async move {
        let age = js(age)?;
        let r = js(berth_core::prune_templates(&js(engine)?, &labels, age, &cancel).await)?;
        Ok(BindingTemplatePrune {
            removed: r.removed,
            kept: r.kept,
            recent: r.recent,
        })
    })
}

/// Records a use of the template `berth-template:<key>` now (at most once a minute).
/// Converts [`berth_core::touch_template`]: see it for the engine calls and errors.
#[napi(ts_return_type = "Promise<void>")]
pub fn touch_template<'e>(
    env: &'e Env,
    key: String,
    options: Option<BindingTemplateOptions>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'e, ()>> {
    let cancel = token_of(token);
    let engine = engine_of(&options);
    env.spawn_future(
        async move { js(berth_core::touch_template(&js(engine)?, &key, &cancel).await) },
    )
}

/// The id of image `reference` on the engine, or null when it has none (nothing is pulled).
/// Converts [`berth_core::image_id`]: see it for the engine calls and errors.
#[napi(ts_return_type = "Promise<string | null>")]
pub fn image_id<'e>(
    env: &'e Env,
    reference: String,
    options: Option<BindingTemplateOptions>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'e, Option<String>>> {
    let cancel = token_of(token);
    let engine = engine_of(&options);
    env.spawn_future(
        async move { js(berth_core::image_id(&js(engine)?, &reference, &cancel).await) },
    )
}

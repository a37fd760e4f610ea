//! Templates: list and remove the local template images (`berth-template:<key>`) that
//! `Session::commit` makes (see [`crate::engine::templates`]).
//!
//! Engine calls: `GET /images/json`, `GET /volumes?filters=...` (use records),
//! `DELETE /images/{ref}`, `DELETE /images/{id}`, `DELETE /volumes/{name}`.

use std::collections::HashMap;

use tokio_util::sync::CancellationToken;

use crate::engine::connection::{status, Engine, EngineOptions};
use crate::engine::images;
use crate::engine::templates::{
    delete_use, exists, last_uses, now_ms, record_use, template_ref, uses, validate_key,
    TEMPLATE_REPO, USE_RECORD_EVERY_MS,
};
use crate::lifecycle::opening::connect;
use crate::model::errors::Result;

/// One template image.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    /// The key (the image tag).
    pub key: String,
    /// `berth-template:<key>`.
    pub reference: String,
    /// The image id (`sha256:...`).
    pub id: String,
    /// Creation time, seconds since the Unix epoch.
    pub created: i64,
    /// Size in bytes, as the engine reports it.
    pub size: i64,
    /// The image's caller labels (outside `dev.berth.`), copied from the container it was made from.
    pub labels: HashMap<String, String>,
    /// When it was last used (committed, or a session created from it), ms since the epoch:
    /// its newest use record (see [`crate::engine::templates`]), else its creation time.
    pub last_used_ms: u64,
}

/// Every template whose labels include all of `labels` (exact matches).
///
/// `GET /images/json`, then the repository and the labels are matched here: Podman names
/// commits `docker.io/library/berth-template:<key>` (or `localhost/...`), and its label
/// filters do not combine as Docker's do.
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn list(engine: &Engine, labels: &[(String, String)]) -> Result<Vec<Template>> {
    let images = images::list(engine)
        .await?
        .map_err(|e| engine.error("list templates", e))?;
    let last = last_uses(&uses(engine, None).await?);
    let prefix = format!("{TEMPLATE_REPO}:");
    let mut out = Vec::new();
    for image in images {
        if !labels.iter().all(|(k, v)| image.labels.get(k) == Some(v)) {
            continue;
        }
        for tag in &image.repo_tags {
            // Podman's compat API tags a commit `docker.io/library/<repo>:<tag>` (its own
            // API `localhost/...`); Docker keeps the familiar `<repo>:<tag>`.
            let familiar = ["docker.io/library/", "localhost/"]
                .iter()
                .find_map(|p| tag.strip_prefix(p))
                .unwrap_or(tag);
            if let Some(key) = familiar.strip_prefix(&prefix) {
                let created_ms = u64::try_from(image.created)
                    .unwrap_or(0)
                    .saturating_mul(1000);
                out.push(Template {
                    last_used_ms: last.get(key).copied().unwrap_or(created_ms),
                    key: key.to_string(),
                    reference: tag.clone(),
                    id: image.id.clone(),
                    created: image.created,
                    size: image.size,
                    labels: crate::model::labels::caller_labels(&image.labels),
                });
            }
        }
    }
    out.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(out)
}

/// What [`remove`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// The template's tag (and, when nothing else used it, its image) was removed.
    Removed,
    /// A container still uses it; nothing was removed.
    InUse,
    /// There was no such template.
    Absent,
}

/// Deletes the use records of `key` unless an image holds the key again (a rebuild meanwhile).
/// `GET /images/{ref}/json`, `GET /volumes?filters=...`, `DELETE /volumes/{name}` each.
async fn forget_uses(engine: &Engine, key: &str) -> Result<()> {
    if exists(engine, key).await? {
        return Ok(());
    }
    for (name, _, _) in uses(engine, Some(key)).await? {
        delete_use(engine, &name).await?;
    }
    Ok(())
}

/// Removes `berth-template:<key>` unless a container uses it (never forced), and then its use
/// records.
///
/// `DELETE /images/berth-template:<key>`; 409 means in use, 404 absent; then as
/// [`forget_uses`].
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn remove(engine: &Engine, key: &str) -> Result<Removal> {
    validate_key(key)?;
    match images::remove(engine, &template_ref(key)).await? {
        Ok(_) => {
            forget_uses(engine, key).await?;
            Ok(Removal::Removed)
        }
        Err(e) if status(&e) == Some(409) => Ok(Removal::InUse),
        Err(e) if status(&e) == Some(404) => Ok(Removal::Absent),
        Err(e) => Err(engine.error("remove template", e)),
    }
}

/// Whether the template `berth-template:<key>` exists, on the engine `engine_opts` selects.
///
/// Connects (`GET /version`), then `GET /images/berth-template:<key>/json` (see
/// [`crate::engine::templates::exists`]). Every request is bounded by `cancel` and a
/// per-request timeout.
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_ABORTED`, `E_ENGINE`.
pub async fn template_exists(
    engine_opts: &EngineOptions,
    key: &str,
    cancel: &CancellationToken,
) -> Result<bool> {
    validate_key(key)?;
    let engine = connect(engine_opts, cancel, "templateExists").await?;
    exists(&engine, key).await
}

/// Every template whose labels include all of `labels`, on the engine `engine_opts` selects.
///
/// Connects (`GET /version`), then `GET /images/json` (see [`list`]). Every request is
/// bounded by `cancel` and a per-request timeout.
/// Errors: `E_INVALID_ARGUMENT` (engine options), `E_ENGINE_UNAVAILABLE`, `E_ABORTED`,
/// `E_ENGINE`.
pub async fn list_templates(
    engine_opts: &EngineOptions,
    labels: &[(String, String)],
    cancel: &CancellationToken,
) -> Result<Vec<Template>> {
    let engine = connect(engine_opts, cancel, "listTemplates").await?;
    list(&engine, labels).await
}

/// Removes `berth-template:<key>` unless a container uses it (never forced), on the engine
/// `engine_opts` selects.
///
/// Connects (`GET /version`), then `DELETE /images/berth-template:<key>` (see [`remove`]).
/// Every request is bounded by `cancel` and a per-request timeout.
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_ABORTED`, `E_ENGINE`.
pub async fn remove_template(
    engine_opts: &EngineOptions,
    key: &str,
    cancel: &CancellationToken,
) -> Result<Removal> {
    // Bad input is refused before any engine call (the connect included).
    validate_key(key)?;
    let engine = connect(engine_opts, cancel, "removeTemplate").await?;
    remove(&engine, key).await
}

/// What [`prune_templates`] did, by template key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prune {
    /// Removed (the image and its use records).
    pub removed: Vec<String>,
    /// Stale, but kept: a container (running or not) uses the image.
    pub kept: Vec<String>,
    /// Used within `unused_for_ms`: left alone.
    pub recent: Vec<String>,
}

/// Removes every template matching `labels` whose last use (see [`Template::last_used_ms`]) is
/// at least `unused_for_ms` ago (`None`: any), unless a container uses it (never forced), on
/// the engine `engine_opts` selects.
///
/// Connects (`GET /version`), lists (`GET /images/json`, `GET /volumes?filters=...`), then per
/// stale template `DELETE /images/{id}` by the image id it listed (a tag moved to a new build
/// meanwhile is not touched; 409: in use, kept; 404: gone already) and `DELETE /volumes/{name}`
/// for its use records; then the use records of templates gone otherwise (`GET /images/json`
/// again, `DELETE /volumes/{name}`). Every request is bounded by `cancel` and a per-request timeout; an abort
/// leaves removed what was removed.
/// Errors: `E_INVALID_ARGUMENT` (engine options), `E_ENGINE_UNAVAILABLE`, `E_ABORTED`, `E_ENGINE`.
pub async fn prune_templates(
    engine_opts: &EngineOptions,
    labels: &[(String, String)],
    unused_for_ms: Option<u64>,
    cancel: &CancellationToken,
) -> Result<Prune> {
    let engine = connect(engine_opts, cancel, "pruneTemplates").await?;
    let now = now_ms();
    let mut out = Prune::default();
    for t in list(&engine, labels).await? {
        if unused_for_ms.is_some_and(|age| t.last_used_ms.saturating_add(age) > now) {
            out.recent.push(t.key);
            continue;
        }
        match images::remove(&engine, &t.id).await? {
            Ok(_) => {}
            Err(e) if status(&e) == Some(409) => {
                out.kept.push(t.key);
                continue;
            }
            Err(e) if status(&e) == Some(404) => {}
            Err(e) => return Err(engine.error("remove template", e)),
        }
        // Only when no image holds the key any more (a rebuild may have taken it meanwhile).
        forget_uses(&engine, &t.key).await?;
        out.removed.push(t.key);
    }
    // Use records whose template is gone (removed by another client): swept here too.
    let all: std::collections::HashSet<String> = list(&engine, &[])
        .await?
        .into_iter()
        .map(|t| t.key)
        .collect();
    for (name, key, _) in uses(&engine, None).await? {
        if !all.contains(&key) && !exists(&engine, &key).await? {
            delete_use(&engine, &name).await?;
        }
    }
    Ok(out)
}

/// Records that template `key` is being used now (a create from it), at most once a minute per
/// template, on the engine `engine_opts` selects.
///
/// Connects (`GET /version`), then `GET /volumes?filters=...` and, when the newest record is a
/// minute old or more, `POST /volumes/create` and `DELETE /volumes/{name}` of the older ones (see
/// [`crate::engine::templates::record_use`]). Every request is bounded by `cancel` and a
/// per-request timeout.
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_ABORTED`, `E_ENGINE`.
pub async fn touch_template(
    engine_opts: &EngineOptions,
    key: &str,
    cancel: &CancellationToken,
) -> Result<()> {
    validate_key(key)?;
    let engine = connect(engine_opts, cancel, "touchTemplate").await?;
    record_use(&engine, key, now_ms(), USE_RECORD_EVERY_MS).await
}

/// The id (`sha256:...`) of image `reference` on the engine `engine_opts` selects; `None` when
/// the engine does not have it (nothing is pulled).
///
/// Connects (`GET /version`), then `GET /images/{reference}/json`. Every request is bounded by
/// `cancel` and a per-request timeout.
/// Errors: `E_INVALID_ARGUMENT` (an empty reference), `E_ENGINE_UNAVAILABLE`, `E_ABORTED`,
/// `E_ENGINE`.
pub async fn image_id(
    engine_opts: &EngineOptions,
    reference: &str,
    cancel: &CancellationToken,
) -> Result<Option<String>> {
    if reference.is_empty() || reference.contains('\0') {
        return Err(crate::model::errors::Error::invalid(
            "image",
            "must be a non-empty image reference without NUL",
        ));
    }
    let engine = connect(engine_opts, cancel, "imageId").await?;
    match crate::engine::images::inspect(&engine, reference).await? {
        Ok(img) => Ok(img.id),
        Err(e) if status(&e) == Some(404) => Ok(None),
        Err(e) => Err(engine.error("inspect image", e)),
    }
}

//! Templates: list and remove the local template images (`berth-template:<key>`) that
//! `Session::commit` makes (see [`crate::engine::templates`]).
//!
//! Engine calls: `GET /images/json`, `DELETE /images/{ref}`.

use std::collections::HashMap;

use bollard::query_parameters::{ListImagesOptions, RemoveImageOptions};

use crate::engine::connection::{connect, status, Engine, EngineOptions};
use crate::engine::templates::{exists, template_ref, validate_key, TEMPLATE_REPO};
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
}

/// Every template whose labels include all of `labels` (exact matches).
///
/// `GET /images/json`, then the repository and the labels are matched here: Podman names
/// commits `docker.io/library/berth-template:<key>` (or `localhost/...`), and its label
/// filters do not combine as Docker's do.
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn list(engine: &Engine, labels: &[(String, String)]) -> Result<Vec<Template>> {
    let images = engine
        .docker
        .list_images(None::<ListImagesOptions>)
        .await
        .map_err(|e| engine.error("list templates", e))?;
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
                out.push(Template {
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

/// Removes `berth-template:<key>` unless a container uses it (never forced).
///
/// `DELETE /images/berth-template:<key>`; 409 means in use, 404 absent.
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn remove(engine: &Engine, key: &str) -> Result<Removal> {
    validate_key(key)?;
    match engine
        .docker
        .remove_image(&template_ref(key), None::<RemoveImageOptions>, None)
        .await
    {
        Ok(_) => Ok(Removal::Removed),
        Err(e) if status(&e) == Some(409) => Ok(Removal::InUse),
        Err(e) if status(&e) == Some(404) => Ok(Removal::Absent),
        Err(e) => Err(engine.error("remove template", e)),
    }
}

/// Whether the template `berth-template:<key>` exists, on the engine `engine_opts` selects.
///
/// Connects (`GET /version`, see [`connect`]), then `GET /images/berth-template:<key>/json` (see
/// [`crate::engine::templates::exists`]).
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_ENGINE`.
pub async fn template_exists(engine_opts: &EngineOptions, key: &str) -> Result<bool> {
    validate_key(key)?;
    let engine = connect(engine_opts).await?;
    exists(&engine, key).await
}

/// Every template whose labels include all of `labels`, on the engine `engine_opts` selects.
///
/// Connects (`GET /version`, see [`connect`]), then `GET /images/json` (see [`list`]).
/// Errors: `E_INVALID_ARGUMENT` (engine options), `E_ENGINE_UNAVAILABLE`, `E_ENGINE`.
pub async fn list_templates(
    engine_opts: &EngineOptions,
    labels: &[(String, String)],
) -> Result<Vec<Template>> {
    let engine = connect(engine_opts).await?;
    list(&engine, labels).await
}

/// Removes `berth-template:<key>` unless a container uses it (never forced), on the engine
/// `engine_opts` selects.
///
/// Connects (`GET /version`, see [`connect`]), then `DELETE /images/berth-template:<key>` (see [`remove`]).
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_ENGINE`.
pub async fn remove_template(engine_opts: &EngineOptions, key: &str) -> Result<Removal> {
    // Bad input is refused before any engine call (the connect included).
    validate_key(key)?;
    let engine = connect(engine_opts).await?;
    remove(&engine, key).await
}

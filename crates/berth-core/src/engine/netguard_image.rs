//! Netguard image: the helper's image `berth-netguard:<hash>`, imported offline once per
//! engine and build, known to this process once seen, and the images of other builds that
//! the reaper removes (`docs/design.md#network-isolation`).
//!
//! Engine calls: `GET /images/{name}/json`, `POST /images/create?fromSrc=-` (the import),
//! `GET /images/json`, `GET /containers/json?all=1`, `DELETE /images/{id}`.

use std::collections::HashSet;
use std::sync::Mutex;

use bollard::query_parameters::{
    ListContainersOptionsBuilder, ListImagesOptions, RemoveImageOptions,
};

use crate::engine::bounded::{CHANGE_TIMEOUT_MS, READ_TIMEOUT_MS};
use crate::engine::connection::{status, Engine};
use crate::model::agent_binary::{append_to, short_hash, AGENT, AGENT_ARCH};
use crate::model::errors::{Error, Result};

/// The helper image's repository.
pub(crate) const IMAGE_REPO: &str = "berth-netguard";

/// Endpoints on which this process has seen this build's image (an inspect or an import
/// answered): later runs skip the inspect. A run whose create then meets a 404 forgets it
/// ([`forget`]) and imports again (another berth's reaper may have removed it meanwhile).
static KNOWN: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// The helper image reference for this build.
pub(crate) fn image() -> String {
    format!("{IMAGE_REPO}:{}", short_hash())
}

fn known(endpoint: &str) -> bool {
    let k = KNOWN.lock().expect("netguard image cache poisoned");
    k.as_ref().is_some_and(|s| s.contains(endpoint))
}

fn remember(endpoint: &str) {
    let mut k = KNOWN.lock().expect("netguard image cache poisoned");
    k.get_or_insert_with(HashSet::new)
        .insert(endpoint.to_string());
}

/// Forgets that `engine` has this build's image: the next [`ensure`] inspects it again.
pub(crate) fn forget(engine: &Engine) {
    let mut k = KNOWN.lock().expect("netguard image cache poisoned");
    if let Some(s) = k.as_mut() {
        s.remove(&engine.endpoint);
    }
}

/// Whether `engine` has this build's image now (`GET /images/{name}/json`).
async fn present(engine: &Engine) -> Result<bool> {
    match crate::engine::images::inspect(engine, &image()).await? {
        Ok(_) => Ok(true),
        Err(e) if status(&e) == Some(404) => Ok(false),
        Err(e) => Err(engine.error("inspect helper image", e)),
    }
}

/// Imports the helper image unless this process knows the engine has it, or the engine says
/// it has. Errors: `E_ENGINE` (no helper binary in this build; the import failed),
/// `E_ENGINE_UNAVAILABLE`, the scope's `E_ABORTED`.
pub(crate) async fn ensure(engine: &Engine) -> Result<()> {
    if AGENT.is_empty() {
        return Err(Error::Engine {
            operation: "isolate container".into(),
            status: None,
            message: "this build of berth has no helper binary (it is built on Linux only), so it cannot keep a sandbox off the local network; create the session with localNetwork: true to opt out".into(),
        });
    }
    if known(&engine.endpoint) {
        return Ok(());
    }
    if present(engine).await? {
        remember(&engine.endpoint);
        return Ok(());
    }
    // One import at a time in this process: concurrent creates would each import a copy.
    static IMPORT: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let _one = engine.step(async { Ok(IMPORT.lock().await) }).await?;
    if present(engine).await? {
        remember(&engine.endpoint);
        return Ok(());
    }
    let failure = import(engine).await?;
    if present(engine).await? {
        remember(&engine.endpoint);
        return Ok(());
    }
    Err(Error::Engine {
        operation: "import helper image".into(),
        status: None,
        message: failure.unwrap_or_else(|| format!("{} is not there after its import", image())),
    })
}

/// `POST /images/create?fromSrc=-` of the helper binary alone; the engine's error message
/// if its stream reported one.
async fn import(engine: &Engine) -> Result<Option<String>> {
    let tar = archive().map_err(|e| Error::Engine {
        operation: "import helper image".into(),
        status: None,
        message: e.to_string(),
    })?;
    crate::engine::images::import(
        engine,
        &image(),
        Some(&format!("linux/{AGENT_ARCH}")),
        tar,
        "import helper image",
    )
    .await
}

/// The image's root filesystem: the helper binary alone, `/netguard`, root-owned `0755`.
fn archive() -> std::io::Result<Vec<u8>> {
    let mut b = tar::Builder::new(Vec::new());
    append_to(&mut b, "netguard")?;
    b.into_inner()
}

/// The hash of a helper image tag (`berth-netguard:<16 hex>`, with Podman's `localhost/` or
/// `docker.io/library/` in front), or `None` for any other tag.
pub(crate) fn helper_hash(tag: &str) -> Option<&str> {
    let familiar = ["docker.io/library/", "localhost/"]
        .iter()
        .find_map(|p| tag.strip_prefix(p))
        .unwrap_or(tag);
    let hash = familiar.strip_prefix(IMAGE_REPO)?.strip_prefix(':')?;
    (hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit())).then_some(hash)
}

/// A helper image of another build that no container uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StaleImage {
    /// The image id.
    pub id: String,
    /// Its tags (all `berth-netguard:<hash>` of other builds).
    pub tags: Vec<String>,
}

/// Helper images of other builds than this one that no container (of any state) uses: every
/// tag is `berth-netguard:<16 hex>` and none is this build's. An image with any other tag is
/// never one of them. With `only_hash`, only images of that hash.
///
/// `GET /images/json`, `GET /containers/json?all=1`. Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn stale(engine: &Engine, only_hash: Option<&str>) -> Result<Vec<StaleImage>> {
    let images = engine
        .call(
            "GET /images/json",
            READ_TIMEOUT_MS,
            engine.docker.list_images(None::<ListImagesOptions>),
        )
        .await?
        .map_err(|e| engine.error("list images", e))?;
    let mine = short_hash();
    let candidates: Vec<StaleImage> = images
        .into_iter()
        .filter(|i| !i.repo_tags.is_empty())
        .filter(|i| {
            i.repo_tags.iter().all(|t| {
                helper_hash(t).is_some_and(|h| h != mine && only_hash.is_none_or(|o| o == h))
            })
        })
        .map(|i| StaleImage {
            id: i.id,
            tags: i.repo_tags,
        })
        .collect();
    if candidates.is_empty() {
        return Ok(candidates);
    }
    let opts = ListContainersOptionsBuilder::default().all(true).build();
    // Podman's compat list can carry state words bollard refuses: decode it leniently; only
    // the image fields are read.
    let used: Vec<(String, String)> = match engine
        .call(
            "GET /containers/json",
            READ_TIMEOUT_MS,
            engine.docker.list_containers(Some(opts)),
        )
        .await?
    {
        Ok(list) => list
            .into_iter()
            .map(|c| (c.image.unwrap_or_default(), c.image_id.unwrap_or_default()))
            .collect(),
        Err(bollard::errors::Error::JsonDataError { contents, .. }) => {
            crate::engine::container::decode_list_tolerant(&contents)
                .ok_or_else(|| Error::Engine {
                    operation: "list containers".into(),
                    status: Some(200),
                    message: "the engine's container list could not be decoded".into(),
                })?
                .into_iter()
                .map(|l| {
                    let c = l.summary;
                    (c.image.unwrap_or_default(), c.image_id.unwrap_or_default())
                })
                .collect()
        }
        Err(e) => return Err(engine.error("list containers", e)),
    };
    let bare = |s: &str| s.strip_prefix("sha256:").unwrap_or(s).to_string();
    Ok(candidates
        .into_iter()
        .filter(|img| {
            !used.iter().any(|(image, image_id)| {
                (!image_id.is_empty() && bare(image_id) == bare(&img.id))
                    || img.tags.iter().any(|t| t == image)
                    || helper_hash(image)
                        .is_some_and(|h| img.tags.iter().any(|t| helper_hash(t) == Some(h)))
            })
        })
        .collect())
}

/// `DELETE /images/{id}` (never forced): `true` when removed or already gone, `false` when the
/// engine refused because something uses it now (409).
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn remove(engine: &Engine, id: &str) -> Result<bool> {
    match engine
        .call(
            "DELETE /images/{name}",
            CHANGE_TIMEOUT_MS,
            engine
                .docker
                .remove_image(id, None::<RemoveImageOptions>, None),
        )
        .await?
    {
        Ok(_) => Ok(true),
        Err(e) if status(&e) == Some(404) => Ok(true),
        Err(e) if status(&e) == Some(409) => Ok(false),
        Err(e) => Err(engine.error("remove helper image", e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exact_helper_tags_have_a_hash() {
        assert_eq!(
            helper_hash("berth-netguard:0123456789abcdef"),
            Some("0123456789abcdef")
        );
        assert_eq!(
            helper_hash("localhost/berth-netguard:0123456789abcdef"),
            Some("0123456789abcdef")
        );
        assert_eq!(helper_hash("berth-netguard:latest"), None);
        assert_eq!(helper_hash("berth-netguardx:0123456789abcdef"), None);
        assert_eq!(helper_hash("evil/berth-netguard:0123456789abcdef"), None);
        assert_eq!(helper_hash("berth-netguard:0123456789abcdef0"), None);
        assert!(helper_hash(&image()).is_some());
    }
}

//! Templates (engine calls): commit a session's container to a local template image, find one.
//!
//! Templates live in the local repository [`TEMPLATE_REPO`] (`berth-template:<key>`), never
//! pushed anywhere. A commit copies the container's configuration into the image: its labels
//! (the engine merges them and cannot drop any) and its env (also kept whole in the image's
//! `ContainerConfig` metadata), so commit only containers whose env holds no secret.
//! Containers created from a template get every berth label anew at create (see
//! [`crate::model::labels::encode`]), so they carry their own session id, owner and digests, never
//! the template's.
//!
//! Engine calls: `POST /commit`, `GET /images/{ref}/json`. Listing and removing templates are
//! entry points: `lifecycle::templates`.

use bollard::models::ContainerConfig;
use bollard::query_parameters::CommitContainerOptions;

use crate::engine::bounded::COMMIT_TIMEOUT_MS;
use crate::engine::connection::{status, Engine};
use crate::model::errors::{Error, Result};

/// The local image repository of templates.
pub(crate) const TEMPLATE_REPO: &str = "berth-template";
const MAX_KEY_LEN: usize = 128;

/// A template key: 1 to 128 of `[a-z0-9_.-]`, starting with a letter or digit (an image tag).
/// `E_INVALID_ARGUMENT` otherwise.
pub(crate) fn validate_key(key: &str) -> Result<()> {
    let ok = !key.is_empty()
        && key.len() <= MAX_KEY_LEN
        && key.as_bytes()[0].is_ascii_alphanumeric()
        && key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            "key",
            "must be 1 to 128 of [a-z0-9_.-], starting with a letter or digit",
        ))
    }
}

/// `berth-template:<key>`.
pub(crate) fn template_ref(key: &str) -> String {
    format!("{TEMPLATE_REPO}:{key}")
}

/// Commits container `id` to `berth-template:<key>` (pausing it meanwhile). Returns the image id.
///
/// `POST /commit?container=<id>&repo=berth-template&tag=<key>&pause=true`.
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE` (404: the container is gone), `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn commit(engine: &Engine, id: &str, key: &str) -> Result<String> {
    validate_key(key)?;
    let options = CommitContainerOptions {
        container: Some(id.to_string()),
        repo: Some(TEMPLATE_REPO.into()),
        tag: Some(key.to_string()),
        comment: Some("berth template".into()),
        pause: true,
        ..Default::default()
    };
    let out = engine
        .call(
            "POST /commit",
            COMMIT_TIMEOUT_MS,
            engine
                .docker
                .commit_container(options, ContainerConfig::default()),
        )
        .await?
        .map_err(|e| engine.error("commit template", e))?;
    Ok(out.id)
}

/// Whether `berth-template:<key>` exists. `GET /images/{ref}/json`.
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn exists(engine: &Engine, key: &str) -> Result<bool> {
    validate_key(key)?;
    match crate::engine::images::inspect(engine, &template_ref(key)).await? {
        Ok(_) => Ok(true),
        Err(e) if status(&e) == Some(404) => Ok(false),
        Err(e) => Err(engine.error("inspect template", e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_image_tags() {
        assert!(validate_key("0a1b-c.d_e").is_ok());
        for bad in ["", "-a", "A", "a/b", "a:b", &"a".repeat(129)] {
            assert!(validate_key(bad).is_err(), "{bad:?}");
        }
        assert_eq!(template_ref("k1"), "berth-template:k1");
    }
}

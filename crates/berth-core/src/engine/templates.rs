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
//! A template records when it was last used in a **use record**: an empty volume
//! `berth-template-used-<key>-<ms>` labelled [`USED_KEY`]` = <key>` and [`USED_AT`]` = <ms since
//! the epoch>` (an image's labels cannot change, and a volume is an engine object every client
//! sees, written without any image rewrite). A commit writes one, so does every create from the
//! template ([`record_use`]), at most one a minute per template; older records of the key are
//! then deleted, so a template has one record (a few while creates race). The newest record is
//! its last use. These volumes carry no `dev.berth.record` label: they belong to no container,
//! and the reaper never takes them for a removed container's records.
//!
//! Engine calls: `POST /commit`, `GET /images/{ref}/json`, `GET /volumes?filters=...`,
//! `POST /volumes/create`, `DELETE /volumes/{name}`. Listing and removing templates are
//! entry points: `lifecycle::templates`.

use std::collections::HashMap;

use bollard::models::{ContainerConfig, VolumeCreateRequest};
use bollard::query_parameters::CommitContainerOptions;

use crate::engine::bounded::{CHANGE_TIMEOUT_MS, COMMIT_TIMEOUT_MS};
use crate::engine::connection::{status, Engine};
use crate::model::errors::{Error, Result};

/// Label of a template use record: the template key.
pub(crate) const USED_KEY: &str = "dev.berth.template.key";
/// Label of a template use record: when it was used, ms since the epoch (decimal).
pub(crate) const USED_AT: &str = "dev.berth.template.used-at";
/// A use newer than this is not written again (ms): creates from a template stay one
/// `GET /volumes` dearer, not three.
pub(crate) const USE_RECORD_EVERY_MS: u64 = 60_000;

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
    record_use(engine, key, now_ms(), 0).await?;
    Ok(out.id)
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// One use record: `(volume name, key, used at in ms)`.
pub(crate) type UseRecord = (String, String, u64);

/// Every template use record (of `key` only, when given).
/// `GET /volumes?filters={"label":["dev.berth.template.key[=<key>]"]}` (the labels are checked
/// here too: Podman ORs volume label filters). A record whose time does not parse is left out.
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn uses(engine: &Engine, key: Option<&str>) -> Result<Vec<UseRecord>> {
    let label = match key {
        Some(k) => format!("{USED_KEY}={k}"),
        None => USED_KEY.to_string(),
    };
    let listed =
        crate::engine::volumes::list_labelled(engine, vec![label], "list template use records")
            .await?;
    Ok(listed
        .into_iter()
        .filter_map(|(name, labels)| {
            let k = labels.get(USED_KEY)?;
            let at = labels.get(USED_AT)?.parse::<u64>().ok()?;
            Some((name, k.clone(), at))
        })
        .collect())
}

/// The newest use of each key, in ms since the epoch.
pub(crate) fn last_uses(records: &[UseRecord]) -> HashMap<String, u64> {
    let mut out: HashMap<String, u64> = HashMap::new();
    for (_, k, at) in records {
        let e = out.entry(k.clone()).or_insert(*at);
        *e = (*e).max(*at);
    }
    out
}

/// `berth-template-used-<key>-<at>`.
fn use_volume(key: &str, at: u64) -> String {
    format!("berth-template-used-{key}-{at}")
}

/// Records that template `key` was used at `at` (ms since the epoch), unless a record newer
/// than `at - fresh_ms` exists; then deletes the records older than the one written.
///
/// `GET /volumes?filters=...`, then (at most once per `fresh_ms`) `POST /volumes/create` and
/// `DELETE /volumes/{name}` for each older record (absent counts as done; a taken name is the
/// same record).
/// Errors: `E_INVALID_ARGUMENT` (a bad key), `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn record_use(engine: &Engine, key: &str, at: u64, fresh_ms: u64) -> Result<()> {
    validate_key(key)?;
    let existing = uses(engine, Some(key)).await?;
    if fresh_ms > 0
        && existing
            .iter()
            .any(|(_, _, t)| t.saturating_add(fresh_ms) > at)
    {
        return Ok(());
    }
    let name = use_volume(key, at);
    let req = VolumeCreateRequest {
        name: Some(name.clone()),
        labels: Some(HashMap::from([
            (USED_KEY.to_string(), key.to_string()),
            (USED_AT.to_string(), at.to_string()),
        ])),
        ..Default::default()
    };
    match engine
        .call(
            "POST /volumes/create",
            CHANGE_TIMEOUT_MS,
            engine.docker.create_volume(req),
        )
        .await?
    {
        Ok(_) => {}
        // The same name is the same record (two uses in one millisecond).
        Err(e) if matches!(status(&e), Some(409) | Some(500)) => {}
        Err(e) => return Err(engine.error("record template use", e)),
    }
    for (old, _, t) in existing {
        if t < at && old != name {
            delete_use(engine, &old).await?;
        }
    }
    Ok(())
}

/// Deletes use record `name`; absent counts as done. `DELETE /volumes/{name}`.
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn delete_use(engine: &Engine, name: &str) -> Result<()> {
    crate::engine::volumes::delete(engine, name, "remove template use record").await
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

    #[test]
    fn the_newest_use_wins() {
        let r = vec![
            ("a1".to_string(), "a".to_string(), 5),
            ("a2".to_string(), "a".to_string(), 9),
            ("b1".to_string(), "b".to_string(), 3),
        ];
        let last = last_uses(&r);
        assert_eq!(last.get("a"), Some(&9));
        assert_eq!(last.get("b"), Some(&3));
        assert_eq!(use_volume("k", 12), "berth-template-used-k-12");
    }
}

//! The command helper's installation (the binary: `model::agent_binary`) into a container: once per session handle, as root-owned `0755` at
//! [`path`] under `/run/berth` (a directory root owns, `0755`), so the session's user can run
//! it but not replace it.
//!
//! Engine calls: `GET /containers/{id}/json` and `GET /images/{image}/json` (the image's
//! architecture must be the helper's), `PUT /containers/{id}/archive?path=/` (the copy).

use std::sync::OnceLock;
use std::time::Duration;

use crate::engine::connection::Engine;
use crate::model::agent_binary::{append_to, root_header, short_hash, AGENT, AGENT_ARCH};
use crate::model::errors::Result;

/// How long the copy may take, in milliseconds.
const COPY_TIMEOUT_MS: u64 = 30_000;

/// Where the helper is installed in a container: `/run/berth/agent-<first 16 hex of its
/// SHA-256>`, so another berth version's helper never replaces a running one.
pub(crate) fn path() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| format!("/run/berth/agent-{}", short_hash()))
}

/// Whether this build carries a helper at all.
pub(crate) fn available() -> bool {
    !AGENT.is_empty()
}

/// Makes the helper runnable in container `id`: `Ok(false)` when it cannot be (no helper in
/// this build, an image of another architecture, a copy the engine refused). A copy that fails
/// while a helper is already there (a running one cannot be overwritten) still counts: the
/// helper's hello decides. Every request is bounded by the calling command's scope; `Err` (the
/// caller's abort or deadline, or no answer) decides nothing, so the next command tries again.
pub(crate) async fn install(engine: &Engine, id: &str) -> Result<bool> {
    if !available() || !same_arch(engine, id).await? {
        return Ok(false);
    }
    let Ok(tar) = archive() else { return Ok(false) };
    let copied =
        crate::engine::archive::put_bytes(engine, id, tar, Duration::from_millis(COPY_TIMEOUT_MS))
            .await?;
    Ok(copied.is_ok() || already_there(engine, id).await?)
}

/// Whether the container's image is of the helper's architecture (an unknown one is tried:
/// the helper's hello then decides).
async fn same_arch(engine: &Engine, id: &str) -> Result<bool> {
    let inspected = crate::engine::container::inspect(engine, id).await;
    let Some(image) = inspected.ok().flatten().and_then(|c| c.body.image) else {
        return Ok(true);
    };
    Ok(
        match crate::engine::images::inspect(engine, &image).await? {
            Ok(i) => arch_matches(i.architecture.as_deref(), AGENT_ARCH),
            Err(_) => true,
        },
    )
}

/// Whether an image of architecture `image` (the engine's word: `amd64`, `arm64`; unknown when
/// `None` or empty) can run a helper built for `agent`. An unknown one is tried.
fn arch_matches(image: Option<&str>, agent: &str) -> bool {
    image.is_none_or(|a| a.is_empty() || a == agent)
}

/// Whether a file is at [`path`] already (`HEAD /containers/{id}/archive`).
async fn already_there(engine: &Engine, id: &str) -> Result<bool> {
    let info = crate::engine::archive::head(engine, id, path()).await?;
    Ok(info.is_ok())
}

/// The tar: `run/berth/` (root, `0755`) and the helper (root, `0755`).
fn archive() -> std::io::Result<Vec<u8>> {
    let mut b = tar::Builder::new(Vec::new());
    let mut dir = root_header(tar::EntryType::Directory, 0);
    b.append_data(&mut dir, "run/berth/", std::io::empty())?;
    append_to(&mut b, path().trim_start_matches('/'))?;
    b.into_inner()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_architecture_is_not_tried_an_unknown_one_is() {
        assert!(arch_matches(Some("amd64"), "amd64"));
        assert!(!arch_matches(Some("arm64"), "amd64"));
        assert!(!arch_matches(Some("amd64"), ""));
        assert!(arch_matches(Some(""), "amd64"));
        assert!(arch_matches(None, "arm64"));
    }

    #[test]
    fn the_archive_holds_the_helper_root_owned_and_executable() {
        let tar = archive().unwrap();
        let mut a = tar::Archive::new(tar.as_slice());
        let entries: Vec<(String, u32, u64)> = a
            .entries()
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let h = e.header();
                (
                    e.path().unwrap().to_string_lossy().into_owned(),
                    h.mode().unwrap(),
                    h.uid().unwrap(),
                )
            })
            .collect();
        assert_eq!(entries[0], ("run/berth/".to_string(), 0o755, 0));
        assert_eq!(entries[1], (path()[1..].to_string(), 0o755, 0));
        assert!(path().starts_with("/run/berth/agent-"));
    }
}

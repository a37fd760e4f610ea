//! Reap helpers: the network guard's helper containers that a killed process left behind, and
//! helper images of other berth builds (`docs/design.md#network-isolation`).
//!
//! A helper run lasts a fraction of a second, and a live process removes its helper whatever
//! happens to the run (`engine::netguard_helper`); only a process killed during the run leaves
//! one (exited, unnamed, with its sandbox's caller labels and `dev.berth.helper=netguard`). The
//! reaper removes, by id, a helper whose sandbox (`dev.berth.helper.for`) is gone, or that is
//! not running and was created more than [`HELPER_LEFTOVER_MS`] ago (longer than any run of a
//! live process: each of its requests is bounded, see `engine::bounded`). An unnarrowed reap
//! also removes `berth-netguard:<hash>` images of other builds that no container uses (by id,
//! never forced); a narrowed one leaves images alone (they carry no caller label).

use std::collections::HashMap;

use crate::engine::calls::remove_container;
use crate::engine::connection::Engine;
use crate::engine::container::{inspect, list_by_labels};
use crate::engine::netguard_helper::{HELPER_FOR_LABEL, HELPER_LABEL, HELPER_PREFIX_LABEL};
use crate::engine::netguard_image;
use crate::lifecycle::list::Scope;
use crate::model::errors::Result;

/// How long after its create a helper container that is not running counts as left behind,
/// in milliseconds (5 minutes: a live process's run, every request bounded, ends well before).
pub(crate) const HELPER_LEFTOVER_MS: u64 = 300_000;

/// What the helper sweep removed (or, with `dry_run`, would remove).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HelperSweep {
    /// Helper container ids.
    pub containers: Vec<String>,
    /// Helper images of other builds, by their tags (`berth-netguard:<hash>`).
    pub images: Vec<String>,
}

/// Removes left-behind helper containers in `scope` and, when the scope is not narrowed,
/// other builds' unused helper images.
///
/// `GET /containers/json?all=1&filters=...` (helpers with the scope's labels), per helper
/// `GET /containers/{id}/json` of its sandbox, `DELETE /containers/{id}`; unnarrowed,
/// `GET /images/json`, `GET /containers/json?all=1`, `DELETE /images/{id}`. A removal that
/// fails is left to the next run. Errors: `E_INVALID_ARGUMENT` (a bad prefix),
/// `E_ENGINE`, `E_ENGINE_UNAVAILABLE` (listing failed), the scope's `E_ABORTED`.
pub(crate) async fn sweep(engine: &Engine, scope: &Scope, dry_run: bool) -> Result<HelperSweep> {
    let mut out = HelperSweep {
        containers: sweep_containers(engine, scope, dry_run).await?,
        images: Vec::new(),
    };
    if !scope.is_narrowed() {
        out.images = sweep_images(engine, None, dry_run).await?;
    }
    Ok(out)
}

/// The label filters of the helpers in `scope`.
fn filters(scope: &Scope) -> Result<Vec<String>> {
    let mut f = vec![format!("{HELPER_LABEL}=netguard")];
    if let Some(p) = &scope.prefix {
        f.push(format!(
            "{HELPER_PREFIX_LABEL}={}",
            crate::model::spec::validate_prefix(p)?
        ));
    }
    f.extend(scope.labels.iter().map(|(k, v)| format!("{k}={v}")));
    Ok(f)
}

/// Whether a helper in state `state` created at `created_s` (seconds since the epoch) is
/// left behind at `now_ms` (milliseconds since the epoch), its sandbox being there.
pub(crate) fn stale(state: &str, created_s: i64, now_ms: u64) -> bool {
    let created_ms = u64::try_from(created_s).unwrap_or(0).saturating_mul(1000);
    state != "running" && created_ms.saturating_add(HELPER_LEFTOVER_MS) <= now_ms
}

async fn sweep_containers(engine: &Engine, scope: &Scope, dry_run: bool) -> Result<Vec<String>> {
    let now_ms = crate::session::deadline_timer::now_ms();
    let mut out = Vec::new();
    let mut sandboxes: HashMap<String, bool> = HashMap::new();
    for l in list_by_labels(engine, &filters(scope)?).await? {
        let c = l.summary;
        let Some(id) = c.id else { continue };
        let labels = c.labels.unwrap_or_default();
        let sandbox = labels.get(HELPER_FOR_LABEL).cloned().unwrap_or_default();
        let present = match sandboxes.get(&sandbox) {
            Some(p) => *p,
            None => {
                let p = !sandbox.is_empty() && inspect(engine, &sandbox).await?.is_some();
                sandboxes.insert(sandbox, p);
                p
            }
        };
        let state = c.state.map(|s| s.to_string()).unwrap_or_default();
        if present && !stale(&state, c.created.unwrap_or(0), now_ms) {
            continue;
        }
        if dry_run || remove_container(engine, &id).await.is_ok() {
            out.push(id);
        }
    }
    out.sort();
    Ok(out)
}

/// Removes (unless `dry_run`) the helper images of other builds that no container uses (with
/// `only_hash`, of that hash only); their tags.
pub(crate) async fn sweep_images(
    engine: &Engine,
    only_hash: Option<&str>,
    dry_run: bool,
) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for img in netguard_image::stale(engine, only_hash).await? {
        if dry_run || netguard_image::remove(engine, &img.id).await? {
            out.extend(img.tags);
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_stopped_helper_past_the_bound_is_stale() {
        let now_ms = 1_000_000_000;
        let old = (now_ms - HELPER_LEFTOVER_MS) as i64 / 1000;
        let young = old + 10;
        assert!(stale("exited", old, now_ms));
        assert!(stale("created", old, now_ms));
        assert!(!stale("running", old, now_ms));
        assert!(!stale("exited", young, now_ms));
    }

    #[test]
    fn helpers_are_found_by_their_label_and_the_scope() {
        let scope = Scope {
            prefix: Some("berth".encode_utf16().collect()),
            labels: [("team".to_string(), "a".to_string())].into(),
        };
        assert_eq!(
            filters(&scope).unwrap(),
            [
                "dev.berth.helper=netguard",
                "dev.berth.helper.prefix=berth",
                "team=a"
            ]
        );
    }
}

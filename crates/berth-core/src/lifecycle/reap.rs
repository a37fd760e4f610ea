//! Reap: removes, by id, managed containers whose owner died and that nobody live holds.
//!
//! An orphan (`docs/design.md#ownership-and-removal`) is a managed container whose duty holder (the creator, or the
//! last inheritor) is dead, never `unknown`, and that no live or unknown holder holds;
//! or one a dead owner left incomplete. Each candidate is inspected and its records read
//! again right before its removal, and removed only when it is still an orphan.

use std::collections::{HashMap, HashSet};

use crate::engine::calls::Removal;
use tokio_util::sync::CancellationToken;

use crate::engine::connection::{Engine, EngineOptions};
use crate::engine::container::inspect;
use crate::lifecycle::expiry::remove_if_expired;
use crate::lifecycle::list::{survey, Scope};
use crate::lifecycle::opening;
use crate::model::errors::Result;
use crate::model::identity::liveness;
use crate::model::lifetime::EXPIRED;
use crate::ownership::holders::{verdict, Verdict};
use crate::ownership::records;
use crate::ownership::removal::remove_by_id;
use crate::ownership::replacement;

/// One container the reaper removed or kept, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReapEntry {
    /// Full container id.
    pub id: String,
    /// Container name.
    pub name: String,
    /// Session id from its labels.
    pub session_id: Option<String>,
    /// Removed: `owner-dead`, `incomplete`, `expired` (past its deadline, or stopped longer
    /// than its `removeAfterStopMs`, whatever its owner's liveness). Kept: `owner-alive`,
    /// `owner-unknown`, `held`, `parked` (owner gone, lifetime still running),
    /// `remove-failed` (the engine refused; the next run tries again).
    pub reason: String,
}

/// What a reaper run did (with `dry_run`, what it would do).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReapReport {
    /// Containers removed (or, with `dry_run`, to be removed).
    pub removed: Vec<ReapEntry>,
    /// Containers kept.
    pub kept: Vec<ReapEntry>,
    /// Record volumes whose container is gone, deleted (or, with `dry_run`, to be deleted).
    /// A narrowed run looks only at records carrying its caller labels (and prefix).
    pub removed_records: Vec<String>,
    /// Recreations cut short by a dead process, finished or rolled back (not with `dry_run`).
    pub replacements: Vec<SettledReplacement>,
    /// Network-guard helper containers a killed process left (their sandbox gone, or not
    /// running and created over 5 minutes ago), removed by id (or, with `dry_run`, to be
    /// removed); in a narrowed run those carrying its caller labels (and prefix).
    pub removed_helpers: Vec<String>,
    /// Helper images of other berth builds (`berth-netguard:<hash>`) that no container used,
    /// removed (or, with `dry_run`, to be removed): by an unnarrowed run only.
    pub removed_images: Vec<String>,
}

/// One recreation the reaper recovered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettledReplacement {
    /// The session's container name.
    pub name: String,
    /// The id of the container that was being replaced.
    pub previous_id: String,
    /// `completed`, `rolled-back` or `name-taken` (see [`crate::ownership::replacement::Settled`]).
    pub outcome: &'static str,
}

/// Reaps orphans in `scope`, and expired sessions of any owner (see [`crate::model::lifetime`]).
///
/// First, recreations cut short by a dead process (see [`crate::ownership::replacement`]) whose records
/// carry the scope's labels are finished or rolled back, so that exactly one container stays
/// under each such name.
///
/// Engine calls: `GET /containers/json?all=true&filters=...`, `GET /containers/{id}/json`,
/// `GET /volumes?filters=...`, then per orphan, after inspecting it and reading its
/// records again, `DELETE /containers/{id}?force=true&v=true` and `DELETE /volumes/{name}`
/// for its records; `DELETE /volumes/{name}` for records whose
/// container is gone (in a narrowed run, those carrying the scope's labels). With `dry_run`
/// nothing is removed. A ready session whose owner is gone but whose lifetime runs is kept
/// (`parked`) until it expires. Last, the network guard's helper containers that a killed
/// process left and, in an unnarrowed run, other builds' unused helper images
/// (`crate::lifecycle::reap_helpers`): `GET /containers/json`, `GET /images/json`,
/// `DELETE /containers/{id}`, `DELETE /images/{id}`.
/// Every request is bounded by `cancel` and a per-request timeout; an abort settles the
/// call at once, and a removal it cut short is finished by the next run.
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_ABORTED`, `E_ENGINE` (listing
/// failed); a removal that fails is reported as kept with reason `remove-failed`.
pub async fn reap_orphans(
    dry_run: bool,
    scope: &Scope,
    engine_opts: &EngineOptions,
    cancel: &CancellationToken,
) -> Result<ReapReport> {
    scope.filters()?;
    let engine = opening::connect(engine_opts, cancel, "reapOrphans").await?;
    crate::ownership::cleanup::retry_pending(&engine).await;
    engine.step(reap_within(dry_run, scope, &engine)).await
}

async fn reap_within(dry_run: bool, scope: &Scope, engine: &Engine) -> Result<ReapReport> {
    let engine = engine.clone();
    let mut report = ReapReport::default();
    if !dry_run {
        report.replacements = settle_replacements(&engine, scope).await?;
    }
    let surveyed = survey(&engine, scope).await?;
    // Containers whose records stay: those seen standing. One the engine is removing (or
    // has marked dead) is inspected again by the record sweep, which runs after the removals.
    let mut seen: HashSet<String> = surveyed
        .iter()
        .filter(|(f, _)| !matches!(f.state, "removing" | "dead"))
        .map(|(f, _)| f.id.clone())
        .collect();
    let now = std::time::SystemTime::now();
    for (f, recs) in surveyed {
        let mut entry = ReapEntry {
            id: f.id.clone(),
            name: f.name.clone(),
            session_id: f.managed.as_ref().map(|m| m.session_id.clone()),
            reason: String::new(),
        };
        if f.expired_at(now, recs.deadline_ms()) {
            entry.reason = EXPIRED.into();
            match dry_run {
                true => report.removed.push(entry),
                false => match remove_if_expired(&engine, &f.id).await {
                    Ok(true) => report.removed.push(entry),
                    Ok(false) => {}
                    Err(_) => {
                        entry.reason = "remove-failed".into();
                        report.kept.push(entry);
                    }
                },
            }
            continue;
        }
        let pending = f.expires_at(recs.deadline_ms()).is_some();
        match verdict(recs.ready, f.owner(), &recs.holds, pending, &liveness) {
            Verdict::Keep(why) => {
                entry.reason = why.into();
                report.kept.push(entry);
            }
            Verdict::Reap(why) if dry_run => {
                entry.reason = why.into();
                report.removed.push(entry);
            }
            Verdict::Reap(_) => match recheck_and_remove(&engine, &f.id).await {
                Ok(None) => {}
                Ok(Some(Verdict::Reap(why))) => {
                    entry.reason = why.into();
                    report.removed.push(entry);
                }
                Ok(Some(Verdict::Keep(why))) => {
                    entry.reason = why.into();
                    report.kept.push(entry);
                }
                Err(_) => {
                    entry.reason = "remove-failed".into();
                    report.kept.push(entry);
                }
            },
        }
    }
    // What this run removed is gone (or going): its records are swept once the engine agrees.
    for r in &report.removed {
        seen.remove(&r.id);
    }
    report.removed_records = orphan_records(&engine, scope, &seen, dry_run).await?;
    // Last: the helpers of sandboxes this run removed count as left behind too.
    let helpers = Box::pin(crate::lifecycle::reap_helpers::sweep(
        &engine, scope, dry_run,
    ))
    .await?;
    report.removed_helpers = helpers.containers;
    report.removed_images = helpers.images;
    Ok(report)
}

/// Recovers every stale replacement whose record carries the scope's caller labels (before
/// the survey: a half-made new container must be rolled back, not reaped as an orphan).
async fn settle_replacements(engine: &Engine, scope: &Scope) -> Result<Vec<SettledReplacement>> {
    let mut out = Vec::new();
    for (labels, r) in replacement::list(engine).await? {
        let in_scope = scope.labels.iter().all(|(k, v)| labels.get(k) == Some(v));
        if !in_scope || !replacement::is_stale(&r) {
            continue;
        }
        let outcome = replacement::settle(engine, &r).await?;
        out.push(SettledReplacement {
            name: r.name.clone(),
            previous_id: r.old_id.clone(),
            outcome: outcome.as_str(),
        });
    }
    Ok(out)
}

/// Inspects `id` and reads its records again; removes it only when it is still an orphan.
/// `Ok(None)`: it was gone already.
async fn recheck_and_remove(engine: &Engine, id: &str) -> Result<Option<Verdict>> {
    let Some(c) = inspect(engine, id).await? else {
        return Ok(None);
    };
    let f = crate::engine::container::Facts::from_inspect(&c);
    if crate::ownership::provenance::not_berth_made(engine, &c, &f)
        .await?
        .is_some()
    {
        return Ok(None);
    }
    let recs = records::of_container(engine, id).await?;
    if f.expired_at(std::time::SystemTime::now(), recs.deadline_ms()) {
        // Expired meanwhile: removed as expired by the next run (or this one's caller).
        return Ok(Some(Verdict::Keep(EXPIRED)));
    }
    let pending = f.expires_at(recs.deadline_ms()).is_some();
    let v = verdict(recs.ready, f.owner(), &recs.holds, pending, &liveness);
    if let Verdict::Reap(_) = v {
        if remove_by_id(engine, id).await? == Removal::Absent {
            return Ok(None);
        }
    }
    Ok(Some(v))
}

/// Record volumes in `scope` naming a container the engine no longer has.
async fn orphan_records(
    engine: &Engine,
    scope: &Scope,
    live: &HashSet<String>,
    dry_run: bool,
) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let all = records::list(engine, None).await?;
    let in_scope = records_in_scope(all, scope)?;
    for (id, recs) in records::group(in_scope) {
        // Only a full container id is judged: a prefix or a name could match another container.
        let full_id = id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit());
        if !full_id || live.contains(&id) || inspect(engine, &id).await?.is_some() {
            continue;
        }
        for v in recs.volumes {
            if !dry_run {
                records::delete(engine, &v).await?;
            }
            out.push(v);
        }
    }
    out.sort();
    Ok(out)
}

/// The record volumes of `all` that a reap narrowed to `scope` covers: those carrying every
/// caller label of the scope and, when it names a prefix, that prefix
/// ([`crate::model::labels::record_labels`]). An unnarrowed scope covers all.
/// Errors: `E_INVALID_ARGUMENT` (a bad prefix).
fn records_in_scope(
    all: Vec<(String, HashMap<String, String>)>,
    scope: &Scope,
) -> Result<Vec<(String, HashMap<String, String>)>> {
    let prefix = match &scope.prefix {
        Some(p) => Some(crate::model::spec::validate_prefix(p)?),
        None => None,
    };
    Ok(all
        .into_iter()
        .filter(|(_, l)| {
            scope.labels.iter().all(|(k, v)| l.get(k) == Some(v))
                && prefix
                    .as_ref()
                    .is_none_or(|p| l.get(crate::model::labels::PREFIX) == Some(p))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::labels::PREFIX;

    fn record(name: &str, labels: &[(&str, &str)]) -> (String, HashMap<String, String>) {
        let l = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        (name.to_string(), l)
    }

    #[test]
    fn a_narrowed_run_covers_the_records_with_its_labels_and_prefix() {
        let all = vec![
            record("mine", &[("team", "a"), (PREFIX, "berth")]),
            record("other-team", &[("team", "b"), (PREFIX, "berth")]),
            record("other-prefix", &[("team", "a"), (PREFIX, "please")]),
            record("unlabelled", &[]),
        ];
        let names = |scope: &Scope| -> Vec<String> {
            records_in_scope(all.clone(), scope)
                .unwrap()
                .into_iter()
                .map(|(n, _)| n)
                .collect()
        };
        assert_eq!(names(&Scope::default()).len(), 4);
        let team = Scope {
            labels: [("team".to_string(), "a".to_string())].into(),
            ..Default::default()
        };
        assert_eq!(names(&team), ["mine", "other-prefix"]);
        let both = Scope {
            prefix: Some("berth".encode_utf16().collect()),
            ..team
        };
        assert_eq!(names(&both), ["mine"]);
    }
}

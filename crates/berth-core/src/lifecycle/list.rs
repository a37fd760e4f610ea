//! List: berth-managed containers by exact label filters, each with readiness, owner and holders.

use std::collections::BTreeMap;

use tokio_util::sync::CancellationToken;

use crate::engine::connection::{Engine, EngineOptions};
use crate::engine::container::{inspect, list_by_labels, Facts};
use crate::lifecycle::opening;
use crate::lifecycle::peek::PeekResult;
use crate::model::errors::{Error, Result};
use crate::model::labels::{LABEL_NAMESPACE, MANAGED, PREFIX};
use crate::model::spec::validate_prefix;
use crate::ownership::holders::{duty, Record};
use crate::ownership::provenance::not_berth_made;
use crate::ownership::records::{self, ContainerRecords};

/// Which managed containers an operation covers: every one, or those with this prefix
/// and these caller labels (exact matches; never a name filter).
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Exact `dev.berth.prefix` value, as UTF-16 code units.
    pub prefix: Option<Vec<u16>>,
    /// Caller labels that must all match exactly.
    pub labels: BTreeMap<String, String>,
}

impl Scope {
    /// Whether the scope narrows anything.
    pub fn is_narrowed(&self) -> bool {
        self.prefix.is_some() || !self.labels.is_empty()
    }

    /// The engine's label filters: `dev.berth.managed=true`, then prefix and caller labels.
    /// Errors: `E_INVALID_ARGUMENT` (bad prefix, empty or reserved label key, NUL).
    pub fn filters(&self) -> Result<Vec<String>> {
        let mut f = vec![format!("{MANAGED}=true")];
        if let Some(p) = &self.prefix {
            f.push(format!("{PREFIX}={}", validate_prefix(p)?));
        }
        for (k, v) in &self.labels {
            if k.is_empty() || k.starts_with(LABEL_NAMESPACE) || k.contains('=') {
                return Err(Error::invalid(
                    format!("labels[{k:?}]"),
                    format!("label keys must be non-empty, without `=`, and outside `{LABEL_NAMESPACE}`"),
                ));
            }
            if k.contains('\0') || v.contains('\0') {
                return Err(Error::invalid(
                    format!("labels[{k:?}]"),
                    "must not contain NUL",
                ));
            }
            f.push(format!("{k}={v}"));
        }
        Ok(f)
    }
}

/// One listed session: what `peek` reports, plus every holder and duty record.
#[derive(Debug, Clone)]
pub struct Listing {
    /// The container, as `peek` reports it.
    pub peek: PeekResult,
    /// Holder and duty records (refused ones included, with liveness `unknown`).
    pub holders: Vec<Record>,
    /// The current duty generation (0: the creator holds the duty).
    pub duty_generation: u64,
}

/// Ids of the managed containers in `scope`, any state (Podman's own state words included).
/// `GET /containers/json?all=true&filters={"label":[...]}`.
pub(crate) async fn managed_ids(engine: &Engine, scope: &Scope) -> Result<Vec<String>> {
    let list = list_by_labels(engine, &scope.filters()?).await?;
    Ok(list.into_iter().filter_map(|l| l.summary.id).collect())
}

/// Inspects each managed container of `scope` and reads every record once; containers
/// gone in between, and containers that only inherited berth's labels (see
/// [`crate::ownership::provenance`]), are left out. Returns facts with their records.
pub(crate) async fn survey(
    engine: &Engine,
    scope: &Scope,
) -> Result<Vec<(Facts, ContainerRecords)>> {
    let ids = managed_ids(engine, scope).await?;
    let mut by_id = records::group(records::list(engine, None).await?);
    let mut out = Vec::new();
    for id in ids {
        let Some(c) = inspect(engine, &id).await? else {
            continue;
        };
        let f = Facts::from_inspect(&c);
        if not_berth_made(engine, &c, &f).await?.is_some() {
            continue;
        }
        let recs = by_id.remove(&f.id).unwrap_or_default();
        out.push((f, recs));
    }
    Ok(out)
}

/// Lists the managed sessions in `scope` with their holders.
///
/// Engine calls: `GET /containers/json?all=true&filters=...`, `GET /containers/{id}/json`
/// each, `GET /volumes?filters={"label":["dev.berth.record"]}`. Changes nothing: a session past
/// its deadline (or stopped longer than its `removeAfterStopMs`, see
/// [`crate::model::lifetime`]) is listed as it is, with its `expires_at` in the past; removing
/// it is the reaper's, the owner's timer's and the container's own job, never a listing's.
/// Every request is bounded by `cancel` and a per-request timeout.
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_ABORTED`, `E_ENGINE`.
pub async fn list_sessions(
    scope: &Scope,
    engine_opts: &EngineOptions,
    cancel: &CancellationToken,
) -> Result<Vec<Listing>> {
    scope.filters()?;
    let engine = opening::connect(engine_opts, cancel, "listSessions").await?;
    Ok(survey(&engine, scope)
        .await?
        .into_iter()
        .map(|(f, recs)| {
            let duty_generation = duty(f.owner(), &recs.holds).generation();
            Listing {
                peek: PeekResult::of(&engine, f, &recs),
                holders: recs.holds,
                duty_generation,
            }
        })
        .collect())
}

/// Containers under berth names that berth does not manage (`listSessions({ includeUnmanaged })`):
/// a name of the shape berth derives under the scope's prefix (`berth` when it names none),
/// `<prefix>-<sanitised id>-<8 hex digits>`, carrying the scope's caller labels, and either no
/// `dev.berth.managed` label or berth's labels without being berth-made (see
/// [`crate::ownership::provenance`]). Each as `peek` reports it, with no session id, owner or readiness.
///
/// Engine calls: `GET /containers/json?all=true&filters={"label":[caller labels]}`,
/// `GET /containers/{id}/json` each. Changes nothing.
/// Every request is bounded by `cancel` and a per-request timeout.
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_ABORTED`, `E_ENGINE`.
pub async fn list_unmanaged(
    scope: &Scope,
    engine_opts: &EngineOptions,
    cancel: &CancellationToken,
) -> Result<Vec<PeekResult>> {
    scope.filters()?;
    let engine = opening::connect(engine_opts, cancel, "listSessions").await?;
    let default: Vec<u16> = crate::model::naming::DEFAULT_PREFIX
        .encode_utf16()
        .collect();
    // The prefix as the name scheme writes it: the name of a one-unit id, minus `-x-<hash>`.
    let probe = crate::model::naming::container_name(
        &[u16::from(b'x')],
        Some(scope.prefix.as_deref().unwrap_or(&default)),
    );
    let head = format!("{}-", &probe[..probe.len() - "-x-00000000".len()]);
    let caller: Vec<String> = scope
        .labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let mut out = Vec::new();
    for l in list_by_labels(&engine, &caller).await? {
        let names = l.summary.names.clone().unwrap_or_default();
        let labelled = l
            .summary
            .labels
            .as_ref()
            .is_some_and(|m| m.contains_key(MANAGED));
        if !names
            .iter()
            .any(|n| has_berth_name_shape(n.trim_start_matches('/'), &head))
        {
            continue;
        }
        let Some(id) = l.summary.id else { continue };
        let Some(c) = inspect(&engine, &id).await? else {
            continue;
        };
        let f = Facts::from_inspect(&c);
        if labelled && not_berth_made(&engine, &c, &f).await?.is_none() {
            continue;
        }
        let mut p = PeekResult::from_facts(&engine, f, false);
        (p.managed, p.session_id, p.owner) = (false, None, None);
        out.push(p);
    }
    Ok(out)
}

/// `<head><at least one unit>-<8 lowercase hex digits>`.
fn has_berth_name_shape(name: &str, head: &str) -> bool {
    let Some(rest) = name.strip_prefix(head) else {
        return false;
    };
    let Some((id, hash)) = rest.rsplit_once('-') else {
        return false;
    };
    !id.is_empty()
        && hash.len() == 8
        && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod shape_tests {
    use super::has_berth_name_shape;

    #[test]
    fn berth_name_shape() {
        assert!(has_berth_name_shape("berth-agent-1-0a1b2c3d", "berth-"));
        assert!(!has_berth_name_shape("berth-0a1b2c3d", "berth-"));
        assert!(!has_berth_name_shape("berth-agent-0A1B2C3D", "berth-"));
        assert!(!has_berth_name_shape("other-agent-0a1b2c3d", "berth-"));
        assert!(!has_berth_name_shape("berth-agent-0a1b2c3", "berth-"));
    }
}

//! List: berth-managed containers by exact label filters, each with readiness, owner and holders.

use std::collections::BTreeMap;

use crate::engine::connection::{self, Engine, EngineOptions};
use crate::engine::container::{inspect, list_by_labels, Facts};
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
/// each, `GET /volumes?filters={"label":["dev.berth.record"]}`. Changes nothing, except that
/// an expired session (stopped longer than its `removeAfterStopMs`, see [`crate::model::lifetime`])
/// is removed, whatever its owner's liveness, and not listed (`DELETE /containers/{id}` and
/// its records; a failed removal lists it as it is).
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_ENGINE`.
pub async fn list_sessions(scope: &Scope, engine_opts: &EngineOptions) -> Result<Vec<Listing>> {
    scope.filters()?;
    let engine = connection::connect(engine_opts).await?;
    let now = std::time::SystemTime::now();
    let mut live = Vec::new();
    for (f, recs) in survey(&engine, scope).await? {
        if f.expired(now)
            && matches!(
                crate::lifecycle::expiry::remove_if_expired(&engine, &f.id).await,
                Ok(true)
            )
        {
            continue;
        }
        live.push((f, recs));
    }
    Ok(live
        .into_iter()
        .map(|(f, recs)| {
            let duty_generation = duty(f.owner(), &recs.holds).generation();
            Listing {
                peek: PeekResult::from_facts(&engine, f, recs.ready),
                holders: recs.holds,
                duty_generation,
            }
        })
        .collect())
}

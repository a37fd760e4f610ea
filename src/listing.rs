//! listSessions and reapOrphans: their options, results and the two exports.

use std::collections::HashMap;

use napi::bindgen_prelude::{Either, PromiseRaw, Utf16String};
use napi::Env;
use napi_derive::napi;

use super::cancel::{token_of, CancelToken};
use super::engine_options::engine_options;
use super::errors::js;
use super::peek_options::BindingPeekResult;
use berth_core::HolderRecord as Record;
use berth_core::{Listing, Scope};
use berth_core::{ReapEntry, ReapReport};

/// Options of `listSessions`.
#[napi(object)]
pub struct BindingListOptions {
    /// Only containers with this exact name prefix label. @default every prefix
    pub prefix: Option<Utf16String>,
    /// Only containers carrying all of these labels, exactly. @default none
    pub labels: Option<HashMap<String, String>>,
    /// Also list containers under berth names that berth does not manage. @default false
    pub include_unmanaged: Option<bool>,
    /// Engine unix socket path (or `unix://` / `tcp://` URL); wins over `engine`, `DOCKER_HOST` and discovery.
    pub socket_path: Option<String>,
    /// `'docker'`, `'podman'`, or a per-platform map (`{ linux: 'podman' }`).
    pub engine: Option<Either<String, HashMap<String, String>>>,
    /// How long the engine's first answer may take, in milliseconds. @default 10000
    pub connect_timeout_ms: Option<f64>,
}

/// Options of `reapOrphans`.
#[napi(object)]
pub struct BindingReapOptions {
    /// Report what would be removed; remove nothing. @default false
    pub dry_run: Option<bool>,
    /// Only containers with this exact name prefix label. @default every prefix
    pub prefix: Option<Utf16String>,
    /// Only containers carrying all of these labels, exactly. @default none
    pub labels: Option<HashMap<String, String>>,
    /// Engine unix socket path (or `unix://` / `tcp://` URL); wins over `engine`, `DOCKER_HOST` and discovery.
    pub socket_path: Option<String>,
    /// `'docker'`, `'podman'`, or a per-platform map (`{ linux: 'podman' }`).
    pub engine: Option<Either<String, HashMap<String, String>>>,
    /// How long the engine's first answer may take, in milliseconds. @default 10000
    pub connect_timeout_ms: Option<f64>,
}

/// One holder or duty record of a session.
#[napi(object)]
pub struct BindingHolder {
    /// `creator`, `adopter`, `inheritor`, or `unknown` for a record that does not parse.
    pub role: String,
    /// `alive`, `dead` or `unknown` (always `unknown` for a record that does not parse).
    pub liveness: String,
    /// Holder host id; absent when unreadable.
    pub host_id: Option<String>,
    /// Holder process id; absent when unreadable.
    pub pid: Option<u32>,
    /// Holder start time in clock ticks since boot; absent when unreadable.
    pub start_time: Option<String>,
    /// Holder per-process instance id; absent when unreadable.
    pub instance_id: Option<String>,
    /// Duty generation of an inheritor's record (1, 2, ...).
    pub generation: Option<u32>,
    /// The record's volume name.
    pub record: String,
    /// Why the record was refused, when it does not parse.
    pub invalid: Option<String>,
}

/// One entry of `listSessions`: a `PeekResult` plus holders.
#[napi(object)]
pub struct BindingListEntry {
    /// The container, as `peek` reports it.
    pub session: BindingPeekResult,
    /// Every holder and duty record.
    pub holders: Vec<BindingHolder>,
    /// The current duty generation: 0 while the creator holds the duty to remove.
    pub duty_generation: u32,
}

/// One container the reaper removed or kept.
#[napi(object)]
pub struct BindingReapEntry {
    /// Full container id.
    pub id: String,
    /// Container name.
    pub name: String,
    /// Session id; absent when unreadable.
    pub session_id: Option<String>,
    /// `owner-dead`, `incomplete`, `expired` (removed); `owner-alive`, `owner-unknown`, `held`, `parked`, `remove-failed` (kept).
    pub reason: String,
}

/// What `reapOrphans` did (with `dryRun`, would do).
#[napi(object)]
pub struct BindingReapReport {
    /// Removed (or, with `dryRun`, to be removed).
    pub removed: Vec<BindingReapEntry>,
    /// Kept, with the reason.
    pub kept: Vec<BindingReapEntry>,
    /// Record volumes whose container is gone, deleted (with `dryRun`, to be deleted).
    pub removed_records: Vec<String>,
    /// Recreations cut short by a dead process, finished or rolled back first (none with `dryRun`).
    pub replacements: Vec<BindingSettledReplacement>,
    /// Network-guard helper containers a killed process left, removed by id (with `dryRun`, to be removed).
    pub removed_helpers: Vec<String>,
    /// Other berth builds' unused helper images (`berth-netguard:<hash>`), removed by an unnarrowed run (with `dryRun`, to be removed).
    pub removed_images: Vec<String>,
}

/// One recreation a reaper run recovered.
#[napi(object)]
pub struct BindingSettledReplacement {
    /// The session's container name.
    pub name: String,
    /// The id of the container that was being replaced.
    pub previous_id: String,
    /// `completed` (the old container removed), `rolled-back` (the new one removed, the old one
    /// back under its name) or `name-taken` (another container took the name; the old one stays aside).
    pub outcome: String,
}

fn holder_js(r: Record) -> BindingHolder {
    let liveness = r.liveness().as_str().to_string();
    match r.hold {
        Ok(h) => BindingHolder {
            role: h.role.as_str().into(),
            liveness,
            host_id: Some(h.holder.host_id),
            pid: Some(h.holder.pid),
            start_time: Some(h.holder.start_time),
            instance_id: Some(h.holder.instance_id),
            generation: h.generation.map(|g| u32::try_from(g).unwrap_or(u32::MAX)),
            record: r.volume,
            invalid: None,
        },
        Err(why) => BindingHolder {
            role: "unknown".into(),
            liveness,
            host_id: None,
            pid: None,
            start_time: None,
            instance_id: None,
            generation: None,
            record: r.volume,
            invalid: Some(why),
        },
    }
}

fn entry_js(e: ReapEntry) -> BindingReapEntry {
    BindingReapEntry {
        id: e.id,
        name: e.name,
        session_id: e.session_id,
        reason: e.reason,
    }
}

fn scope(prefix: Option<Utf16String>, labels: Option<HashMap<String, String>>) -> Scope {
    Scope {
        prefix: prefix.map(|p| p.to_vec()),
        labels: labels.unwrap_or_default().into_iter().collect(),
    }
}

/// Lists berth-managed sessions by exact label filters, each with its holders. Converts
/// [`berth_core::list_sessions`] (and [`berth_core::list_unmanaged`] with `includeUnmanaged`):
/// see them for the engine calls and errors; `token` aborts it (`E_ABORTED`).
#[napi(ts_return_type = "Promise<BindingListEntry[]>")]
pub fn list_sessions<'e>(
    env: &'e Env,
    options: Option<BindingListOptions>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'e, Vec<BindingListEntry>>> {
    let cancel = token_of(token);
    let o = options.unwrap_or(BindingListOptions {
        prefix: None,
        labels: None,
        include_unmanaged: None,
        socket_path: None,
        engine: None,
        connect_timeout_ms: None,
    });
    let unmanaged = o.include_unmanaged.unwrap_or(false);
    let scope = scope(o.prefix, o.labels);
    let engine = engine_options(o.socket_path, o.engine, o.connect_timeout_ms);
    env.spawn_future(async move {
        let engine = js(engine)?;
        let list = js(berth_core::list_sessions(&scope, &engine, &cancel).await)?;
        let mut out: Vec<BindingListEntry> = list
            .into_iter()
            .map(|l: Listing| BindingListEntry {
                session: l.peek.into(),
                holders: l.holders.into_iter().map(holder_js).collect(),
                duty_generation: u32::try_from(l.duty_generation).unwrap_or(u32::MAX),
            })
            .collect();
        if unmanaged {
            let others = js(berth_core::list_unmanaged(&scope, &engine, &cancel).await)?;
            out.extend(others.into_iter().map(|p| BindingListEntry {
                session: p.into(),
                holders: Vec::new(),
                duty_generation: 0,
            }));
        }
        Ok(out)
    })
}

/// Removes orphaned sessions by id (owner dead, nobody live or unknown holding them).
/// Converts [`berth_core::reap_orphans`]: see it for the engine calls and errors; `token`
/// aborts it (`E_ABORTED`).
#[napi(ts_return_type = "Promise<BindingReapReport>")]
pub fn reap_orphans<'e>(
    env: &'e Env,
    options: Option<BindingReapOptions>,
    token: Option<&CancelToken>,
) -> napi::Result<PromiseRaw<'e, BindingReapReport>> {
    let cancel = token_of(token);
    let o = options.unwrap_or(BindingReapOptions {
        dry_run: None,
        prefix: None,
        labels: None,
        socket_path: None,
        engine: None,
        connect_timeout_ms: None,
    });
    let dry_run = o.dry_run.unwrap_or(false);
    let scope = scope(o.prefix, o.labels);
    let engine = engine_options(o.socket_path, o.engine, o.connect_timeout_ms);
    env.spawn_future(async move {
        let engine = js(engine)?;
        let r: ReapReport = js(berth_core::reap_orphans(dry_run, &scope, &engine, &cancel).await)?;
        Ok(BindingReapReport {
            removed: r.removed.into_iter().map(entry_js).collect(),
            kept: r.kept.into_iter().map(entry_js).collect(),
            removed_records: r.removed_records,
            removed_helpers: r.removed_helpers,
            removed_images: r.removed_images,
            replacements: r
                .replacements
                .into_iter()
                .map(|s| BindingSettledReplacement {
                    name: s.name,
                    previous_id: s.previous_id,
                    outcome: s.outcome.into(),
                })
                .collect(),
        })
    })
}

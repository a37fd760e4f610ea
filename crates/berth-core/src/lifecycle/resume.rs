//! Resume: the only path that adopts an existing session container, or takes its duty over.
//!
//! Engine calls: `GET /containers/{name}/json`, `GET /volumes?filters=...` (readiness,
//! holder and duty records), `GET /images/{ref}/json` (drift by image id, when asked),
//! `POST /volumes/create` (this handle's holder record, or a duty claim; a handover's
//! settled record as its last step), then by id
//! `POST /containers/{id}/start` (stopped) or `POST /containers/{id}/unpause` (paused), and
//! the network guard's check of the run left running (`GET /volumes/{name}`; when that run
//! has no guard record, the guard's helper run and its record: `engine::netguard`).

use tokio_util::sync::CancellationToken;

use crate::engine::calls::wake;
use crate::engine::cancel::guard;
use crate::engine::connection::{Engine, EngineOptions};
use crate::engine::container::{inspect, Facts};
use crate::engine::images;
use crate::lifecycle::opening::{self, Opening};
use crate::lifecycle::verify;
use crate::model::drift::{DriftSpec, OnDrift};
use crate::model::errors::{Error, Result};
use crate::model::identity::{self, liveness, Liveness, Owner};
use crate::model::labels::{field_digest, ManagedLabels, DIGEST_FIELDS};
use crate::model::naming::DEFAULT_PREFIX;
use crate::ownership::hold::{self, Claim};
use crate::ownership::holders::{duty, other_holder, Record, Role};
use crate::ownership::provenance::not_berth_made;
use crate::ownership::records;
use crate::ownership::replacement::{self, settle_name};
use crate::ownership::settled;
use crate::session::{Ownership, Session};

/// What `resumeSession` is asked for.
#[derive(Debug, Clone, Default)]
pub struct ResumeSpec {
    /// Session id, as UTF-16 code units.
    pub session_id: Vec<u16>,
    /// Name prefix (default `berth`), as UTF-16 code units.
    pub prefix: Option<Vec<u16>>,
    /// `E_SESSION_BUSY` when a live or unknown process other than this one holds it.
    pub exclusive: bool,
    /// Take the duty to remove over when its holder is dead.
    pub take_over: bool,
    /// Take the duty to remove over from its holder whether that process lives or not (the
    /// harness provider's resume: `docs/design.md#parked-sessions-and-handover`). Of
    /// overlapping handovers exactly one keeps the duty: one that finds another handover's
    /// claim not yet settled (its claimant alive or unknown) claims nothing, one that loses
    /// the claim of a generation, or whose generation is no longer the highest at its last
    /// records check, releases its record; each gets `E_SESSION_BUSY`
    /// (`reason: 'taken-over'`). The winner records its claim settled as its last step.
    /// Implies `take_over`.
    pub handover: bool,
    /// The drop-in's per-handle rule: never share this process's duty (the handle is
    /// `adopted` even in the process that created the container).
    pub per_handle: bool,
    /// Fields to compare with the creation digests.
    pub spec: Option<DriftSpec>,
    /// What drift does.
    pub on_drift: OnDrift,
    /// Verify the adopted container (and repair it in place) against `spec`'s mounts, ports,
    /// writable paths and user; a hard finding left rejects with `E_VERIFY_FAILED`.
    pub verify: bool,
}

/// Adopts the existing container of a session, starting or unpausing it as needed.
///
/// The filesystem of a stopped container is kept. In a process that holds the session's duty
/// to remove (it created the container, or inherited it; see [`crate::session::process_duty`]) the
/// handle shares that duty: same ownership as the first handle, no holder record of its own,
/// and removals through either coalesce into one engine call. Otherwise the handle is
/// `adopted` (it stops and removes nothing unless forced; its `release()` drops its holder
/// record) or, with
/// `take_over` when the duty holder (the creator, or the last inheritor) is dead,
/// `inherited`: its `remove()` removes the container. Every handle is recorded as a
/// holder before the container is started or unpaused.
///
/// An isolated session (created without `localNetwork`) is handed out only with its network
/// guard's rules in the run it leaves running: a run without a guard record (started by a
/// process killed before its guard ran, by the engine's restart policy, by hand) gets them
/// before this returns (`engine::netguard::ensure_inspected`).
///
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_SESSION_NOT_FOUND` (absent, being
/// removed, or removed meanwhile through another handle of this process),
/// `E_FOREIGN_CONTAINER` (not berth's, or another session's),
/// `E_SESSION_BUSY` (`reason: 'initialising'`: setup still running under a live or
/// unknown owner; `'held'`: `exclusive` and another live or unknown holder; `'taken-over'`:
/// another process won a concurrent take-over of the same dead holder, or this handover
/// overlapped another one), `E_SESSION_INCOMPLETE` (setup never finished and
/// its owner is dead), `E_SPEC_DRIFT` (`on_drift: Error`; nothing adopted), `E_VERIFY_FAILED`
/// (`verify`; the hold is dropped again), `E_ABORTED`, `E_ENGINE`.
///
/// A recreation of this session cut short by a dead process is finished or rolled back first
/// (see [`crate::ownership::replacement`]); one in progress in a live process is `E_SESSION_BUSY`
/// (`reason: 'recreating'`) when the name is free meanwhile.
pub async fn resume_session(
    spec: &ResumeSpec,
    engine_opts: &EngineOptions,
    cancel: &CancellationToken,
) -> Result<Session> {
    let Opening {
        session_id, name, ..
    } = Opening::new(&spec.session_id, spec.prefix.as_deref(), DEFAULT_PREFIX)?;
    if let Some(d) = &spec.spec {
        d.validate()?;
        crate::model::spec::validate_writable_paths("spec.writablePaths", &d.spec.writable_paths)?;
    }
    let engine = opening::connect(engine_opts, cancel, OPERATION).await?;
    crate::ownership::cleanup::retry_pending(&engine).await;
    adopt(&engine, spec, &session_id, &name, cancel).await
}

/// The operation named in `E_ABORTED`.
const OPERATION: &str = "resumeSession";

/// An identity that matches no holder, for a process this platform cannot identify.
fn nobody() -> Owner {
    Owner {
        host_id: String::new(),
        pid: 0,
        start_time: String::new(),
        instance_id: String::new(),
    }
}

fn owner_json(o: Option<&Owner>) -> serde_json::Value {
    o.map(Owner::to_json).unwrap_or(serde_json::Value::Null)
}

/// Reads, decides, records this handle's hold, then wakes the container. An abort before
/// the record is written just stops; once it is written (that engine call is never dropped
/// half-way), an abort or any failure releases it again, so no hold outlives its handle.
async fn adopt(
    engine: &Engine,
    spec: &ResumeSpec,
    session_id: &str,
    name: &str,
    cancel: &CancellationToken,
) -> Result<Session> {
    let not_found = || Error::SessionNotFound {
        session_id: session_id.into(),
        name: name.into(),
    };
    guard(cancel, OPERATION, settle_name(engine, name)).await?;
    let Some(c) = guard(cancel, OPERATION, inspect(engine, name)).await? else {
        if crate::session::deadline_timer::was_expired(engine, name) {
            return Err(Error::SessionExpired {
                session_id: session_id.into(),
                name: name.into(),
            });
        }
        return Err(guard(
            cancel,
            OPERATION,
            replacement::absent(engine, session_id, name),
        )
        .await?);
    };
    let f = Facts::from_inspect(&c);
    if replacement::renamed_meanwhile(&f, name) {
        return Err(replacement::busy(session_id, name, &f.id, None));
    }
    let Some(managed) = &f.managed else {
        return Err(Error::ForeignContainer {
            session_id: session_id.into(),
            name: name.into(),
            id: f.id.clone(),
            reason: "the container does not carry berth's managed labels".into(),
        });
    };
    if managed.session_id != session_id {
        return Err(Error::ForeignContainer {
            session_id: session_id.into(),
            name: name.into(),
            id: f.id.clone(),
            reason: format!("the container belongs to session {:?}", managed.session_id),
        });
    }
    if let Some(why) = guard(cancel, OPERATION, not_berth_made(engine, &c, &f)).await? {
        return Err(Error::ForeignContainer {
            session_id: session_id.into(),
            name: name.into(),
            id: f.id.clone(),
            reason: format!(
                "the container carries berth's labels but berth did not create it ({why})"
            ),
        });
    }
    let busy = |reason: &str, owner: Option<&Owner>| Error::SessionBusy {
        session_id: session_id.into(),
        name: name.into(),
        id: f.id.clone(),
        reason: reason.into(),
        owner: owner_json(owner),
    };
    let recs = guard(cancel, OPERATION, records::of_container(engine, &f.id)).await?;
    if !recs.ready {
        let owner_dead = f.owner().is_some_and(|o| liveness(o) == Liveness::Dead);
        return Err(if owner_dead {
            Error::SessionIncomplete {
                session_id: session_id.into(),
                name: name.into(),
                id: f.id.clone(),
                owner: f.owner_json(),
            }
        } else {
            busy("initialising", f.owner())
        });
    }
    if f.state == "removing" {
        return Err(not_found());
    }
    // Expiry overrides everything: an expired session is removed, never revived.
    let deadline = recs.deadline_ms();
    if f.expired_at(std::time::SystemTime::now(), deadline) {
        guard(
            cancel,
            OPERATION,
            crate::lifecycle::expiry::remove_if_expired(engine, &f.id),
        )
        .await?;
        return Err(Error::SessionExpired {
            session_id: session_id.into(),
            name: name.into(),
        });
    }
    let drift = match &spec.spec {
        Some(d) => guard(cancel, OPERATION, drifted(engine, &f, managed, d)).await?,
        None => Vec::new(),
    };
    if spec.on_drift == OnDrift::Error && !drift.is_empty() {
        return Err(Error::SpecDrift {
            session_id: session_id.into(),
            name: name.into(),
            fields: drift,
        });
    }
    let me_or_nobody = identity::current().cloned().unwrap_or_else(nobody);
    if spec.exclusive {
        if let Some(other) = other_holder(f.owner(), &recs.holds, &me_or_nobody, &liveness) {
            return Err(busy("held", other));
        }
    }

    // Share this process's duty, take it over from a dead holder, or record an adopter.
    // A handover shares this process's duty only while the records still give it to this
    // process (another process's handover moves it away).
    // Every resume checks it (a root resume in a process whose duty was handed over adopts).
    let still_mine = match identity::current() {
        Some(me) => duty(f.owner(), &recs.holds).holder() == Some(me),
        None => !spec.handover,
    };
    if !still_mine {
        crate::session::process_duty::forget(&f.id);
    }
    let shared = (!spec.per_handle && still_mine)
        .then(|| crate::session::process_duty::lookup(&f.id))
        .flatten();
    let (ownership, record) = match (
        &shared,
        spec.take_over || spec.handover,
        identity::current(),
    ) {
        (Some(s), _, _) => (s.ownership, None),
        (None, true, Some(me)) if spec.handover => match hand_over(engine, &f, &recs, me).await? {
            Claim::Won(volume) => (Ownership::Inherited, Some(volume)),
            Claim::Lost(holder) => return Err(busy("taken-over", holder.as_ref())),
        },
        (None, true, Some(me)) => match take_over(engine, &f, &recs.holds, me).await? {
            TakeOver::Won(volume) => (Ownership::Inherited, Some(volume)),
            TakeOver::Held(holder) => return Err(busy("taken-over", holder.as_ref())),
            TakeOver::Adopt => adopt_record(engine, &f).await?,
        },
        _ => adopt_record(engine, &f).await?,
    };
    let retention_ms = managed.remove_after_stop_ms;
    let release_on = |e: Error| async {
        if let Some(r) = &record {
            // Not bounded by the caller's signal; after an interruption, in the background,
            // so the call settles at once.
            let detached = engine.detached();
            if matches!(
                e.code(),
                "E_ABORTED" | "E_EXEC_TIMEOUT" | "E_ENGINE_UNAVAILABLE"
            ) {
                let r = r.clone();
                tokio::spawn(async move {
                    let _ = hold::release(&detached, &r).await;
                });
                return e;
            }
            if let Err(cleanup) = hold::release(&detached, r).await {
                return e.with_cleanup(cleanup);
            }
        }
        e
    };
    let finish = async {
        // Two exclusive resumes that raced past the check above both see each other's record here.
        if spec.exclusive && ownership == Ownership::Adopted {
            let now = records::of_container(engine, &f.id).await?;
            if let Some(other) = other_holder(f.owner(), &now.holds, &me_or_nobody, &liveness) {
                return Err(busy("held", other));
            }
        }
        // A removal through another handle of this process wins over this resume.
        let removing = match &shared {
            Some(s) => Some(s.state.lock().await),
            None => None,
        };
        if removing.as_ref().is_some_and(|s| s.is_done()) {
            return Err(not_found());
        }
        wake(engine, &c).await.map_err(|e| match e {
            Error::Engine {
                status: Some(404), ..
            } => not_found(),
            e => e,
        })?;
        // A container woken from a stop learns its current deadline again (a read-only
        // root filesystem's tmpfs lost it; a `setTimeout` while stopped never reached it).
        if let (Some(d), false) = (deadline, f.state == "running") {
            let labels = c.body.config.as_ref().and_then(|cfg| cfg.labels.clone());
            crate::session::keepalive::write_deadline(
                engine,
                &f.id,
                &f.name,
                &labels.unwrap_or_default(),
                d,
                None,
            )
            .await?;
        }
        drop(removing);
        // Overlapping handovers: each claimed its own generation; the last step re-reads the
        // records, and a handover whose generation is no longer the highest lost (its record
        // is released by `release_on`).
        if spec.handover && ownership == Ownership::Inherited {
            let now = records::of_container(engine, &f.id).await?;
            let current = duty(f.owner(), &now.holds);
            if current.holder() != identity::current() {
                return Err(busy("taken-over", current.holder()));
            }
            // The claim is settled: from now on a handover is a sequential one (it claims
            // the next generation); until now every other one lost (see `hand_over`).
            test_gate(TEST_SETTLE_GATE_ENV).await;
            if let Some(g) = record
                .as_deref()
                .and_then(|v| crate::ownership::holders::generation_of(v, &f.id))
            {
                settled::settle(engine, &f.id, g, &f.record_labels).await?;
            }
        }
        if !spec.verify {
            return Ok(None);
        }
        let expect = spec
            .spec
            .as_ref()
            .map(DriftSpec::expect)
            .unwrap_or_default();
        verify::verify(engine, &f.id, session_id, name, &expect, true)
            .await
            .map(Some)
    };
    let verification = match guard(cancel, OPERATION, finish).await {
        Ok(v) => v,
        Err(e) => return Err(release_on(e).await),
    };
    let session = Session::new(
        engine.clone(),
        f.id.clone(),
        f.name.clone(),
        session_id.into(),
        ownership,
        f.owner().cloned(),
    )
    .with_record(record, drift)
    .with_expires_at(f.expires_at(deadline));
    let session = match shared {
        Some(s) => session.with_shared_duty(s),
        None => session
            .into_process_duty(retention_ms)
            .with_deadline_timer(deadline.is_some()),
    };
    Ok(match verification {
        Some(v) => session.with_verification(v),
        None => session,
    })
}

async fn adopt_record(engine: &Engine, f: &Facts) -> Result<(Ownership, Option<String>)> {
    let record = hold::register(engine, &f.id, Role::Adopter, &f.record_labels).await?;
    Ok((Ownership::Adopted, record))
}

/// What a take-over found.
enum TakeOver {
    /// This process claimed the next duty generation (its record's volume name).
    Won(String),
    /// Another process won the concurrent claim of the same generation: `E_SESSION_BUSY`.
    Held(Option<Owner>),
    /// The duty holder (creator or inheritor) lives or is unknown, or is this process: adopt.
    Adopt,
}

/// The take-over rule: the creator's duty (generation 0) passes only when the creator is
/// dead; an inheritor's (generation n) only when that inheritor is dead. A live or
/// unknown holder (an inheritor after a handover too) keeps it, and this handle adopts.
async fn take_over(engine: &Engine, f: &Facts, holds: &[Record], me: &Owner) -> Result<TakeOver> {
    let current = duty(f.owner(), holds);
    let dead = current.liveness_with(&liveness) == Liveness::Dead;
    if !dead {
        // A live or unknown holder (the creator, or an inheritor after a handover) keeps the
        // duty; this handle adopts (docs/lifetimes.md "Parked sessions and handover").
        return Ok(TakeOver::Adopt);
    }
    let next = current.generation() + 1;
    Ok(
        match hold::claim_duty(engine, &f.id, next, me, &f.record_labels, false).await? {
            Claim::Won(volume) => TakeOver::Won(volume),
            Claim::Lost(winner) => TakeOver::Held(winner),
        },
    )
}

/// The handover rule: this process claims the next duty generation whatever the current
/// holder's liveness (`POST /volumes/create` of `berth-duty-<id>-<n + 1>`, compare-and-set:
/// of concurrent handovers exactly one wins), unless the current generation is another
/// handover's claim still in progress (not settled, its claimant alive or unknown): then
/// this one overlapped it and lost, before it wrote anything ([`settled::in_progress`]).
async fn hand_over(
    engine: &Engine,
    f: &Facts,
    recs: &records::ContainerRecords,
    me: &Owner,
) -> Result<Claim> {
    let current = duty(f.owner(), &recs.holds);
    if let Some(claimant) = settled::in_progress(&current, &recs.settled, &liveness) {
        return Ok(Claim::Lost(claimant.cloned()));
    }
    let next = current.generation() + 1;
    test_gate(TEST_GATE_ENV).await;
    hold::claim_duty(engine, &f.id, next, me, &f.record_labels, true).await
}

/// Test-only gate before a handover's claim: when this variable names a file path, the
/// handover writes `<path>.<pid>` once it has read the duty generation and waits until
/// `<path>` exists, so a test can line two handovers up on one generation. Read only by
/// berth's own tests (test-only; never set it in production). The wait is bounded
/// ([`TEST_GATE_MAX_WAIT`]), then the handover goes on.
const TEST_GATE_ENV: &str = "BERTH_TEST_HANDOVER_GATE";

/// Test-only gate of the same kind (same protocol and bound) after a handover's claim and its
/// last records check, right before it records the claim settled: a test holds one handover
/// there and lets another start, which must lose (`taken-over`).
const TEST_SETTLE_GATE_ENV: &str = "BERTH_TEST_HANDOVER_SETTLE_GATE";

/// The longest a handover waits at the test-only gate: 30 s.
const TEST_GATE_MAX_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

async fn test_gate(env: &str) {
    let Ok(path) = std::env::var(env) else {
        return;
    };
    let _ = std::fs::write(format!("{path}.{}", std::process::id()), b"");
    let until = std::time::Instant::now() + TEST_GATE_MAX_WAIT;
    while !std::path::Path::new(&path).exists() && std::time::Instant::now() < until {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The named fields whose digest differs from the container's, in [`DIGEST_FIELDS`](crate::model::labels::DIGEST_FIELDS) order.
///
/// A field without a digest label counts as drifted (it cannot be confirmed). Engine
/// call: `GET /images/{reference}/json`, only when the image reference's digest differs.
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn drifted(
    engine: &Engine,
    facts: &Facts,
    labels: &ManagedLabels,
    d: &DriftSpec,
) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for field in DIGEST_FIELDS {
        if !d.fields.contains(&field) {
            continue;
        }
        let same_digest = labels
            .digests
            .get(field)
            .is_some_and(|stored| *stored == field_digest(&labels.salt, field, &d.spec));
        if same_digest {
            continue;
        }
        if field == "image" && images::resolves_to(engine, &d.spec.image, &facts.image_id).await? {
            continue;
        }
        out.push(field.to_string());
    }
    Ok(out)
}

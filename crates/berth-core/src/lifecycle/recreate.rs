//! Recreate: replaces a session's container with a new one from a spec, explicitly, with
//! rollback: the old container is renamed aside, never removed before the new one is verified.
//!
//! Engine calls, in order: `GET /containers/{name}/json`, `GET /volumes?filters=...`
//! (records), `GET /images/{image}/json` (and a pull when missing), `POST /volumes/create`
//! (the lock `berth-replace-<old id>`; a duty claim with `take_over`),
//! `POST /containers/{old id}/rename`, `POST /volumes/create` (a stop record: berth's own
//! stop, never taken for a death), `POST /containers/{old id}/stop`,
//! `POST /containers/create?name=<name>`, `POST /containers/{new id}/start`, setup execs,
//! the readiness and holder records, verify's checks, `POST /volumes/create` (the commit mark
//! `berth-replaced-<old id>`), then `DELETE /containers/{old id}?force=true&v=true`.
//! A failure or an abort before the commit removes the new container by id, renames the old
//! one back and starts it again. A crash at any step is recovered by the next call on that
//! name, or by the reaper (see [`crate::ownership::replacement`]).

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::engine::calls::stop_by_id;
use crate::engine::cancel::guard;
use crate::engine::connection::{Engine, EngineOptions};
use crate::engine::container::{inspect, Facts, Inspected};
use crate::engine::images::{ensure_image, PullOptions};
use crate::lifecycle::create::{create_container, finish};
use crate::lifecycle::opening::{self, Opening};
use crate::lifecycle::verify;
use crate::model::errors::{Error, Result};
use crate::model::identity::{self, liveness, Liveness, Owner};
use crate::model::spec::CreateSpec;
use crate::model::verification::Expect;
use crate::ownership::hold::{self, Claim};
use crate::ownership::holders::duty;
use crate::ownership::provenance::not_berth_made;
use crate::ownership::records;
use crate::ownership::removal::remove_by_id;
use crate::ownership::replaced::{carried_volumes, lost_and_kept, Replaced};
use crate::ownership::replacement::{self, InFlight, Replacement};
use crate::session::{Ownership, Session};

/// The operation named in `E_ABORTED`.
const OPERATION: &str = "recreateSession";

/// Test-only pause points: when this variable names a point (`after-rename`, `after-create`,
/// `after-commit`), the recreation stops there for good, so that a test can SIGKILL the process
/// at that step. Read only by berth's own tests; never set it in production.
pub(crate) const TEST_PAUSE_ENV: &str = "BERTH_TEST_PAUSE_AT";

/// Grace period of the old container's stop once renamed aside, in milliseconds.
pub(crate) const OLD_STOP_TIMEOUT_MS: u64 = 10_000;

/// What `recreateSession` is asked for.
#[derive(Debug, Clone, Default)]
pub struct RecreateSpec {
    /// The spec of the new container (its session id and prefix name the old one).
    pub spec: CreateSpec,
    /// When the duty holder is dead, take the duty over first (as `resumeSession({ takeOver })`).
    pub take_over: bool,
}

/// Replaces session `r.spec.session_id`'s container with a new one made from `r.spec`.
///
/// Allowed to the duty holder (the creator, or the process that took the duty over) and,
/// with `take_over`, to any process when the duty holder is dead (it claims the duty first,
/// after the lock; a rollback leaves the old container's duty with it). The new container is
/// created under the session's name with this process as its owner (`ownership: 'created'`)
/// and verified against the spec (mounts, ports, writable paths) before the old one is
/// removed. Bind mounts and named volumes are kept (named volumes of the old container are
/// mounted again at the same target unless the spec mounts something there); the writable
/// layer, processes, tmpfs mounts and anonymous volumes are lost ([`Replaced`]).
///
/// Engine calls: those of the module doc above, in order (with a rollback's and a recovery's).
///
/// Errors: `E_INVALID_ARGUMENT`, `E_ENGINE_UNAVAILABLE`, `E_SESSION_NOT_FOUND`,
/// `E_FOREIGN_CONTAINER`, `E_SESSION_BUSY` (`not-owner`, `recreating`: another recreation
/// holds the lock, `taken-over`, `initialising`), `E_SESSION_INCOMPLETE`, `E_IMAGE_NOT_FOUND`
/// (nothing changed), `E_SETUP_FAILED` / `E_VERIFY_FAILED` / `E_ENGINE` after a rollback,
/// `E_ABORTED` (rolled back).
pub async fn recreate_session(
    r: &RecreateSpec,
    engine_opts: &EngineOptions,
    cancel: &CancellationToken,
) -> Result<Session> {
    let spec = &r.spec;
    let Opening {
        session_id,
        prefix,
        name,
    } = Opening::for_create(spec, engine_opts)?;
    let engine = opening::connect(engine_opts, cancel, OPERATION).await?;
    let ids = Ids {
        session_id: &session_id,
        prefix: &prefix,
        name: &name,
    };
    let p = guard(cancel, OPERATION, prepare(&engine, r, &ids)).await?;
    // Not raced against the abort signal from here: the steps below undo themselves.
    let (session, replaced) = take(&engine, r, &ids, p, cancel).await?;
    Ok(session.with_replaced(replaced))
}

/// What [`prepare`] found: the old container, and the duty generation to claim (take-over).
struct Prepared {
    old: Inspected,
    facts: Facts,
    claim: Option<u64>,
    me: &'static Owner,
}

struct Ids<'a> {
    session_id: &'a str,
    prefix: &'a str,
    name: &'a str,
}

/// Everything before the lock: recovery of a stale replacement, identity, readiness, the
/// ownership rule, the image. Changes nothing but a stale replacement's recovery.
async fn prepare(engine: &Engine, r: &RecreateSpec, ids: &Ids<'_>) -> Result<Prepared> {
    replacement::settle_name(engine, ids.name).await?;
    let Some(c) = inspect(engine, ids.name).await? else {
        return Err(replacement::absent(engine, ids.session_id, ids.name).await?);
    };
    let f = Facts::from_inspect(&c);
    if replacement::renamed_meanwhile(&f, ids.name) {
        return Err(replacement::busy(ids.session_id, ids.name, &f.id, None));
    }
    check_ours(engine, &c, &f, ids).await?;
    let busy = |reason: &str, owner: Option<&Owner>| Error::SessionBusy {
        session_id: ids.session_id.into(),
        name: ids.name.into(),
        id: f.id.clone(),
        reason: reason.into(),
        owner: owner.map(Owner::to_json).unwrap_or(Value::Null),
    };
    let recs = records::of_container(engine, &f.id).await?;
    if !recs.ready {
        let dead = f.owner().is_some_and(|o| liveness(o) == Liveness::Dead);
        return Err(if dead {
            Error::SessionIncomplete {
                session_id: ids.session_id.into(),
                name: ids.name.into(),
                id: f.id.clone(),
                owner: f.owner_json(),
            }
        } else {
            busy("initialising", f.owner())
        });
    }
    let Some(me) = identity::current() else {
        return Err(busy("not-owner", f.owner()));
    };
    let d = duty(f.owner(), &recs.holds);
    let claim = if d.holder() == Some(me) {
        None
    } else if r.take_over && d.liveness_with(&liveness) == Liveness::Dead {
        Some(d.generation() + 1)
    } else {
        return Err(busy("not-owner", d.holder()));
    };
    let pull = PullOptions {
        platform: r.spec.platform.clone(),
        on_progress: r.spec.on_pull_progress.clone(),
    };
    ensure_image(engine, &r.spec.image, &pull).await?;
    Ok(Prepared {
        old: c,
        facts: f,
        claim,
        me,
    })
}

/// The lock (exactly one recreation proceeds), the duty claim when taking over, then [`replace`].
async fn take(
    engine: &Engine,
    r: &RecreateSpec,
    ids: &Ids<'_>,
    p: Prepared,
    cancel: &CancellationToken,
) -> Result<(Session, Replaced)> {
    let Prepared {
        old: c,
        facts: f,
        claim,
        me,
    } = p;
    let busy = |reason: &str, owner: Option<&Owner>| Error::SessionBusy {
        session_id: ids.session_id.into(),
        name: ids.name.into(),
        id: f.id.clone(),
        reason: reason.into(),
        owner: owner.map(Owner::to_json).unwrap_or(Value::Null),
    };
    let was_running = matches!(f.state, "running" | "paused");
    let lock = Replacement::new(&f.id, ids.name, was_running, me);
    if let Some(holder) = replacement::lock(engine, &lock, &f.record_labels).await? {
        return Err(replacement::busy(
            ids.session_id,
            ids.name,
            &f.id,
            holder.as_ref(),
        ));
    }
    let _in_flight = InFlight::mark(&f.id);
    let unlock = |e: Error| async {
        match replacement::drop_records(engine, &f.id).await {
            Ok(()) => e,
            Err(cleanup) => e.with_cleanup(cleanup),
        }
    };
    // The container may have been replaced or removed between the inspect and the lock.
    let now = inspect(engine, &f.id).await?;
    if now.as_ref().map(|c| Facts::from_inspect(c).name) != Some(ids.name.to_string()) {
        return Err(unlock(replacement::busy(ids.session_id, ids.name, &f.id, None)).await);
    }
    if cancel.is_cancelled() {
        return Err(unlock(Error::aborted(OPERATION)).await);
    }
    if let Some(generation) = claim {
        match hold::claim_duty(engine, &f.id, generation, me, &f.record_labels, false).await? {
            Claim::Won(_) => {}
            Claim::Lost(winner) => return Err(unlock(busy("taken-over", winner.as_ref())).await),
        }
    }
    let replaced = lost_and_kept(&c);
    replace(engine, r, ids, &c, &lock, replaced, cancel).await
}

/// The container under the name must be this session's, made by berth.
async fn check_ours(engine: &Engine, c: &Inspected, f: &Facts, ids: &Ids<'_>) -> Result<()> {
    let foreign = |reason: String| Error::ForeignContainer {
        session_id: ids.session_id.into(),
        name: ids.name.into(),
        id: f.id.clone(),
        reason,
    };
    let Some(m) = &f.managed else {
        return Err(foreign(
            "the container does not carry berth's managed labels".into(),
        ));
    };
    if m.session_id != ids.session_id {
        return Err(foreign(format!(
            "the container belongs to session {:?}",
            m.session_id
        )));
    }
    if let Some(why) = not_berth_made(engine, c, f).await? {
        return Err(foreign(format!(
            "the container carries berth's labels but berth did not create it ({why})"
        )));
    }
    Ok(())
}

/// Rename aside, create, set up, verify, commit, remove the old one. Before the commit any
/// failure or abort rolls back; the error returned is the first cause.
async fn replace(
    engine: &Engine,
    r: &RecreateSpec,
    ids: &Ids<'_>,
    old: &Inspected,
    lock: &Replacement,
    replaced: Replaced,
    cancel: &CancellationToken,
) -> Result<(Session, Replaced)> {
    let old_id = lock.old_id.as_str();
    let mut new_id: Option<String> = None;
    let attempt = async {
        replacement::rename(engine, old_id, &lock.aside).await?;
        // berth's own stop, recorded first: a handle on the old container (another process's)
        // never takes it for a death (see `crate::ownership::stops`).
        crate::ownership::stops::record(engine, old_id, &old.labels()).await?;
        stop_by_id(engine, old_id, OLD_STOP_TIMEOUT_MS).await?;
        test_pause("after-rename").await;
        if cancel.is_cancelled() {
            return Err(Error::aborted(OPERATION));
        }
        let carried = carried_volumes(old, &r.spec);
        let (id, labels) = create_container(
            engine,
            &r.spec,
            ids.session_id,
            ids.prefix,
            ids.name,
            &carried,
        )
        .await?;
        new_id = Some(id.clone());
        test_pause("after-create").await;
        let session = Session::new(
            engine.clone(),
            id.clone(),
            ids.name.into(),
            ids.session_id.into(),
            Ownership::Created,
            identity::current().cloned(),
        );
        let steps = async {
            // Boxed: the create steps are a large future, and a recreate nests them.
            let record = Box::pin(finish(engine, &session, &r.spec, &labels)).await?;
            let v = verify::verify(
                engine,
                &id,
                ids.session_id,
                ids.name,
                &expect_of(&r.spec),
                true,
            )
            .await?;
            Ok::<_, Error>((record, v))
        };
        let (record, v) = guard(cancel, OPERATION, steps).await?;
        Ok(session.with_record(record, Vec::new()).with_verification(v))
    };
    let session = match Box::pin(attempt).await {
        Ok(s) => s,
        Err(first) => return Err(roll_back(engine, lock, new_id.as_deref(), first).await),
    };
    // The commit point: from here a recovery finishes instead of rolling back.
    let extra = Facts::from_inspect(old).record_labels;
    if let Err(first) = replacement::commit(engine, old_id, &session.id, &extra).await {
        return Err(roll_back(engine, lock, Some(&session.id), first).await);
    }
    test_pause("after-commit").await;
    if remove_by_id(engine, old_id).await.is_err() {
        crate::ownership::cleanup::defer(engine, old_id);
    }
    crate::session::process_duty::forget(old_id);
    let session = session
        .into_process_duty(r.spec.remove_after_stop_ms)
        .with_deadline_timer(r.spec.timeout_ms.is_some());
    Ok((session, replaced))
}

/// Removes the new container (when made) by id, puts the old one back; the first error stays first.
///
/// After an abort, a deadline or a request the engine left unanswered ([`Engine::answering`]),
/// the call settles at once and the roll-back runs in the background as soon as the engine
/// answers; the lock record keeps other callers out until it is done (`E_SESSION_BUSY`
/// `recreating`), and should this process die first, the next resume, verify, recreate or reap
/// rolls it back from the journal.
async fn roll_back(
    engine: &Engine,
    lock: &Replacement,
    new_id: Option<&str>,
    first: Error,
) -> Error {
    let answering = engine.answering() && first.code() != "E_ENGINE_UNAVAILABLE";
    // Runs after the caller's abort too: per-request timeouts only.
    let engine = engine.detached();
    let (lock, new_id) = (lock.clone(), new_id.map(str::to_string));
    let undo = async move {
        if let Some(id) = &new_id {
            remove_by_id(&engine, id).await?;
        }
        replacement::roll_back_old(&engine, &lock).await
    };
    if !answering {
        tokio::spawn(undo);
        return first;
    }
    match Box::pin(undo).await {
        Ok(()) => first,
        Err(cleanup) => first.with_cleanup(cleanup),
    }
}

/// What the new container is verified against: the spec's mounts, ports, writable paths, user.
pub(crate) fn expect_of(spec: &CreateSpec) -> Expect {
    Expect {
        mounts: Some(spec.mounts.clone()),
        ports: Some(spec.ports.clone()),
        writable_paths: spec.writable_paths.clone(),
        user: spec.user.clone(),
    }
}

/// Stops here for good when [`TEST_PAUSE_ENV`] names `point` (tests only).
async fn test_pause(point: &str) {
    if std::env::var(TEST_PAUSE_ENV).ok().as_deref() == Some(point) {
        eprintln!("berth: recreateSession paused at `{point}` ({TEST_PAUSE_ENV}, tests only)");
        std::future::pending::<()>().await;
    }
}

//! Replacement records: the lock and the journal of one `recreateSession`, kept as labelled
//! engine volumes, so that a recreation cut short (a crash at any step) is finished or rolled
//! back by the next call on that session name, or by the reaper.
//!
//! - `berth-replace-<old id>`: taken before anything changes. Creating a volume is a
//!   compare-and-set (the engine answers a taken name with its first creator's labels), so of
//!   concurrent recreations of one container exactly one holds it. Its labels say which name
//!   is being replaced, where the old container was renamed aside, whether it ran, and who
//!   recreates it (host id, pid, start time, instance id, token).
//! - `berth-replaced-<old id>`: the commit mark, written once the new container is verified
//!   and before the old one is removed. With it a recovery finishes (removes the old
//!   container by id); without it a recovery rolls back (removes the new container by id,
//!   renames the old one back and starts it again when it ran).
//!
//! A recovery happens only when the recreating process is dead (never merely unknown), or is
//! this process with no recreation of that container in flight. Both records carry the old
//! container's id, so removing the old container removes them (see [`records::remove_records`]).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use crate::engine::connection::{status, Engine};
use crate::engine::container::{inspect, Facts};
use crate::model::errors::{Error, Result};
use crate::model::identity::{liveness, Liveness, Owner};
use crate::model::labels::{MANAGED, RECORD_CONTAINER_ID, RECORD_KIND};
use crate::ownership::holders::{self, new_token};
use crate::ownership::records;
use crate::ownership::removal::remove_by_id;

/// `dev.berth.record` value of the lock and journal record.
pub(crate) const KIND_REPLACE: &str = "replace";
/// `dev.berth.record` value of the commit mark.
pub(crate) const KIND_REPLACED: &str = "replaced";
/// The container name being replaced.
pub(crate) const NAME: &str = "dev.berth.replace.name";
/// The name the old container was renamed to.
pub(crate) const ASIDE: &str = "dev.berth.replace.aside";
/// `true` when the old container ran (or was paused) before: a rollback starts it again.
pub(crate) const WAS_RUNNING: &str = "dev.berth.replace.was-running";
/// The new container's id, on the commit mark.
pub(crate) const NEW_ID: &str = "dev.berth.replace.new-id";

/// `berth-replace-<old id>`.
pub(crate) fn replace_volume(old_id: &str) -> String {
    format!("berth-replace-{old_id}")
}

/// `berth-replaced-<old id>`.
pub(crate) fn replaced_volume(old_id: &str) -> String {
    format!("berth-replaced-{old_id}")
}

/// The name the old container is renamed to while its replacement is made.
pub(crate) fn aside_name(name: &str, old_id: &str) -> String {
    format!("{name}-replaced-{}", &old_id[..old_id.len().min(12)])
}

/// One replacement, as its lock record says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Replacement {
    /// The old container's id.
    pub old_id: String,
    /// The session's container name.
    pub name: String,
    /// Where the old container is renamed aside.
    pub aside: String,
    /// Whether the old container ran before.
    pub was_running: bool,
    /// The recreating process (`None`: the record does not parse; liveness `unknown`).
    pub holder: Option<Owner>,
    /// The record's random token.
    pub token: String,
}

impl Replacement {
    /// The labels of the lock record. `extra`: the old container's caller labels (copied, so
    /// scoped reaper runs find the record by them).
    pub(crate) fn labels(&self, extra: &HashMap<String, String>) -> HashMap<String, String> {
        let holder = self
            .holder
            .as_ref()
            .expect("a new replacement has a holder");
        let mut l: HashMap<String, String> = crate::model::labels::record_labels(extra);
        l.insert(MANAGED.into(), "true".into());
        l.insert(RECORD_KIND.into(), KIND_REPLACE.into());
        l.insert(
            holders::RECORD_SCHEMA.into(),
            holders::RECORD_SCHEMA_VERSION.into(),
        );
        l.insert(RECORD_CONTAINER_ID.into(), self.old_id.clone());
        l.insert(NAME.into(), self.name.clone());
        l.insert(ASIDE.into(), self.aside.clone());
        l.insert(WAS_RUNNING.into(), self.was_running.to_string());
        l.insert(holders::HOST_ID.into(), holder.host_id.clone());
        l.insert(holders::PID.into(), holder.pid.to_string());
        l.insert(holders::START_TIME.into(), holder.start_time.clone());
        l.insert(holders::INSTANCE_ID.into(), holder.instance_id.clone());
        l.insert(holders::TOKEN.into(), self.token.clone());
        l
    }

    /// Reads a lock record; `None` when `labels` are not one. A holder that does not parse
    /// completely is `None` (its liveness is then `unknown`: never recovered automatically).
    pub(crate) fn decode(labels: &HashMap<String, String>) -> Option<Replacement> {
        if labels.get(RECORD_KIND).map(String::as_str) != Some(KIND_REPLACE) {
            return None;
        }
        let get = |k: &str| labels.get(k).filter(|v| !v.is_empty()).cloned();
        let holder = (|| {
            if labels.get(holders::RECORD_SCHEMA).map(String::as_str)
                != Some(holders::RECORD_SCHEMA_VERSION)
            {
                return None;
            }
            let start_time = get(holders::START_TIME)?;
            if !start_time.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some(Owner {
                host_id: get(holders::HOST_ID)?,
                pid: get(holders::PID)?.parse().ok().filter(|p| *p > 0)?,
                start_time,
                instance_id: get(holders::INSTANCE_ID)?,
            })
        })();
        Some(Replacement {
            old_id: get(RECORD_CONTAINER_ID)?,
            name: get(NAME)?,
            aside: get(ASIDE)?,
            was_running: labels.get(WAS_RUNNING).map(String::as_str) == Some("true"),
            holder,
            token: get(holders::TOKEN).unwrap_or_default(),
        })
    }

    /// A fresh lock for this process.
    pub(crate) fn new(old_id: &str, name: &str, was_running: bool, me: &Owner) -> Replacement {
        Replacement {
            old_id: old_id.into(),
            name: name.into(),
            aside: aside_name(name, old_id),
            was_running,
            holder: Some(me.clone()),
            token: new_token(),
        }
    }
}

/// Old container ids this process is recreating right now.
fn in_flight() -> &'static Mutex<HashSet<String>> {
    static IN_FLIGHT: std::sync::OnceLock<Mutex<HashSet<String>>> = std::sync::OnceLock::new();
    IN_FLIGHT.get_or_init(Default::default)
}

/// Marks a recreation of `old_id` in flight in this process until dropped.
pub(crate) struct InFlight(String);

impl InFlight {
    /// Marks `old_id`.
    pub(crate) fn mark(old_id: &str) -> InFlight {
        in_flight()
            .lock()
            .expect("in-flight set poisoned")
            .insert(old_id.into());
        InFlight(old_id.into())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        in_flight()
            .lock()
            .expect("in-flight set poisoned")
            .remove(&self.0);
    }
}

/// Whether a replacement is stale: its recreating process is dead, or is this process with no
/// recreation of that container in flight. `unknown` is never stale.
pub(crate) fn is_stale(r: &Replacement) -> bool {
    match &r.holder {
        None => false,
        Some(h) if h.is_current() => !in_flight()
            .lock()
            .expect("in-flight set poisoned")
            .contains(&r.old_id),
        Some(h) => liveness(h) == Liveness::Dead,
    }
}

/// What a recovery did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Settled {
    /// The new container had been verified: the old one was removed.
    Completed,
    /// The new container (if any) was removed; the old one is back under its name.
    RolledBack,
    /// Another container took the name meanwhile: the old one stays aside, the record stays.
    NameTaken,
}

impl Settled {
    /// `completed`, `rolled-back` or `name-taken`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Settled::Completed => "completed",
            Settled::RolledBack => "rolled-back",
            Settled::NameTaken => "name-taken",
        }
    }
}

/// Every lock record on the engine, as `(labels, replacement)`.
/// `GET /volumes?filters={"label":["dev.berth.record=replace"]}`.
pub(crate) async fn list(engine: &Engine) -> Result<Vec<(HashMap<String, String>, Replacement)>> {
    Ok(records::list(engine, None)
        .await?
        .into_iter()
        .filter_map(|(_, labels)| Replacement::decode(&labels).map(|r| (labels, r)))
        .collect())
}

/// Settles every stale replacement of container name `name`; returns the holder of one still
/// in progress (`Some(None)`: its holder is unreadable), or `None`.
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn settle_name(engine: &Engine, name: &str) -> Result<Option<Option<Owner>>> {
    let mut busy = None;
    for (_, r) in list(engine)
        .await?
        .into_iter()
        .filter(|(_, r)| r.name == name)
    {
        if is_stale(&r) {
            settle(engine, &r).await?;
        } else {
            busy = Some(r.holder.clone());
        }
    }
    Ok(busy)
}

/// Finishes or rolls back replacement `r` (see the module docs). Idempotent: a recovery cut
/// short is taken up again by the next one.
/// Engine calls: `GET /volumes/berth-replaced-<old id>`, `GET /containers/{id}/json`,
/// `GET /containers/{name}/json`, `DELETE /containers/{id}?force=true&v=true`,
/// `POST /containers/{old id}/rename?name=<name>`, `POST /containers/{old id}/start`,
/// `DELETE /volumes/{name}`. Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn settle(engine: &Engine, r: &Replacement) -> Result<Settled> {
    let committed =
        match crate::engine::volumes::inspect(engine, &replaced_volume(&r.old_id)).await? {
            Ok(v) => v.labels.get(RECORD_CONTAINER_ID) == Some(&r.old_id),
            Err(e) if status(&e) == Some(404) => false,
            Err(e) => return Err(engine.error("read replacement record", e)),
        };
    if committed {
        remove_by_id(engine, &r.old_id).await?;
        drop_records(engine, &r.old_id).await?;
        return Ok(Settled::Completed);
    }
    if let Some(c) = inspect(engine, &r.name).await? {
        let f = Facts::from_inspect(&c);
        if f.id != r.old_id {
            let ours = f.owner().is_some() && f.owner() == r.holder.as_ref();
            if !ours {
                return Ok(Settled::NameTaken);
            }
            remove_by_id(engine, &f.id).await?;
        }
    }
    roll_back_old(engine, r).await?;
    Ok(Settled::RolledBack)
}

/// Puts the old container back: renamed to its name (unless it is gone or there already),
/// started again when it ran, and the lock record deleted.
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE` (the record is kept for the next recovery).
pub(crate) async fn roll_back_old(engine: &Engine, r: &Replacement) -> Result<()> {
    if let Some(c) = inspect(engine, &r.old_id).await? {
        let f = Facts::from_inspect(&c);
        if f.name != r.name {
            rename(engine, &r.old_id, &r.name).await?;
        }
        if r.was_running {
            crate::engine::calls::wake(engine, &c).await?;
        }
    }
    drop_records(engine, &r.old_id).await
}

/// Renames container `id` to `name`: `POST /containers/{id}/rename?name=<name>`. A refusal is
/// checked by inspecting `id` (it may already carry the name), never by message text.
/// Errors: `E_ENGINE` (404 when the container is gone), `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn rename(engine: &Engine, id: &str, name: &str) -> Result<()> {
    match crate::engine::calls::rename(engine, id, name).await? {
        Ok(()) => Ok(()),
        Err(e) => match inspect(engine, id).await? {
            Some(c) if Facts::from_inspect(&c).name == name => Ok(()),
            _ => Err(engine.error("rename container", e)),
        },
    }
}

/// Deletes the lock record and the commit mark of old container `old_id`.
pub(crate) async fn drop_records(engine: &Engine, old_id: &str) -> Result<()> {
    records::delete(engine, &replace_volume(old_id)).await?;
    records::delete(engine, &replaced_volume(old_id)).await
}

/// Takes the lock for `r`: `POST /volumes/create` of `berth-replace-<old id>`. `Ok(None)`
/// when this process holds it now, else the holder of the lock found (`Some(None)`: unreadable).
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn lock(
    engine: &Engine,
    r: &Replacement,
    extra: &HashMap<String, String>,
) -> Result<Option<Option<Owner>>> {
    let back = records::create(
        engine,
        &replace_volume(&r.old_id),
        r.labels(extra),
        "record session replacement",
    )
    .await?;
    if back.get(holders::TOKEN) == Some(&r.token) {
        return Ok(None);
    }
    Ok(Some(Replacement::decode(&back).and_then(|o| o.holder)))
}

/// Writes the commit mark: `POST /volumes/create` of `berth-replaced-<old id>`.
/// Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn commit(
    engine: &Engine,
    old_id: &str,
    new_id: &str,
    extra: &HashMap<String, String>,
) -> Result<()> {
    let mut l: HashMap<String, String> = crate::model::labels::record_labels(extra);
    l.insert(MANAGED.into(), "true".into());
    l.insert(RECORD_KIND.into(), KIND_REPLACED.into());
    l.insert(RECORD_CONTAINER_ID.into(), old_id.into());
    l.insert(NEW_ID.into(), new_id.into());
    records::create(
        engine,
        &replaced_volume(old_id),
        l,
        "record session replacement",
    )
    .await?;
    Ok(())
}

/// The error for a session name with no container: `E_SESSION_BUSY` (`recreating`) while a
/// replacement of that name is recorded (the old container is aside, the new one not made
/// yet), else `E_SESSION_NOT_FOUND`. Reads the records again, after the failed inspect, so a
/// recreation that started in between is seen. Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn absent(engine: &Engine, session_id: &str, name: &str) -> Result<Error> {
    let recorded = list(engine)
        .await?
        .into_iter()
        .find(|(_, r)| r.name == name);
    Ok(match recorded {
        Some((_, r)) => busy(session_id, name, &r.old_id, r.holder.as_ref()),
        None => Error::SessionNotFound {
            session_id: session_id.into(),
            name: name.into(),
        },
    })
}

/// Whether a container inspected by the session's `name` answered under another name: a
/// recreation renamed it aside between the engine's name lookup and its answer.
pub(crate) fn renamed_meanwhile(f: &Facts, name: &str) -> bool {
    f.name != name
}

/// The error for a session whose container is being replaced by a live (or unknown) process.
pub(crate) fn busy(session_id: &str, name: &str, id: &str, holder: Option<&Owner>) -> Error {
    Error::SessionBusy {
        session_id: session_id.into(),
        name: name.into(),
        id: id.into(),
        reason: "recreating".into(),
        owner: holder
            .map(Owner::to_json)
            .unwrap_or(serde_json::Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> Owner {
        Owner {
            host_id: "h".repeat(32),
            pid: 4242,
            start_time: "99".into(),
            instance_id: "i".repeat(32),
        }
    }

    #[test]
    fn lock_records_round_trip_and_damage_is_protective() {
        let id = "0123456789abcdef".repeat(4);
        let r = Replacement::new(&id, "berth-x", true, &me());
        assert_eq!(r.aside, "berth-x-replaced-0123456789ab");
        let extra = HashMap::from([
            ("team".to_string(), "a".to_string()),
            ("dev.berth.managed".to_string(), "forged".to_string()),
        ]);
        let l = r.labels(&extra);
        assert_eq!(l["team"], "a");
        assert_eq!(l[MANAGED], "true");
        assert_eq!(Replacement::decode(&l), Some(r.clone()));
        let mut damaged = l.clone();
        damaged.insert(holders::PID.into(), "x".into());
        let d = Replacement::decode(&damaged).unwrap();
        assert_eq!(d.holder, None);
        assert!(!is_stale(&d), "an unreadable holder is never stale");
        let mut other = l;
        other.insert(RECORD_KIND.into(), "holder".into());
        assert_eq!(Replacement::decode(&other), None);
    }
}

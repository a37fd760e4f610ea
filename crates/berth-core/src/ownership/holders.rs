//! Holders: the format of holder and duty records (labelled engine volumes) and the rules that read them.
//!
//! Every handle on a session writes one record, an empty volume whose labels say who
//! holds which container (role, host id, pid, start time, instance id):
//!
//! - `berth-holder-<container id>-<token>`: a creator's or an adopter's hold;
//! - `berth-duty-<container id>-<n>`: generation `n` of the duty to remove, claimed by a
//!   take-over. Generation 0 is implicit: the creator named in the container's labels.
//!
//! A volume name the engine already has is never created twice: `POST /volumes/create`
//! answers with the existing volume and its first creator's labels, so creating a record
//! and reading its labels back is a compare-and-set (the random `token` label tells
//! whose claim won). Records are read protectively: anything this build cannot fully
//! parse (unknown schema, missing or garbled fields, a role that does not fit the
//! kind, a name that does not fit the labels) counts as a holder of `unknown`
//! liveness, never as a dead one.

use std::collections::HashMap;

use crate::model::identity::{liveness, Liveness, Owner};
use crate::model::labels::{MANAGED, RECORD_CONTAINER_ID, RECORD_KIND};

/// Schema version of a record's labels.
pub(crate) const RECORD_SCHEMA: &str = "dev.berth.record.schema";
/// The record schema this build writes and fully trusts.
pub(crate) const RECORD_SCHEMA_VERSION: &str = "1";
/// `creator`, `adopter` or `inheritor`.
pub(crate) const ROLE: &str = "dev.berth.holder.role";
/// Holder host id (machine id + boot id + pid namespace, hashed).
pub(crate) const HOST_ID: &str = "dev.berth.holder.host-id";
/// Holder process id.
pub(crate) const PID: &str = "dev.berth.holder.pid";
/// Holder process start time, in clock ticks since boot.
pub(crate) const START_TIME: &str = "dev.berth.holder.start-time";
/// Holder per-process random instance id.
pub(crate) const INSTANCE_ID: &str = "dev.berth.holder.instance-id";
/// Random token of this record (32 hex chars): whose create made the volume.
pub(crate) const TOKEN: &str = "dev.berth.holder.token";
/// Duty generation (decimal, from 1) of a duty record.
pub(crate) const GENERATION: &str = "dev.berth.duty.generation";
/// On a duty record claimed by a handover (`"true"`): the claim counts as in progress until
/// its settled record exists (see [`crate::ownership::settled`]).
pub(crate) const HANDOVER: &str = "dev.berth.duty.handover";

/// `dev.berth.record` value of a holder record.
pub(crate) const KIND_HOLDER: &str = "holder";
/// `dev.berth.record` value of a duty record.
pub(crate) const KIND_DUTY: &str = "duty";

/// How a holder came to hold a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Created the container (its record is a holder record; its duty is generation 0).
    Creator,
    /// Resumed it without the duty to remove.
    Adopter,
    /// Took the duty to remove over from a dead owner (a duty record).
    Inheritor,
}

impl Role {
    /// `creator`, `adopter` or `inheritor`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Creator => "creator",
            Role::Adopter => "adopter",
            Role::Inheritor => "inheritor",
        }
    }

    fn parse(s: &str) -> Option<Role> {
        match s {
            "creator" => Some(Role::Creator),
            "adopter" => Some(Role::Adopter),
            "inheritor" => Some(Role::Inheritor),
            _ => None,
        }
    }
}

/// A record that parsed completely.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    /// The holder's role.
    pub role: Role,
    /// The holder process.
    pub holder: Owner,
    /// The record's random token.
    pub token: String,
    /// The duty generation, for a duty record.
    pub generation: Option<u64>,
    /// A duty record claimed by a handover (in progress until settled).
    pub handover: bool,
}

/// One holder or duty record as read from the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The volume name.
    pub volume: String,
    /// The container id it names.
    pub container_id: String,
    /// Whether it is a duty record (by its name).
    pub duty_generation: Option<u64>,
    /// The parsed hold, or why it was refused (then its liveness is `unknown`).
    pub hold: Result<Hold, String>,
}

impl Record {
    /// The holder's liveness: `unknown` for a refused record.
    pub fn liveness(&self) -> Liveness {
        self.liveness_with(&liveness)
    }

    /// [`Record::liveness`] with the liveness rule injected (tests).
    pub fn liveness_with(&self, rule: &dyn Fn(&Owner) -> Liveness) -> Liveness {
        match &self.hold {
            Ok(h) => rule(&h.holder),
            Err(_) => Liveness::Unknown,
        }
    }

    /// The role label, when it parses (also for a refused record).
    pub fn role(&self) -> Option<Role> {
        self.hold.as_ref().ok().map(|h| h.role)
    }

    /// Whether this record was written by `me` (same host, pid, start time and instance).
    pub fn is_of(&self, me: &Owner) -> bool {
        self.hold.as_ref().is_ok_and(|h| &h.holder == me)
    }
}

/// `berth-holder-<container id>-<token>`.
pub(crate) fn holder_volume(container_id: &str, token: &str) -> String {
    format!("berth-holder-{container_id}-{token}")
}

/// `berth-duty-<container id>-<generation>`.
pub(crate) fn duty_volume(container_id: &str, generation: u64) -> String {
    format!("berth-duty-{container_id}-{generation}")
}

/// A fresh random record token (32 hex chars).
pub(crate) fn new_token() -> String {
    hex::encode(rand::random::<[u8; 16]>())
}

/// The labels of a new record. `extra` (the container's labels: its caller labels, session id
/// and prefix, see [`crate::model::labels::record_labels`]) are copied so that records can be
/// found by the same labels as their container.
pub(crate) fn encode(
    container_id: &str,
    role: Role,
    holder: &Owner,
    token: &str,
    generation: Option<u64>,
    extra: &HashMap<String, String>,
) -> HashMap<String, String> {
    let mut l: HashMap<String, String> = crate::model::labels::record_labels(extra);
    let kind = if generation.is_some() {
        KIND_DUTY
    } else {
        KIND_HOLDER
    };
    l.insert(MANAGED.into(), "true".into());
    l.insert(RECORD_KIND.into(), kind.into());
    l.insert(RECORD_SCHEMA.into(), RECORD_SCHEMA_VERSION.into());
    l.insert(RECORD_CONTAINER_ID.into(), container_id.into());
    l.insert(ROLE.into(), role.as_str().into());
    l.insert(HOST_ID.into(), holder.host_id.clone());
    l.insert(PID.into(), holder.pid.to_string());
    l.insert(START_TIME.into(), holder.start_time.clone());
    l.insert(INSTANCE_ID.into(), holder.instance_id.clone());
    l.insert(TOKEN.into(), token.into());
    if let Some(g) = generation {
        l.insert(GENERATION.into(), g.to_string());
    }
    l
}

/// The duty generation a volume name claims for `container_id`, when it is a duty record name.
pub(crate) fn generation_of(volume: &str, container_id: &str) -> Option<u64> {
    let rest = volume
        .strip_prefix("berth-duty-")?
        .strip_prefix(container_id)?;
    let n = rest.strip_prefix('-')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || (n.len() > 1 && n.starts_with('0'))
    {
        return None;
    }
    n.parse().ok().filter(|g| *g > 0)
}

/// Reads a volume as a record. `None` when it is not a holder or duty record (no berth
/// record kind, or another kind such as `ready`); a record of ours that does not parse
/// completely comes back with `hold: Err(reason)`.
pub(crate) fn decode(volume: &str, labels: &HashMap<String, String>) -> Option<Record> {
    let kind = labels.get(RECORD_KIND)?;
    let by_name = (kind == KIND_HOLDER && volume.starts_with("berth-holder-"))
        || (kind == KIND_DUTY && volume.starts_with("berth-duty-"));
    if kind != KIND_HOLDER && kind != KIND_DUTY {
        return None;
    }
    let container_id = labels.get(RECORD_CONTAINER_ID).cloned().unwrap_or_default();
    let duty_generation = generation_of(volume, &container_id);
    let hold = (|| {
        if !by_name {
            return Err(format!("a {kind} record under the name `{volume}`"));
        }
        match labels.get(RECORD_SCHEMA).map(String::as_str) {
            Some(RECORD_SCHEMA_VERSION) => {}
            Some(v) => return Err(format!("unknown record schema version {v:?}")),
            None => return Err("no record schema version".into()),
        }
        if container_id.len() < 12 || !container_id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err("missing or malformed container id".into());
        }
        let field = |k: &str| {
            labels
                .get(k)
                .filter(|v| !v.is_empty())
                .cloned()
                .ok_or_else(|| format!("missing {k}"))
        };
        let role = Role::parse(&field(ROLE)?).ok_or("unknown role")?;
        let pid: u32 = field(PID)?
            .parse()
            .ok()
            .filter(|p| *p > 0)
            .ok_or("malformed pid")?;
        let start_time = field(START_TIME)?;
        if !start_time.bytes().all(|b| b.is_ascii_digit()) {
            return Err("malformed start time".into());
        }
        let token = field(TOKEN)?;
        let generation = match labels.get(GENERATION) {
            None => None,
            Some(g) => Some(g.parse::<u64>().map_err(|_| "malformed generation")?),
        };
        match (kind.as_str(), role, generation) {
            (KIND_HOLDER, Role::Creator | Role::Adopter, None) => {}
            (KIND_DUTY, Role::Inheritor, Some(g)) if Some(g) == duty_generation => {}
            _ => {
                return Err(format!(
                    "role {} does not fit a {kind} record",
                    role.as_str()
                ))
            }
        }
        if kind == KIND_HOLDER && volume != holder_volume(&container_id, &token) {
            return Err("the name does not match the record's token".into());
        }
        Ok(Hold {
            role,
            holder: Owner {
                host_id: field(HOST_ID)?,
                pid,
                start_time,
                instance_id: field(INSTANCE_ID)?,
            },
            token,
            generation,
            handover: labels.get(HANDOVER).map(String::as_str) == Some("true"),
        })
    })();
    Some(Record {
        volume: volume.into(),
        container_id,
        duty_generation,
        hold,
    })
}

/// Who has the duty to remove a container now: the highest duty generation, or the creator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Duty<'a> {
    /// No take-over happened: the creator from the labels (`None` when they do not parse).
    Creator(Option<&'a Owner>),
    /// The record of the highest generation (refused records included: then `unknown`).
    Generation(&'a Record),
}

impl<'a> Duty<'a> {
    /// The current generation number (0 for the creator).
    pub(crate) fn generation(&self) -> u64 {
        match self {
            Duty::Creator(_) => 0,
            Duty::Generation(r) => r.duty_generation.unwrap_or(0),
        }
    }

    /// The duty holder's liveness under `rule`; `unknown` when unreadable.
    pub(crate) fn liveness_with(&self, rule: &dyn Fn(&Owner) -> Liveness) -> Liveness {
        match self {
            Duty::Creator(Some(o)) => rule(o),
            Duty::Creator(None) => Liveness::Unknown,
            Duty::Generation(r) => r.liveness_with(rule),
        }
    }

    /// The duty holder, when readable.
    pub(crate) fn holder(&self) -> Option<&'a Owner> {
        match self {
            Duty::Creator(o) => *o,
            Duty::Generation(r) => r.hold.as_ref().ok().map(|h| &h.holder),
        }
    }
}

/// The current duty of a container given its creator and its records.
pub(crate) fn duty<'a>(creator: Option<&'a Owner>, records: &'a [Record]) -> Duty<'a> {
    records
        .iter()
        .filter(|r| r.duty_generation.is_some())
        .max_by_key(|r| r.duty_generation)
        .map(Duty::Generation)
        .unwrap_or(Duty::Creator(creator))
}

/// What the reaper decides about one managed container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Leave it; the reason is stable (`owner-alive`, `owner-unknown`, `held`).
    Keep(&'static str),
    /// Remove it; the reason is stable (`owner-dead`, `incomplete`).
    Reap(&'static str),
}

/// The orphan rule (`docs/design.md#ownership-and-removal`): reap when the duty holder is dead (never unknown) and no
/// other record is alive or unknown; a dead owner's unready container is `incomplete`.
/// A ready session whose lifetime has not ended (`lifetime_pending`: it has an `expiresAt`
/// still in the future, see [`crate::model::lifetime::expires_at`]) is `parked` instead of
/// reaped: its lifetime governs it once its owner is gone (`docs/design.md#parked-sessions-and-handover`).
pub(crate) fn verdict(
    ready: bool,
    creator: Option<&Owner>,
    records: &[Record],
    lifetime_pending: bool,
    rule: &dyn Fn(&Owner) -> Liveness,
) -> Verdict {
    let d = duty(creator, records);
    match d.liveness_with(rule) {
        Liveness::Alive => return Verdict::Keep("owner-alive"),
        Liveness::Unknown => return Verdict::Keep("owner-unknown"),
        Liveness::Dead => {}
    }
    let duty_volume = match &d {
        Duty::Generation(r) => Some(r.volume.as_str()),
        Duty::Creator(_) => None,
    };
    let held = records
        .iter()
        .filter(|r| Some(r.volume.as_str()) != duty_volume)
        .any(|r| r.liveness_with(rule) != Liveness::Dead);
    if held {
        Verdict::Keep("held")
    } else if !ready {
        Verdict::Reap("incomplete")
    } else if lifetime_pending {
        Verdict::Keep(PARKED)
    } else {
        Verdict::Reap("owner-dead")
    }
}

/// The reason and lifecycle word of a ready session whose owner is gone and whose lifetime
/// has not ended: kept until its deadline.
pub(crate) const PARKED: &str = "parked";

/// Where a listed session stands (`lifecycle` in `listSessions`/`peek`): `expired` (past its
/// `expiresAt`, removed by the next reap), `parked` (owner gone, kept until its lifetime
/// ends), `orphan` (the next reap removes it: owner dead, no live holder, no lifetime, or
/// never ready), `held` (a live or unknown process holds it).
pub(crate) fn lifecycle(expired: bool, v: Verdict) -> &'static str {
    match (expired, v) {
        (true, _) => "expired",
        (false, Verdict::Keep(PARKED)) => PARKED,
        (false, Verdict::Reap(_)) => "orphan",
        (false, Verdict::Keep(_)) => "held",
    }
}

/// The first live or unknown holder other than `me` (the creator and the duty holder
/// included), for `exclusive` resumes. `None` when only `me` and the dead hold it.
pub(crate) fn other_holder<'a>(
    creator: Option<&'a Owner>,
    records: &'a [Record],
    me: &Owner,
    rule: &dyn Fn(&Owner) -> Liveness,
) -> Option<Option<&'a Owner>> {
    let d = duty(creator, records);
    let duty_is_me = d.holder().is_some_and(|h| h == me);
    if !duty_is_me && d.liveness_with(rule) != Liveness::Dead {
        return Some(d.holder());
    }
    records
        .iter()
        .filter(|r| !r.is_of(me))
        .find(|r| r.liveness_with(rule) != Liveness::Dead)
        .map(|r| r.hold.as_ref().ok().map(|h| &h.holder))
}

#[cfg(test)]
mod tests {
    use super::*;

    type Damage = fn(&mut HashMap<String, String>);

    const CID: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn owner(pid: u32) -> Owner {
        Owner {
            host_id: "h".repeat(32),
            pid,
            start_time: format!("{}", pid * 10),
            instance_id: format!("inst{pid}"),
        }
    }

    /// pid 1xx alive, 2xx dead, anything else unknown.
    fn rule(o: &Owner) -> Liveness {
        match o.pid / 100 {
            1 => Liveness::Alive,
            2 => Liveness::Dead,
            _ => Liveness::Unknown,
        }
    }

    fn holder_record(role: Role, pid: u32) -> Record {
        let token = format!("t{pid}");
        let l = encode(CID, role, &owner(pid), &token, None, &HashMap::new());
        decode(&holder_volume(CID, &token), &l).unwrap()
    }

    fn duty_record(g: u64, pid: u32) -> Record {
        let l = encode(
            CID,
            Role::Inheritor,
            &owner(pid),
            "tok",
            Some(g),
            &HashMap::new(),
        );
        decode(&duty_volume(CID, g), &l).unwrap()
    }

    #[test]
    fn round_trip_and_caller_labels() {
        let extra = HashMap::from([
            ("team".to_string(), "a".to_string()),
            ("dev.berth.managed".to_string(), "forged".to_string()),
        ]);
        let l = encode(CID, Role::Adopter, &owner(101), "tk", None, &extra);
        assert_eq!(l["team"], "a");
        assert_eq!(l[MANAGED], "true");
        let r = decode(&holder_volume(CID, "tk"), &l).unwrap();
        let h = r.hold.clone().unwrap();
        assert_eq!(
            (h.role, h.holder, h.generation),
            (Role::Adopter, owner(101), None)
        );
        assert_eq!(r.liveness_with(&rule), Liveness::Alive);
        let d = duty_record(3, 205);
        assert_eq!(d.duty_generation, Some(3));
        assert_eq!(d.hold.unwrap().role, Role::Inheritor);
    }

    #[test]
    fn not_a_holder_record() {
        let mut l = HashMap::new();
        assert!(decode("x", &l).is_none());
        l.insert(RECORD_KIND.to_string(), "ready".to_string());
        assert!(decode("berth-ready-x", &l).is_none());
    }

    /// Every damaged record is refused and counts as `unknown`, never `dead`.
    #[test]
    fn damaged_records_are_refused_and_protective() {
        let good = encode(CID, Role::Adopter, &owner(205), "tk", None, &HashMap::new());
        let name = holder_volume(CID, "tk");
        assert_eq!(
            decode(&name, &good).unwrap().liveness_with(&rule),
            Liveness::Dead,
            "the intact record of a dead holder is dead"
        );
        let damaged: Vec<(&str, Damage)> = vec![
            (
                "truncated",
                (|l| {
                    l.remove(START_TIME);
                }),
            ),
            (
                "truncated token",
                (|l| {
                    l.remove(TOKEN);
                }),
            ),
            (
                "empty pid",
                (|l| {
                    l.insert(PID.into(), String::new());
                }),
            ),
            (
                "garbled pid",
                (|l| {
                    l.insert(PID.into(), "12x".into());
                }),
            ),
            (
                "garbled start",
                (|l| {
                    l.insert(START_TIME.into(), "-5".into());
                }),
            ),
            (
                "foreign version",
                (|l| {
                    l.insert(RECORD_SCHEMA.into(), "2".into());
                }),
            ),
            (
                "no version",
                (|l| {
                    l.remove(RECORD_SCHEMA);
                }),
            ),
            (
                "wrong mode: inheritor in a holder record",
                (|l| {
                    l.insert(ROLE.into(), "inheritor".into());
                }),
            ),
            (
                "wrong mode: generation in a holder record",
                (|l| {
                    l.insert(GENERATION.into(), "1".into());
                }),
            ),
            (
                "unknown role",
                (|l| {
                    l.insert(ROLE.into(), "janitor".into());
                }),
            ),
            (
                "other container",
                (|l| {
                    l.insert(RECORD_CONTAINER_ID.into(), "f".repeat(64));
                }),
            ),
        ];
        for (what, damage) in damaged {
            let mut l = good.clone();
            damage(&mut l);
            let r = decode(&name, &l).unwrap();
            assert!(r.hold.is_err(), "{what}: refused");
            assert_eq!(
                r.liveness_with(&rule),
                Liveness::Unknown,
                "{what}: protective"
            );
        }
        // A holder record under a duty name, and a duty record whose label disagrees with its name.
        let r = decode(&duty_volume(CID, 1), &good).unwrap();
        assert!(r.hold.is_err());
        let mut d = encode(
            CID,
            Role::Inheritor,
            &owner(205),
            "tk",
            Some(2),
            &HashMap::new(),
        );
        assert!(decode(&duty_volume(CID, 1), &d).unwrap().hold.is_err());
        d.insert(ROLE.into(), "adopter".into());
        assert!(decode(&duty_volume(CID, 2), &d).unwrap().hold.is_err());
    }

    #[test]
    fn generations_from_names() {
        assert_eq!(generation_of(&duty_volume(CID, 7), CID), Some(7));
        assert_eq!(generation_of(&format!("berth-duty-{CID}-0"), CID), None);
        assert_eq!(generation_of(&format!("berth-duty-{CID}-07"), CID), None);
        assert_eq!(generation_of(&format!("berth-duty-{CID}-x"), CID), None);
        assert_eq!(generation_of(&duty_volume("other", 1), CID), None);
    }

    #[test]
    fn duty_passes_to_the_highest_generation() {
        let creator = owner(201);
        assert_eq!(duty(Some(&creator), &[]), Duty::Creator(Some(&creator)));
        let records = vec![
            duty_record(1, 202),
            holder_record(Role::Adopter, 101),
            duty_record(2, 103),
        ];
        let d = duty(Some(&creator), &records);
        assert_eq!(d.generation(), 2);
        assert_eq!(d.liveness_with(&rule), Liveness::Alive);
        // A refused record at the top generation makes the duty unknown.
        let mut broken = duty_record(3, 204);
        broken.hold = Err("garbled".into());
        let with_broken = vec![duty_record(1, 202), broken];
        assert_eq!(
            duty(Some(&creator), &with_broken).liveness_with(&rule),
            Liveness::Unknown
        );
    }

    #[test]
    fn reap_rules() {
        let dead = owner(201);
        let alive = owner(101);
        let unknown = owner(301);
        let v = |ready, creator: &Owner, records: &[Record]| {
            verdict(ready, Some(creator), records, false, &rule)
        };
        assert_eq!(v(true, &alive, &[]), Verdict::Keep("owner-alive"));
        assert_eq!(v(true, &unknown, &[]), Verdict::Keep("owner-unknown"));
        assert_eq!(
            verdict(true, None, &[], false, &rule),
            Verdict::Keep("owner-unknown")
        );
        assert_eq!(v(true, &dead, &[]), Verdict::Reap("owner-dead"));
        assert_eq!(v(false, &dead, &[]), Verdict::Reap("incomplete"));
        // The dead creator's own record and dead adopters do not hold it.
        let stale = [
            holder_record(Role::Creator, 201),
            holder_record(Role::Adopter, 202),
        ];
        assert_eq!(v(true, &dead, &stale), Verdict::Reap("owner-dead"));
        // A live or unknown adopter holds it.
        assert_eq!(
            v(true, &dead, &[holder_record(Role::Adopter, 102)]),
            Verdict::Keep("held")
        );
        assert_eq!(
            v(true, &dead, &[holder_record(Role::Adopter, 302)]),
            Verdict::Keep("held")
        );
        // An inheritor that lives keeps it; once it is dead the container is an orphan again.
        assert_eq!(
            v(true, &dead, &[duty_record(1, 103)]),
            Verdict::Keep("owner-alive")
        );
        assert_eq!(
            v(true, &dead, &[duty_record(1, 203)]),
            Verdict::Reap("owner-dead")
        );
        // A dead owner's session with a lifetime still to run is parked, not reaped; an
        // unready one is still incomplete.
        assert_eq!(
            verdict(true, Some(&dead), &stale, true, &rule),
            Verdict::Keep(PARKED)
        );
        assert_eq!(
            verdict(false, Some(&dead), &[], true, &rule),
            Verdict::Reap("incomplete")
        );
        assert_eq!(
            verdict(true, Some(&alive), &[], true, &rule),
            Verdict::Keep("owner-alive")
        );
        assert_eq!(lifecycle(false, Verdict::Keep(PARKED)), "parked");
        assert_eq!(lifecycle(true, Verdict::Keep(PARKED)), "expired");
        assert_eq!(lifecycle(false, Verdict::Reap("owner-dead")), "orphan");
        assert_eq!(lifecycle(false, Verdict::Keep("held")), "held");
        // A refused record is never taken as dead.
        let mut refused = holder_record(Role::Adopter, 204);
        refused.hold = Err("foreign".into());
        assert_eq!(v(true, &dead, &[refused]), Verdict::Keep("held"));
    }

    #[test]
    fn exclusive_sees_others_but_not_me() {
        let me = owner(101);
        let dead = owner(201);
        assert_eq!(other_holder(Some(&me), &[], &me, &rule), None);
        assert_eq!(other_holder(Some(&dead), &[], &me, &rule), None);
        let other = owner(102);
        assert_eq!(
            other_holder(Some(&other), &[], &me, &rule),
            Some(Some(&other))
        );
        let mine = holder_record(Role::Adopter, 101);
        assert_eq!(
            other_holder(Some(&dead), std::slice::from_ref(&mine), &me, &rule),
            None
        );
        let theirs = holder_record(Role::Adopter, 302);
        assert!(other_holder(Some(&dead), &[mine, theirs], &me, &rule).is_some());
        assert_eq!(
            other_holder(None, &[], &me, &rule),
            Some(None),
            "unreadable owner"
        );
    }
}

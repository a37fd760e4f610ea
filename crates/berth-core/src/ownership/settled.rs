//! Settled records: a handover's claim of the duty to remove is in progress until its
//! claimant records it settled, and an in-progress handover of a live process fences every
//! other one (see `docs/design.md#parked-sessions-and-handover`).
//!
//! A handover claims duty generation `n + 1` (`berth-duty-<id>-<n+1>`, labelled
//! [`HANDOVER`](crate::ownership::holders::HANDOVER)), wakes the container, checks it still
//! holds the highest generation, then creates `berth-settled-<container id>-<n+1>`. A
//! handover that reads a highest generation claimed by another handover and not settled,
//! whose claimant is alive or unknown, lost the race: it claims nothing and rejects
//! `E_SESSION_BUSY` (`taken-over`). Both records are volumes created once by name, so the
//! order "claim, then settle" is seen the same way by every process on the engine. The
//! records go with the container ([`crate::ownership::records::remove_records`]).

use std::collections::HashMap;

use crate::engine::connection::Engine;
use crate::model::errors::Result;
use crate::model::identity::{Liveness, Owner};
use crate::ownership::holders::{Duty, GENERATION};
use crate::ownership::records;

/// `dev.berth.record` value of a settled record.
pub(crate) const KIND_SETTLED: &str = "settled";

fn volume(container_id: &str, generation: u64) -> String {
    format!("berth-settled-{container_id}-{generation}")
}

/// The duty generation one settled record settles, when `name`/`labels` are one for
/// `container_id`.
pub(crate) fn decode(
    name: &str,
    labels: &HashMap<String, String>,
    container_id: &str,
) -> Option<u64> {
    records::decode_numbered(name, labels, container_id, KIND_SETTLED, GENERATION, |g| {
        volume(container_id, g)
    })
}

/// Records that the handover holding duty generation `generation` of container
/// `container_id` finished. `extra`: the container's labels (caller labels, session id and
/// prefix, so a narrowed reap finds it). `POST /volumes/create`; an existing record counts
/// as done. Errors: `E_ENGINE`, `E_ENGINE_UNAVAILABLE`.
pub(crate) async fn settle(
    engine: &Engine,
    container_id: &str,
    generation: u64,
    extra: &HashMap<String, String>,
) -> Result<()> {
    records::create_numbered(
        engine,
        container_id,
        KIND_SETTLED,
        (GENERATION, generation),
        &volume(container_id, generation),
        extra,
        "record session handover settled",
    )
    .await
}

/// The claimant of a handover still in progress, which fences any other handover: the
/// current duty is a handover's claim (generation `n`, labelled so), `settled` has no `n`,
/// and its claimant is not dead under `rule` (alive, or unknown: an unreadable record or
/// another host). `Some(None)` when the claimant is unreadable. A dead claimant's
/// unfinished handover fences nothing (its process is gone; the next handover claims
/// `n + 1`).
pub(crate) fn in_progress<'a>(
    current: &Duty<'a>,
    settled: &[u64],
    rule: &dyn Fn(&Owner) -> Liveness,
) -> Option<Option<&'a Owner>> {
    let Duty::Generation(r) = current else {
        return None;
    };
    let g = r.duty_generation?;
    let handover = match &r.hold {
        Ok(h) => h.handover,
        // An unreadable duty record: its claim cannot be judged, so it counts as in progress.
        Err(_) => true,
    };
    if !handover || settled.contains(&g) || current.liveness_with(rule) == Liveness::Dead {
        return None;
    }
    Some(current.holder())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::labels::{RECORD_CONTAINER_ID, RECORD_KIND};
    use crate::ownership::holders::{decode as decode_record, duty, duty_volume, encode, Role};

    const CID: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn owner(pid: u32) -> Owner {
        Owner {
            host_id: "h".into(),
            pid,
            start_time: "1".into(),
            instance_id: "i".into(),
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

    fn claim(g: u64, pid: u32, handover: bool) -> crate::ownership::holders::Record {
        let mut l = encode(
            CID,
            Role::Inheritor,
            &owner(pid),
            "tok",
            Some(g),
            &HashMap::new(),
        );
        if handover {
            l.insert(crate::ownership::holders::HANDOVER.into(), "true".into());
        }
        decode_record(&duty_volume(CID, g), &l).unwrap()
    }

    #[test]
    fn an_unsettled_handover_of_a_live_or_unknown_claimant_fences_others() {
        let creator = owner(100);
        let recs = [claim(1, 101, true)];
        let d = duty(Some(&creator), &recs);
        assert_eq!(in_progress(&d, &[], &rule), Some(Some(&owner(101))));
        let recs = [claim(1, 301, true)];
        let d = duty(Some(&creator), &recs);
        assert_eq!(in_progress(&d, &[], &rule), Some(Some(&owner(301))));
    }

    #[test]
    fn settled_dead_take_over_and_creator_duties_fence_nothing() {
        let creator = owner(100);
        assert_eq!(in_progress(&duty(Some(&creator), &[]), &[], &rule), None);
        let settled = [claim(1, 101, true)];
        assert_eq!(
            in_progress(&duty(Some(&creator), &settled), &[1], &rule),
            None
        );
        let dead = [claim(2, 201, true)];
        assert_eq!(in_progress(&duty(Some(&creator), &dead), &[1], &rule), None);
        let take_over = [claim(1, 101, false)];
        assert_eq!(
            in_progress(&duty(Some(&creator), &take_over), &[], &rule),
            None
        );
        // Only the highest generation counts: an older settled one does not settle it.
        let both = [claim(1, 101, true), claim(2, 102, true)];
        assert_eq!(
            in_progress(&duty(Some(&creator), &both), &[1], &rule),
            Some(Some(&owner(102)))
        );
    }

    #[test]
    fn decodes_only_its_own_records() {
        let labels = HashMap::from([
            (RECORD_KIND.to_string(), KIND_SETTLED.to_string()),
            (RECORD_CONTAINER_ID.to_string(), CID.to_string()),
            (GENERATION.to_string(), "3".to_string()),
        ]);
        assert_eq!(decode(&volume(CID, 3), &labels, CID), Some(3));
        assert_eq!(decode(&volume(CID, 4), &labels, CID), None);
        assert_eq!(decode(&volume(CID, 3), &labels, "other"), None);
        let mut stop = labels.clone();
        stop.insert(RECORD_KIND.into(), "stop".into());
        assert_eq!(decode(&volume(CID, 3), &stop, CID), None);
    }
}

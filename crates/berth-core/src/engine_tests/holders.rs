//! Engine tests of what the record store relies on: a duplicate volume name answers with the
//! first creator's labels, so a duty claim is a compare-and-set with exactly one winner.

use std::collections::HashMap;

use super::common::*;
use crate::model::identity::{self, Owner};
use crate::ownership::hold::{claim_duty, Claim};
use crate::ownership::holders::{self, Role, TOKEN};
use crate::ownership::records;

/// A container id nobody has (the records are deleted at the end).
fn fake_id() -> String {
    let u = unique("cas");
    let mut h = String::new();
    for b in u.bytes().cycle().take(32) {
        h.push_str(&format!("{b:02x}"));
    }
    h
}

fn run_labels() -> HashMap<String, String> {
    HashMap::from([(RUN_LABEL.to_string(), run_id().to_string())])
}

#[tokio::test]
async fn creating_a_taken_volume_name_returns_the_first_creators_labels() {
    let engine = engine().await;
    let id = fake_id();
    let me = identity::current().expect("identity on linux");
    let first = holders::encode(&id, Role::Adopter, me, "first", None, &run_labels());
    let second = holders::encode(&id, Role::Adopter, me, "second", None, &run_labels());
    let name = holders::holder_volume(&id, "first");
    let a = records::create(&engine, &name, first, "test")
        .await
        .unwrap();
    let b = records::create(&engine, &name, second, "test")
        .await
        .unwrap();
    assert_eq!((a[TOKEN].as_str(), b[TOKEN].as_str()), ("first", "first"));
    records::delete(&engine, &name).await.unwrap();
}

/// Five rounds of ten racing claims: Podman 4 refuses some of a race's creates with 500
/// "volume already exists" instead of answering with the volume, which must read as "lost".
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_concurrent_duty_claims_exactly_one_wins() {
    for _ in 0..5 {
        concurrent_duty_claims_round().await;
    }
}

async fn concurrent_duty_claims_round() {
    let engine = engine().await;
    let id = fake_id();
    let me = identity::current().unwrap();
    // One connection each, as ten processes would have, all connected before the race.
    let mut engines = Vec::new();
    for _ in 0..10 {
        engines.push(super::common::engine().await);
    }
    let claims = engines.into_iter().enumerate().map(|(i, engine)| {
        let id = id.clone();
        let claimant = Owner {
            instance_id: format!("claimant-{i}"),
            ..me.clone()
        };
        tokio::spawn(
            async move { claim_duty(&engine, &id, 1, &claimant, &run_labels(), false).await },
        )
    });
    let claims: Vec<_> = claims.collect();
    let mut won = 0;
    let mut lost_to = Vec::new();
    for c in claims {
        match c.await.unwrap().unwrap() {
            Claim::Won(volume) => {
                won += 1;
                assert_eq!(volume, holders::duty_volume(&id, 1));
            }
            Claim::Lost(winner) => lost_to.push(winner.expect("the winner's record parses")),
        }
    }
    assert_eq!((won, lost_to.len()), (1, 9));
    let recs = records::of_container(&engine, &id).await.unwrap();
    assert_eq!(recs.holds.len(), 1);
    let winner = &recs.holds[0].hold.as_ref().unwrap().holder;
    assert!(lost_to.iter().all(|w| w == winner));
    records::remove_records(&engine, &id).await.unwrap();
    assert!(records::of_container(&engine, &id)
        .await
        .unwrap()
        .volumes
        .is_empty());
}

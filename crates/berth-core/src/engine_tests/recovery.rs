//! Engine tests of recovery: a replacement abandoned half-way is rolled back by the next
//! call on the name, a committed one finished, and recreate keeps the old container's id
//! when a setup fails.

use super::common::*;
use crate::engine::connection::EngineOptions;
use crate::engine::container::{inspect, Facts};
use crate::lifecycle::create::create_session;
use crate::lifecycle::recreate::{recreate_session, RecreateSpec};
use crate::lifecycle::verify::{verify, Expect};
use crate::model::errors::Error;
use crate::model::identity;
use crate::ownership::removal::remove_by_id;
use crate::ownership::replacement::{self, Replacement, Settled};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn an_abandoned_replacement_is_rolled_back_and_a_committed_one_finished() {
    let sid = unique("settle");
    let never = CancellationToken::new();
    let s = create_session(&spec(&sid), &EngineOptions::default(), &never)
        .await
        .unwrap();
    let me = identity::current().expect("this platform identifies processes");
    let labels =
        Facts::from_inspect(&inspect(&s.engine, &s.id).await.unwrap().unwrap()).record_labels;

    // Locked and renamed aside by this process, with no recreation in flight: stale.
    let r = Replacement::new(&s.id, &s.name, true, me);
    assert_eq!(
        replacement::lock(&s.engine, &r, &labels).await.unwrap(),
        None
    );
    let other = Replacement::new(&s.id, &s.name, true, me);
    assert!(
        replacement::lock(&s.engine, &other, &labels)
            .await
            .unwrap()
            .is_some(),
        "a second lock on the same container loses"
    );
    replacement::rename(&s.engine, &s.id, &r.aside)
        .await
        .unwrap();
    assert!(inspect(&s.engine, &s.name).await.unwrap().is_none());
    assert!(replacement::is_stale(&r));
    assert_eq!(
        replacement::settle_name(&s.engine, &s.name).await.unwrap(),
        None
    );
    let back = Facts::from_inspect(&inspect(&s.engine, &s.name).await.unwrap().unwrap());
    assert_eq!((back.id.as_str(), back.state), (s.id.as_str(), "running"));
    assert!(replacement::list(&s.engine)
        .await
        .unwrap()
        .iter()
        .all(|(_, x)| x.old_id != s.id));

    // Committed: the recovery removes the old container.
    let r = Replacement::new(&s.id, &s.name, true, me);
    assert_eq!(
        replacement::lock(&s.engine, &r, &labels).await.unwrap(),
        None
    );
    replacement::commit(&s.engine, &s.id, "f".repeat(64).as_str(), &labels)
        .await
        .unwrap();
    assert_eq!(
        replacement::settle(&s.engine, &r).await.unwrap(),
        Settled::Completed
    );
    assert!(inspect(&s.engine, &s.id).await.unwrap().is_none());
    assert!(containers_named(&s.engine, &s.name).await.is_empty());
}

#[tokio::test]
async fn a_failed_setup_keeps_the_old_container_and_a_good_one_replaces_it() {
    let sid = unique("recreate");
    let never = CancellationToken::new();
    let s = create_session(&spec(&sid), &EngineOptions::default(), &never)
        .await
        .unwrap();
    let mut bad = spec(&sid);
    bad.setup_commands = vec![vec!["sh".into(), "-c".into(), "exit 4".into()]];
    let r = RecreateSpec {
        spec: bad,
        take_over: false,
    };
    let e = recreate_session(&r, &EngineOptions::default(), &never)
        .await
        .err()
        .expect("the setup fails");
    assert!(
        matches!(e.first(), Error::SetupFailed { exit_code: 4, .. }),
        "{e:?}"
    );
    assert_eq!(
        containers_named(&s.engine, &s.name).await,
        vec![s.id.clone()]
    );
    let v = verify(&s.engine, &s.name, &sid, &s.name, &Expect::default(), true)
        .await
        .unwrap();
    assert!(v.ok && v.id == s.id);

    let good = RecreateSpec {
        spec: spec(&sid),
        take_over: false,
    };
    let fresh = recreate_session(&good, &EngineOptions::default(), &never)
        .await
        .unwrap();
    assert_ne!(fresh.id, s.id);
    assert_eq!(fresh.replaced.as_ref().unwrap().previous_id, s.id);
    assert_eq!(
        containers_named(&s.engine, &s.name).await,
        vec![fresh.id.clone()]
    );
    remove_by_id(&fresh.engine, &fresh.id).await.unwrap();
}

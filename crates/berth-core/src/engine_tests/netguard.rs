//! Engine tests of the network guard's helper: a run cut at any point leaves no helper, and
//! the reaper removes what a killed process left (a helper container made by hand with
//! berth's labels, another build's helper image).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bollard::models::{ContainerCreateBody, HostConfig};
use tokio_util::sync::CancellationToken;

use super::common::*;
use crate::engine::connection::{Engine, EngineOptions};
use crate::engine::container::{inspect, list_by_labels};
use crate::engine::netguard::{ensure, isolate, unguarded};
use crate::engine::netguard_helper::{HELPER_FOR_LABEL, HELPER_LABEL};
use crate::engine::netguard_image;
use crate::lifecycle::create::create_session;
use crate::lifecycle::list::Scope;
use crate::lifecycle::reap::reap_orphans;
use crate::lifecycle::reap_helpers::sweep_images;

/// Helper containers working for sandbox `id`, in any state.
async fn helpers_of(engine: &Engine, id: &str) -> Vec<String> {
    list_by_labels(engine, &[format!("{HELPER_FOR_LABEL}={id}")])
        .await
        .unwrap()
        .into_iter()
        .filter_map(|l| l.summary.id)
        .collect()
}

/// Waits (up to 20 s: a hang bound) until sandbox `id` has no helper container.
async fn no_helper_within(engine: &Engine, id: &str) -> bool {
    let end = Instant::now() + Duration::from_secs(20);
    while Instant::now() < end {
        if helpers_of(engine, id).await.is_empty() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    false
}

#[tokio::test]
async fn a_guard_run_cut_at_any_point_leaves_no_helper() {
    let sid = unique("guard-cut");
    let never = CancellationToken::new();
    let s = create_session(&spec(&sid), &EngineOptions::default(), &never)
        .await
        .unwrap();
    let engine = s.engine.clone();
    // A whole run, for its length; then runs dropped at fractions of it (before, during and
    // after the helper's create, start, wait and removal).
    let t0 = Instant::now();
    isolate(&engine, &s.id).await.unwrap();
    let full = t0.elapsed();
    for k in 1..=5u32 {
        let cut = full * k / 6;
        let _ = tokio::time::timeout(cut, isolate(&engine, &s.id)).await;
        assert!(
            no_helper_within(&engine, &s.id).await,
            "a run dropped after {cut:?} of {full:?} left its helper"
        );
    }
    assert!(s.remove(false, &never).await.unwrap().removed);
}

/// Imports a tiny image `reference` (one file) through `POST /images/create?fromSrc=-`.
async fn import_tiny(engine: &Engine, reference: &str) {
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_size(2);
    h.set_mode(0o644);
    h.set_mtime(0);
    b.append_data(&mut h, "x", &b"x\n"[..]).unwrap();
    let tar = b.into_inner().unwrap();
    let failure = crate::engine::images::import(engine, reference, None, tar, "import")
        .await
        .unwrap();
    assert_eq!(failure, None);
}

#[tokio::test]
async fn the_reaper_removes_a_killed_process_s_helper_and_other_builds_unused_images() {
    let engine = engine().await;
    let never = CancellationToken::new();
    // A sandbox that lives, and a helper made by hand as a killed process leaves it: exited,
    // unnamed, with the caller's labels and berth's helper labels, its sandbox gone.
    let sid = unique("guard-reap");
    let s = create_session(&spec(&sid), &EngineOptions::default(), &never)
        .await
        .unwrap();
    netguard_image::ensure(&engine).await.unwrap();
    let run_labels = [(RUN_LABEL.to_string(), run_id().to_string())];
    // The helpers carry a label of this test alone, and the reaps are narrowed to it: another
    // engine test's reap (narrowed to the run label, running in parallel) would otherwise remove
    // them between this test's looks.
    let case_labels = [("berth.test-case".to_string(), sid.clone())];
    let by_hand = |sandbox: &str| {
        let mut labels: HashMap<String, String> = case_labels.iter().cloned().collect();
        labels.insert(HELPER_LABEL.into(), "netguard".into());
        labels.insert(HELPER_FOR_LABEL.into(), sandbox.into());
        ContainerCreateBody {
            image: Some(netguard_image::image()),
            entrypoint: Some(vec!["/netguard".into(), "netguard".into()]),
            cmd: Some(Vec::new()),
            labels: Some(labels),
            host_config: Some(HostConfig {
                network_mode: Some("none".into()),
                ..Default::default()
            }),
            ..Default::default()
        }
    };
    let gone_sandbox = "f".repeat(64);
    let left = crate::engine::calls::create(&engine, None, None, by_hand(&gone_sandbox))
        .await
        .unwrap()
        .unwrap()
        .id;
    // One of the live sandbox, just made (not started): a run in progress, kept.
    let young = crate::engine::calls::create(&engine, None, None, by_hand(&s.id))
        .await
        .unwrap()
        .unwrap()
        .id;
    let scope = Scope {
        prefix: None,
        labels: case_labels.iter().cloned().collect(),
    };
    let dry = reap_orphans(true, &scope, &EngineOptions::default(), &never)
        .await
        .unwrap();
    assert!(dry.removed_helpers.contains(&left), "{dry:?}");
    assert!(
        inspect(&engine, &left).await.unwrap().is_some(),
        "a dry run removes nothing"
    );
    let report = reap_orphans(false, &scope, &EngineOptions::default(), &never)
        .await
        .unwrap();
    assert!(report.removed_helpers.contains(&left), "{report:?}");
    assert!(!report.removed_helpers.contains(&young), "{report:?}");
    assert!(
        report.removed_images.is_empty(),
        "a narrowed run leaves images alone"
    );
    assert!(inspect(&engine, &left).await.unwrap().is_none());
    assert!(inspect(&engine, &young).await.unwrap().is_some());
    // Its sandbox removed, the young one is left behind too.
    assert!(s.remove(false, &never).await.unwrap().removed);
    let again = reap_orphans(false, &scope, &EngineOptions::default(), &never)
        .await
        .unwrap();
    assert_eq!(again.removed_helpers, vec![young.clone()]);

    // Another build's helper image: removed once no container uses it; never this build's.
    let hash = hex::encode(rand::random::<[u8; 8]>());
    let other = format!("{}:{hash}", netguard_image::IMAGE_REPO);
    import_tiny(&engine, &other).await;
    let user = crate::engine::calls::create(
        &engine,
        None,
        None,
        ContainerCreateBody {
            image: Some(other.clone()),
            cmd: Some(vec!["/x".into()]),
            labels: Some(run_labels.iter().cloned().collect()),
            ..Default::default()
        },
    )
    .await
    .unwrap()
    .unwrap()
    .id;
    assert!(sweep_images(&engine, Some(&hash), false)
        .await
        .unwrap()
        .is_empty());
    crate::engine::calls::remove_container(&engine, &user)
        .await
        .unwrap();
    let removed = sweep_images(&engine, Some(&hash), false).await.unwrap();
    assert_eq!(removed.len(), 1, "{removed:?}");
    assert!(netguard_image::helper_hash(&removed[0]) == Some(hash.as_str()));
    assert!(crate::engine::images::inspect(&engine, &other)
        .await
        .unwrap()
        .is_err());
    let mine = netguard_image::image();
    let mine_hash = netguard_image::helper_hash(&mine).unwrap();
    assert!(sweep_images(&engine, Some(mine_hash), false)
        .await
        .unwrap()
        .is_empty());
    assert!(crate::engine::images::inspect(&engine, &mine)
        .await
        .unwrap()
        .is_ok());
}

/// The guard's cost per create: `BERTH_MEASURE_GUARD=N cargo test -p berth-core
/// engine_tests::netguard::measure -- --ignored --nocapture` creates N isolated sessions and N
/// with `localNetwork: true`, interleaved, and prints the medians (ms). Not a test: a probe.
#[tokio::test]
#[ignore]
async fn measure_guard_cost() {
    let n: usize = std::env::var("BERTH_MEASURE_GUARD")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let never = CancellationToken::new();
    let (mut guarded, mut open) = (Vec::new(), Vec::new());
    for i in 0..=n {
        for local in [false, true] {
            let mut sp = spec(&unique(&format!("measure-{i}")));
            sp.security.local_network = local;
            sp.setup_commands = vec![vec!["true".into()]];
            let t = Instant::now();
            let s = create_session(&sp, &EngineOptions::default(), &never)
                .await
                .unwrap();
            let ms = t.elapsed().as_millis();
            s.remove(false, &never).await.unwrap();
            // The first pair warms the image and the connection.
            if i > 0 {
                if local {
                    open.push(ms)
                } else {
                    guarded.push(ms)
                }
            }
        }
    }
    guarded.sort_unstable();
    open.sort_unstable();
    let (g, o) = (guarded[n / 2], open[n / 2]);
    println!(
        "create with setup, median of {n}: isolated {g} ms, localNetwork {o} ms, guard {} ms",
        g as i128 - o as i128
    );
}

/// Podman refuses to remove a container that another one joined (`networkMode:
/// container:<id>`), even one that never ran: a helper a killed process left must not keep its
/// sandbox from being removed.
#[tokio::test]
async fn a_sandbox_whose_helper_was_left_is_still_removed() {
    let never = CancellationToken::new();
    let s = create_session(
        &spec(&unique("guard-dep")),
        &EngineOptions::default(),
        &never,
    )
    .await
    .unwrap();
    let engine = s.engine.clone();
    netguard_image::ensure(&engine).await.unwrap();
    let mut labels: HashMap<String, String> = HashMap::new();
    labels.insert(RUN_LABEL.into(), run_id().into());
    labels.insert(HELPER_LABEL.into(), "netguard".into());
    labels.insert(HELPER_FOR_LABEL.into(), s.id.clone());
    let helper = crate::engine::calls::create(
        &engine,
        None,
        None,
        ContainerCreateBody {
            image: Some(netguard_image::image()),
            entrypoint: Some(vec!["/netguard".into(), "netguard".into()]),
            cmd: Some(Vec::new()),
            labels: Some(labels),
            host_config: Some(HostConfig {
                network_mode: Some(format!("container:{}", s.id)),
                ..Default::default()
            }),
            ..Default::default()
        },
    )
    .await
    .unwrap()
    .unwrap()
    .id;
    assert!(s.remove(false, &never).await.unwrap().removed);
    assert!(inspect(&engine, &s.id).await.unwrap().is_none());
    // Docker removed the sandbox without it: the reaper takes the helper (its sandbox gone).
    let scope = Scope {
        prefix: None,
        labels: [(RUN_LABEL.to_string(), run_id().to_string())].into(),
    };
    reap_orphans(false, &scope, &EngineOptions::default(), &never)
        .await
        .unwrap();
    assert!(inspect(&engine, &helper).await.unwrap().is_none());
}

/// The guard records of container `id` (volume names).
async fn guard_records(engine: &Engine, id: &str) -> Vec<String> {
    crate::ownership::records::list(engine, Some(id))
        .await
        .unwrap()
        .into_iter()
        .filter(|(_, l)| {
            l.get(crate::model::labels::RECORD_KIND).map(String::as_str)
                == Some(crate::engine::netguard_record::KIND_GUARD)
        })
        .map(|(n, _)| n)
        .collect()
}

/// A run started behind berth's back (the state a process killed between its start and its
/// guard leaves) is told from a guarded one by its guard record, gets its rules from
/// `ensure`, which keeps one record per container; a guarded run costs no helper; the
/// records go with the session.
#[tokio::test]
async fn a_run_started_behind_berths_back_is_found_and_guarded_again() {
    let never = CancellationToken::new();
    let s = create_session(
        &spec(&unique("guard-run")),
        &EngineOptions::default(),
        &never,
    )
    .await
    .unwrap();
    let engine = s.engine.clone();
    let c = inspect(&engine, &s.id).await.unwrap().unwrap();
    assert!(
        !unguarded(&engine, &c).await.unwrap(),
        "create records its run"
    );
    let first = guard_records(&engine, &s.id).await;
    assert_eq!(first.len(), 1, "{first:?}");
    assert!(
        !ensure(&engine, &s.id).await.unwrap(),
        "a guarded run is left alone"
    );

    crate::engine::calls::stop_by_id(&engine, &s.id, 1_000)
        .await
        .unwrap();
    crate::engine::calls::start(&engine, &s.id)
        .await
        .unwrap()
        .unwrap();
    let c = inspect(&engine, &s.id).await.unwrap().unwrap();
    assert!(
        unguarded(&engine, &c).await.unwrap(),
        "a new run has no record"
    );
    assert!(ensure(&engine, &s.id).await.unwrap());
    let c = inspect(&engine, &s.id).await.unwrap().unwrap();
    assert!(!unguarded(&engine, &c).await.unwrap());
    let now = guard_records(&engine, &s.id).await;
    assert_eq!(now.len(), 1, "the earlier run's record is gone: {now:?}");
    assert_ne!(now, first);
    assert!(no_helper_within(&engine, &s.id).await);

    assert!(s.remove(false, &never).await.unwrap().removed);
    assert!(guard_records(&engine, &s.id).await.is_empty());
}

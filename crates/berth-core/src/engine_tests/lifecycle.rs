//! Engine tests of the core lifecycle: create, rollback, resume, removal by id, abort.

use std::time::Duration;

use super::common::*;
use crate::engine::connection::EngineOptions;
use crate::engine::container::inspect;
use crate::lifecycle::create::create_session;
use crate::lifecycle::resume::{resume_session, ResumeSpec};
use crate::model::naming::container_name_str;
use crate::ownership::records::is_ready;
use crate::session::Ownership;
use bollard::models::ContainerCreateBody;
use tokio_util::sync::CancellationToken;

fn argv(cmd: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), cmd.into()]
}

#[tokio::test]
async fn create_exec_remove_leaves_nothing() {
    let id = unique("basic");
    let never = CancellationToken::new();
    let s = create_session(&spec(&id), &EngineOptions::default(), &never)
        .await
        .unwrap();
    assert_eq!(s.ownership, Ownership::Created);
    assert_eq!(s.id.len(), 64);
    assert!(is_ready(&s.engine, &s.id).await.unwrap());
    let out = s
        .exec(
            &argv("printf out; printf err >&2; exit 7"),
            &Default::default(),
            &never,
        )
        .await
        .unwrap();
    assert_eq!(
        (out.exit_code, &out.stdout[..], &out.stderr[..]),
        (7, &b"out"[..], &b"err"[..])
    );
    assert!(
        s.remove(false, &tokio_util::sync::CancellationToken::new())
            .await
            .unwrap()
            .removed
    );
    assert!(inspect(&s.engine, &s.id).await.unwrap().is_none());
    assert!(
        !is_ready(&s.engine, &s.id).await.unwrap(),
        "the readiness record goes with the container"
    );
}

#[tokio::test]
async fn failed_setup_rolls_back_by_id() {
    let id = unique("setup");
    let mut sp = spec(&id);
    sp.setup_commands = vec![
        argv("echo first"),
        argv("echo broken >&2; exit 3"),
        argv("echo never"),
    ];
    let e = create_session(&sp, &EngineOptions::default(), &CancellationToken::new())
        .await
        .err()
        .unwrap();
    assert_eq!(e.code(), "E_SETUP_FAILED");
    let d = e.details();
    assert_eq!(
        (d["index"].as_u64(), d["exitCode"].as_i64()),
        (Some(1), Some(3))
    );
    assert_eq!(d["stderr"], "broken\n");
    assert!(e.cleanup().is_none());
    assert!(
        containers_named(&engine().await, &container_name_str(&id, Some("berth")))
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn a_start_that_fails_leaves_no_created_container() {
    let id = unique("baduser");
    let mut sp = spec(&id);
    sp.user = Some("no-such-user".into());
    let e = create_session(&sp, &EngineOptions::default(), &CancellationToken::new())
        .await
        .err()
        .unwrap();
    // Ready means running: a refused start is a failed setup, with the engine's reason.
    assert_eq!(e.code(), "E_SETUP_FAILED", "{e}");
    let d = e.details();
    assert_eq!(d["stage"], "start");
    assert!(!d["reason"].as_str().unwrap_or_default().is_empty(), "{d}");
    assert!(
        containers_named(&engine().await, &container_name_str(&id, Some("berth")))
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn abort_during_setup_removes_what_it_created() {
    let id = unique("abort");
    let mut sp = spec(&id);
    sp.setup_commands = vec![argv("sleep 30")];
    let cancel = CancellationToken::new();
    let name = container_name_str(&id, Some("berth"));
    let engine = engine().await;
    let task = {
        let (sp, cancel) = (sp.clone(), cancel.clone());
        tokio::spawn(async move { create_session(&sp, &EngineOptions::default(), &cancel).await })
    };
    // Abort once the container exists (the request started), never on a timer alone.
    while containers_named(&engine, &name).await.is_empty() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cancel.cancel();
    let e = task.await.unwrap().err().unwrap();
    assert_eq!(e.code(), "E_ABORTED");
    // Here the abort may cut a request in flight (the start): the removal by id then follows in
    // the background; otherwise it was done before the call settled. Poll either way.
    let end = tokio::time::Instant::now() + Duration::from_secs(20);
    while !containers_named(&engine, &name).await.is_empty() && tokio::time::Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(containers_named(&engine, &name).await.is_empty());
}

#[tokio::test]
async fn removal_is_by_id_never_by_name() {
    let id = unique("byid");
    let never = CancellationToken::new();
    let s = create_session(&spec(&id), &EngineOptions::default(), &never)
        .await
        .unwrap();
    let engine = engine().await;
    // Someone removes ours and puts their own container under the same name.
    crate::ownership::removal::remove_by_id(&engine, &s.id)
        .await
        .unwrap();
    let body = ContainerCreateBody {
        image: Some(TEST_IMAGE.into()),
        cmd: Some(vec!["sleep".into(), "600".into()]),
        labels: Some([(RUN_LABEL.to_string(), run_id().to_string())].into()),
        ..Default::default()
    };
    let other = crate::engine::calls::create(&engine, Some(&s.name), None, body)
        .await
        .unwrap()
        .unwrap()
        .id;
    let r = s
        .remove(false, &tokio_util::sync::CancellationToken::new())
        .await
        .unwrap();
    assert_eq!((r.removed, r.reason), (false, Some("absent")));
    assert!(
        inspect(&engine, &other).await.unwrap().is_some(),
        "the other container survives"
    );
    crate::ownership::removal::remove_by_id(&engine, &other)
        .await
        .unwrap();
}

#[tokio::test]
async fn resume_restarts_a_stopped_session_and_keeps_its_files() {
    let id = unique("restart");
    let never = CancellationToken::new();
    let s = create_session(&spec(&id), &EngineOptions::default(), &never)
        .await
        .unwrap();
    s.exec(&argv("echo kept > /tmp/f"), &Default::default(), &never)
        .await
        .unwrap();
    assert!(
        s.stop(
            false,
            Some(1000),
            &tokio_util::sync::CancellationToken::new()
        )
        .await
        .unwrap()
        .stopped
    );
    let r = resume_session(
        &ResumeSpec {
            session_id: id.encode_utf16().collect(),
            ..Default::default()
        },
        &EngineOptions::default(),
        &never,
    )
    .await
    .unwrap();
    // The creating process's resume shares its duty to remove.
    assert_eq!((r.ownership, &r.id), (Ownership::Created, &s.id));
    let out = r
        .exec(&argv("cat /tmp/f"), &Default::default(), &never)
        .await
        .unwrap();
    assert_eq!(out.stdout, b"kept\n");
    assert!(
        r.remove(false, &tokio_util::sync::CancellationToken::new())
            .await
            .unwrap()
            .removed
    );
    assert_eq!(
        s.remove(false, &tokio_util::sync::CancellationToken::new())
            .await
            .unwrap()
            .reason,
        Some("already-removed")
    );
}

//! Engine tests of legacy adoption: an unlabelled container under the derived name is adopted
//! (and started) only when it runs the requested image; the handle never removes it.

use super::common::*;
use crate::engine::connection::{Engine, EngineOptions};
use crate::engine::container::inspect;
use crate::lifecycle::create::create_session;
use crate::lifecycle::legacy::{adopt_unlabelled, LegacyAdoptSpec};
use crate::model::errors::Error;
use crate::model::naming::container_name;
use crate::session::Ownership;
use bollard::models::ContainerCreateBody;
use tokio_util::sync::CancellationToken;

fn legacy(id: &str, image: &str) -> LegacyAdoptSpec {
    LegacyAdoptSpec {
        session_id: id.encode_utf16().collect(),
        prefix: None,
        image: image.into(),
    }
}

/// A container made by hand under `name`, unlabelled but for the run label; not started.
async fn hand_made(engine: &Engine, name: &str) -> String {
    ensure_image();
    let body = ContainerCreateBody {
        image: Some(TEST_IMAGE.into()),
        cmd: Some(vec!["sleep".into(), "600".into()]),
        labels: Some([(RUN_LABEL.to_string(), run_id().to_string())].into()),
        ..Default::default()
    };
    crate::engine::calls::create(engine, Some(name), None, body)
        .await
        .unwrap()
        .unwrap()
        .id
}

async fn force_remove(engine: &Engine, id: &str) {
    crate::engine::calls::remove_container(engine, id)
        .await
        .unwrap();
}

#[tokio::test]
async fn adopts_a_stopped_unlabelled_container_of_the_image_and_never_removes_it() {
    let engine = engine().await;
    let id = unique("legacy");
    let units: Vec<u16> = id.encode_utf16().collect();
    let theirs = hand_made(&engine, &container_name(&units, None)).await;
    let never = CancellationToken::new();

    let s = adopt_unlabelled(&legacy(&id, TEST_IMAGE), &EngineOptions::default(), &never)
        .await
        .unwrap();
    assert_eq!(
        (s.id.as_str(), s.ownership),
        (theirs.as_str(), Ownership::Adopted)
    );
    assert!(s.name.starts_with("please-"), "{}", s.name);
    let c = inspect(&engine, &theirs).await.unwrap().unwrap();
    assert_eq!(
        c.state.as_ref().and_then(|s| s.running),
        Some(true),
        "started"
    );

    let r = s
        .remove(false, &tokio_util::sync::CancellationToken::new())
        .await
        .unwrap();
    assert_eq!((r.removed, r.reason), (false, Some("not-owner")));
    assert!(inspect(&engine, &theirs).await.unwrap().is_some());
    force_remove(&engine, &theirs).await;
}

#[tokio::test]
async fn refuses_another_image_a_berth_container_and_an_empty_name() {
    let engine = engine().await;
    let never = CancellationToken::new();
    let opts = EngineOptions::default();

    let id = unique("legacy-other");
    let units: Vec<u16> = id.encode_utf16().collect();
    let theirs = hand_made(&engine, &container_name(&units, None)).await;
    let e = adopt_unlabelled(&legacy(&id, "berth-test/other:1"), &opts, &never)
        .await
        .err()
        .unwrap();
    assert_eq!(e.code(), "E_FOREIGN_CONTAINER", "{e}");
    let c = inspect(&engine, &theirs).await.unwrap().unwrap();
    assert_eq!(
        c.state.as_ref().and_then(|s| s.running),
        Some(false),
        "left alone"
    );
    force_remove(&engine, &theirs).await;

    let ours = unique("legacy-berth");
    let mut sp = spec(&ours);
    sp.prefix = Some("please".encode_utf16().collect());
    let created = create_session(&sp, &opts, &never).await.unwrap();
    let e = adopt_unlabelled(&legacy(&ours, TEST_IMAGE), &opts, &never)
        .await
        .err()
        .unwrap();
    assert_eq!(e.code(), "E_FOREIGN_CONTAINER", "{e}");
    assert!(
        created
            .remove(false, &tokio_util::sync::CancellationToken::new())
            .await
            .unwrap()
            .removed
    );

    let e = adopt_unlabelled(&legacy(&unique("legacy-none"), TEST_IMAGE), &opts, &never)
        .await
        .err()
        .unwrap();
    assert!(matches!(e, Error::SessionNotFound { .. }), "{e}");
}

#[tokio::test]
async fn bad_input_is_refused_before_any_engine_call() {
    let nowhere = EngineOptions {
        socket_path: Some("/nonexistent.sock".into()),
        ..Default::default()
    };
    let never = CancellationToken::new();
    for (spec, field) in [
        (legacy("", TEST_IMAGE), "sessionId"),
        (legacy("x", ""), "image"),
        (legacy("x", "UPPER:1"), "image"),
    ] {
        match adopt_unlabelled(&spec, &nowhere, &never).await {
            Err(Error::InvalidArgument { field: f, .. }) => assert_eq!(f, field),
            other => panic!(
                "expected E_INVALID_ARGUMENT for {field}, got {:?}",
                other.err()
            ),
        }
    }
}

//! Engine tests of what differs between Docker and Podman, on the engine under test
//! (`BERTH_TEST_ENGINE=docker|podman`; CI points `DOCKER_HOST` at Podman's socket for it).

use super::common::*;
use crate::engine::connection::{EngineKind, EngineOptions};
use crate::engine::container::{inspect, Facts};
use crate::engine::images::{ensure_image, PullOptions};
use crate::engine::info::engine_info;
use crate::lifecycle::create::create_session;
use crate::model::errors::Error;
use tokio_util::sync::CancellationToken;

fn engine_under_test() -> EngineKind {
    match std::env::var("BERTH_TEST_ENGINE").as_deref() {
        Ok("podman") => EngineKind::Podman,
        _ => EngineKind::Docker,
    }
}

#[tokio::test]
async fn the_engine_is_recognised() {
    let info = engine_info(
        &EngineOptions::default(),
        &tokio_util::sync::CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(info.kind, engine_under_test());
    assert_eq!(info.api_version, "1.41");
    assert!(!info.remote);
}

#[tokio::test]
async fn a_taken_name_is_session_exists_on_either_engine() {
    let id = unique("dup");
    let never = CancellationToken::new();
    let first = create_session(&spec(&id), &EngineOptions::default(), &never)
        .await
        .unwrap();
    let second = create_session(&spec(&id), &EngineOptions::default(), &never).await;
    let outcome = match second {
        Err(Error::SessionExists { holder, .. }) => Ok(holder),
        Err(other) => Err(format!("expected E_SESSION_EXISTS, got {other}")),
        Ok(s) => {
            s.remove(true, &tokio_util::sync::CancellationToken::new())
                .await
                .unwrap();
            Err("the second create succeeded".into())
        }
    };
    first
        .remove(false, &tokio_util::sync::CancellationToken::new())
        .await
        .unwrap();
    let holder = outcome.unwrap();
    assert_eq!((holder.id, holder.managed), (first.id.clone(), true));
}

#[tokio::test]
async fn a_stopped_container_decodes_to_a_spec_state() {
    let id = unique("stopped");
    let never = CancellationToken::new();
    let s = create_session(&spec(&id), &EngineOptions::default(), &never)
        .await
        .unwrap();
    s.stop(false, Some(0), &tokio_util::sync::CancellationToken::new())
        .await
        .unwrap();
    let facts = inspect(&s.engine, &s.id)
        .await
        .unwrap()
        .map(|c| Facts::from_inspect(&c));
    s.remove(false, &tokio_util::sync::CancellationToken::new())
        .await
        .unwrap();
    let f = facts.expect("the stopped container is inspectable");
    assert_eq!(f.state, "exited");
    assert!(
        matches!(f.raw_state.as_str(), "exited" | "stopped"),
        "{}",
        f.raw_state
    );
}

#[tokio::test]
async fn a_missing_local_image_is_image_not_found() {
    super::common::ensure_image();
    let engine = engine().await;
    // No registry answers on this port: the pull fails inside (or before) its stream.
    let e = ensure_image(
        &engine,
        "127.0.0.1:9/berth-none/x:1",
        &PullOptions::default(),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), "E_IMAGE_NOT_FOUND", "{e}");
    let reason = e.details()["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!reason.is_empty());
}

#[tokio::test]
async fn removing_one_session_keeps_every_other_sessions_records() {
    // Podman ORs several label filters on volumes (Docker ANDs them): a removal that trusted
    // the engine's filter would delete every session's records.
    let never = CancellationToken::new();
    let a = create_session(&spec(&unique("recs-a")), &EngineOptions::default(), &never)
        .await
        .unwrap();
    let b = create_session(&spec(&unique("recs-b")), &EngineOptions::default(), &never)
        .await
        .unwrap();
    let removed = a
        .remove(false, &tokio_util::sync::CancellationToken::new())
        .await
        .unwrap();
    let b_ready = crate::ownership::records::is_ready(&b.engine, &b.id)
        .await
        .unwrap();
    b.remove(false, &tokio_util::sync::CancellationToken::new())
        .await
        .unwrap();
    assert!(removed.removed);
    assert!(b_ready, "the other session's readiness record survives");
}

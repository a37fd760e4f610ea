//! Shared helpers for engine tests: the offline test image, a per-run label, a leak check.

use std::sync::OnceLock;

use crate::engine::connection::{connect, Engine, EngineOptions};
use crate::engine::container::list_by_labels;
use crate::model::spec::CreateSpec;

/// The image every engine test uses, built offline by `__test__/helpers/test-image.mjs`.
pub(super) const TEST_IMAGE: &str = "berth-test/busybox:1";
/// The label every test container carries.
pub(super) const RUN_LABEL: &str = "berth.test-run";

/// This run's label value: `BERTH_TEST_RUN` when set, else one per test binary.
pub(super) fn run_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        std::env::var("BERTH_TEST_RUN")
            .unwrap_or_else(|_| format!("rust-{}-{}", std::process::id(), rand_suffix()))
    })
}

fn rand_suffix() -> String {
    format!(
        "{:08x}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos()
    )
}

/// A unique session id for one test.
pub(super) fn unique(name: &str) -> String {
    format!("rs-{name}-{}", rand_suffix())
}

/// Builds (once per process) the offline test image through the repo's helper.
pub(super) fn ensure_image() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let status = std::process::Command::new("node")
            .arg(format!("{root}/__test__/helpers/test-image.mjs"))
            .status()
            .expect("node runs the test-image helper");
        assert!(status.success(), "building the offline test image failed");
    });
}

/// The default engine.
pub(super) async fn engine() -> Engine {
    connect(&EngineOptions::default())
        .await
        .expect("a running engine (see CONTRIBUTING.md)")
}

/// A create spec on the test image, labelled for this run.
pub(super) fn spec(session_id: &str) -> CreateSpec {
    ensure_image();
    let mut s = CreateSpec {
        session_id: session_id.encode_utf16().collect(),
        image: TEST_IMAGE.into(),
        ..Default::default()
    };
    s.labels.insert(RUN_LABEL.into(), run_id().into());
    s
}

/// Ids of this run's containers whose name contains `fragment`, in any state (through the
/// core's state-tolerant list, so Podman's own state words decode).
pub(super) async fn containers_named(engine: &Engine, fragment: &str) -> Vec<String> {
    list_by_labels(engine, &[format!("{RUN_LABEL}={}", run_id())])
        .await
        .unwrap()
        .into_iter()
        .map(|l| l.summary)
        .filter(|c| c.names.iter().flatten().any(|n| n.contains(fragment)))
        .filter_map(|c| c.id)
        .collect()
}

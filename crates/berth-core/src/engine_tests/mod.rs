//! Engine tests: the core against a real engine (Docker by default; Podman with
//! `BERTH_TEST_ENGINE=podman BERTH_TEST_SOCKET=... DOCKER_HOST=...`, see `.ci/steps/55-test-podman.sh`).
//! Every container they make carries the run label and each test checks it leaked nothing.
//! In the crate (not `tests/`) because they check internals (records, holds, the channel)
//! that the narrow public face does not export. Run only these: `cargo test -p berth-core engine_tests::`.

mod common;

mod channel;
mod engines;
mod holders;
mod legacy_adopt;
mod lifecycle;
mod netguard;
mod recovery;

#!/usr/bin/env bash
# The engine tests again, on Podman (the service from 15-podman.sh): the Rust engine tests
# (crates/berth-core/src/engine_tests, selected by their module path) and
# every vitest suite, with BERTH_TEST_ENGINE=podman selecting the engine for the whole run
# (the test helpers, the fixtures' socketPath, and DOCKER_HOST for calls that pass none).
set -euo pipefail
export BERTH_TEST_ENGINE=podman
export BERTH_TEST_SOCKET=/run/berth-podman/podman.sock
export DOCKER_HOST=unix://$BERTH_TEST_SOCKET
cargo test -p berth-core engine_tests::
npx vitest run

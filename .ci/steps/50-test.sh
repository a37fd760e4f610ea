#!/usr/bin/env bash
# The README's test command (npm run test:all: build, cargo test, vitest) on Docker, and beside
# it the engine tests on Podman (the service from 15-podman.sh): the Rust engine tests
# (crates/berth-core/src/engine_tests, selected by their module path), then every vitest suite
# with BERTH_TEST_ENGINE=podman selecting the engine for the whole run (the test helpers, the
# fixtures' socketPath, and DOCKER_HOST for calls that pass none). The two passes share only the
# machine: each run has its own run label, leak check and test image on its own engine. The
# build is 45-build's (test:all finds it fresh and rewrites nothing under the Podman pass), the
# test binaries 40-rust-checks' (nothing compiles beside it).
#
# Once the Docker pass is done, the jobs that use Docker only run while Podman finishes: the
# package as users install it (.ci/jobs/consumer.sh), then the benchmark's quick mode
# (.ci/jobs/bench-quick.sh). On Podman the descriptor test runs 40 lifecycles (100 on Docker; the
# issue's 300 on demand with BERTH_TEST_LIFECYCLES=300): a create costs Podman 1.7 s against
# Docker's 0.7 s. Podman's output is printed after Docker's; any part failing fails the step.
set -euo pipefail
podman_log=$(mktemp /tmp/berth-ci-podman-pass.XXXXXX)
(
  set -e
  export BERTH_TEST_ENGINE=podman BERTH_TEST_SOCKET=/run/berth-podman/podman.sock
  export DOCKER_HOST=unix:///run/berth-podman/podman.sock
  echo "=== (podman) Rust engine tests"
  cargo test --workspace engine_tests::
  echo "=== (podman) vitest"
  BERTH_TEST_LIFECYCLES=40 npx vitest run
) > "$podman_log" 2>&1 &
podman=$!

docker_rc=0
npm run test:all || docker_rc=$?
side_rc=0
if [ "$docker_rc" -eq 0 ]; then
  (
    set -e
    echo "=== (docker) consumer"
    bash .ci/jobs/consumer.sh
    echo "=== (docker) bench-quick"
    bash .ci/jobs/bench-quick.sh
  ) || side_rc=$?
fi
podman_rc=0
wait "$podman" || podman_rc=$?
echo "=== (podman) the engine tests on Podman (exit $podman_rc)"
cat "$podman_log"
rm -f "$podman_log"
if [ "$docker_rc" -ne 0 ] || [ "$side_rc" -ne 0 ] || [ "$podman_rc" -ne 0 ]; then
  echo "50-test: test:all on Docker exit $docker_rc, consumer/bench exit $side_rc, Podman exit $podman_rc" >&2
  exit 1
fi

#!/usr/bin/env bash
# The engine tests again, on Podman (the service from 15-podman.sh): every vitest suite, with
# BERTH_TEST_ENGINE=podman selecting the engine for the whole run (the test helpers, the
# fixtures' socketPath, and DOCKER_HOST for calls that pass none).
#
# The Rust engine tests on Podman (crates/berth-core/src/engine_tests, selected by their module
# path) run first, alone: run beside the vitest pass they share Podman with it, and Podman 4.3
# then left containers `created` after a start that answered. Beside the vitest pass, in the
# background, run the jobs that use Docker only: the package as users install it
# (.ci/jobs/consumer.sh), then the benchmark's quick mode (.ci/jobs/bench-quick.sh); their output
# is printed once both are done, and either failing fails the step. On Podman the descriptor
# test runs 40 lifecycles (100 on Docker; the 300 on demand with
# BERTH_TEST_LIFECYCLES=300): a create costs Podman 1.7 s against Docker's 0.7 s.
set -euo pipefail
BERTH_TEST_ENGINE=podman BERTH_TEST_SOCKET=/run/berth-podman/podman.sock \
  DOCKER_HOST=unix:///run/berth-podman/podman.sock cargo test -p berth-core engine_tests::

side_log=$(mktemp /tmp/berth-ci-side.XXXXXX)
(
  set -e
  echo "=== (side) consumer"
  bash .ci/jobs/consumer.sh
  echo "=== (side) bench-quick"
  bash .ci/jobs/bench-quick.sh
) > "$side_log" 2>&1 &
side=$!

main_rc=0
BERTH_TEST_ENGINE=podman BERTH_TEST_SOCKET=/run/berth-podman/podman.sock \
  DOCKER_HOST=unix:///run/berth-podman/podman.sock BERTH_TEST_LIFECYCLES=40 \
  npx vitest run || main_rc=$?
side_rc=0
wait "$side" || side_rc=$?
echo "=== (side) consumer, bench-quick on Docker (exit $side_rc)"
cat "$side_log"
rm -f "$side_log"
if [ "$main_rc" -ne 0 ] || [ "$side_rc" -ne 0 ]; then
  echo "55-test-podman: vitest on Podman exit $main_rc, side jobs exit $side_rc" >&2
  exit 1
fi

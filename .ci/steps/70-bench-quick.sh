#!/usr/bin/env bash
# The benchmark's quick mode (about a minute) as a smoke test that `npm run bench` works on the
# engine from 10-engine: every contender runs, the outputs (table, JSON, SVG) are written to a
# temp dir, and the run fails on a failed suite or a leaked container. No timing is asserted.
set -euo pipefail
npm run bench -- --quick --out "${TMPDIR:-/tmp}/berth-bench-ci"
test -s "${TMPDIR:-/tmp}/berth-bench-ci/bench-results.json"
test -s "${TMPDIR:-/tmp}/berth-bench-ci/ratios.svg"

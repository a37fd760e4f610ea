#!/usr/bin/env bash
# The benchmark's quick mode (a minute or two, counts scaled down) as a smoke test that
# `npm run bench` works on the engine from 10-engine: every suite and contender runs, the
# outputs (table, JSON, SVG) are written to a temp dir, and the run fails on a failed suite or
# a leaked container. Then the chart is checked: rendered to PNG with rsvg-convert (Debian's
# librsvg2-bin, installed here when missing), every bar, dot, rule and label must be drawn
# (none of zero width or size). No timing is asserted; the quick figures mean nothing.
set -euo pipefail
out="${TMPDIR:-/tmp}/berth-bench-ci"
if ! command -v rsvg-convert >/dev/null; then
  apt-get update -qq
  apt-get install -y -qq librsvg2-bin
fi
npm run bench -- --quick --out "$out"
test -s "$out/bench-results.json"
test -s "$out/ratios.svg"
node bench/check-chart.mjs --self-test
node bench/check-chart.mjs "$out/ratios.svg" --png "$out/ratios.png"
# The chart committed for bench/README.md must pass the same check.
node bench/check-chart.mjs bench/results/ratios.svg --png "$out/committed-ratios.png"

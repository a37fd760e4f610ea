#!/usr/bin/env bash
# The API reference (docs/api/, typedoc + typedoc-plugin-markdown over the package's entry
# points, typedoc.json): it must build without a warning (treatWarningsAsErrors, validation of
# links, not-exported and undocumented members), and the committed docs/api/ must be exactly what
# it generates now, so it never goes stale. Needs binding.d.ts from the build in 45-build; no engine.
set -euo pipefail
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
npx typedoc --out "$out/api"
if ! diff -r docs/api "$out/api"; then
  echo "docs/api/ differs from what the declarations generate: run npm run docs:api and commit docs/api/" >&2
  exit 1
fi

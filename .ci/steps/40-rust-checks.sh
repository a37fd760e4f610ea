#!/usr/bin/env bash
# Formatting, the napi-free core rule, and clippy. (`cargo test` runs in 50-test via test:all.)
set -euo pipefail
cargo fmt --check

# Only src/binding/ (and src/lib.rs, which declares it and may hold `#[napi] module_init`) may use napi.
if leaks=$(grep -rnE '(^|[^[:alnum:]_])(napi(_derive)?::|use napi|extern crate napi|#\[napi)' src --include='*.rs' \
  | grep -vE '^src/binding/|^src/lib\.rs:'); then
  echo "napi used outside src/binding/:" >&2
  echo "$leaks" >&2
  exit 1
fi

cargo clippy --all-targets -- -D warnings
node scripts/check-layers.mjs

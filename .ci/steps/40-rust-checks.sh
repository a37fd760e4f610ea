#!/usr/bin/env bash
# Formatting, the napi-free core rule, clippy over the workspace, and the test binaries compiled
# (`cargo test` runs them in 50-test, via test:all on Docker and beside it on Podman: nothing
# compiles there while the engine tests run).
set -euo pipefail
cargo fmt --all --check

# The compiler keeps napi out of the core, as long as the core crate does not depend on it.
if grep -nE '^[[:space:]]*napi' crates/berth-core/Cargo.toml; then
  echo "crates/berth-core/Cargo.toml depends on napi: the core must not (the binding is the root crate)" >&2
  exit 1
fi

cargo clippy --workspace --all-targets -- -D warnings
# No import cycle between the core's top-level modules (its folders and session.rs).
node scripts/check-layers.mjs
cargo test --workspace --no-run

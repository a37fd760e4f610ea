#!/usr/bin/env bash
# Node dependencies from the lockfile, and the Rust lint components (added only when missing:
# rustup needs its own server, which CI may not reach).
set -euo pipefail
npm ci --no-audit --no-fund
missing=()
cargo clippy --version >/dev/null 2>&1 || missing+=(clippy)
cargo fmt --version >/dev/null 2>&1 || missing+=(rustfmt)
if [ ${#missing[@]} -gt 0 ]; then
  rustup component add "${missing[@]}"
fi
cargo --version

#!/usr/bin/env bash
# The README's test command: build, cargo test, vitest (engine tests need the engine from 10-engine).
set -euo pipefail
npm run test:all

#!/usr/bin/env bash
# The native module (napi build --release → binding.js, binding.d.ts, berth.linux-x64-gnu.node)
# and the TypeScript entry (lib/ → dist/).
set -euo pipefail
npm run build

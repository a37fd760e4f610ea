#!/usr/bin/env bash
# TypeScript type check of lib/, __test__/ and examples/ against the generated binding.d.ts.
set -euo pipefail
npm run typecheck

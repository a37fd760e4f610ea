#!/usr/bin/env bash
# The release build of the native module and dist/ (npm run build, stamped), made once before the
# test step: there the README's test command (npm run test:all) finds it fresh and skips its own
# build (scripts/build-stamp.mjs), so the Podman pass it runs beside loads a build nobody rewrites.
set -euo pipefail
npm run build

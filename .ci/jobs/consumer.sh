#!/usr/bin/env bash
# The package as users get it: `npm pack` of @berth/core and of @berth/core-linux-x64-gnu (the
# binary from 45-build (this job runs from 50-test.sh once the Docker pass is done) placed in npm/linux-x64-gnu/, as napi-rs lays it out; the root with the
# optionalDependencies it is published with), a fresh copy of
# the TypeScript project __test__/consumer/ in a temp dir that installs both tarballs (never the
# source tree), `tsc --noEmit` over all three entry points from ESM and CJS files, and its own
# vitest suite on Docker. Its containers carry `berth.consumer-run=<id>`; none may be left.
set -euo pipefail
ROOT=$(pwd)
SOCK=/var/run/docker.sock
WORK=$(mktemp -d /tmp/berth-consumer.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export BERTH_CONSUMER_RUN="ci$(date +%s)$$"
export BERTH_CONSUMER_IMAGE=berth-test/busybox:1

# The offline test image (already there after the Docker pass; built through the Engine API otherwise).
node __test__/helpers/test-image.mjs

mkdir -p "$WORK/packs" "$WORK/platform"
cp npm/linux-x64-gnu/package.json npm/linux-x64-gnu/README.md "$WORK/platform/"
cp berth.linux-x64-gnu.node "$WORK/platform/"
platform_tgz=$(cd "$WORK/packs" && npm pack --silent "$WORK/platform" | tail -n 1)
# The root as napi-rs publishes it: packed, then given its optionalDependencies (one per
# napi target; `napi pre-publish` adds the same at release), and packed again.
mkdir -p "$WORK/stage"
plain_tgz=$(cd "$WORK/stage" && npm pack --silent "$ROOT" | tail -n 1)
tar -xzf "$WORK/stage/$plain_tgz" -C "$WORK/stage"
node npm/release-manifest.mjs "$WORK/stage/package/package.json"
root_tgz=$(cd "$WORK/packs" && npm pack --silent "$WORK/stage/package" | tail -n 1)
echo "packed $root_tgz and $platform_tgz"
if tar -tzf "$WORK/packs/$root_tgz" | grep -q '\.node$'; then
  echo "the root tarball must not carry a native binary (it comes from the platform package)" >&2
  exit 1
fi

cp -r __test__/consumer "$WORK/app"
cd "$WORK/app"
# Registry packages come from npm's cache when 20-deps fetched them already. The other platforms'
# optional packages are looked up and skipped (not published, or not for this platform).
npm install --no-audit --no-fund --prefer-offline "$WORK/packs/$root_tgz" "$WORK/packs/$platform_tgz"
npx tsc -p tsconfig.json --noEmit
npx vitest run

filters=$(node -e 'console.log(encodeURIComponent(JSON.stringify({ label: [`berth.consumer-run=${process.env.BERTH_CONSUMER_RUN}`] })))')
left=$(curl -sf --unix-socket "$SOCK" "http://localhost/v1.41/containers/json?all=1&filters=$filters")
if [ "$left" != "[]" ]; then
  echo "the consumer suite left containers behind: $left" >&2
  exit 1
fi
echo "consumer suite green; no container of run $BERTH_CONSUMER_RUN left"

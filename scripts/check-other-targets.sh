#!/usr/bin/env bash
# Type-checks and lints the Rust core (crates/berth-core) for the platforms CI cannot build (macOS, Windows), so a
# `cfg`-gated path that only they compile (liveness through proc_pidinfo, named pipes, the
# Windows spool) cannot rot unseen. No linker or SDK is needed: `cargo clippy` stops before
# linking, and the C files of build scripts (ring) are stood in for by empty objects.
# Needs the targets' standard libraries: `rustup target add <target>` (network: rustup's server).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(${BERTH_CHECK_TARGETS:-x86_64-apple-darwin aarch64-apple-darwin x86_64-pc-windows-msvc})
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
cat >"$tools/cc" <<'SH'
#!/bin/sh
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
[ -n "$out" ] && : >"$out"
exit 0
SH
cat >"$tools/ar" <<'SH'
#!/bin/sh
for a in "$@"; do case "$a" in -out:*) : >"${a#-out:}" ;; *.a | *.lib) : >"$a" ;; esac; done
exit 0
SH
chmod +x "$tools/cc" "$tools/ar"
installed=$(rustup target list --installed)
for t in "${targets[@]}"; do
  if ! grep -qx "$t" <<<"$installed"; then
    echo "== $t: not installed (rustup target add $t); skipped" >&2
    continue
  fi
  echo "== $t"
  v=${t//-/_}
  env "CC_$v=$tools/cc" "AR_$v=$tools/ar" CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/other-targets" \
    cargo clippy -p berth-core --lib --target "$t" -- -D warnings
done

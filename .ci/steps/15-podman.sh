#!/usr/bin/env bash
# Podman beside Docker: Debian's podman and catatonit (Podman's init), and Podman's Docker-compatible
# API service on a socket of its own, /run/berth-podman/podman.sock. On the CI machine runc cannot
# raise rlimits, so the service gets a containers.conf (through CONTAINERS_CONF) with fixed ulimits.
set -euo pipefail
SOCK_DIR=/run/berth-podman
SOCK=$SOCK_DIR/podman.sock
CONF_DIR=/etc/berth-podman
LOG=${PODMAN_LOG:-/tmp/berth-ci-podman.log}

need=()
command -v podman >/dev/null || need+=(podman)
command -v catatonit >/dev/null || need+=(catatonit)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq "${need[@]}"
fi
podman --version

mkdir -p "$SOCK_DIR" "$CONF_DIR"
cat >"$CONF_DIR/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
init_path = "/usr/bin/catatonit"

# No journald here: keep events in a file, so the events API answers (tests read volume events).
[engine]
events_logger = "file"
CONF
# Registries on loopback are plain HTTP: Podman only pulls from them when marked insecure.
# The loopback test registry (16-registry.sh, 127.0.0.1:5055) is plain HTTP: Podman only
# pulls from and pushes to it when it is marked insecure. (Docker trusts 127.0.0.0/8 as is.)
cat >"$CONF_DIR/registries.conf" <<'CONF'
unqualified-search-registries = []

[[registry]]
location = "127.0.0.1:5055"
insecure = true

# The registry that wants credentials (__test__/sessions/credentials.test.ts starts it).
[[registry]]
location = "127.0.0.1:5056"
insecure = true
CONF

ping_podman() { curl -sf --max-time 5 --unix-socket "$SOCK" http://localhost/_ping >/dev/null 2>&1; }
if ping_podman; then
  echo "podman answers on $SOCK"
else
  rm -f "$SOCK"
  echo "starting podman system service (log: $LOG)"
  CONTAINERS_CONF="$CONF_DIR/containers.conf" CONTAINERS_REGISTRIES_CONF="$CONF_DIR/registries.conf" \
    nohup podman system service --time=0 "unix://$SOCK" >"$LOG" 2>&1 &
  for _ in $(seq 60); do
    ping_podman && break
    sleep 1
  done
  if ! ping_podman; then
    echo "podman did not answer on $SOCK within 60s; last log lines:" >&2
    tail -n 50 "$LOG" >&2 || true
    exit 1
  fi
  echo "podman started"
fi
curl -sf --unix-socket "$SOCK" http://localhost/version | head -c 400
echo

#!/usr/bin/env bash
# Services the engine tests use beside the engines: a real image registry on loopback
# (Debian's docker-registry on 127.0.0.1:5055, plain HTTP, for the pull tests) and socat
# (the remote-engine test reaches the engine over tcp:// through it), and openssl (its TLS
# variant makes a throwaway CA), and htpasswd (apache2-utils: the credential tests start a
# registry that wants a password), and tmux (the command line's terminal check renders `berth ls`
# in an 80-column pane).
set -euo pipefail
REGISTRY_ADDR=127.0.0.1:5055
CONF_DIR=/etc/berth-registry
DATA_DIR=/var/lib/berth-registry
LOG=${REGISTRY_LOG:-/tmp/berth-ci-registry.log}

need=()
command -v docker-registry >/dev/null || need+=(docker-registry)
command -v socat >/dev/null || need+=(socat)
command -v openssl >/dev/null || need+=(openssl)
command -v htpasswd >/dev/null || need+=(apache2-utils)
command -v tmux >/dev/null || need+=(tmux)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq "${need[@]}"
fi

ping_registry() { curl -sf --max-time 2 "http://$REGISTRY_ADDR/v2/" >/dev/null 2>&1; }
if ping_registry; then
  echo "registry answers on $REGISTRY_ADDR"
  exit 0
fi
mkdir -p "$CONF_DIR" "$DATA_DIR"
cat >"$CONF_DIR/config.yml" <<CONF
version: 0.1
storage:
  filesystem:
    rootdirectory: $DATA_DIR
  delete:
    enabled: true
http:
  addr: $REGISTRY_ADDR
CONF
echo "starting docker-registry on $REGISTRY_ADDR (log: $LOG)"
nohup docker-registry serve "$CONF_DIR/config.yml" >"$LOG" 2>&1 &
for _ in $(seq 30); do
  ping_registry && break
  sleep 1
done
if ! ping_registry; then
  echo "docker-registry did not answer on $REGISTRY_ADDR within 30s; last log lines:" >&2
  tail -n 30 "$LOG" >&2 || true
  exit 1
fi
echo "registry started"

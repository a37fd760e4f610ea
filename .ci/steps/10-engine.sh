#!/usr/bin/env bash
# A container engine answering on /var/run/docker.sock (Debian's docker.io, started here when
# nothing answers), and the static busybox the offline test image is built from.
set -euo pipefail
SOCK=/var/run/docker.sock
LOG=${DOCKERD_LOG:-/tmp/berth-ci-dockerd.log}

apt_updated=
apt_install() {
  [ -n "$apt_updated" ] || { apt-get update -qq; apt_updated=1; }
  apt-get install -y -qq "$@"
}
ping_engine() { curl -sf --max-time 5 --unix-socket "$SOCK" http://localhost/_ping >/dev/null 2>&1; }

command -v curl >/dev/null || apt_install curl
if ping_engine; then
  echo "engine answers on $SOCK"
else
  command -v dockerd >/dev/null || apt_install docker.io busybox-static
  echo "starting dockerd (log: $LOG)"
  nohup dockerd >"$LOG" 2>&1 &
  for _ in $(seq 60); do
    ping_engine && break
    sleep 1
  done
  if ! ping_engine; then
    echo "dockerd did not answer on $SOCK within 60s; last log lines:" >&2
    tail -n 50 "$LOG" >&2 || true
    exit 1
  fi
  echo "engine started"
fi
dpkg -s busybox-static >/dev/null 2>&1 || apt_install busybox-static
curl -sf --unix-socket "$SOCK" http://localhost/version | head -c 300
echo

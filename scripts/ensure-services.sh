#!/usr/bin/env bash
# Starts the machine's PostgreSQL and Redis when they are down (tests use them for real), and installs
# Debian's Chromium when it is missing (the /docs page test drives it headless).
set -u
if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start 2>/dev/null || true
  for _ in $(seq 1 20); do pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null && break; sleep 0.5; done
fi
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null 2>&1 || true
  for _ in $(seq 1 20); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.5; done
fi
if [ ! -x /usr/bin/chromium ]; then
  # apt may be held by another apt run (unattended upgrades at boot): retry for up to a minute.
  for _ in $(seq 1 12); do
    if apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1; then break; fi
    sleep 5
  done
  [ -x /usr/bin/chromium ] || echo "ensure-services: could not install chromium (apt-get install chromium); the /docs browser test will fail" >&2
fi
exit 0

#!/usr/bin/env bash
# Stops what start.sh DIR started (by the pids it recorded: SIGTERM, SIGKILL after 5 s) and
# removes DIR. `stop.sh DIR apiserver` stops only the API server and keeps etcd and DIR (a restart).
set -u
D=${1:?usage: stop.sh DIR [apiserver]}
only=${2:-}
procs=(apiserver etcd)
[ "$only" = apiserver ] && procs=(apiserver)
for p in "${procs[@]}"; do [ -f "$D/$p.pid" ] && kill "$(cat "$D/$p.pid")" 2>/dev/null; done
for p in "${procs[@]}"; do
  [ -f "$D/$p.pid" ] || continue
  pid=$(cat "$D/$p.pid")
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  rm -f "$D/$p.pid"
done
[ "$only" = apiserver ] || rm -rf "$D"

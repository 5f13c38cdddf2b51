#!/usr/bin/env bash
# Kept in the repository (from the team's kube-control-plane tooling).
# Stops what start.sh DIR started (by the pids it recorded) and removes DIR.
set -u
D=${1:?usage: stop.sh DIR}
for p in apiserver etcd; do [ -f "$D/$p.pid" ] && kill "$(cat "$D/$p.pid")" 2>/dev/null; done
for p in apiserver etcd; do
  [ -f "$D/$p.pid" ] || continue
  for _ in $(seq 1 100); do kill -0 "$(cat "$D/$p.pid")" 2>/dev/null || break; sleep 0.1; done
done
rm -rf "$D"

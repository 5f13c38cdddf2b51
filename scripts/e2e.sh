#!/usr/bin/env bash
# Starts the whole system (api, worker, console) on the simulated cluster against a database
# and Redis prefix made for this run, seeds the demo, runs Playwright (api + ui projects),
# then stops everything and drops the database.
#
# GANTRY_E2E_DRIVER=kubernetes: on an emulated GPU cluster on a real kube-apiserver instead
# (scripts/kube-cluster.sh, on free ports, in a directory of this run), running the kube-api
# project unless projects are named: GANTRY_E2E_DRIVER=kubernetes scripts/e2e.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$ROOT/scripts/kube-cluster.sh"

run_id="e2e_$$_$RANDOM"
export DATABASE_URL="${GANTRY_E2E_DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/gantry_${run_id}}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
export GANTRY_QUEUE_PREFIX="gantry-${run_id}"
export GANTRY_SIM_SPEED="${GANTRY_E2E_SIM_SPEED:-10}"
export GANTRY_RECONCILE_SECONDS=2
# A burn-in of 30 simulated seconds (3 s at speed 10) keeps the incident loop within the tests' waits
export GANTRY_BURN_IN_SECONDS="${GANTRY_BURN_IN_SECONDS:-30}"
export GANTRY_TRUSTED_PROXIES=127.0.0.1,::1
export PORT="${GANTRY_E2E_API_PORT:-4100}"
CONSOLE_PORT="${GANTRY_E2E_CONSOLE_PORT:-3100}"
export GANTRY_API_URL="http://127.0.0.1:${PORT}"
export GANTRY_ROOT="$ROOT/.gantry/${run_id}"
export GANTRY_BOOTSTRAP_ADMIN_KEY="gk_e2eadmin_$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 32)"
logs="$ROOT/e2e/test-results/logs"
mkdir -p "$logs" "$GANTRY_ROOT"

pids=()
kube_dir=""
cleanup() {
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true # not the emulator: kube_cluster_down stops it
  [ -n "$kube_dir" ] && { kube_cluster_down "$kube_dir"; cp "$kube_dir"/*.log "$logs/" 2>/dev/null || true; }
  (cd "$ROOT/prisma" && node scripts/database.cjs drop >/dev/null) || true
  rm -rf "$GANTRY_ROOT"
}
trap cleanup EXIT

projects=()
if [ "${GANTRY_E2E_DRIVER:-simulated}" = kubernetes ]; then
  export GANTRY_DRIVER=kubernetes
  kube_dir="$GANTRY_ROOT/kube"
  etcd_port=$(free_port_pair)
  export KUBE_ETCD_PORT=$etcd_port KUBE_API_PORT=$(free_port) KUBE_EMULATOR_CONTROL_PORT=$(free_port) KUBE_EMULATOR_METRICS_PORT=$(free_port)
  # mig-manager and persona switches faster than a real GPU Operator's, so the suite stays short
  export KUBE_EMULATOR_ARGS="${KUBE_EMULATOR_ARGS:---mig-apply-seconds 2 --persona-switch-seconds 5 --start-seconds 0.5}"
  kube_cluster_up "$kube_dir" >"$logs/kube-cluster.log" 2>&1 || { tail -n 20 "$logs/kube-cluster.log"; die "the Kubernetes cluster did not start"; }
  export E2E_KUBECONFIG="$KUBE_ADMIN_KUBECONFIG" E2E_KUBE_EMULATOR_URL="$GANTRY_KUBE_EMULATOR_URL"
  [ $# -eq 0 ] && projects=(--project kube-api)
else
  # the cluster `npm run dev` shows: the demo plus an AMD MI300X leaf and a B200 leaf (36 nodes)
  export GANTRY_SIM_CLUSTER="${GANTRY_SIM_CLUSTER:-$ROOT/packages/driver/topologies/demo-accelerators.json}"
fi

migrate >/dev/null
(cd "$ROOT/prisma" && node dist/seed.js >/dev/null)

(cd "$ROOT/apps/api" && GANTRY_MODE=http exec node dist/main.js) >"$logs/api.log" 2>&1 & pids+=($!)
(cd "$ROOT/apps/api" && GANTRY_MODE=worker exec node dist/main.js) >"$logs/worker.log" 2>&1 & pids+=($!)
(cd "$ROOT/apps/console" && exec ./node_modules/.bin/next start -p "$CONSOLE_PORT") >"$logs/console.log" 2>&1 & pids+=($!)
wait_for "$GANTRY_API_URL/readyz" 60 || { tail -n 30 "$logs/api.log"; die "API not ready"; }
wait_for "http://127.0.0.1:${CONSOLE_PORT}/login" 60 || { tail -n 30 "$logs/console.log"; die "console not ready"; }
# the specs' first submissions name GPU models: wait until the worker's inventory sync has registered the GPUs
for _ in $(seq 1 120); do
  curl -fsS -H "Authorization: Bearer $GANTRY_BOOTSTRAP_ADMIN_KEY" "$GANTRY_API_URL/v1/gpus?limit=1" 2>/dev/null | grep -q '"items":\[{' && break
  sleep 0.5
done
curl -fsS -H "Authorization: Bearer $GANTRY_BOOTSTRAP_ADMIN_KEY" "$GANTRY_API_URL/v1/gpus?limit=1" | grep -q '"items":\[{' || { tail -n 30 "$logs/worker.log"; die "no GPU registered within 60 s"; }

export E2E_API_URL="$GANTRY_API_URL" E2E_CONSOLE_URL="http://127.0.0.1:${CONSOLE_PORT}"
export E2E_KEYS_FILE="$GANTRY_ROOT/.gantry/demo-keys.json" E2E_ADMIN_KEY="$GANTRY_BOOTSTRAP_ADMIN_KEY"
cd "$ROOT/e2e" && ./node_modules/.bin/playwright test "${projects[@]}" "$@"

#!/usr/bin/env bash
# One command: install, make sure Postgres and Redis are there, migrate, seed the demo, build,
# and start api (:4000), worker and console (:3000) on the simulated cluster. Ctrl-C stops all.
#
# GANTRY_DRIVER=kubernetes: on a GPU cluster emulated on a real kube-apiserver instead
# (scripts/kube-cluster.sh: etcd, kube-apiserver, deploy/kubernetes's namespace and RBAC, the
# kube-emulator with the demo topology; state kept in .gantry/kube). With GANTRY_KUBECONFIG set,
# on that cluster as it is (nothing is started for it).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$ROOT/scripts/kube-cluster.sh"

export DATABASE_URL="${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/gantry}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
export GANTRY_DRIVER="${GANTRY_DRIVER:-simulated}"
export GANTRY_SIM_SPEED="${GANTRY_SIM_SPEED:-1}"
# At the first start, the worker replays a synthetic week of the demo teams' work on the simulated
# cluster so that the 24 h and 7 d charts have a past (docs/demo.md); GANTRY_DEMO_HISTORY=false: none.
export GANTRY_DEMO_HISTORY="${GANTRY_DEMO_HISTORY:-true}"
# the demo cluster plus an AMD MI300X leaf and a B200 leaf (packages/driver/topologies/demo-accelerators.json)
export GANTRY_SIM_CLUSTER="${GANTRY_SIM_CLUSTER:-$ROOT/packages/driver/topologies/demo-accelerators.json}"
export PORT="${PORT:-4000}"
export GANTRY_API_URL="${GANTRY_API_URL:-http://127.0.0.1:${PORT}}"
# The console's server forwards the browser's address in X-Forwarded-For; the API believes that
# header only from these proxies (here: the console on this machine). In production, list the
# console's and your load balancer's addresses.
export GANTRY_TRUSTED_PROXIES="${GANTRY_TRUSTED_PROXIES:-127.0.0.1,::1}"

install_deps
ensure_services
log "migrating ${DATABASE_URL%%\?*}"
migrate
build_all

mkdir -p "$ROOT/.gantry"
if [ -z "${GANTRY_BOOTSTRAP_ADMIN_KEY:-}" ]; then
  if [ ! -s "$ROOT/.gantry/admin-key" ]; then
    node -e 'const {newApiKey}=require(process.argv[1]);process.stdout.write(newApiKey().key)' "$ROOT/prisma/dist/api-keys.js" > "$ROOT/.gantry/admin-key"
    chmod 600 "$ROOT/.gantry/admin-key"
  fi
  export GANTRY_BOOTSTRAP_ADMIN_KEY="$(cat "$ROOT/.gantry/admin-key")"
fi
# /metrics wants this token (or a platform-admin key): Prometheus reads it from the file.
if [ -z "${GANTRY_METRICS_TOKEN:-}" ]; then
  if [ ! -s "$ROOT/.gantry/metrics-token" ]; then
    (umask 077 && node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("base64url"))' > "$ROOT/.gantry/metrics-token")
  fi
  export GANTRY_METRICS_TOKEN="$(cat "$ROOT/.gantry/metrics-token")"
fi
log "seeding the demo tenant"
(cd "$ROOT/prisma" && GANTRY_ROOT="$ROOT" node dist/seed.js)

kube_dir=""
if [ "$GANTRY_DRIVER" = kubernetes ] && [ -z "${GANTRY_KUBECONFIG:-}" ]; then
  kube_dir="$ROOT/.gantry/kube"
  trap 'kube_cluster_down "$kube_dir"' EXIT
  kube_cluster_up "$kube_dir"
fi
cluster_name="the simulated cluster"
[ "$GANTRY_DRIVER" = kubernetes ] && cluster_name="Kubernetes (${GANTRY_KUBECONFIG})"
[ -n "$kube_dir" ] && cluster_name="an emulated GPU cluster on kube-apiserver (kubectl --kubeconfig $KUBE_ADMIN_KUBECONFIG)"

pids=()
stopping=""
stop() {
  [ -n "$stopping" ] && return
  stopping=1
  log "stopping"
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true # not the emulator: kube_cluster_down stops it
  if [ -n "$kube_dir" ]; then
    log "stopping the kube-emulator, kube-apiserver and etcd (their state stays in .gantry/kube)"
    kube_cluster_down "$kube_dir"
  fi
}
trap stop EXIT INT TERM
prefix() { grep --line-buffered -v -E "RouterExplorer|RoutesResolver|InstanceLoader" | sed -u "s/^/$(printf '\033[1;%sm%-8s\033[0m' "$1" "$2")| /"; }

(cd "$ROOT/apps/api" && GANTRY_MODE=http exec node dist/main.js) > >(prefix 34 api) 2>&1 & pids+=($!)
(cd "$ROOT/apps/api" && GANTRY_MODE=worker exec node dist/main.js) > >(prefix 35 worker) 2>&1 & pids+=($!)
(cd "$ROOT/apps/console" && exec ./node_modules/.bin/next start -p "${CONSOLE_PORT:-3000}") > >(prefix 32 console) 2>&1 & pids+=($!)

wait_for "http://127.0.0.1:${PORT}/readyz" 90 || die "the API did not become ready"
wait_for "http://127.0.0.1:${CONSOLE_PORT:-3000}/login" 90 || die "the console did not start"
cat <<MSG

  Gantry is up on ${cluster_name}.
    Console   http://localhost:${CONSOLE_PORT:-3000}   (sign in with a key from .gantry/demo-keys.json)
    API       http://localhost:${PORT}/docs
    Admin key .gantry/admin-key (platform admin)
    Metrics   curl -H "Authorization: Bearer \$(cat .gantry/metrics-token)" localhost:${PORT}/metrics
MSG
[ -n "$kube_dir" ] && cat <<MSG
    Faults    curl $GANTRY_KUBE_EMULATOR_URL/v1/faults -d '{"nodeName":"h100-s0-l0-n0","kind":"xid","gpuIndex":0,"xid":79}'
              (the kube-emulator's control API; or the API's POST /v1/sim/faults as platform admin)
    Logs      .gantry/kube/{emulator,apiserver,etcd}.log
MSG
cat <<MSG

MSG
wait

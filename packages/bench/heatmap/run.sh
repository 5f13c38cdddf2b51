#!/usr/bin/env bash
# Heatmap benchmark: the whole system on a 1,000-node x 8-GPU simulated cluster
# (8,000 GPUs), a few hundred GPUs busy, then Chromium (Playwright) opens /heatmap and
# measures navigation -> heatmap drawn, the draw itself, the API answer and a metric switch.
#   bash packages/bench/heatmap/run.sh        (from the repo root; needs built packages)
# Ports 4200/3200, a scratch database and Redis prefix, all removed at the end.
set -euo pipefail
source "$(cd "$(dirname "$0")/../../.." && pwd)/scripts/lib.sh"

run_id="bench_heatmap_$$"
export DATABASE_URL="postgresql://postgres@127.0.0.1:5432/gantry_${run_id}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
export GANTRY_QUEUE_PREFIX="gantry-${run_id}"
export GANTRY_SIM_SPEED=10 GANTRY_RECONCILE_SECONDS=5 GANTRY_TELEMETRY_SECONDS=5 GANTRY_LOG_LEVEL=warn
export PORT=4200
CONSOLE_PORT=3200
export GANTRY_API_URL="http://127.0.0.1:${PORT}"
work="$ROOT/.gantry/${run_id}"
mkdir -p "$work"
export GANTRY_SIM_CLUSTER="$work/cluster-1000.json"
export GANTRY_BOOTSTRAP_ADMIN_KEY="gk_benchadmin_$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 32)"

pids=()
cleanup() {
  kill "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  (cd "$ROOT/prisma" && node scripts/database.cjs drop >/dev/null) || true
  rm -rf "$work"
}
trap cleanup EXIT

node -e '
  const d = require(process.argv[1]);
  const t = d.generateTopology({ spines: 5, leavesPerSpine: 10, nodesPerLeaf: 20, gpusPerNode: 8, models: ["H100-80GB", "A100-80GB"] });
  require("fs").writeFileSync(process.argv[2], d.formatTopologyJson(t));
' "$ROOT/packages/driver/dist/index.js" "$GANTRY_SIM_CLUSTER"
migrate >/dev/null
(cd "$ROOT/apps/api" && GANTRY_MODE=http exec node dist/main.js) >"$work/api.log" 2>&1 & pids+=($!)
(cd "$ROOT/apps/api" && GANTRY_MODE=worker exec node dist/main.js) >"$work/worker.log" 2>&1 & pids+=($!)
(cd "$ROOT/apps/console" && exec ./node_modules/.bin/next start -p "$CONSOLE_PORT") >"$work/console.log" 2>&1 & pids+=($!)
wait_for "$GANTRY_API_URL/readyz" 90 || { tail -n 30 "$work/api.log"; die "API not ready"; }
wait_for "http://127.0.0.1:${CONSOLE_PORT}/login" 90 || die "console not ready"

export E2E_API_URL="$GANTRY_API_URL" E2E_CONSOLE_URL="http://127.0.0.1:${CONSOLE_PORT}" E2E_ADMIN_KEY="$GANTRY_BOOTSTRAP_ADMIN_KEY"
cd "$ROOT/e2e" && ./node_modules/.bin/playwright test --config bench/playwright.config.ts

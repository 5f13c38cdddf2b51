#!/usr/bin/env bash
# Starts the whole system (api, worker, console) on the simulated cluster against a database
# and Redis prefix made for this run, seeds the demo, runs Playwright (api + ui projects),
# then stops everything and drops the database.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

run_id="e2e_$$_$RANDOM"
export DATABASE_URL="${GANTRY_E2E_DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/gantry_${run_id}}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
export GANTRY_QUEUE_PREFIX="gantry-${run_id}"
export GANTRY_SIM_SPEED="${GANTRY_E2E_SIM_SPEED:-10}"
export GANTRY_RECONCILE_SECONDS=2
export GANTRY_TRUSTED_PROXIES=127.0.0.1,::1
export PORT="${GANTRY_E2E_API_PORT:-4100}"
CONSOLE_PORT="${GANTRY_E2E_CONSOLE_PORT:-3100}"
export GANTRY_API_URL="http://127.0.0.1:${PORT}"
export GANTRY_ROOT="$ROOT/.gantry/${run_id}"
export GANTRY_BOOTSTRAP_ADMIN_KEY="gk_e2eadmin_$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 32)"
logs="$ROOT/e2e/test-results/logs"
mkdir -p "$logs" "$GANTRY_ROOT"

pids=()
cleanup() {
  kill "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  (cd "$ROOT/prisma" && node scripts/database.cjs drop >/dev/null) || true
  rm -rf "$GANTRY_ROOT"
}
trap cleanup EXIT

migrate >/dev/null
(cd "$ROOT/prisma" && node dist/seed.js >/dev/null)

(cd "$ROOT/apps/api" && GANTRY_MODE=http exec node dist/main.js) >"$logs/api.log" 2>&1 & pids+=($!)
(cd "$ROOT/apps/api" && GANTRY_MODE=worker exec node dist/main.js) >"$logs/worker.log" 2>&1 & pids+=($!)
(cd "$ROOT/apps/console" && exec ./node_modules/.bin/next start -p "$CONSOLE_PORT") >"$logs/console.log" 2>&1 & pids+=($!)
wait_for "$GANTRY_API_URL/readyz" 60 || { tail -n 30 "$logs/api.log"; die "API not ready"; }
wait_for "http://127.0.0.1:${CONSOLE_PORT}/login" 60 || { tail -n 30 "$logs/console.log"; die "console not ready"; }

export E2E_API_URL="$GANTRY_API_URL" E2E_CONSOLE_URL="http://127.0.0.1:${CONSOLE_PORT}"
export E2E_KEYS_FILE="$GANTRY_ROOT/.gantry/demo-keys.json" E2E_ADMIN_KEY="$GANTRY_BOOTSTRAP_ADMIN_KEY"
cd "$ROOT/e2e" && ./node_modules/.bin/playwright test "$@"

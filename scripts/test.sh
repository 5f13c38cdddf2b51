#!/usr/bin/env bash
# One command runs every test: build, type-check, staleness of the OpenAPI document and SDK,
# unit and integration tests (Jest, real Postgres and Redis in a database made for the run),
# and end-to-end tests (Playwright in Debian's Chromium against the running system).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
set -e

export DATABASE_URL="${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/gantry}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
results="$ROOT/.test-results"
rm -rf "$results" && mkdir -p "$results"

install_deps
ensure_services
log "building"
build_all

log "checking that the OpenAPI document and the SDK are up to date"
(cd "$ROOT/apps/api" && node dist/openapi.js >/dev/null)
(cd "$ROOT/packages/sdk" && pnpm run --silent generate >/dev/null)
if ! git -C "$ROOT" diff --quiet -- apps/api/openapi.json packages/sdk/src/generated; then
  git -C "$ROOT" --no-pager diff --stat -- apps/api/openapi.json packages/sdk/src/generated
  die "apps/api/openapi.json or the SDK is stale: commit the regenerated files (pnpm build does it)"
fi

log "type-checking"
pnpm exec turbo run typecheck --output-logs=errors-only

status=0
log "unit and integration tests"
for pkg in packages/contracts packages/scheduler packages/driver packages/sdk packages/bench apps/api; do
  [ -f "$ROOT/$pkg/jest.config.cjs" ] || continue
  name=$(basename "$pkg")
  log "  $pkg"
  (cd "$ROOT/$pkg" && ./node_modules/.bin/jest --passWithNoTests --json --outputFile="$results/jest-$name.json" 2> >(grep -Ev '^\s*$' >&2)) || status=1
done

log "end-to-end tests (Playwright, Debian's Chromium)"
rm -rf "$ROOT/e2e/test-results"
bash "$ROOT/scripts/e2e.sh" || status=1
if [ -f "$ROOT/e2e/test-results/results.json" ]; then cp "$ROOT/e2e/test-results/results.json" "$results/playwright.json"; else status=1; fi

node "$ROOT/scripts/summarize-tests.cjs" "$results" || status=1
exit $status

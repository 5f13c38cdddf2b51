#!/usr/bin/env bash
# One command runs every test: build, type-check, staleness of the OpenAPI document and SDK,
# unit and integration tests (Jest, real Postgres and Redis in a database made for the run),
# lint, and end-to-end tests (Playwright in Debian's Chromium against the running system).
# Every stage has a time limit (GANTRY_LIMIT_*): a stage that hangs is stopped and named, and
# the run goes on to the next stage and ends with a failure instead of never ending.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

export DATABASE_URL="${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/gantry}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
results="$ROOT/.test-results"
rm -rf "$results" && mkdir -p "$results"

failed_stages=()
fail() { failed_stages+=("$1"); }

bounded "${GANTRY_LIMIT_INSTALL:-15m}" "installing dependencies" install_deps || die "installing dependencies failed"
bounded 2m "checking Postgres and Redis" ensure_services || die "Postgres or Redis is not usable"
log "building"
bounded "${GANTRY_LIMIT_BUILD:-15m}" "the build" build_all || die "the build failed"

log "checking that the OpenAPI document and the SDK are up to date"
bounded 5m "generating the OpenAPI document and the SDK" bash -c "cd '$ROOT/apps/api' && node dist/openapi.js >/dev/null && cd '$ROOT/packages/sdk' && pnpm run --silent generate >/dev/null" || fail "OpenAPI/SDK generation"
if ! git -C "$ROOT" diff --quiet -- apps/api/openapi.json packages/sdk/src/generated; then
  git -C "$ROOT" --no-pager diff --stat -- apps/api/openapi.json packages/sdk/src/generated
  die "apps/api/openapi.json or the SDK is stale: commit the regenerated files (pnpm build does it)"
fi

log "type-checking"
bounded "${GANTRY_LIMIT_TYPECHECK:-15m}" "type-checking" pnpm exec turbo run typecheck --output-logs=errors-only || fail "type-checking"

log "linting (ESLint: promises, exhaustive switches, import cycles; Prettier)"
bounded "${GANTRY_LIMIT_LINT:-10m}" "linting" pnpm run --silent lint || fail "lint"

log "unit and integration tests"
for pkg in packages/* apps/api; do  # every package with a jest.config.cjs, the API last (the longest)
  [ -f "$ROOT/$pkg/jest.config.cjs" ] || continue
  name=$(basename "$pkg")
  limit="${GANTRY_LIMIT_UNIT:-10m}"
  [ "$pkg" = apps/api ] && limit="${GANTRY_LIMIT_INTEGRATION:-40m}"
  log "  $pkg (limit $limit)"
  (cd "$ROOT/$pkg" && bounded "$limit" "jest in $pkg" ./node_modules/.bin/jest --passWithNoTests --json --outputFile="$results/jest-$name.json" 2> >(grep -Ev '^\s*$' >&2)) || fail "jest in $pkg"
  [ -f "$results/jest-$name.json" ] || fail "jest in $pkg (no report)"
done

log "end-to-end tests (Playwright, Debian's Chromium)"
rm -rf "$ROOT/e2e/test-results"
bounded "${GANTRY_LIMIT_E2E:-25m}" "the end-to-end tests" bash "$ROOT/scripts/e2e.sh" || fail "end-to-end tests"
if [ -f "$ROOT/e2e/test-results/results.json" ]; then cp "$ROOT/e2e/test-results/results.json" "$results/playwright.json"; else fail "end-to-end tests (no report)"; fi

log "end-to-end tests on Kubernetes (kube-apiserver + kube-emulator, Playwright kube-api project)"
rm -rf "$ROOT/e2e/test-results"
bounded "${GANTRY_LIMIT_E2E_KUBE:-12m}" "the end-to-end tests on Kubernetes" env GANTRY_E2E_DRIVER=kubernetes bash "$ROOT/scripts/e2e.sh" || fail "end-to-end tests on Kubernetes"
if [ -f "$ROOT/e2e/test-results/results.json" ]; then cp "$ROOT/e2e/test-results/results.json" "$results/playwright-kube.json"; else fail "end-to-end tests on Kubernetes (no report)"; fi

node "$ROOT/scripts/summarize-tests.cjs" "$results" || fail "test summary"
if [ ${#failed_stages[@]} -gt 0 ]; then
  printf '\033[1;31m[gantry]\033[0m failed: %s\n' "${failed_stages[@]}" >&2
  exit 1
fi

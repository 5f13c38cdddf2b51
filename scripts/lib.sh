# Shared helpers of the dev and test scripts.
export CHECKPOINT_DISABLE=1 NEXT_TELEMETRY_DISABLED=1 TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
export PRISMA_HIDE_UPDATE_MESSAGE=1

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

log() { printf '\033[1;36m[gantry]\033[0m %s\n' "$*"; }
die() { printf '\033[1;31m[gantry]\033[0m %s\n' "$*" >&2; exit 1; }

ensure_pnpm() {
  if ! command -v pnpm >/dev/null 2>&1; then
    log "installing pnpm 12.21.0"
    npm i -g --allow-scripts=pnpm pnpm@12.21.0 >/dev/null
  fi
}

install_deps() {
  ensure_pnpm
  (cd "$ROOT" && pnpm install --frozen-lockfile --reporter=append-only | tail -n 3)
}

# Postgres and Redis: docker compose where a Docker engine runs, else the servers at
# DATABASE_URL / REDIS_URL (default 127.0.0.1).
ensure_services() {
  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    log "starting postgres and redis with docker compose"
    (cd "$ROOT" && docker compose up -d --wait postgres redis)
  fi
  (cd "$ROOT/prisma" && node scripts/database.cjs check) ||
    die "Postgres is not reachable at ${DATABASE_URL}. Start it (docker compose up -d postgres) or set DATABASE_URL."
  node -e '
    const { Redis } = require(require.resolve("ioredis", { paths: [process.argv[1]] }));
    const r = new Redis(process.env.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
    r.connect().then(() => r.ping()).then(() => { r.disconnect(); }, () => process.exit(1));
  ' "$ROOT/apps/api" || die "Redis is not reachable at ${REDIS_URL}. Start it (docker compose up -d redis) or set REDIS_URL."
}

migrate() {
  (cd "$ROOT/prisma" && node scripts/database.cjs create && ./node_modules/.bin/prisma migrate deploy 2>&1 | grep -Ev '^(WARNING|- url|The values|We recommend|$)' | tail -n 2)
}

build_all() {
  (cd "$ROOT" && pnpm exec turbo run build --output-logs=errors-only)
}

# wait_for URL [seconds]
wait_for() {
  local url=$1 secs=${2:-60}
  for _ in $(seq 1 $((secs * 2))); do
    curl -fsS -o /dev/null "$url" 2>/dev/null && return 0
    sleep 0.5
  done
  return 1
}

# bounded LIMIT WHAT CMD...: runs CMD (a command, or a function of this file) in its own process
# group with a time limit (timeout(1) syntax: 90s, 20m). Past the limit the whole group gets
# TERM, then KILL 30 s later, and the stage fails loudly, naming itself and its limit.
bounded() {
  local limit=$1 what=$2 rc=0
  shift 2
  if declare -F "$1" >/dev/null; then
    timeout --kill-after=30s "$limit" bash -c "source '$ROOT/scripts/lib.sh'; $*" || rc=$?
  else
    timeout --kill-after=30s "$limit" "$@" || rc=$?
  fi
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    printf '\033[1;31m[gantry]\033[0m TIMED OUT: %s did not finish within %s; stopped it (raise GANTRY_LIMIT_* only if the machine is known to be slow)\n' "$what" "$limit" >&2
  fi
  return "$rc"
}

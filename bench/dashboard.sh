#!/usr/bin/env bash
# The web dashboard with many users stored: time to first byte of its users page (first page,
# a deep page, a search), a user's page and the live-update stamp the page polls every 2 s.
#
# Seeds the users with `authload.py seed` (copies of a user the server made, written straight
# into the SQLite file), restarts the server on that file, then times each URL with curl
# (median and worst of --runs requests, after one warm-up). Loopback only; every server started
# is tracked by PID and stopped on exit; every step has a time limit. Exits non-zero only when
# something fails to build, start or answer.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: bench/dashboard.sh [options]
  --users N          users stored (default 100000)
  --runs N           timed requests per URL (default 20)
  --no-build         use the existing binary
  --scratch-path P   SwiftPM scratch path for the release build (default .build-bench-dashboard)
  --bin PATH         our server binary (implies no build)
  -h, --help
EOF
}

BENCH=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$BENCH/.." && pwd)
# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
USERS=100000
RUNS=20
BUILD=1
SCRATCH=.build-bench-dashboard
OUR_BIN=""
PY=${PYTHON:-python3}
while (($#)); do
    case $1 in
        --users) USERS=$2; shift 2 ;;
        --runs) RUNS=$2; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --scratch-path) SCRATCH=$2; shift 2 ;;
        --bin) OUR_BIN=$2; BUILD=0; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; exit 64 ;;
    esac
done
[[ $USERS =~ ^[0-9]+$ && $RUNS =~ ^[1-9][0-9]*$ ]] || { usage >&2; exit 64; }

log() { echo "dashboard.sh: $*" >&2; }
die() { log "$*"; exit 1; }
SERVER_PIDS=()
TMP=$(mktemp -d)
cleanup() {
    for pid in ${SERVER_PIDS[@]+"${SERVER_PIDS[@]}"}; do stop_server "$pid" >/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT

if ((BUILD)); then
    log "building auth-emulator (release, $SCRATCH)"
    (cd "$ROOT" && bounded 1800 swift build -c release --product auth-emulator --scratch-path "$SCRATCH" >&2) || die "build failed"
fi
OUR_BIN=${OUR_BIN:-$ROOT/$SCRATCH/release/auth-emulator}
[[ -x $OUR_BIN ]] || die "no binary at $OUR_BIN"

start() {
    local line="" i
    AUTH_EMULATOR_PASSWORD_ITERATIONS=1000 "$OUR_BIN" serve --host 127.0.0.1 --port 0 --db "$TMP/auth.db" \
        </dev/null >"$TMP/$1.out" 2>"$TMP/$1.err" &
    SERVER_PID=$!
    SERVER_PIDS+=("$SERVER_PID")
    for ((i = 0; i < 750; i++)); do  # 15 s
        line=$(head -n 1 "$TMP/$1.out" 2>/dev/null || true)
        [[ $line =~ ^listening\ on\ (http://127\.0\.0\.1:[0-9]+) ]] && break
        kill -0 "$SERVER_PID" 2>/dev/null || die "the server exited: $(tail -n 5 "$TMP/$1.err")"
        sleep 0.02
    done
    [[ $line =~ ^listening\ on\ (http://127\.0\.0\.1:[0-9]+) ]] || die "no listening line within 15 s"
    URL=${BASH_REMATCH[1]}
}

start first
curl -fsS --max-time 5 -o /dev/null -H 'Content-Type: application/json' \
    -d '{"email":"template@example.com","password":"password1"}' "$URL/signup" || die "sign-up failed"
stop_server "$SERVER_PID" >/dev/null
if ((USERS > 0)); then
    log "seeding $USERS users"
    bounded 900 "$PY" "$BENCH/authload.py" seed --db "$TMP/auth.db" --template-email template@example.com -n "$USERS" \
        --password password1 --iterations 1000 --tag dash --out "$TMP/seed.users" >"$TMP/seed.kv" || die "seeding failed"
    log "$(kv "$TMP/seed.kv" users_total) users stored"
fi
start second
ID=$(curl -fsS --max-time 5 -H "Authorization: Bearer $(awk -F': *' '/^service_role key:/ { print $2 }' "$TMP/second.out")" \
    "$URL/admin/users?per_page=1" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["users"][0]["id"])') \
    || die "cannot list users"
LAST_PAGE=$(( (USERS + 1 + 49) / 50 ))

# Median and worst time to first byte over RUNS requests, after one warm-up.
measure() {
    local name=$1 path=$2 i
    curl -fsS --max-time 30 -o /dev/null "$URL$path" || die "GET $path failed"
    for ((i = 0; i < RUNS; i++)); do
        curl -fsS --max-time 30 -o /dev/null -w '%{time_starttransfer}\n' "$URL$path"
    done | sort -n | awk -v name="$name" -v path="$path" '
        { t[NR] = $1 * 1000 }
        END { printf "| %-28s | %-34s | %8.1f | %8.1f |\n", name, path, t[int((NR + 1) / 2)], t[NR] }'
}

echo
echo "Dashboard with $((USERS + 1)) users (ms to first byte, $RUNS runs)"
echo
echo "| page                         | path                               |   median |    worst |"
echo "|------------------------------|------------------------------------|----------|----------|"
measure "users, first page" "/emulator"
measure "users, last page (offset)" "/emulator?page=$LAST_PAGE"
measure "users, search" "/emulator?q=dash-4242"
measure "one user" "/emulator/users/$ID"
measure "live stamp (polled, 2 s)" "/emulator/live?view=users"
measure "settings" "/emulator/settings"

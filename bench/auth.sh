#!/usr/bin/env bash
# Auth-operation throughput of auth-emulator, against moto's Cognito emulator in the same run.
#
# Measures, on loopback only, at 1 and 16 concurrent keep-alive clients (p50/p99 per operation):
#   sign-ups/s, password sign-ins/s, refreshes/s and GET /user/s of ours, with the password
#   hashing cost lowered to 1,000 PBKDF2 iterations (AUTH_EMULATOR_PASSWORD_ITERATIONS, an
#   insecure test setting; production is 100,000);
#   the hashing bound: cores x our PBKDF2 hashes/s at that cost (bench/auth-crypto-bench);
#   sign-in and refresh again with 100,000 more users stored in the database;
#   SignUp, InitiateAuth USER_PASSWORD_AUTH / REFRESH_TOKEN_AUTH and GetUser of moto_server;
# then prints one summary table with the targets. It exits 0 when targets are missed (the table
# says so) and non-zero only when something fails to build, start or answer.
#
# Every server it starts is tracked by PID and stopped on exit; every step has a time limit.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: bench/auth.sh [options]
  --duration N       seconds per measured operation (default 5)
  --requests N       upper bound on operations per measured run (default 500000)
  --concurrency L    client counts, comma-separated (default 1,16)
  --workers N        driver processes when more than one client (default 2)
  --seed-users N     users stored before the second sign-in/refresh round (default 100000;
                     0 skips that round)
  --iterations N     PBKDF2 iterations for the run (default 1000: insecure, test-only)
  --client TOOL      auto | wrk | python: driver of ours' refresh and GET /user (default auto:
                     wrk when on PATH); everything else uses bench/authload.py
  --no-moto          do not measure moto's Cognito emulator
  --venv DIR         virtualenv with moto[server] and boto3 (default bench/.venv-moto; created
                     and filled with pip when missing)
  --no-build         use the existing binaries
  --scratch-path P   SwiftPM scratch path for the release build (default .build-bench-auth)
  --bin PATH         our server binary (implies no build of it)
  --signing-key ALG  ours signs with an rs256, es256 or eddsa key (serve --signing-key) instead of
                     HS256 and the JWT secret
  --token-version V  ours issues refresh tokens of format V (GOTRUE_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION):
                     0 (GoTrue's default, 12 characters) or 2 (signed, counter on the session row)
  --quick            shorthand for --duration 2 --seed-users 20000
  -h, --help
EOF
}

DURATION=5
REQUESTS=500000
CONCURRENCY=1,16
WORKERS=2
SEED_USERS=100000
ITERATIONS=1000
CLIENT=auto
MOTO=1
BUILD=1
SCRATCH=.build-bench-auth
OUR_BIN=""
SIGNING_KEY=""
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/bench
# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
VENV=$BENCH/.venv-moto

need_value() { [[ $# -ge 2 && -n $2 ]] || { echo "auth.sh: $1 needs a value" >&2; exit 64; }; }
while [[ $# -gt 0 ]]; do
    case $1 in
        --duration) need_value "$@"; DURATION=$2; shift 2 ;;
        --requests) need_value "$@"; REQUESTS=$2; shift 2 ;;
        --concurrency) need_value "$@"; CONCURRENCY=$2; shift 2 ;;
        --workers) need_value "$@"; WORKERS=$2; shift 2 ;;
        --seed-users) need_value "$@"; SEED_USERS=$2; shift 2 ;;
        --iterations) need_value "$@"; ITERATIONS=$2; shift 2 ;;
        --client) need_value "$@"; CLIENT=$2; shift 2 ;;
        --no-moto) MOTO=0; shift ;;
        --venv) need_value "$@"; VENV=$2; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --scratch-path) need_value "$@"; SCRATCH=$2; shift 2 ;;
        --bin) need_value "$@"; OUR_BIN=$2; shift 2 ;;
        --signing-key) need_value "$@"; SIGNING_KEY=$2; shift 2 ;;
        --token-version) need_value "$@"
            [[ $2 =~ ^[012]$ ]] || { echo "auth.sh: --token-version takes 0, 1 or 2" >&2; exit 64; }
            export GOTRUE_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION=$2; shift 2 ;;
        --quick) DURATION=2; SEED_USERS=20000; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "auth.sh: unknown option $1" >&2; usage >&2; exit 64 ;;
    esac
done
for n in DURATION REQUESTS WORKERS SEED_USERS ITERATIONS; do
    [[ ${!n} =~ ^[0-9]+$ ]] || { echo "auth.sh: $n must be a whole number, got '${!n}'" >&2; exit 64; }
done
((DURATION >= 1 && DURATION <= 60)) || { echo "auth.sh: --duration must be 1...60" >&2; exit 64; }
((REQUESTS >= 1 && WORKERS >= 1)) || { echo "auth.sh: --requests and --workers must be positive" >&2; exit 64; }
((SEED_USERS <= 1000000)) || { echo "auth.sh: --seed-users must be at most 1000000" >&2; exit 64; }
((ITERATIONS >= 1 && ITERATIONS <= 10000000)) || { echo "auth.sh: --iterations must be 1...10000000" >&2; exit 64; }
[[ $CONCURRENCY =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "auth.sh: --concurrency takes e.g. 1,16" >&2; exit 64; }
IFS=, read -r -a LEVELS <<<"$CONCURRENCY"
for c in "${LEVELS[@]}"; do ((c >= 1 && c <= 256)) || { echo "auth.sh: concurrency must be 1...256" >&2; exit 64; }; done

PY=${PYTHON:-python3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/auth-bench.XXXXXX")
SERVER_PIDS=()
PASSWORD='bench-Passw0rd!'
TAG=b$$

log() { echo "[auth.sh] $*" >&2; }
die() { log "error: $*"; exit 1; }

cleanup() {
    local pid
    for pid in ${SERVER_PIDS[@]+"${SERVER_PIDS[@]}"}; do stop_server "$pid" >/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

CORES=$(getconf _NPROCESSORS_ONLN 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 1)
STARTED=$SECONDS

# ---------------------------------------------------------------------------------------------
# 1. Build, tools, moto's virtualenv
# ---------------------------------------------------------------------------------------------
BIN_DIR=$(cd "$ROOT" && swift build -c release --scratch-path "$SCRATCH" --show-bin-path)
if [[ -z $OUR_BIN ]]; then
    if ((BUILD)); then
        log "building auth-emulator and auth-crypto-bench (release, scratch path $SCRATCH)"
        (cd "$ROOT" && bounded 1800 swift build -c release --scratch-path "$SCRATCH" --product auth-emulator) >&2 \
            || die "release build of auth-emulator failed"
    fi
    OUR_BIN=$BIN_DIR/auth-emulator
fi
[[ -x $OUR_BIN ]] || die "no executable at $OUR_BIN"
CRYPTO_BIN=$BIN_DIR/auth-crypto-bench
if ((BUILD)) || [[ ! -x $CRYPTO_BIN ]]; then
    (cd "$ROOT" && bounded 1800 swift build -c release --scratch-path "$SCRATCH" --product auth-crypto-bench) >&2 \
        || die "release build of auth-crypto-bench failed"
fi

case $CLIENT in
    auto) if command -v wrk >/dev/null 2>&1; then CLIENT=wrk; else CLIENT=python; fi ;;
    wrk) command -v wrk >/dev/null 2>&1 || die "wrk is not on PATH (Debian/Ubuntu: apt-get install -y wrk)" ;;
    python) ;;
    *) die "--client must be auto, wrk or python" ;;
esac

if ((MOTO)); then
    if [[ ! -x $VENV/bin/moto_server ]] || ! "$VENV/bin/python" -c 'import boto3' 2>/dev/null; then
        log "creating $VENV with moto[server] and boto3 (pip)"
        "$PY" -m venv "$VENV" >&2 || die "python3 -m venv failed (Debian/Ubuntu: apt-get install -y python3-venv)"
        bounded 600 "$VENV/bin/pip" install -q 'moto[server]' boto3 >&2 || die "pip install 'moto[server]' boto3 failed"
    fi
    MOTO_VERSION=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("moto"))')
fi

LOADAVG_BEFORE=$(loadavg)
awk -v l="$LOADAVG_BEFORE" 'BEGIN { exit !(l > 0.5) }' \
    && log "warning: load average is $LOADAVG_BEFORE: other work on this machine will add noise"

# ---------------------------------------------------------------------------------------------
# 2. Hashing bound
# ---------------------------------------------------------------------------------------------
# Best of 200 single derivations at the run's cost, on one core; the bound assumes every core
# does nothing but hash.
read -r _ _ _ PBKDF2_IT_S _ < <(bounded 60 "$CRYPTO_BIN" pbkdf2 "$ITERATIONS" --repeat 200) \
    || die "auth-crypto-bench failed"
HASHES_S=$(awk -v r="$PBKDF2_IT_S" -v i="$ITERATIONS" 'BEGIN { printf "%.0f", r / i }')
BOUND=$(awk -v h="$HASHES_S" -v c="$CORES" 'BEGIN { printf "%.0f", h * c }')
log "PBKDF2-HMAC-SHA256 at $ITERATIONS iterations: $HASHES_S hashes/s per core; bound $CORES x = $BOUND/s"

# ---------------------------------------------------------------------------------------------
# Servers
# ---------------------------------------------------------------------------------------------
# start_ours NAME DBFILE: sets SERVER_PID and SERVER_PORT once GET /health answers 200.
start_ours() {
    local name=$1 db=$2 line="" i quiet=""
    # No access log while measuring (builds without the flag have none).
    "$OUR_BIN" serve --help 2>/dev/null | grep -q -- '--\[no-\]quiet' && quiet=--quiet
    AUTH_EMULATOR_PASSWORD_ITERATIONS=$ITERATIONS \
        "$OUR_BIN" serve --host 127.0.0.1 --port 0 --db "$db" ${SIGNING_KEY:+--signing-key "$SIGNING_KEY"} $quiet \
        </dev/null >"$TMP/$name.out" 2>"$TMP/$name.err" &
    SERVER_PID=$!
    SERVER_PIDS+=("$SERVER_PID")
    for ((i = 0; i < 750; i++)); do  # 15 s
        line=$(head -n 1 "$TMP/$name.out" 2>/dev/null || true)
        [[ $line =~ ^listening\ on\ http://127\.0\.0\.1:([0-9]+) ]] && break
        kill -0 "$SERVER_PID" 2>/dev/null || die "$name exited before listening: $(tail -n 5 "$TMP/$name.err")"
        sleep 0.02
    done
    [[ $line =~ ^listening\ on\ http://127\.0\.0\.1:([0-9]+) ]] \
        || die "$name printed no 'listening on http://127.0.0.1:PORT' line within 15 s (got: '$line')"
    SERVER_PORT=${BASH_REMATCH[1]}
    for ((i = 0; i < 100; i++)); do
        curl -fsS --max-time 2 -o /dev/null "http://127.0.0.1:$SERVER_PORT/health" 2>/dev/null && return 0
        sleep 0.05
    done
    die "$name: GET /health never answered 2xx on port $SERVER_PORT"
}

# moto_server prints " * Running on http://127.0.0.1:PORT" (werkzeug) on stderr once bound.
start_moto() {
    local i line=""
    "$VENV/bin/moto_server" -H 127.0.0.1 -p 0 </dev/null >"$TMP/moto.out" 2>&1 &
    SERVER_PID=$!
    SERVER_PIDS+=("$SERVER_PID")
    for ((i = 0; i < 300; i++)); do  # 30 s: importing moto is slow
        line=$(grep -o 'Running on http://127\.0\.0\.1:[0-9]*' "$TMP/moto.out" 2>/dev/null | head -n 1 || true)
        [[ -n $line ]] && break
        kill -0 "$SERVER_PID" 2>/dev/null || die "moto_server exited: $(tail -n 5 "$TMP/moto.out")"
        sleep 0.1
    done
    [[ -n $line ]] || die "moto_server did not report its port within 30 s"
    SERVER_PORT=${line##*:}
}

# ---------------------------------------------------------------------------------------------
# Load
# ---------------------------------------------------------------------------------------------
FAILURES=0
# drive KEY URL OP C [authload options...]: one measured run with bench/authload.py, key=value
# results in $TMP/KEY.kv. A run with no successful operation, or more than 1 % failed, is an error.
drive() {
    local key=$1 url=$2 op=$3 c=$4 w; shift 4
    w=$(( c < WORKERS ? c : WORKERS ))
    bounded $((DURATION + 120)) "$PY" "$BENCH/authload.py" "$url" --op "$op" -c "$c" -t "$w" \
        -d "$DURATION" -n "$REQUESTS" --password "$PASSWORD" "$@" >"$TMP/$key.kv" \
        || die "$key: authload.py failed: $(kv "$TMP/$key.kv" first_failure)"
    echo "tool=authload.py" >>"$TMP/$key.kv"
    check "$key"
}
check() {
    local key=$1 ops failed
    ops=$(kv "$TMP/$key.kv" ops); failed=$(( $(kv "$TMP/$key.kv" failed) + $(kv "$TMP/$key.kv" timeouts) ))
    log "$key: $(kv "$TMP/$key.kv" ops_per_s) ops/s, p50 $(kv "$TMP/$key.kv" p50_ms) ms," \
        "p99 $(kv "$TMP/$key.kv" p99_ms) ms, $ops ok, $failed failed ($(kv "$TMP/$key.kv" tool)," \
        "client CPU $(kv "$TMP/$key.kv" client_cpu_pct)% of a core)"
    FAILURES=$((FAILURES + failed))
    ((ops > 0)) || die "$key: no operation succeeded: $(kv "$TMP/$key.kv" first_failure)"
    ((failed * 100 <= ops)) || die "$key: $failed of $((ops + failed)) operations failed: $(kv "$TMP/$key.kv" first_failure)"
    if ((failed > 0)); then log "warning: $key: first failure: $(kv "$TMP/$key.kv" first_failure)"; fi
}

# wrk drives refresh and GET /user of ours when available: the Python driver's own cost per
# request would otherwise cap GET /user. Tokens are split over wrk's threads; for refresh each
# thread keeps a queue of refresh tokens and puts back the rotated token of every response, so
# each in-flight request holds the only live token of its chain (bench/auth.lua, shared with
# bench/cost.sh).
# drive_wrk KEY URL OP C SESSIONS: one measured wrk run (refresh or user) over the sessions file.
drive_wrk() {
    local key=$1 url=$2 op=$3 c=$4 sessions=$5 t
    t=$(( c < WORKERS ? c : WORKERS ))
    "$PY" -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line); print(r["email"], r["access"], r["refresh"])' "$sessions" >"$TMP/$key.tokens"
    (($(wc -l <"$TMP/$key.tokens") >= c)) || die "$key: fewer sessions than connections"
    bounded $((DURATION + 60)) wrk -t"$t" -c"$c" -d"${DURATION}s" --latency --timeout 10s \
        -s bench/auth.lua "$url" -- "$op" "$TMP/$key.tokens" "$t" "" "${key//./-}" $(( (REQUESTS + t - 1) / t )) \
        >"$TMP/$key.raw" 2>&1 || die "$key: wrk failed: $(tail -n 3 "$TMP/$key.raw")"
    parse_wrk <"$TMP/$key.raw" >"$TMP/$key.kv"
    echo "tool=wrk" >>"$TMP/$key.kv"
    check "$key"
}

# ---------------------------------------------------------------------------------------------
# 3. Ours, database holding only the users the run creates
# ---------------------------------------------------------------------------------------------
DB=$TMP/auth.db
start_ours ours "$DB"
OURS_PID=$SERVER_PID
OURS_URL=http://127.0.0.1:$SERVER_PORT
log "ours: pid $OURS_PID at $OURS_URL, database $DB, $ITERATIONS PBKDF2 iterations"
curl -fsS --max-time 5 -o /dev/null -X POST -H 'Content-Type: application/json' \
    -d "{\"email\":\"probe-$TAG@example.com\",\"password\":\"$PASSWORD\"}" "$OURS_URL/signup" \
    || die "ours: POST /signup does not answer 2xx (the endpoint may not exist yet)"
for c in "${LEVELS[@]}"; do
    drive "ours.signup.c$c" "$OURS_URL" signup "$c" --tag "$TAG-o$c" --out "$TMP/ours.users.c$c"
    drive "ours.signin.c$c" "$OURS_URL" signin "$c" --in "$TMP/ours.users.c$c" --out "$TMP/ours.sessions.c$c"
    if [[ $CLIENT == wrk ]]; then
        cp "$TMP/ours.sessions.c$c" "$TMP/ours.sessions.user.c$c"  # refresh rotates; access tokens stay valid
        drive_wrk "ours.refresh.c$c" "$OURS_URL" refresh "$c" "$TMP/ours.sessions.c$c"
        drive_wrk "ours.user.c$c" "$OURS_URL" user "$c" "$TMP/ours.sessions.user.c$c"
    else
        drive "ours.refresh.c$c" "$OURS_URL" refresh "$c" --in "$TMP/ours.sessions.c$c"
        drive "ours.user.c$c" "$OURS_URL" user "$c" --in "$TMP/ours.sessions.c$c"
    fi
done
EMPTY_USERS=$(sqlite3 "$DB" 'SELECT count(*) FROM users' 2>/dev/null || echo "?")

# ---------------------------------------------------------------------------------------------
# 4. Ours again with SEED_USERS more users
# ---------------------------------------------------------------------------------------------
if ((SEED_USERS > 0)); then
    stop_server "$OURS_PID" >"$TMP/ours.exit"; OURS_EXIT=$(<"$TMP/ours.exit")
    [[ $OURS_EXIT == 0 ]] || log "warning: ours exited with status $OURS_EXIT after SIGTERM"
    TEMPLATE=$(head -n 1 "$TMP/ours.users.c${LEVELS[0]}" | "$PY" -c 'import json, sys; print(json.loads(sys.stdin.read())["email"])')
    log "seeding $SEED_USERS users (PBKDF2 hashes from Python's hashlib, copies of a user the server made)"
    bounded 900 "$PY" "$BENCH/authload.py" seed --db "$DB" --template-email "$TEMPLATE" -n "$SEED_USERS" \
        --password "$PASSWORD" --iterations "$ITERATIONS" --tag "$TAG-seed" --out "$TMP/seed.users" \
        >"$TMP/seed.kv" || die "seeding failed"
    log "seeded $(kv "$TMP/seed.kv" seeded) users in $(kv "$TMP/seed.kv" seed_s) s" \
        "(hashing $(kv "$TMP/seed.kv" hash_s) s); $(kv "$TMP/seed.kv" users_total) users stored"
    start_ours ours100k "$DB"
    OURS_PID=$SERVER_PID
    OURS_URL=http://127.0.0.1:$SERVER_PORT
    # A seeded user must sign in: proves the copied rows and Python-made hashes are accepted.
    SEEDED=$(head -n 1 "$TMP/seed.users" | "$PY" -c 'import json, sys; print(json.loads(sys.stdin.read())["email"])')
    curl -fsS --max-time 5 -o /dev/null -X POST -H 'Content-Type: application/json' \
        -d "{\"email\":\"$SEEDED\",\"password\":\"$PASSWORD\"}" "$OURS_URL/token?grant_type=password" \
        || die "a seeded user cannot sign in"
    # Warm-up (not measured): the restarted server and the page cache start cold.
    DURATION_SAVED=$DURATION; DURATION=1
    drive "ours100k.warmup" "$OURS_URL" signin "${LEVELS[-1]}" --in "$TMP/seed.users"
    DURATION=$DURATION_SAVED
    for c in "${LEVELS[@]}"; do
        drive "ours100k.signin.c$c" "$OURS_URL" signin "$c" --in "$TMP/seed.users" --out "$TMP/ours100k.sessions.c$c"
        if [[ $CLIENT == wrk ]]; then
            drive_wrk "ours100k.refresh.c$c" "$OURS_URL" refresh "$c" "$TMP/ours100k.sessions.c$c"
        else
            drive "ours100k.refresh.c$c" "$OURS_URL" refresh "$c" --in "$TMP/ours100k.sessions.c$c"
        fi
    done
fi
OURS_RSS=$(awk '/^VmHWM:/ { print $2 }' "/proc/$OURS_PID/status" 2>/dev/null || true)
stop_server "$OURS_PID" >"$TMP/ours.exit"; OURS_EXIT=$(<"$TMP/ours.exit")

# ---------------------------------------------------------------------------------------------
# 5. moto's Cognito emulator, same driver, same connections and bounds
# ---------------------------------------------------------------------------------------------
if ((MOTO)); then
    start_moto
    MOTO_PID=$SERVER_PID
    MOTO_URL=http://127.0.0.1:$SERVER_PORT
    bounded 120 "$VENV/bin/python" "$BENCH/authload.py" cognito-setup "$MOTO_URL" --password "$PASSWORD" \
        >"$TMP/moto.setup.kv" || die "moto: creating the user pool through boto3 failed"
    COGNITO=(--target cognito --client-id "$(kv "$TMP/moto.setup.kv" client_id)" --pool-id "$(kv "$TMP/moto.setup.kv" pool_id)")
    log "moto $MOTO_VERSION: pid $MOTO_PID at $MOTO_URL, pool $(kv "$TMP/moto.setup.kv" pool_id)"
    for c in "${LEVELS[@]}"; do
        drive "moto.signup.c$c" "$MOTO_URL" signup "$c" "${COGNITO[@]}" --tag "$TAG-m$c" --out "$TMP/moto.users.c$c"
        # SignUp leaves users UNCONFIRMED; AdminConfirmSignUp (not measured) lets them sign in.
        DURATION_SAVED=$DURATION; DURATION=60
        drive "moto.confirm.c$c" "$MOTO_URL" confirm "$c" "${COGNITO[@]}" --in "$TMP/moto.users.c$c" \
            --out "$TMP/moto.confirmed.c$c" --out-limit 1000000
        DURATION=$DURATION_SAVED
        drive "moto.signin.c$c" "$MOTO_URL" signin "$c" "${COGNITO[@]}" --in "$TMP/moto.confirmed.c$c" --out "$TMP/moto.sessions.c$c"
        drive "moto.refresh.c$c" "$MOTO_URL" refresh "$c" "${COGNITO[@]}" --in "$TMP/moto.sessions.c$c"
        drive "moto.user.c$c" "$MOTO_URL" user "$c" "${COGNITO[@]}" --in "$TMP/moto.sessions.c$c"
    done
    stop_server "$MOTO_PID" >/dev/null
fi

# ---------------------------------------------------------------------------------------------
# 6. Summary
# ---------------------------------------------------------------------------------------------
v() { if [[ -f $TMP/$1.kv ]]; then kv "$TMP/$1.kv" "$2"; fi; }
# peak KEYPREFIX OP: the best ops/s over the concurrency levels.
peak() {
    local c best=""
    for c in "${LEVELS[@]}"; do
        best=$(awk -v a="$best" -v b="$(v "$1.$2.c$c" ops_per_s)" 'BEGIN { if (b != "" && (a == "" || b + 0 > a + 0)) print b; else print a }')
    done
    echo "$best"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "" && b > 0) printf "%.2f", a / b; else print "n/a" }'; }
verdict() {  # verdict VALUE LIMIT -> PASS when VALUE >= LIMIT
    [[ -n $1 && $1 != n/a ]] || { echo n/a; return; }
    awk -v v="$1" -v l="$2" 'BEGIN { print (v + 0 >= l + 0) ? "PASS" : "MISS" }'
}
cell() {  # "ops/s (p50/p99 ms)"
    [[ -f $TMP/$1.kv ]] || { echo "-"; return; }
    printf '%s (%s/%s)' "$(v "$1" ops_per_s)" "$(v "$1" p50_ms)" "$(v "$1" p99_ms)"
}

echo
echo "== Auth operations benchmark ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -sm), $CORES cores, $((SECONDS - STARTED)) s) =="
echo "load average before: $LOADAVG_BEFORE; after: $(loadavg)"
echo "ours: $OUR_BIN, file database, PBKDF2 $ITERATIONS iterations (insecure test setting)," \
    "refresh tokens version ${GOTRUE_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION:-0};" \
    "moto: $([[ $MOTO == 1 ]] && echo "moto_server $MOTO_VERSION" || echo "not measured")"
echo "drivers: bench/authload.py ($WORKERS processes at >1 client); ours' refresh and GET /user: $CLIENT;" \
    "${DURATION}s and at most $REQUESTS operations per run"
echo "cells: operations/s (p50/p99 ms)"
printf '%-34s' "operation"
for c in "${LEVELS[@]}"; do printf ' %-26s' "ours c=$c"; done
if ((SEED_USERS > 0)); then for c in "${LEVELS[@]}"; do printf ' %-26s' "ours+$((SEED_USERS / 1000))k c=$c"; done; fi
if ((MOTO)); then for c in "${LEVELS[@]}"; do printf ' %-26s' "moto c=$c"; done; fi
echo
for op in signup signin refresh user; do
    case $op in
        signup) label="sign-up (moto: SignUp)" ;;
        signin) label="password sign-in" ;;
        refresh) label="refresh (ours rotates)" ;;
        user) label="GET /user (moto: GetUser)" ;;
    esac
    printf '%-34s' "$label"
    for c in "${LEVELS[@]}"; do printf ' %-26s' "$(cell "ours.$op.c$c")"; done
    if ((SEED_USERS > 0)); then for c in "${LEVELS[@]}"; do printf ' %-26s' "$(cell "ours100k.$op.c$c")"; done; fi
    if ((MOTO)); then for c in "${LEVELS[@]}"; do printf ' %-26s' "$(cell "moto.$op.c$c")"; done; fi
    echo
done
echo
row() { printf '%-52s %12s %10s  %s\n' "$@"; }
row "target" "measured" "target" "result"
row "------" "--------" "------" "------"
OURS_USER=$(peak ours user); OURS_REFRESH=$(peak ours refresh); OURS_SIGNIN=$(peak ours signin)
if ((MOTO)); then
    R=$(ratio "$OURS_USER" "$(peak moto user)")
    row "GET /user vs moto GetUser (peak ops/s)" "${R}x" ">= 30x" "$(verdict "$R" 30)"
    R=$(ratio "$OURS_REFRESH" "$(peak moto refresh)")
    row "refresh vs moto REFRESH_TOKEN_AUTH (peak ops/s)" "${R}x" ">= 20x" "$(verdict "$R" 20)"
    R=$(ratio "$OURS_SIGNIN" "$(peak moto signin)")
    row "  sign-in vs moto USER_PASSWORD_AUTH (peak)" "${R}x" "" ""
    R=$(ratio "$(peak ours signup)" "$(peak moto signup)")
    row "  sign-up vs moto SignUp (peak)" "${R}x" "" ""
fi
R=$(ratio "$OURS_SIGNIN" "$BOUND")
row "sign-in vs hashing bound ($CORES x $HASHES_S = $BOUND/s)" "${R}x" ">= 0.9x" "$(verdict "$R" 0.9)"
if ((SEED_USERS > 0)); then
    for op in signin refresh; do
        R=$(ratio "$(peak ours100k $op)" "$(peak ours $op)")
        row "$op with $SEED_USERS more users vs without (peak)" "${R}x" ">= 0.8x" "$(verdict "$R" 0.8)"
        for c in "${LEVELS[@]}"; do
            R=$(ratio "$(v "ours100k.$op.c$c" ops_per_s)" "$(v "ours.$op.c$c" ops_per_s)")
            row "  at c=$c" "${R}x" "" ""
        done
    done
fi
row "failed operations, all runs" "$FAILURES" "0" ""
if ((SEED_USERS > 0)); then
    row "ours: users stored before seeding / after" "$EMPTY_USERS / $(v seed users_total)" "" ""
else
    row "ours: users stored" "$EMPTY_USERS" "" ""
fi
row "ours: RSS high-water mark, MiB" "$(awk -v k="${OURS_RSS:-}" 'BEGIN { if (k == "") print "n/a"; else printf "%.1f", k / 1024 }')" "" ""
row "ours: exit status after SIGTERM" "$OURS_EXIT" "0" "$([[ $OURS_EXIT == 0 ]] && echo PASS || echo MISS)"
echo "note: the drivers share the $CORES cores with the server under test (authload.py's CPU per run is" \
    "logged above); other work on the machine lowers every figure: compare ratios from a quiet machine."

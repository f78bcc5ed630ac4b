#!/usr/bin/env bash
# Server CPU per operation, measured by the server process itself, against the SQLite floor of the
# same operation (the statements it ran, replayed alone). See bench/results/HISTORY.md, "Cost per
# operation".
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

usage() {
    cat <<'EOF'
usage: bench/cost.sh [options]
  --ops LIST          operations, comma-separated (default health,signin,refresh,user,signup,admin_list)
  --duration S        seconds per measured run (default 5)
  --concurrency C     keep-alive connections of the measured runs (default 16)
  --p99-concurrency C connections of the latency runs of refresh and GET /user (default 64)
  --users N           users signed up before each run (default 256)
  --repeat N          measured runs per operation, the median is reported (default 3)
  --floor-seconds S   length of the traced run replayed for the floor (default 2)
  --no-floor          skip the SQLite floor
  --no-python         skip the runs driven by bench/authload.py
  --no-nginx          skip the nginx comparison of GET /health
  --no-perf           skip the extra run read by perf stat
  --seed-users N      store N more users first, through the fixture path (serve --seed), and
                      measure every operation on a copy of that database (default 0)
  --bin PATH          server binary (default: release build of auth-emulator)
  --no-build          do not build
  --token-version V   refresh token format of the server (GOTRUE_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION):
                      0 (GoTrue's default, 12 characters, a row per token) or 2 (signed, counter
                      kept on the session row); default: the environment's, else 0
EOF
}

OPS=health,signin,refresh,user,signup,admin_list
DURATION=5
CONC=16
P99_CONC=64
USERS=256
REPEAT=3
FLOOR_SECONDS=2
FLOOR=1
PYTHON_DRIVER=1
NGINX=1
PERF=1
BIN=""
BUILD=1
SEED_USERS=0
while (($#)); do
    case $1 in
        --ops) OPS=$2; shift ;;
        --duration) DURATION=$2; shift ;;
        --concurrency) CONC=$2; shift ;;
        --p99-concurrency) P99_CONC=$2; shift ;;
        --users) USERS=$2; shift ;;
        --repeat) REPEAT=$2; shift ;;
        --floor-seconds) FLOOR_SECONDS=$2; shift ;;
        --no-floor) FLOOR=0 ;;
        --no-python) PYTHON_DRIVER=0 ;;
        --no-nginx) NGINX=0 ;;
        --no-perf) PERF=0 ;;
        --bin) BIN=$2; shift ;;
        --seed-users) SEED_USERS=$2; shift ;;
        --no-build) BUILD=0 ;;
        --token-version) [[ $2 =~ ^[012]$ ]] || { echo "cost.sh: --token-version takes 0, 1 or 2" >&2; exit 64; }
            export GOTRUE_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION=$2; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; exit 64 ;;
    esac
    shift
done

log() { printf '[cost] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v wrk >/dev/null 2>&1 || die "wrk is required (Debian/Ubuntu: apt-get install -y wrk)"
command -v sqlite3 >/dev/null 2>&1 || die "the sqlite3 shell is required (apt-get install -y sqlite3)"
[[ -r /proc/self/schedstat ]] || die "per-thread CPU time is read from /proc/<pid>/task/*/schedstat (Linux only)"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/auth-cost.XXXXXX")
SERVER_PIDS=()
NGINX_PID=""
PERF_PID=""
# `perf stat` as a second reading of the server's CPU time, in a run of its own, where perf may
# attach to our processes (software events: a VM often has no hardware counters).
PERF_STAT=0
if ((PERF)) && command -v perf >/dev/null 2>&1 && perf stat -e task-clock -o /dev/null -- true >/dev/null 2>&1; then PERF_STAT=1; fi
cleanup() {
    local p
    for p in ${SERVER_PIDS[@]+"${SERVER_PIDS[@]}"}; do kill -TERM "$p" 2>/dev/null || true; done
    [[ -n $NGINX_PID ]] && kill -TERM "$NGINX_PID" 2>/dev/null || true
    [[ -n $PERF_PID ]] && kill -INT "$PERF_PID" 2>/dev/null || true
    sleep 0.3
    for p in ${SERVER_PIDS[@]+"${SERVER_PIDS[@]}"}; do kill -KILL "$p" 2>/dev/null || true; done
    rm -rf "$TMP"
}
trap cleanup EXIT

if [[ -z $BIN ]]; then
    if ((BUILD)); then
        log "building auth-emulator (release)"
        bounded 1200 swift build -c release --product auth-emulator >"$TMP/build.log" 2>&1 || die "build failed: $(tail -n 5 "$TMP/build.log")"
    fi
    BIN="$(swift build -c release --show-bin-path)/auth-emulator"
fi
[[ -x $BIN ]] || die "no server binary at $BIN"
FLOOR_BIN=$TMP/floor
if ((FLOOR)); then
    cc -O2 -o "$FLOOR_BIN" bench/cost/floor.c -lsqlite3 2>"$TMP/floor.log" || die "cannot build bench/cost/floor.c: $(cat "$TMP/floor.log")"
fi
PY=python3
SERVICE_KEY=$("$PY" - <<'EOF'
import re
text = open("Tests/python/conftest.py").read()
print("".join(re.findall(r'"([^"]*)"', re.search(r"SERVICE_ROLE_KEY = \(([^)]*)\)", text).group(1))))
EOF
)

# Sum of every thread's CPU time (ns) of a process: user + system, as the scheduler accounts it.
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'; }

# Per-thread CPU time (ns) and context switches (voluntary and not) of a process, summed by the
# thread's role: its name without the trailing number (http-worker, http-loop, db-checkpoint; the
# main thread keeps the program's name). One line per role: ROLE CPU_NS SWITCHES.
threads_ns() {
    local t
    for t in /proc/"$1"/task/*; do
        printf '%s %s %s\n' "$(cat "$t/comm")" "$(awk '{ print $1 }' "$t/schedstat")" \
            "$(awk '/^(non)?voluntary_ctxt_switches/ { s += $2 } END { print s }' "$t/status")"
    done 2>/dev/null | awk '{ sub(/-[0-9]+$/, "", $1); cpu[$1] += $2; cs[$1] += $3 }
        END { for (r in cpu) print r, cpu[r], cs[r] }'
}

# snapshot_cpu BEFORE AFTER: the CPU time (ns) of every thread between two threads_ns snapshots.
snapshot_cpu() { awk 'FNR == 1 { sign = FILENAME == ARGV[1] ? -1 : 1 } { s += sign * $2 } END { printf "%.0f\n", s }' "$1" "$2"; }

# thread_split N FILES...: over N requests and the runs whose threads_ns snapshots are FILES
# (*.threads0 before, *.threads1 after): "role us, role us, ... us/op; S context switches/op",
# busiest role first.
thread_split() {
    local n=$1 roles switches; shift
    roles=$(awk -v n="$n" 'FNR == 1 { sign = FILENAME ~ /threads1$/ ? 1 : -1 } { cpu[$1] += sign * $2 }
        END { for (r in cpu) if (cpu[r] / 1000 / n >= 0.05) printf "%s %.1f\n", r, cpu[r] / 1000 / n }' "$@" |
        sort -k2,2nr | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }')
    switches=$(awk -v n="$n" 'FNR == 1 { sign = FILENAME ~ /threads1$/ ? 1 : -1 } { cs += sign * $3 }
        END { printf "%.2f", cs / n }' "$@")
    echo "$roles us/op; $switches context switches/op"
}

# start_server NAME DB [ENV...]: starts the emulator; sets SERVER_PID and URL. With
# --seed-users, a new database starts as a copy of the seeded template.
start_server() {
    local name=$1 db=$2; shift 2
    # The copy is flushed first: writing back ~1 GB of dirty pages (a million users) while a
    # run is measured costs the measured server CPU too.
    if [[ -n ${TEMPLATE:-} && ! -e $db ]]; then cp "$TEMPLATE" "$db" && sync "$db"; fi
    env AUTH_EMULATOR_PASSWORD_ITERATIONS=1000 "$@" "$BIN" serve --host 127.0.0.1 --port 0 --db "$db" --quiet \
        >"$TMP/$name.out" 2>"$TMP/$name.err" &
    SERVER_PID=$!
    SERVER_PIDS+=("$SERVER_PID")
    local i
    for ((i = 0; i < 100; i++)); do
        if grep -q '^listening on' "$TMP/$name.out" 2>/dev/null; then break; fi
        sleep 0.05
    done
    URL=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$TMP/$name.out" | head -n 1)
    [[ -n $URL ]] || die "$name: the server did not start: $(tail -n 3 "$TMP/$name.err")"
}

# prepare NAME [TAG]: signs up USERS users on URL; writes $TMP/NAME.records ("email access refresh")
# and $TMP/NAME.jsonl (authload.py's records).
prepare() {
    local name=$1 tag=${2:-$1}
    bounded 120 "$PY" bench/authload.py "$URL" --op signup -c 4 -n "$USERS" -d 60 --password cost-Passw0rd! \
        --tag "cost-$tag" --out "$TMP/$name.jsonl" --out-limit "$USERS" >"$TMP/$name.prep" || die "$name: sign-up of the users failed"
    "$PY" -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line); print(r["email"], r["access"], r["refresh"])' "$TMP/$name.jsonl" >"$TMP/$name.records"
    (($(wc -l <"$TMP/$name.records") >= CONC)) || die "$name: fewer users than connections"
}

# wrk_run KEY OP C SECONDS RECORDS: one wrk run; prints its key=value summary into $TMP/KEY.kv.
wrk_run() {
    local key=$1 op=$2 c=$3 seconds=$4 records=$5 t before after
    t=$(( c < 2 ? c : 2 ))
    before=$(children_ticks)
    bounded $((seconds + 60)) wrk -t"$t" -c"$c" -d"${seconds}s" --latency --timeout 10s \
        -s bench/auth.lua "$URL" -- "$op" "$records" "$t" "$SERVICE_KEY" "${key//./-}" >"$TMP/$key.raw" 2>&1 \
        || die "$key: wrk failed: $(tail -n 3 "$TMP/$key.raw")"
    after=$(children_ticks)
    parse_wrk <"$TMP/$key.raw" >"$TMP/$key.kv"
    # The driver's own CPU per request, read as the server's is: it shares the same cores, so
    # server + driver CPU per request bounds the requests per second a closed loop can reach.
    awk -v a="$before" -v b="$after" -v hz="$CLK_TCK" -v n="$(kv "$TMP/$key.kv" requests)" \
        'BEGIN { if (n > 0) printf "driver_cpu_us=%.1f\n", (b - a) * 1000000 / hz / n }' >>"$TMP/$key.kv"
}

# The CPU time (user + system, clock ticks) of this shell's children that have been waited for:
# fields 16 and 17 of /proc/PID/stat. wrk runs under `timeout`, whose own children count too.
CLK_TCK=$(getconf CLK_TCK)
children_ticks() { awk '{ print $16 + $17 }' /proc/$$/stat; }

# closed_loop_bound SERVER_US DRIVER_US CLIENTS: when the server and the driver share this
# machine's cores and each request costs SERVER_US + DRIVER_US of CPU, the most requests per
# second the cores allow, and the least mean latency (ms) CLIENTS closed-loop clients can then
# see (Little's law at 100 % of every core).
CORES=$(getconf _NPROCESSORS_ONLN)
closed_loop_bound() {
    awk -v s="$1" -v d="$2" -v c="$3" -v n="$CORES" \
        'BEGIN { if (s + d > 0) printf "%.0f ops/s at most on %d cores, a mean of at least %.1f ms", n * 1000000 / (s + d), n, c * (s + d) / (n * 1000) }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else print v[int((NR + 1) / 2)] }'; }

declare -A RESULT
log "load average at start: $(loadavg)"
log "refresh token format: version ${GOTRUE_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION:-0}"

# --- the bulk path: N users through a fixture file, timed from start to the listening line ---------
TEMPLATE=""
if ((SEED_USERS > 0)); then
    "$PY" -c 'import sys
count, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as out:
    out.write("{\"users\":[")
    out.write(",".join("{\"email\":\"bulk%d@example.com\",\"password\":\"bulk-Passw0rd!\",\"email_confirm\":true}" % i
                       for i in range(count)))
    out.write("]}")' "$SEED_USERS" "$TMP/seed.json"
    seeded_db=$TMP/seeded.db
    started=$(date +%s.%N)
    AUTH_EMULATOR_PASSWORD_ITERATIONS=1000 "$BIN" serve --host 127.0.0.1 --port 0 --db "$seeded_db" --quiet \
        --seed "$TMP/seed.json" >"$TMP/seed.out" 2>"$TMP/seed.err" &
    seed_pid=$!
    SERVER_PIDS+=("$seed_pid")
    deadline=$((SECONDS + 1800))
    while ! grep -q '^listening on' "$TMP/seed.out" 2>/dev/null; do
        kill -0 "$seed_pid" 2>/dev/null || die "seeding failed: $(tail -n 3 "$TMP/seed.err")"
        ((SECONDS < deadline)) || die "seeding took over 30 minutes"
        sleep 0.1
    done
    seconds=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    seed_hwm=$(awk '/^VmHWM/ { printf "%.0f", $2 / 1024 }' /proc/"$seed_pid"/status)
    # The WAL the seeding wrote is checkpointed into the database file in the background once
    # the server listens; a clean stop waits for that pass and truncates the WAL. Only the
    # database file is copied for each server, so the stop must be clean: up to 5 minutes.
    stopping=$(date +%s.%N)
    stop_server "$seed_pid" 300 >"$TMP/seed.exit"
    [[ $(<"$TMP/seed.exit") == 0 ]] || die "the seeding server did not stop cleanly: $(<"$TMP/seed.exit")"
    stop_seconds=$(awk -v a="$stopping" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    [[ ! -s $seeded_db-wal ]] || die "the seeding server left a non-empty WAL"
    RESULT[seed.seconds]=$seconds
    log "seeded $SEED_USERS users through serve --seed in $seconds s ($(awk -v n="$SEED_USERS" -v s="$seconds" 'BEGIN { printf "%.0f", n / s }') users/s, peak RSS $seed_hwm MiB, database $(du -m "$seeded_db" | cut -f1) MiB); a stop at once took $stop_seconds s more (the rest of the WAL's checkpoint)"
    TEMPLATE=$seeded_db
    rm -f "$TMP/seed.json"
fi
IFS=, read -r -a OP_LIST <<<"$OPS"

for op in "${OP_LIST[@]}"; do
    # --- server CPU per operation, wrk ---------------------------------------------------------
    start_server "$op" "$TMP/$op.db"
    PID=$SERVER_PID
    [[ $op == health ]] || prepare "$op"
    # GET /health needs no users; the script still reads a records file.
    [[ $op == health ]] && for ((i = 0; i < CONC; i++)); do echo "x@example.com x x"; done >"$TMP/$op.records"
    wrk_run "$op.warm" "$op" "$CONC" 1 "$TMP/$op.records"
    cpus=() rates=() p99s=() drivers=() total=0
    for ((r = 1; r <= REPEAT; r++)); do
        # Each refresh run starts from sessions of its own: a token the previous run already
        # rotated would be a reuse, which revokes the whole session after the reuse interval.
        if [[ $op == refresh ]]; then prepare "$op" "$op-r$r"; fi
        threads_ns "$PID" >"$TMP/$op.r$r.threads0"
        wrk_run "$op.r$r" "$op" "$CONC" "$DURATION" "$TMP/$op.records"
        threads_ns "$PID" >"$TMP/$op.r$r.threads1"
        requests=$(kv "$TMP/$op.r$r.kv" requests)
        total=$((total + requests))
        failed=$(kv "$TMP/$op.r$r.kv" failed)
        ((requests > 0)) || die "$op: no request completed"
        ((failed * 100 <= requests)) || die "$op: $failed of $requests requests failed (see $TMP/$op.r$r.raw)"
        cpu=$(snapshot_cpu "$TMP/$op.r$r.threads0" "$TMP/$op.r$r.threads1")
        cpus+=("$(awk -v c="$cpu" -v n="$requests" 'BEGIN { printf "%.1f", c / 1000 / n }')")
        rates+=("$(kv "$TMP/$op.r$r.kv" ops_per_s)")
        p99s+=("$(kv "$TMP/$op.r$r.kv" p99_ms)")
        drivers+=("$(kv "$TMP/$op.r$r.kv" driver_cpu_us)")
    done
    RESULT[$op.cpu]=$(printf '%s\n' "${cpus[@]}" | median)
    RESULT[$op.cpu_all]="${cpus[*]}"
    RESULT[$op.rate]=$(printf '%s\n' "${rates[@]}" | median)
    RESULT[$op.p99]=$(printf '%s\n' "${p99s[@]}" | median)
    RESULT[$op.driver]=$(printf '%s\n' "${drivers[@]}" | median)
    log "$op (wrk, $CONC connections): server CPU ${RESULT[$op.cpu]} us/op (runs: ${cpus[*]}), ${RESULT[$op.rate]} ops/s, p99 ${RESULT[$op.p99]} ms; wrk's own CPU ${RESULT[$op.driver]} us/op"
    RESULT[$op.threads]=$(thread_split "$total" "$TMP/$op".r*.threads[01])
    log "$op by thread, over the $REPEAT runs: ${RESULT[$op.threads]}"
    # --- one more run under perf stat ------------------------------------------------------------
    # Its own run: perf's hooks run on every context switch of the server, so the measured runs
    # above stay without them. The threads' own CPU time of this run is read too, to compare.
    if ((PERF_STAT)); then
        if [[ $op == refresh ]]; then prepare "$op" "$op-perf"; fi
        perf stat -x, -e task-clock,context-switches -p "$PID" -o "$TMP/$op.perf" &
        PERF_PID=$!
        sleep 0.2
        before=$(cpu_ns "$PID")
        wrk_run "$op.perf" "$op" "$CONC" "$DURATION" "$TMP/$op.records"
        after=$(cpu_ns "$PID")
        kill -INT "$PERF_PID" 2>/dev/null || true
        wait "$PERF_PID" 2>/dev/null || true
        PERF_PID=""
        requests=$(kv "$TMP/$op.perf.kv" requests)
        # perf stat's CSV: "value,unit,event,...": task-clock in ms, context switches counted.
        RESULT[$op.perf]=$(awk -F, -v n="$requests" -v a="$before" -v b="$after" \
            '$3 == "task-clock" { ms += $1 } $3 == "context-switches" { cs += $1 }
             END { if (ms > 0 && n > 0) printf "task-clock %.1f us/op (%.1f from /proc), %.2f context switches/op", ms * 1000 / n, (b - a) / 1000 / n, cs / n }' \
            "$TMP/$op.perf" 2>/dev/null)
        [[ -n ${RESULT[$op.perf]} ]] && log "$op under perf stat (one more run): ${RESULT[$op.perf]}"
    fi

    # --- the same with the Python driver --------------------------------------------------------
    if ((PYTHON_DRIVER)) && [[ $op =~ ^(signin|refresh|user|signup)$ ]]; then
        if [[ $op == refresh ]]; then prepare "$op" "$op-py"; fi
        before=$(cpu_ns "$PID")
        in=()
        [[ $op == signup ]] || in=(--in "$TMP/$op.jsonl")
        bounded $((DURATION + 60)) "$PY" bench/authload.py "$URL" --op "$op" -c "$CONC" -d "$DURATION" \
            --password cost-Passw0rd! --tag "costpy-$op" ${in[@]+"${in[@]}"} >"$TMP/$op.py.kv" || die "$op: authload.py failed"
        after=$(cpu_ns "$PID")
        ops=$(kv "$TMP/$op.py.kv" ops)
        RESULT[$op.py_cpu]=$(awk -v a="$before" -v b="$after" -v n="$ops" 'BEGIN { printf "%.1f", (b - a) / 1000 / n }')
        RESULT[$op.py_rate]=$(kv "$TMP/$op.py.kv" ops_per_s | awk '{ printf "%.0f", $1 }')
        RESULT[$op.py_p99]=$(kv "$TMP/$op.py.kv" p99_ms)
        log "$op (authload.py): server CPU ${RESULT[$op.py_cpu]} us/op, ${RESULT[$op.py_rate]} ops/s, client CPU $(kv "$TMP/$op.py.kv" client_cpu_pct)% of a core"
    fi

    # --- p99 under many clients ----------------------------------------------------------------
    if [[ $op == refresh || $op == user ]]; then
        if (($(wc -l <"$TMP/$op.records") < P99_CONC)); then
            log "$op: fewer sessions than $P99_CONC connections; raise --users"
        else
            if [[ $op == refresh ]]; then prepare "$op" "$op-p99"; fi
            before=$(cpu_ns "$PID")
            wrk_run "$op.p99" "$op" "$P99_CONC" "$DURATION" "$TMP/$op.records"
            after=$(cpu_ns "$PID")
            RESULT[$op.p99_many]=$(kv "$TMP/$op.p99.kv" p99_ms)
            RESULT[$op.rate_many]=$(kv "$TMP/$op.p99.kv" ops_per_s)
            server_us=$(awk -v a="$before" -v b="$after" -v n="$(kv "$TMP/$op.p99.kv" requests)" 'BEGIN { printf "%.1f", (b - a) / 1000 / n }')
            driver_us=$(kv "$TMP/$op.p99.kv" driver_cpu_us)
            RESULT[$op.bound_many]=$(closed_loop_bound "$server_us" "$driver_us" "$P99_CONC")
            log "$op ($P99_CONC connections): p99 ${RESULT[$op.p99_many]} ms, ${RESULT[$op.rate_many]} ops/s; server CPU $server_us us/op and wrk's $driver_us allow ${RESULT[$op.bound_many]}"
        fi
    fi
    stop_server "$PID" >/dev/null

    # --- SQLite floor ----------------------------------------------------------------------------
    if ((FLOOR)) && [[ $op != health ]]; then
        trace=$TMP/$op.trace
        start_server "$op.traced" "$TMP/$op.traced.db" AUTH_EMULATOR_SQL_TRACE="$trace"
        PID=$SERVER_PID
        prepare "$op.traced"
        wrk_run "$op.traced.warm" "$op" "$CONC" 1 "$TMP/$op.traced.records"
        # The warm-up rotated the refresh tokens the records hold: sign the users up afresh.
        if [[ $op == refresh ]]; then prepare "$op.traced" "$op.traced2"; fi
        sleep 0.3
        sqlite3 "$TMP/$op.traced.db" ".backup '$TMP/$op.snapshot.db'" || die "$op: snapshot failed"
        start=$(stat -c %s "$trace")
        wrk_run "$op.traced.run" "$op" "$CONC" "$FLOOR_SECONDS" "$TMP/$op.traced.records"
        sleep 0.3
        end=$(stat -c %s "$trace")
        ops=$(kv "$TMP/$op.traced.run.kv" requests)
        bounded 600 "$FLOOR_BIN" "$TMP/$op.snapshot.db" "$trace" "$start" "$end" "$ops" 5 >"$TMP/$op.floor.kv" \
            || die "$op: floor replay failed"
        stop_server "$PID" >/dev/null
        errors=$(kv "$TMP/$op.floor.kv" errors)
        ((errors == 0)) || log "warning: $op: $errors statements failed in the replay: $(kv "$TMP/$op.floor.kv" first_error)"
        RESULT[$op.floor]=$(kv "$TMP/$op.floor.kv" floor_us_per_op_best)
        RESULT[$op.statements]=$(kv "$TMP/$op.floor.kv" statements_per_op)
        RESULT[$op.ratio]=$(awk -v s="${RESULT[$op.cpu]}" -v f="${RESULT[$op.floor]}" 'BEGIN { printf "%.2f", s / f }')
        log "$op: SQLite floor ${RESULT[$op.floor]} us/op (${RESULT[$op.statements]} statements/op), server/floor ${RESULT[$op.ratio]}x"
        rm -f "$trace" "$TMP/$op.snapshot.db"
    fi
done

# --- GET /health against nginx ---------------------------------------------------------------------
if ((NGINX)) && [[ ",$OPS," == *,health,* ]]; then
    if command -v nginx >/dev/null 2>&1 || [[ -x /usr/sbin/nginx ]]; then
        NGINX_BIN=$(command -v nginx || echo /usr/sbin/nginx)
        port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        mkdir -p "$TMP/nginx/logs"
        start_server health.vs "$TMP/health.vs.db"
        body=$(curl -fsS --max-time 5 "$URL/health") || die "GET /health failed"
        # Two workers on two cores, keep-alive, access log off: nginx at its most direct, answering
        # the emulator's own /health body from configuration.
        cat >"$TMP/nginx/nginx.conf" <<EOF
worker_processes $CORES;
error_log $TMP/nginx/logs/error.log;
pid $TMP/nginx/nginx.pid;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$port;
        location = /health { default_type application/json; return 200 '$body'; }
    }
}
EOF
        "$NGINX_BIN" -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" -g 'daemon off;' &
        NGINX_PID=$!
        sleep 0.5
        OURS_URL=$URL
        NGINX_URL=http://127.0.0.1:$port
        ours=() theirs=()
        for ((r = 1; r <= REPEAT; r++)); do
            URL=$OURS_URL; wrk_run "health.ours.$r" health "$CONC" "$DURATION" "$TMP/health.records"; ours+=("$(kv "$TMP/health.ours.$r.kv" ops_per_s)")
            URL=$NGINX_URL; wrk_run "health.nginx.$r" health "$CONC" "$DURATION" "$TMP/health.records"; theirs+=("$(kv "$TMP/health.nginx.$r.kv" ops_per_s)")
        done
        stop_server "$SERVER_PID" >/dev/null
        kill -TERM "$NGINX_PID" 2>/dev/null || true
        wait "$NGINX_PID" 2>/dev/null || true
        NGINX_PID=""
        RESULT[nginx.ours]=$(printf '%s\n' "${ours[@]}" | median)
        RESULT[nginx.theirs]=$(printf '%s\n' "${theirs[@]}" | median)
        RESULT[nginx.ratio]=$(awk -v a="${RESULT[nginx.ours]}" -v b="${RESULT[nginx.theirs]}" 'BEGIN { printf "%.2f", a / b }')
        log "GET /health: ours ${RESULT[nginx.ours]} req/s (${ours[*]}), nginx ${RESULT[nginx.theirs]} req/s (${theirs[*]}), ${RESULT[nginx.ratio]}x"
    else
        log "nginx is not installed (apt-get install -y nginx-light): no comparison"
    fi
fi

# --- summary ---------------------------------------------------------------------------------------
verdict() { awk -v v="$1" -v t="$2" -v dir="$3" 'BEGIN { if (v == "" || v == "n/a") print "n/a"; else if ((dir == "le" && v + 0 <= t + 0) || (dir == "ge" && v + 0 >= t + 0)) print "PASS"; else print "MISS" }'; }
echo
echo "Server CPU per operation ($CONC keep-alive connections, wrk; median of $REPEAT runs of ${DURATION} s; load $(loadavg); refresh tokens version ${GOTRUE_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION:-0})"
printf '| %-10s | %10s | %9s | %7s | %10s | %9s | %11s | %12s | %8s | %12s |\n' operation "CPU us/op" "ops/s" "p99 ms" "floor us" "stmts/op" "server/floor" "py CPU us/op" "py ops/s" "wrk CPU us/op"
printf '|%s|\n' "------------|------------|-----------|---------|------------|-----------|-------------|--------------|----------|--------------"
for op in "${OP_LIST[@]}"; do
    printf '| %-10s | %10s | %9s | %7s | %10s | %9s | %11s | %12s | %8s | %12s |\n' "$op" "${RESULT[$op.cpu]:-}" "${RESULT[$op.rate]:-}" \
        "${RESULT[$op.p99]:-}" "${RESULT[$op.floor]:--}" "${RESULT[$op.statements]:--}" "${RESULT[$op.ratio]:--}" \
        "${RESULT[$op.py_cpu]:--}" "${RESULT[$op.py_rate]:--}" "${RESULT[$op.driver]:--}"
done
echo
echo "Server CPU by thread (all runs of each operation)"
for op in "${OP_LIST[@]}"; do
    [[ -n ${RESULT[$op.threads]:-} ]] && printf '%-10s %s\n' "$op" "${RESULT[$op.threads]}"
    [[ -n ${RESULT[$op.perf]:-} ]] && printf '%-10s under perf stat: %s\n' "" "${RESULT[$op.perf]}"
done
echo
echo "Targets"
[[ -n ${RESULT[refresh.ratio]:-} ]] && echo "refresh <= 2x its SQLite floor: ${RESULT[refresh.ratio]}x $(verdict "${RESULT[refresh.ratio]}" 2 le)"
[[ -n ${RESULT[user.cpu]:-} ]] && echo "GET /user <= 40 us: ${RESULT[user.cpu]} us $(verdict "${RESULT[user.cpu]}" 40 le)"
[[ -n ${RESULT[health.cpu]:-} ]] && echo "GET /health <= 10 us: ${RESULT[health.cpu]} us $(verdict "${RESULT[health.cpu]}" 10 le)"
[[ -n ${RESULT[nginx.ratio]:-} ]] && echo "GET /health >= 0.9x nginx: ${RESULT[nginx.ratio]}x $(verdict "${RESULT[nginx.ratio]}" 0.9 ge)"
[[ -n ${RESULT[refresh.p99_many]:-} ]] && echo "refresh p99 at $P99_CONC clients <= 5 ms: ${RESULT[refresh.p99_many]} ms $(verdict "${RESULT[refresh.p99_many]}" 5 le) (CPU per request allows ${RESULT[refresh.bound_many]})"
[[ -n ${RESULT[user.p99_many]:-} ]] && echo "GET /user p99 at $P99_CONC clients <= 5 ms: ${RESULT[user.p99_many]} ms $(verdict "${RESULT[user.p99_many]}" 5 le) (CPU per request allows ${RESULT[user.bound_many]})"
[[ -n ${RESULT[seed.seconds]:-} ]] && echo "seeding $SEED_USERS users <= 60 s: ${RESULT[seed.seconds]} s $(verdict "${RESULT[seed.seconds]}" 60 le)"
echo "load average at end: $(loadavg)"

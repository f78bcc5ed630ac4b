#!/usr/bin/env bash
# HTTP benchmarks for auth-emulator, against a minimal Hummingbird 2 server as the yardstick.
#
# Measures, on loopback only:
#   1. throughput of GET /health under keep-alive load (wrk, or bench/loadgen.py without wrk),
#      ours and the anchor interleaved in the same run (ours, anchor, ours, ...);
#   2. start latency: spawn to first successful GET /health (bench/startup.py, median of runs);
#   3. memory: RSS idle after start and peak during the load;
#   4. 2,000 idle keep-alive connections held while fresh requests are timed (bench/idle_conns.py);
# then prints one summary table with the targets. It exits 0 when targets are missed (the table
# says so) and non-zero only when something fails to build, start or run.
#
# Every server it starts is tracked by PID and stopped on exit; every step has a time limit.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: bench/http.sh [options]
  --duration N       seconds per load run (default 10)
  --connections N    keep-alive connections for the load (default 64)
  --threads N        load generator threads/processes (default 2)
  --repeat N         load runs of ours (default 3); the anchor runs N-1 times in between
                     (ours, anchor, ours, anchor, ours); medians are compared
  --starts N         start-latency runs per server (default 10)
  --idle N           idle connections to hold (default 2000; 0 skips that step)
  --loadgen TOOL     auto | wrk | python (default auto: wrk when on PATH)
  --no-anchor        do not build or measure the Hummingbird anchor
  --anchor-static    load the anchor's /health-static (pre-encoded body) instead of /health
  --no-build         use the existing binaries
  --scratch-path P   SwiftPM scratch path for our release build (default .build)
  --bin PATH         our server binary (implies no build of ours)
  --anchor-bin PATH  the anchor binary (implies no build of the anchor)
  -h, --help
EOF
}

DURATION=10
CONNECTIONS=64
THREADS=2
REPEAT=3
STARTS=10
IDLE=2000
LOADGEN=auto
ANCHOR=1
ANCHOR_PATH=/health
BUILD=1
SCRATCH=.build
OUR_BIN=""
ANCHOR_BIN=""

need_value() { [[ $# -ge 2 && -n $2 ]] || { echo "http.sh: $1 needs a value" >&2; exit 64; }; }
while [[ $# -gt 0 ]]; do
    case $1 in
        --duration) need_value "$@"; DURATION=$2; shift 2 ;;
        --connections) need_value "$@"; CONNECTIONS=$2; shift 2 ;;
        --threads) need_value "$@"; THREADS=$2; shift 2 ;;
        --repeat) need_value "$@"; REPEAT=$2; shift 2 ;;
        --starts) need_value "$@"; STARTS=$2; shift 2 ;;
        --idle) need_value "$@"; IDLE=$2; shift 2 ;;
        --loadgen) need_value "$@"; LOADGEN=$2; shift 2 ;;
        --no-anchor) ANCHOR=0; shift ;;
        --anchor-static) ANCHOR_PATH=/health-static; shift ;;
        --no-build) BUILD=0; shift ;;
        --scratch-path) need_value "$@"; SCRATCH=$2; shift 2 ;;
        --bin) need_value "$@"; OUR_BIN=$2; shift 2 ;;
        --anchor-bin) need_value "$@"; ANCHOR_BIN=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "http.sh: unknown option $1" >&2; usage >&2; exit 64 ;;
    esac
done
for n in DURATION CONNECTIONS THREADS REPEAT STARTS IDLE; do
    [[ ${!n} =~ ^[0-9]+$ ]] || { echo "http.sh: $n must be a whole number, got '${!n}'" >&2; exit 64; }
done
((DURATION >= 1 && DURATION <= 120)) || { echo "http.sh: --duration must be 1...120" >&2; exit 64; }
((REPEAT >= 1 && REPEAT <= 5)) || { echo "http.sh: --repeat must be 1...5" >&2; exit 64; }
((STARTS >= 1 && STARTS <= 50)) || { echo "http.sh: --starts must be 1...50" >&2; exit 64; }
((IDLE <= 10000)) || { echo "http.sh: --idle must be at most 10000" >&2; exit 64; }
((CONNECTIONS >= 1 && THREADS >= 1)) || { echo "http.sh: --connections and --threads must be positive" >&2; exit 64; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/bench
# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
PY=${PYTHON:-python3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/http-bench.XXXXXX")
SERVER_PIDS=()
SAMPLER_PID=""

log() { echo "[http.sh] $*" >&2; }
die() { log "error: $*"; exit 1; }


cleanup() {
    local pid
    if [[ -n $SAMPLER_PID ]]; then kill "$SAMPLER_PID" 2>/dev/null || true; fi
    for pid in ${SERVER_PIDS[@]+"${SERVER_PIDS[@]}"}; do
        stop_server "$pid" >/dev/null
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Run a command with a time limit when coreutils' timeout is available.

# Value of KEY in a key=value file (empty when absent).

# Resident set size in KiB: /proc on Linux, ps elsewhere. Builtins only on Linux, so the
# 100 ms sampler does not fork per sample.
rss_kib() {
    local pid=$1 key value rest
    if [[ -r /proc/$pid/status ]]; then
        while read -r key value rest; do
            if [[ $key == VmRSS: ]]; then echo "$value"; return; fi
        done <"/proc/$pid/status"
        return
    fi
    ps -o rss= -p "$pid" 2>/dev/null | tr -d ' ' || true
}
# Peak RSS over the process lifetime (Linux only; empty elsewhere).
hwm_kib() {
    local key value rest
    [[ -r /proc/$1/status ]] || return 0
    while read -r key value rest; do
        if [[ $key == VmHWM: ]]; then echo "$value"; return; fi
    done <"/proc/$1/status"
}
mib() { [[ -n ${1:-} ]] && awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }' || echo "n/a"; }

# ---------------------------------------------------------------------------------------------
# 1. Build
# ---------------------------------------------------------------------------------------------
if [[ -z $OUR_BIN ]]; then
    if ((BUILD)); then
        log "building auth-emulator (release, scratch path $SCRATCH)"
        (cd "$ROOT" && swift build -c release --scratch-path "$SCRATCH" --product auth-emulator) >&2 \
            || die "release build of auth-emulator failed"
    fi
    OUR_BIN=$(cd "$ROOT" && swift build -c release --scratch-path "$SCRATCH" --show-bin-path)/auth-emulator
fi
[[ -x $OUR_BIN ]] || die "no executable at $OUR_BIN"

if ((ANCHOR)) && [[ -z $ANCHOR_BIN ]]; then
    ANCHOR_DIR=$BENCH/hummingbird-anchor
    if ((BUILD)); then
        # swift build is incremental: a no-op when the anchor is already built and up to date.
        log "building the Hummingbird anchor (release; the first build takes several minutes)"
        (cd "$ANCHOR_DIR" && swift build -c release --product hummingbird-anchor) >&2 \
            || die "release build of the Hummingbird anchor failed"
    fi
    ANCHOR_BIN=$(cd "$ANCHOR_DIR" && swift build -c release --show-bin-path)/hummingbird-anchor
fi
if ((ANCHOR)); then [[ -x $ANCHOR_BIN ]] || die "no executable at $ANCHOR_BIN"; fi

case $LOADGEN in
    auto) if command -v wrk >/dev/null 2>&1; then LOADGEN=wrk; else LOADGEN=python; fi ;;
    wrk) command -v wrk >/dev/null 2>&1 || die "wrk is not on PATH (Debian/Ubuntu: apt-get install -y wrk)" ;;
    python) ;;
    *) die "--loadgen must be auto, wrk or python" ;;
esac
if [[ $LOADGEN == python ]]; then
    log "wrk not found; using bench/loadgen.py (slower client: install wrk for better numbers," \
        "e.g. apt-get install -y wrk)"
fi

# ---------------------------------------------------------------------------------------------
# Server lifecycle
# ---------------------------------------------------------------------------------------------
# start_server NAME BINARY: sets SERVER_PID and SERVER_PORT once GET /health answers 200.
start_server() {
    local name=$1 bin=$2 line="" i quiet=""
    # No access log while measuring (the anchor and older builds have none).
    "$bin" serve --help 2>/dev/null | grep -q -- '--\[no-\]quiet' && quiet=--quiet
    "$bin" serve --host 127.0.0.1 --port 0 --db :memory: $quiet \
        </dev/null >"$TMP/$name.out" 2>"$TMP/$name.err" &
    SERVER_PID=$!
    SERVER_PIDS+=("$SERVER_PID")
    for ((i = 0; i < 750; i++)); do  # 15 s
        line=$(head -n 1 "$TMP/$name.out" 2>/dev/null || true)
        [[ $line =~ ^listening\ on\ http://127\.0\.0\.1:([0-9]+) ]] && break
        kill -0 "$SERVER_PID" 2>/dev/null \
            || die "$name exited before listening: $(tail -n 5 "$TMP/$name.err" 2>/dev/null)"
        sleep 0.02
    done
    [[ $line =~ ^listening\ on\ http://127\.0\.0\.1:([0-9]+) ]] \
        || die "$name printed no 'listening on http://127.0.0.1:PORT' line within 15 s (got: '$line')"
    SERVER_PORT=${BASH_REMATCH[1]}
    for ((i = 0; i < 100; i++)); do
        if curl -fsS --max-time 2 -o /dev/null "http://127.0.0.1:$SERVER_PORT/health" 2>/dev/null; then
            return 0
        fi
        sleep 0.05
    done
    die "$name: GET /health never answered 2xx on port $SERVER_PORT"
}

# ---------------------------------------------------------------------------------------------
# Load
# ---------------------------------------------------------------------------------------------
# wrk's text output is parsed by `parse_wrk` (bench/lib.sh) into the key=value shape loadgen.py
# prints, latencies in ms.

# load URL SECONDS OUTFILE: one load run with the selected tool, key=value results in OUTFILE.
load() {
    local url=$1 secs=$2 out=$3
    if [[ $LOADGEN == wrk ]]; then
        bounded $((secs + 30)) wrk -t"$THREADS" -c"$CONNECTIONS" -d"${secs}s" --latency --timeout 5s "$url" \
            >"$out.raw" || die "wrk failed against $url"
        parse_wrk <"$out.raw" >"$out"
    else
        bounded $((secs + 60)) "$PY" "$BENCH/loadgen.py" -c "$CONNECTIONS" -t "$THREADS" -d "$secs" "$url" \
            >"$out" || die "loadgen.py failed against $url"
    fi
}

# Samples a PID's RSS every 100 ms into FILE (the maximum so far) until STOPFILE appears.
sample_peak() {
    local pid=$1 file=$2 stop=$3 max=0 r
    while [[ ! -e $stop ]] && kill -0 "$pid" 2>/dev/null; do
        r=$(rss_kib "$pid")
        if [[ -n $r ]] && ((r > max)); then max=$r; echo "$max" >"$file"; fi
        sleep 0.1
    done
}

# measured_load NAME PID PORT RUN [PATH]: a 1 s warm-up, then the measured run with RSS sampling.
measured_load() {
    local name=$1 pid=$2 port=$3 run=$4 path=${5:-/health} url peak
    url="http://127.0.0.1:$port$path"
    load "$url" 1 "$TMP/warmup.kv"
    rm -f "$TMP/stop"
    echo 0 >"$TMP/peak"
    sample_peak "$pid" "$TMP/peak" "$TMP/stop" &
    SAMPLER_PID=$!
    load "$url" "$DURATION" "$TMP/$name.load$run.kv"
    touch "$TMP/stop"
    wait "$SAMPLER_PID" 2>/dev/null || true
    SAMPLER_PID=""
    peak=$(cat "$TMP/peak")
    echo "peak_rss_kib=$peak" >>"$TMP/$name.load$run.kv"
    log "$name run $run: $(kv "$TMP/$name.load$run.kv" rps) req/s," \
        "p50 $(kv "$TMP/$name.load$run.kv" p50_ms) ms, p99 $(kv "$TMP/$name.load$run.kv" p99_ms) ms," \
        "errors $(kv "$TMP/$name.load$run.kv" errors), non-2xx $(kv "$TMP/$name.load$run.kv" non2xx)," \
        "peak RSS $(mib "$peak") MiB"
}

# Median (or max) of KEY over a server's load runs.
median_of() {
    local name=$1 key=$2 f
    for f in "$TMP/$name".load*.kv; do [[ -f $f ]] && kv "$f" "$key"; done | sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
max_of() {
    local name=$1 key=$2 f
    for f in "$TMP/$name".load*.kv; do [[ -f $f ]] && kv "$f" "$key"; done | sort -g | tail -n 1
}

# 1-minute load average: other work on the machine is the main source of noise.
LOADAVG_BEFORE=$(loadavg)
awk -v l="$LOADAVG_BEFORE" 'BEGIN { exit !(l > 0.5) }' \
    && log "warning: load average is $LOADAVG_BEFORE: other work on this machine will add noise"

# ---------------------------------------------------------------------------------------------
# 2. Start latency
# ---------------------------------------------------------------------------------------------
NAMES=(ours)
BINS=("$OUR_BIN")
if ((ANCHOR)); then NAMES+=(anchor); BINS+=("$ANCHOR_BIN"); fi

for i in "${!NAMES[@]}"; do
    log "start latency: ${NAMES[i]} (${STARTS} runs)"
    bounded $((STARTS * 25 + 10)) "$PY" "$BENCH/startup.py" -n "$STARTS" "${BINS[i]}" \
        >"$TMP/${NAMES[i]}.start.kv" || die "start-latency probe failed for ${NAMES[i]}: $(kv "$TMP/${NAMES[i]}.start.kv" problem)"
    log "${NAMES[i]}: start p50 $(kv "$TMP/${NAMES[i]}.start.kv" start_p50_ms) ms" \
        "(min $(kv "$TMP/${NAMES[i]}.start.kv" start_min_ms), max $(kv "$TMP/${NAMES[i]}.start.kv" start_max_ms))," \
        "clean SIGTERM exits $(kv "$TMP/${NAMES[i]}.start.kv" clean_exits)/$STARTS"
done

# ---------------------------------------------------------------------------------------------
# 3. Long-lived servers: idle RSS, then interleaved load runs
# ---------------------------------------------------------------------------------------------
PIDS=()
PORTS=()
for i in "${!NAMES[@]}"; do
    start_server "${NAMES[i]}" "${BINS[i]}"
    PIDS+=("$SERVER_PID")
    PORTS+=("$SERVER_PORT")
    sleep 1  # let start-up work settle before calling it idle
    rss_kib "$SERVER_PID" >"$TMP/${NAMES[i]}.idle_rss"
    log "${NAMES[i]}: pid $SERVER_PID port $SERVER_PORT, idle RSS $(mib "$(cat "$TMP/${NAMES[i]}.idle_rss")") MiB"
done

log "load: $LOADGEN -t$THREADS -c$CONNECTIONS -d${DURATION}s GET /health, ours x$REPEAT interleaved with anchor"
for ((run = 1; run <= REPEAT; run++)); do
    measured_load ours "${PIDS[0]}" "${PORTS[0]}" "$run"
    if ((ANCHOR)) && ((run < REPEAT || REPEAT == 1)); then
        measured_load anchor "${PIDS[1]}" "${PORTS[1]}" "$run" "$ANCHOR_PATH"
    fi
done
for i in "${!NAMES[@]}"; do
    hwm_kib "${PIDS[i]}" >"$TMP/${NAMES[i]}.hwm"
done

# ---------------------------------------------------------------------------------------------
# 4. Idle connections
# ---------------------------------------------------------------------------------------------
if ((IDLE > 0)); then
    for i in "${!NAMES[@]}"; do
        log "idle connections: ${NAMES[i]} holding $IDLE"
        bounded 180 "$PY" "$BENCH/idle_conns.py" -n "$IDLE" --pid "${PIDS[i]}" \
            "http://127.0.0.1:${PORTS[i]}/health" >"$TMP/${NAMES[i]}.idle.kv" \
            || log "warning: idle_conns.py reported a problem for ${NAMES[i]} (status $(kv "$TMP/${NAMES[i]}.idle.kv" status))"
        log "${NAMES[i]}: opened $(kv "$TMP/${NAMES[i]}.idle.kv" opened), still open $(kv "$TMP/${NAMES[i]}.idle.kv" still_open)," \
            "reusable $(kv "$TMP/${NAMES[i]}.idle.kv" reusable), fresh p50 $(kv "$TMP/${NAMES[i]}.idle.kv" fresh_p50_ms) ms" \
            "max $(kv "$TMP/${NAMES[i]}.idle.kv" fresh_max_ms) ms"
        kill -0 "${PIDS[i]}" 2>/dev/null || die "${NAMES[i]} died during the idle-connection test"
    done
fi

# Clean shutdown of the long-lived servers.
for i in "${!NAMES[@]}"; do
    stop_server "${PIDS[i]}" >"$TMP/${NAMES[i]}.exit"
done
SERVER_PIDS=()

# ---------------------------------------------------------------------------------------------
# 5. Summary
# ---------------------------------------------------------------------------------------------
val() {  # val NAME FILE-SUFFIX KEY
    if [[ -f $TMP/$1.$2 ]]; then kv "$TMP/$1.$2" "$3"; fi
}
verdict() {  # verdict VALUE OP LIMIT -> PASS / MISS / n/a
    [[ -n $1 && $1 != n/a ]] || { echo n/a; return; }
    awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN {
        ok = (op == "<=") ? (v + 0 <= l + 0) : (v + 0 >= l + 0); print ok ? "PASS" : "MISS" }'
}

OURS_RPS=$(median_of ours rps)
# runs_of NAME: the req/s of each load run, in order. spread NAME: (max - min) / max in percent.
runs_of() {
    local f
    for f in "$TMP/$1".load*.kv; do [[ -f $f ]] && printf '%s ' "$(kv "$f" rps)"; done
}
spread() {
    runs_of "$1" | tr ' ' '\n' | awk 'NF { if (n++ == 0) lo = hi = $1; if ($1 < lo) lo = $1; if ($1 > hi) hi = $1 }
        END { if (n > 1 && hi > 0) printf "%.1f", (hi - lo) * 100 / hi; else print "n/a" }'
}
OURS_RUNS=$(runs_of ours)
NOISE=$(spread ours)
OURS_PEAK=$(max_of ours peak_rss_kib)
if ((ANCHOR)); then
    ANCHOR_RPS=$(median_of anchor rps)
    RATIO=$(awk -v a="$OURS_RPS" -v b="$ANCHOR_RPS" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
    ANCHOR_PEAK=$(max_of anchor peak_rss_kib)
else
    ANCHOR_RPS="" RATIO=n/a ANCHOR_PEAK=""
fi
OURS_IDLE=$(cat "$TMP/ours.idle_rss")
OURS_START=$(val ours start.kv start_p50_ms)

# Sum of failed requests over a server's load runs.
err_total() {
    local f
    for f in "$TMP/$1".load*.kv; do
        [[ -f $f ]] || continue
        echo $(($(kv "$f" errors) + $(kv "$f" timeouts) + $(kv "$f" non2xx)))
    done | awk '{ s += $1 } END { print s + 0 }'
}
row() { printf '%-38s %14s %14s %12s  %s\n' "$@"; }
anchor_val() { if ((ANCHOR)); then "$@"; else echo "-"; fi; }
fmt_ms() { [[ -n ${1:-} ]] && echo "$1" || echo "n/a"; }

echo
echo "== HTTP benchmark summary ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -sm), $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?') cores) =="
echo "load average before: $LOADAVG_BEFORE; after: $(loadavg)"
echo "load: $LOADGEN, $THREADS threads, $CONNECTIONS keep-alive connections, ${DURATION}s per run, GET /health" \
    "(anchor: GET $ANCHOR_PATH); ours: $OUR_BIN"
row "metric" "ours" "anchor" "target" "result"
row "------" "----" "------" "------" "------"
row "throughput, req/s (median)" "$OURS_RPS" "$(anchor_val echo "$ANCHOR_RPS")" "" ""
row "throughput ratio ours/anchor" "$RATIO$([[ $RATIO == n/a ]] || echo x)" "$(anchor_val echo 1.00x)" ">= 1.5x" "$(verdict "$RATIO" '>=' 1.5)"
row "latency p50 / p99, ms (median)" "$(median_of ours p50_ms) / $(median_of ours p99_ms)" \
    "$(anchor_val echo "$(median_of anchor p50_ms) / $(median_of anchor p99_ms)")" "" ""
row "errors + timeouts + non-2xx (all runs)" "$(err_total ours)" "$(anchor_val err_total anchor)" "0" ""
row "start to first 200 /health, ms (p50)" "$(fmt_ms "$OURS_START")" "$(anchor_val fmt_ms "$(val anchor start.kv start_p50_ms)")" "<= 20" "$(verdict "$OURS_START" '<=' 20)"
row "  first stdout line, ms (p50)" "$(fmt_ms "$(val ours start.kv line_p50_ms)")" "$(anchor_val fmt_ms "$(val anchor start.kv line_p50_ms)")" "" ""
row "  of which spawning a process, ms" "$(fmt_ms "$(val ours start.kv spawn_floor_ms)")" "" "" ""
row "RSS idle after start, MiB" "$(mib "$OURS_IDLE")" "$(anchor_val mib "$(cat "$TMP/anchor.idle_rss" 2>/dev/null)")" "<= 15" "$(verdict "$(mib "$OURS_IDLE")" '<=' 15)"
row "RSS peak under load (100 ms), MiB" "$(mib "$OURS_PEAK")" "$(anchor_val mib "$ANCHOR_PEAK")" "<= 30" "$(verdict "$(mib "$OURS_PEAK")" '<=' 30)"
row "RSS high-water mark (VmHWM), MiB" "$(mib "$(cat "$TMP/ours.hwm")")" "$(anchor_val mib "$(cat "$TMP/anchor.hwm" 2>/dev/null)")" "" ""
if ((IDLE > 0)); then
    row "idle conns still open / reusable" "$(val ours idle.kv still_open) / $(val ours idle.kv reusable)" \
        "$(anchor_val echo "$(val anchor idle.kv still_open) / $(val anchor idle.kv reusable)")" "$IDLE" \
        "$(verdict "$(val ours idle.kv reusable)" '>=' "$IDLE")"
    row "fresh GET while $IDLE idle, p50/max ms" \
        "$(val ours idle.kv fresh_p50_ms) / $(val ours idle.kv fresh_max_ms)" \
        "$(anchor_val echo "$(val anchor idle.kv fresh_p50_ms) / $(val anchor idle.kv fresh_max_ms)")" "" ""
    row "RSS with $IDLE idle conns, MiB" "$(mib "$(val ours idle.kv server_rss_kib)")" \
        "$(anchor_val mib "$(val anchor idle.kv server_rss_kib)")" "" ""
fi
row "exit status after SIGTERM" "$(cat "$TMP/ours.exit")" "$(anchor_val cat "$TMP/anchor.exit")" "0" \
    "$(if [[ $(cat "$TMP/ours.exit") == 0 ]]; then echo PASS; else echo MISS; fi)"
echo "req/s per run: ours ${OURS_RUNS}(spread ${NOISE}$([[ $NOISE == n/a ]] || echo %))"
if ((ANCHOR)); then
    # The ratio's range over every pairing of runs shows how much of it noise could explain.
    echo "               anchor $(runs_of anchor)(spread $(spread anchor)$([[ $(spread anchor) == n/a ]] || echo %)); ratio over all run pairs:" \
        "$( { runs_of ours; echo; runs_of anchor; echo; } | awk 'NR == 1 { for (i = 1; i <= NF; i++) o[i] = $i; no = NF }
            NR == 2 { lo = 1e18; hi = 0; for (i = 1; i <= no; i++) for (j = 1; j <= NF; j++) {
                if ($j <= 0) continue; r = o[i] / $j; if (r < lo) lo = r; if (r > hi) hi = r }
                if (hi > 0) printf "%.2fx to %.2fx", lo, hi; else print "n/a" }')"
fi
echo "note: client and servers share $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 'the') cores and any other work on" \
    "the machine; treat ratio differences within the spread above as noise."

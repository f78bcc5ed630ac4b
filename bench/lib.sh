# Helpers shared by the bench scripts (http.sh, auth.sh); sourced, not run. The sourcing script
# keeps the PIDs of the servers it started in SERVER_PIDS.

# Runs a command with a time limit when coreutils' timeout is available.
bounded() {
    local secs=$1; shift
    if command -v timeout >/dev/null 2>&1; then timeout "$secs" "$@"; else "$@"; fi
}

# Value of KEY in a key=value file (empty when absent).
kv() { awk -F= -v k="$2" '$1 == k { print substr($0, length(k) + 2); exit }' "$1"; }

# 1-minute load average: other work on the machine is the main source of noise.
loadavg() {
    if [[ -r /proc/loadavg ]]; then cut -d' ' -f1 /proc/loadavg
    else sysctl -n vm.loadavg 2>/dev/null | awk '{ print $2 }' || echo "?"; fi
}

# Stops one server: SIGTERM, up to GRACE seconds (default 5), then SIGKILL. Prints its exit
# status (or "killed") and drops it from SERVER_PIDS. Call it with a redirect, never in $(...):
# only the shell that started the server can wait for it.
stop_server() {
    local pid=$1 grace=${2:-5} i code keep=() p
    for p in ${SERVER_PIDS[@]+"${SERVER_PIDS[@]}"}; do [[ $p == "$pid" ]] || keep+=("$p"); done
    SERVER_PIDS=(${keep[@]+"${keep[@]}"})
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for ((i = 0; i < grace * 10; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            kill -KILL "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
            echo killed; return
        fi
    fi
    wait "$pid" 2>/dev/null && code=0 || code=$?
    echo "$code"
}

# Reads wrk's --latency report on stdin; prints key=value lines (read them with `kv`):
#   tool=wrk, requests (all completed), ops (2xx/3xx), failed (socket errors + non-2xx/3xx),
#   errors (socket errors), non2xx, timeouts, duration_s, ops_per_s (ops / duration),
#   rps (wrk's Requests/sec: every completed request), p50_ms/p75_ms/p90_ms/p99_ms/max_ms,
#   and client_cpu_pct=n/a, first_failure= for the shape bench/authload.py prints.
parse_wrk() {
    awk '
    function ms(v) {
        if (v ~ /us$/) return v / 1000
        if (v ~ /ms$/) return v + 0
        if (v ~ /m$/)  return v * 60000
        if (v ~ /s$/)  return v * 1000
        return v + 0
    }
    /^ *Latency  / { max = ms($4) }
    /^ *50% / { p50 = ms($2) } /^ *75% / { p75 = ms($2) }
    /^ *90% / { p90 = ms($2) } /^ *99% / { p99 = ms($2) }
    # "N requests in 10.00s, 12.3MB read": the duration is the fourth field.
    / requests in / { requests = $1; d = $4; sub(/,$/, "", d); dur = ms(d) / 1000 }
    /Socket errors:/ { gsub(/,/, ""); errors = $4 + $6 + $8; timeouts = $10 }
    /Non-2xx or 3xx responses:/ { non2xx = $NF }
    /^Requests\/sec:/ { rps = $2 }
    END {
        ok = requests - non2xx
        printf "tool=wrk\nrequests=%d\nops=%d\nfailed=%d\nerrors=%d\nnon2xx=%d\ntimeouts=%d\n", requests, ok, errors + non2xx, errors, non2xx, timeouts
        printf "duration_s=%.3f\nops_per_s=%.1f\nrps=%.1f\n", dur, (dur > 0 ? ok / dur : 0), rps
        printf "p50_ms=%.3f\np75_ms=%.3f\np90_ms=%.3f\np99_ms=%.3f\nmax_ms=%.3f\n", p50, p75, p90, p99, max
        printf "client_cpu_pct=n/a\nfirst_failure=\n"
    }'
}

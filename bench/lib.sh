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

# Stops one server: SIGTERM, up to 5 s grace, then SIGKILL. Prints its exit status (or
# "killed") and drops it from SERVER_PIDS. Call it with a redirect, never in $(...): only the
# shell that started the server can wait for it.
stop_server() {
    local pid=$1 i code keep=() p
    for p in ${SERVER_PIDS[@]+"${SERVER_PIDS[@]}"}; do [[ $p == "$pid" ]] || keep+=("$p"); done
    SERVER_PIDS=(${keep[@]+"${keep[@]}"})
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for ((i = 0; i < 50; i++)); do
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

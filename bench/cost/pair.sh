#!/usr/bin/env bash
# Server CPU per operation of two builds, measured in pairs on one machine at the same time:
#
#   bench/cost/pair.sh OP BIN_A BIN_B [PAIRS]      OP: user, refresh or health; PAIRS: 8
#
# Both servers run at once, each on its own file database with 256 signed-up users (1,000
# PBKDF2 iterations), warmed up by a 2 s wrk run. Then PAIRS rounds of two 3 s wrk runs (16
# connections, bench/auth.lua), A then B in odd rounds and B then A in even ones, each run's
# server CPU (user + system, from
# /proc/PID/stat) over the requests it answered. A refresh run gets 256 sessions of its own, so no
# token is presented twice. Prints every run, then each build's median and mean and in how many
# pairs B cost less.
#
# Why: on a shared VM the CPU cost of the same binary swings by 10-20 % between runs minutes
# apart, more than a change of a few percent; cost.sh's full runs, one build after another, can
# not tell such builds apart. Runs a few seconds apart, in pairs, share the machine's mood.
# Linux only (/proc); loopback only; every run is bounded, and both servers are stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib.sh

op=${1:?usage: bench/cost/pair.sh OP BIN_A BIN_B [PAIRS]}
bin_a=${2:?BIN_A}
bin_b=${3:?BIN_B}
pairs=${4:-8}
case $op in user|refresh|health) ;; *) echo "pair.sh: OP is user, refresh or health" >&2; exit 2 ;; esac
[[ -r /proc/self/stat ]] || { echo "pair.sh: needs /proc (Linux)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "pair.sh: needs wrk" >&2; exit 2; }
python=${PYTHON:-.venv/bin/python}
[[ -x $python ]] || python=python3

work=$(mktemp -d /tmp/auth-pair.XXXXXX)
SERVER_PIDS=()
cleanup() {
    local pid
    for pid in ${SERVER_PIDS[@]+"${SERVER_PIDS[@]}"}; do stop_server "$pid" >/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT

tick=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

declare -A pid url
for side in a b; do
    bin=$bin_a; [[ $side == b ]] && bin=$bin_b
    dir=$work/$side; mkdir -p "$dir"
    AUTH_EMULATOR_PASSWORD_ITERATIONS=1000 "$bin" serve --host 127.0.0.1 --port 0 --db "$dir/db.sqlite" --quiet \
        > "$dir/out" 2> "$dir/err" &
    pid[$side]=$!
    SERVER_PIDS+=("${pid[$side]}")
    for _ in $(seq 100); do grep -q '^listening on' "$dir/out" && break; sleep 0.1; done
    url[$side]=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$dir/out" | head -1)
    [[ -n ${url[$side]} ]] || { echo "pair.sh: $bin did not start" >&2; exit 1; }
    users=256; [[ $op == refresh ]] && users=$((256 * (pairs + 1)))
    if [[ $op != health ]]; then
        bounded 300 "$python" bench/authload.py "${url[$side]}" --op signup -c 4 -n "$users" -d 240 \
            --password cost-Passw0rd! --tag "pair$side" --out "$dir/sessions.jsonl" --out-limit "$users" > "$dir/signup"
        "$python" -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["email"], r["access"], r["refresh"])' "$dir/sessions.jsonl" > "$dir/all"
        split -l 256 -d -a 3 "$dir/all" "$dir/records."
    else
        : > "$dir/records.000"
    fi
    bounded 30 wrk -t2 -c16 -d2s -s bench/auth.lua "${url[$side]}" -- "$op" "$dir/records.000" 2 x warm > /dev/null
done

results=$work/results
for ((round = 1; round <= pairs; round++)); do
    order="a b"; ((round % 2 == 0)) && order="b a"
    for side in $order; do
        dir=$work/$side
        records=$dir/records.000
        [[ $op == refresh ]] && records=$dir/records.$(printf %03d "$round")
        before=$(cpu_ticks "${pid[$side]}")
        bounded 30 wrk -t2 -c16 -d3s --latency -s bench/auth.lua "${url[$side]}" -- "$op" "$records" 2 x "run$round" \
            | parse_wrk > "$dir/run$round"
        after=$(cpu_ticks "${pid[$side]}")
        ops=$(kv "$dir/run$round" ops)
        failed=$(kv "$dir/run$round" failed)
        [[ ${failed:-0} == 0 && ${ops:-0} -gt 0 ]] || { echo "pair.sh: run $round of $side failed ($failed)" >&2; exit 1; }
        awk -v s="$side" -v r="$round" -v t0="$before" -v t1="$after" -v hz="$tick" -v n="$ops" \
            'BEGIN { printf "%s %d %.1f %d\n", s, r, (t1 - t0) / hz * 1e6 / n, n }' | tee -a "$results"
    done
done

python3 - "$results" "$op" "$bin_a" "$bin_b" <<'EOF'
import statistics, sys
runs = {"a": {}, "b": {}}
for line in open(sys.argv[1]):
    side, round_, us, _ = line.split()
    runs[side][int(round_)] = float(us)
a, b = runs["a"], runs["b"]
for side, name in (("a", sys.argv[3]), ("b", sys.argv[4])):
    values = list(runs[side].values())
    print(f"[pair] {sys.argv[2]} {side} ({name}): median {statistics.median(values):.1f} us/op, "
          f"mean {statistics.mean(values):.1f}")
cheaper = sum(1 for r in a if r in b and b[r] < a[r])
change = statistics.median(b.values()) / statistics.median(a.values()) - 1
print(f"[pair] b cost less in {cheaper} of {len(a)} pairs; medians {change * 100:+.1f} %")
EOF

#!/usr/bin/env bash
# Build-time report: how long a new user and every CI run wait for the compiler.
#
#   bench/buildtime.sh [--rev REV] [--no-debug] [--no-profile] [--out FILE]
#
# In a fresh clone of REV (default HEAD; committed work only) under /tmp, one after another:
#   1. cold release build of the auth-emulator product (what the README's run command builds);
#   2. the same after touching one endpoint file (Sources/GoTrue/Endpoints/User.swift);
#   3. cold debug build with the tests (`swift build --build-tests`, what scripts/test builds),
#      and the same after touching that file;
#   4. an instrumented release build (its own build directory, so its time is not counted
#      above) whose compiler statistics bench/buildtime.py turns into the per-module table and
#      the slowest functions to type-check and to optimize; then the same for the debug build
#      with the tests (per-module table, slowest bodies, tests included);
#   5. the size of the release binary.
# Prints a Markdown report (and writes it to FILE with --out; bench/results/buildtime.md keeps
# the latest one, so a regression shows in the diff). About 20 minutes on two cores.
# --no-debug skips 3, --no-profile skips 4.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

rev=HEAD
debug=1
profile=1
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rev) rev="$2"; shift 2 ;;
    --no-debug) debug=0; shift ;;
    --no-profile) profile=0; shift ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "buildtime.sh: unknown argument $1" >&2; exit 64 ;;
  esac
done

work=$(mktemp -d /tmp/auth-buildtime.XXXXXX)
trap 'rm -rf "$work"' EXIT
git clone -q "$root" "$work/src"
git -C "$work/src" checkout -q "$(git rev-parse "$rev")"
commit=$(git -C "$work/src" log -1 --format='%h %s' | cut -c1-100)
src=$work/src
touched=Sources/GoTrue/Endpoints/User.swift

# timed LABEL COMMAND...: runs the command in the clone, keeps "wall user sys" in $work/LABEL.
timed() {
  local label=$1; shift
  (cd "$src" && /usr/bin/time -f '%e %U %S' -o "$work/$label" "$@" > "$work/$label.log" 2>&1) || {
    echo "buildtime.sh: $label failed:" >&2; tail -n 30 "$work/$label.log" >&2; exit 1; }
}
row() {
  local what=$1 label=$2 wall user sys
  read -r wall user sys < "$work/$label"
  printf '| %s | %.0f | %.0f | %.1f |\n' "$what" "$wall" "$(echo "$user + $sys" | bc)" "$(echo "($user + $sys) / $wall" | bc -l)"
}

echo "building (cold release) ..." >&2
# Each output line stamped with the seconds since the start: SwiftPM prints a module's
# "[n/m] Compiling <Module> <first file>" line when that module's compile job ends, so the
# stamps are the build's timeline (the critical path: the modules GoTrue needs, GoTrue, then
# AuthScenarios and AuthEmulator).
timed release-cold bash -c 'swift build -c release --product auth-emulator 2>&1 | python3 -c "
import sys, time
start = time.monotonic()
for line in sys.stdin:
    sys.stdout.write(\"%6.1f %s\" % (time.monotonic() - start, line))
"; exit ${PIPESTATUS[0]}'
touch "$src/$touched"
timed release-touch swift build -c release --product auth-emulator
if [ "$debug" = 1 ]; then
  echo "building (cold debug with tests) ..." >&2
  timed debug-cold swift build --build-tests
  touch "$src/$touched"
  timed debug-touch swift build --build-tests
fi
binary="$src/.build/release/auth-emulator"
size=$(stat -c %s "$binary")
stripped=$(strip -o "$work/stripped" "$binary" && stat -c %s "$work/stripped")

report=$work/report.md
{
  echo "## Build times of $commit"
  echo
  echo "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(swift --version 2>&1 | head -1 | sed 's/ (.*//'), load before start $(cut -d' ' -f1 /proc/loadavg)."
  echo
  echo "| build | wall s | CPU s | cores busy |"
  echo "|---|---:|---:|---:|"
  row "release \`auth-emulator\`, cold" release-cold
  row "release, after touching \`$touched\`" release-touch
  if [ "$debug" = 1 ]; then
    row "debug with tests (\`swift build --build-tests\`), cold" debug-cold
    row "debug with tests, after touching \`$touched\`" debug-touch
  fi
  echo
  echo "Release binary: $((size / 1024)) KiB ($((stripped / 1024)) KiB stripped)."
  echo
  echo "### When each module's compile ended (cold release build, seconds from its start)"
  echo
  echo "| s | module |"
  echo "|---:|---|"
  # A module built file by file (Package.swift) prints a line per file as its batches end: keep
  # the last, when the module is done.
  sed -n -E 's/^ *([0-9.]+) \[[0-9]+\/[0-9]+\] Compiling ([A-Za-z_]+) .*/| \1 | \2 |/p' "$work/release-cold.log" \
    | awk '{ last[$4] = $0 } END { for (m in last) print last[m] }' | sort -t'|' -k2 -n
  sed -n -E 's/^ *([0-9.]+) \[[0-9]+\/[0-9]+\] Linking (.*)/| \1 | linked \2 |/p' "$work/release-cold.log"
  echo
} > "$report"

if [ "$profile" = 1 ]; then
  echo "building (instrumented release) ..." >&2
  mkdir -p "$work/stats"
  # Every module whole here, even those Package.swift builds file by file: a batch job's output
  # is printed once per file of the batch, which would count its pass times many times over; and
  # where the optimizer's work goes is the question this part answers. (-Xswiftc flags come
  # after a target's own, so this one wins.)
  (cd "$src" && swift build -c release --product auth-emulator --scratch-path .build-profile \
      -Xswiftc -whole-module-optimization \
      -Xswiftc -stats-output-dir -Xswiftc "$work/stats" \
      -Xswiftc -Xfrontend -Xswiftc -debug-time-function-bodies \
      -Xswiftc -Xllvm -Xswiftc -sil-print-pass-time 2>&1) \
    | python3 bench/buildtime.py --stats "$work/stats" --source "$src" >> "$report"
  if [ "$debug" = 1 ]; then
    echo "building (instrumented debug with tests) ..." >&2
    mkdir -p "$work/debug-stats"
    (cd "$src" && swift build --build-tests --scratch-path .build-profile-debug \
        -Xswiftc -stats-output-dir -Xswiftc "$work/debug-stats" \
        -Xswiftc -Xfrontend -Xswiftc -debug-time-function-bodies 2>&1) \
      | python3 bench/buildtime.py --stats "$work/debug-stats" --source "$src" --tests \
          --title "debug with tests; a module's batch jobs summed" >> "$report"
  fi
fi

cat "$report"
if [ -n "$out" ]; then cp "$report" "$out"; fi

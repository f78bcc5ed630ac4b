#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer and AddressSanitizer and runs each one for a bounded
# time (or number of inputs) on a scratch copy of its seed corpus. See Tests/Fuzz/README.md.
#
#   Tests/Fuzz/run.sh [--seconds N] [--runs N] [--debug] [--build-only] [target...]
#                                                       targets: http json toml jwt template
#
# Targets are built optimized (-c release and -O: about six times the executions per second of -Onone;
# preconditions and overflow checks stay on); --debug builds them -Onone instead.
# Exits non-zero when a target crashes, trips a sanitizer, times out on one input or exceeds
# the memory limit; the input that did it is kept under .build-fuzz/artifacts/ and its path
# printed. The committed corpus (Tests/Fuzz/corpus) is only ever read.
set -euo pipefail
cd "$(dirname "$0")/../.."

all_targets=(http json toml jwt template)
seconds=""
runs=""
targets=()
configuration=release
build_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --debug) configuration=debug; shift ;;
    # Builds the instrumented targets and stops (CI builds them while other builds run).
    --build-only) build_only=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 64 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
# Bounded by default: a minute per target unless a run count alone was asked for.
if [ -z "$seconds" ] && [ -z "$runs" ]; then seconds=60; fi
for target in "${targets[@]}"; do
  case " ${all_targets[*]} " in *" $target "*) ;; *) echo "run.sh: unknown target $target (${all_targets[*]})" >&2; exit 64 ;; esac
done

if [ "$(uname -s)" != Linux ]; then
  # The toolchains Apple ships lack the libFuzzer runtime; the replay mode still works there.
  echo "run.sh: libFuzzer builds need a Linux swift.org toolchain; skipping" >&2
  exit 0
fi

# A separate build directory: the instrumented objects never mix with .build.
build_path=.build-fuzz
# Per-target knobs: longest input tried. The HTTP parser's chunk-line cap is 4 KiB, so its
# inputs may go past it.
max_len() { case "$1" in http) echo 8192 ;; *) echo 4096 ;; esac; }
# Seconds one input may take before libFuzzer reports it as a timeout. A template input renders
# four times within the render budget (steps, output, what functions handle: docs/email-templates.md),
# which under AddressSanitizer takes up to ~6 s on a quiet core for the heaviest inputs found; on a
# busy machine that doubles or triples. An unbounded render is what this catches.
unit_timeout() { case "$1" in template) echo 60 ;; *) echo 10 ;; esac; }

# Package.swift leaves AuthTOML and AuthTemplate unoptimized in release (cold code); a fuzzer wants
# every execution it can get, so -O comes last and wins there.
optimize=()
[ "$configuration" = release ] && optimize=(-Xswiftc -O)
for target in "${targets[@]}"; do
  echo "== building fuzz-$target (-c $configuration ${optimize[*]:+-O }-sanitize=fuzzer,address -DFUZZING)"
  # ld.gold warns once per ASan helper symbol it cannot export; the warnings say nothing about
  # our code and would bury real errors.
  swift build -c "$configuration" --build-path "$build_path" --product "fuzz-$target" \
    "${optimize[@]}" -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING 2>&1 | { grep -v "warning: Cannot export local symbol" || true; }
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "run.sh: build of fuzz-$target failed" >&2; exit 1; }
done
[ "$build_only" = 0 ] || exit 0
bin_path="$(swift build -c "$configuration" --build-path "$build_path" --show-bin-path)"

# Swift's crash backtracer reads the crashed process's memory from a helper thread, which
# AddressSanitizer reports as a second, bogus error; libFuzzer prints its own stack anyway.
export SWIFT_BACKTRACE=enable=no

status=0
summary=()
for target in "${targets[@]}"; do
  scratch="$build_path/corpus/$target"
  artifacts="$build_path/artifacts/$target/"
  rm -rf "$scratch"
  mkdir -p "$scratch" "$artifacts"
  cp Tests/Fuzz/corpus/"$target"/* "$scratch"/
  log="$build_path/fuzz-$target.log"

  args=(-rss_limit_mb=2048 -timeout="$(unit_timeout "$target")" -max_len="$(max_len "$target")" -print_final_stats=1
        -artifact_prefix="$artifacts" -dict=Tests/Fuzz/dict/"$target".dict)
  [ -n "$seconds" ] && args+=(-max_total_time="$seconds")
  [ -n "$runs" ] && args+=(-runs="$runs")
  echo "== fuzz-$target ${seconds:+for ${seconds}s }${runs:+up to $runs inputs }(log: $log)"
  start=$(date +%s)
  # libFuzzer's own limits end the run; the outer timeout only guards against a wedged process.
  guard=()
  [ -n "$seconds" ] && guard=(timeout --signal=INT --kill-after=30 $((seconds + 300)))
  set +e
  "${guard[@]}" "$bin_path/fuzz-$target" "${args[@]}" "$scratch" >"$log" 2>&1
  code=$?
  set -e
  elapsed=$(( $(date +%s) - start ))

  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
  line="fuzz-$target: ${execs:-?} execs, ${rate:-?} exec/s, ${elapsed}s, peak RSS ${rss:-?} MB, ${cov:-cov ?}, exit $code"
  echo "$line"
  summary+=("$line")
  if [ "$code" -ne 0 ]; then
    status=1
    echo "!! fuzz-$target failed; last lines of $log:" >&2
    tail -n 40 "$log" >&2
    sed -n 's/^.*Test unit written to \(.*\)$/\1/p' "$log" | while read -r file; do
      echo "!! input kept: $file (replay: $bin_path/fuzz-$target $file)" >&2
    done
  fi
done

echo "== summary"
printf '%s\n' "${summary[@]}"
exit "$status"

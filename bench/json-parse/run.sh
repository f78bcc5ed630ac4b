#!/bin/sh
# Parser speed: bench/json-parse/run.sh [iterations]. Compiles Sources/AuthJSON (no dependencies)
# together with the driver at -O; prints the best of five runs per body in ns/parse, through
# JSON.goDecode (how request bodies are read); JSON_BENCH_FLAGS="-D STRICT" times JSON(parsing:).
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=${TMPDIR:-/tmp}/auth-json-parse-bench
swiftc -O ${JSON_BENCH_FLAGS:-} -module-name JSONBench "$here"/../../Sources/AuthJSON/*.swift "$here/main.swift" -o "$out"
"$out" "$@"

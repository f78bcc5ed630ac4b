#!/usr/bin/env python3
"""Reads an instrumented `swift build` log on stdin and prints where the compiler's time went.

    swift build ... -Xswiftc -stats-output-dir -Xswiftc DIR \\
        -Xswiftc -Xfrontend -Xswiftc -debug-time-function-bodies \\
        -Xswiftc -Xllvm -Xswiftc -sil-print-pass-time 2>&1 | bench/buildtime.py --stats DIR --source ROOT

Three tables, in Markdown:
- per module: the frontend's wall time and its phases (type checking, SIL optimization, LLVM),
  from the `-stats-output-dir` JSON files, one per frontend job;
- the slowest function bodies to type-check (`-debug-time-function-bodies`: one line per body,
  "12.34ms<TAB>file:line:col<TAB>name");
- the functions the SIL optimizer spent most on (`-sil-print-pass-time`: one line per pass run,
  "  0.041 ms: pass-name #N @mangled"), summed per function and demangled.

The log is read as a stream (a whole build prints a few hundred megabytes of pass times).
"""
import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys

BODY = re.compile(r"^\s*([0-9.]+)ms\t([^\t]+)\t(.*)$")
PASS = re.compile(r"^\s*([0-9.]+) ms: \S+ #\d+ @(\S+)")
MODULE = re.compile(r"frontend-([A-Za-z0-9_]+)-")


def module_of(mangled):
    """The module a mangled Swift name ($s<len><Module>...) belongs to, or '' for others."""
    match = re.match(r"\$s(\d+)", mangled)
    if not match:
        return ""
    start = 2 + len(match.group(1))
    return mangled[start:start + int(match.group(1))]


def demangle(names):
    try:
        out = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(names),
                             capture_output=True, text=True, check=True).stdout.splitlines()
        return out if len(out) == len(names) else names
    except (OSError, subprocess.CalledProcessError):
        return names


def module_table(stats_dir):
    """One row per module, summed over its frontend jobs (one in a release build, a few batches
    in a debug one; a debug build also writes a job that only emits the module). Job times are
    wall times: jobs that share the cores add up to more than the build's CPU time."""
    sums = collections.defaultdict(collections.Counter)
    for path in glob.glob(os.path.join(stats_dir, "*.json")):
        match = MODULE.search(os.path.basename(path))
        if not match:
            continue
        with open(path) as f:
            data = json.load(f)
        row = sums[match.group(1)]
        row["total"] += next((v for k, v in data.items() if k.startswith("time.swift-frontend.") and k.endswith(".wall")), 0.0)
        for phase in ("Type checking and Semantic analysis", "SILGen", "SIL optimization", "IRGen", "LLVM pipeline"):
            row[phase] += data.get(f"time.swift.{phase}.wall", 0.0)
        row["lines"] = max(row["lines"], data.get("AST.NumSourceLines", 0))
    rows = sorted(((r["total"], name, r["Type checking and Semantic analysis"], r["SILGen"], r["SIL optimization"],
                    r["IRGen"], r["LLVM pipeline"], r["lines"]) for name, r in sums.items()), reverse=True)
    print("| module | lines | frontend s | type check s | SILGen s | SIL optimization s | IRGen s | LLVM s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for total, name, sema, silgen, opt, irgen, llvm, lines in rows:
        print(f"| {name} | {lines} | {total:.1f} | {sema:.1f} | {silgen:.1f} | {opt:.1f} | {irgen:.1f} | {llvm:.1f} |")
    print(f"| all | {sum(r[7] for r in rows)} | {sum(r[0] for r in rows):.1f} | {sum(r[2] for r in rows):.1f} | "
          f"{sum(r[3] for r in rows):.1f} | {sum(r[4] for r in rows):.1f} | {sum(r[5] for r in rows):.1f} | "
          f"{sum(r[6] for r in rows):.1f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stats", help="the -stats-output-dir directory")
    parser.add_argument("--source", default=os.getcwd(), help="package root, stripped from paths")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--title", default="release, whole-module optimization")
    parser.add_argument("--tests", action="store_true", help="count the test targets' bodies too")
    options = parser.parse_args()

    # SwiftPM repeats a batch job's output for each file of the batch: keep each line once.
    bodies = set()
    optimizer = collections.Counter()
    for line in sys.stdin:
        if " ms: " in line:
            match = PASS.match(line)
            if match:
                optimizer[match.group(2)] += float(match.group(1))
            continue
        match = BODY.match(line)
        if match and ("/Sources/" in match.group(2) or (options.tests and "/Tests/" in match.group(2))):
            # The name ends in "@<file>:<line>:<col>", the place already in the second column.
            bodies.add((float(match.group(1)), match.group(2), match.group(3).split("@/")[0]))

    if options.stats:
        print(f"### Per module ({options.title})\n")
        module_table(options.stats)
        print()

    root = os.path.abspath(options.source).rstrip("/") + "/"
    print(f"### Slowest function bodies to type-check (top {options.top})\n")
    print("| ms | where | what |")
    print("|---:|---|---|")
    for ms, where, what in sorted(bodies, reverse=True)[:options.top]:
        print(f"| {ms:.1f} | {where.replace(root, '')} | `{what[:80]}` |")
    print(f"\nAll {len(bodies)} bodies: {sum(b[0] for b in bodies) / 1000:.1f} s.\n")

    if not optimizer:
        return
    ours = {name: ms for name, ms in optimizer.items() if module_of(name).startswith(("Auth", "GoTrue"))}
    per_module = collections.Counter()
    for name, ms in ours.items():
        per_module[module_of(name)] += ms
    top = sorted(ours.items(), key=lambda item: -item[1])[:options.top]
    print(f"### Functions the SIL optimizer spent most on (top {options.top})\n")
    print("| ms | function |")
    print("|---:|---|")
    for (name, ms), readable in zip(top, demangle([name for name, _ in top])):
        print(f"| {ms:.0f} | `{readable[:110]}` |")
    total = sum(optimizer.values())
    print(f"\nPass time in all: {total / 1000:.1f} s over {len(optimizer)} functions; the top {options.top} of "
          f"the project's own {len(ours)} functions take {sum(ms for _, ms in top) / 1000:.1f} s "
          f"(the rest is spread thin: specializations of the standard library's generics and "
          f"thousands of small functions). By module: "
          + ", ".join(f"{m} {ms / 1000:.1f} s" for m, ms in per_module.most_common()) + ".\n")


if __name__ == "__main__":
    main()

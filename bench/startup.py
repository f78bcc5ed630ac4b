#!/usr/bin/env python3
"""Start-latency probe for bench/http.sh.

For each run it spawns `BINARY serve --host 127.0.0.1 --port 0 --db :memory:`, reads the first
stdout line (`listening on http://127.0.0.1:<port>`), then polls `GET /health` on that port until
a 200 arrives. The start latency is the time from just before the spawn to that first successful
answer; the time to the first line is reported as well. Each server is stopped with SIGTERM and
its exit status recorded (a clean shutdown exits 0), SIGKILL only if it does not stop in time.

Output: `key=value` lines (or one JSON object with --json):
  runs, ok_runs, start_p50_ms, start_min_ms, start_max_ms, line_p50_ms, clean_exits,
  spawn_floor_ms (median spawn-to-exit of `true`: the part of the figure that is process
  creation by this probe rather than the server's own start-up)
"""

import argparse
import json
import os
import re
import select
import signal
import socket
import statistics
import subprocess
import sys
import time

LINE = re.compile(rb"^listening on http://127\.0\.0\.1:(\d+)\s*$")


def health_ok(port, timeout):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            data = b""
            while b"\r\n" not in data:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            return data.startswith(b"HTTP/1.1 200") or data.startswith(b"HTTP/1.0 200")
    except OSError:
        return False


def stop(proc, grace):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
            return None
    return proc.returncode


def one_run(binary, timeout, grace):
    # Line-buffered binary pipe; the server must flush its first line itself.
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [binary, "serve", "--host", "127.0.0.1", "--port", "0", "--db", ":memory:"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        deadline = t0 + timeout
        buf = b""
        while b"\n" not in buf:
            left = deadline - time.perf_counter()
            if left <= 0 or proc.poll() is not None:
                return None, None, stop(proc, grace), "no first line"
            ready, _, _ = select.select([proc.stdout], [], [], left)
            if ready:
                chunk = os.read(proc.stdout.fileno(), 4096)
                if not chunk:
                    return None, None, stop(proc, grace), "stdout closed before first line"
                buf += chunk
        t_line = time.perf_counter()
        first = buf.split(b"\n", 1)[0]
        m = LINE.match(first)
        if not m:
            return None, None, stop(proc, grace), f"unexpected first line {first!r}"
        port = int(m.group(1))
        while not health_ok(port, max(0.05, deadline - time.perf_counter())):
            if time.perf_counter() >= deadline or proc.poll() is not None:
                return None, None, stop(proc, grace), "health never answered 200"
            time.sleep(0.0005)
        t_ok = time.perf_counter()
        return (t_ok - t0) * 1e3, (t_line - t0) * 1e3, stop(proc, grace), None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=5)


def spawn_floor(runs):
    """Median time to spawn and reap a trivial program, for context."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        try:
            subprocess.run(["true"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        times.append((time.perf_counter() - t0) * 1e3)
    return round(statistics.median(times), 2)


def main():
    ap = argparse.ArgumentParser(description="median start latency of an auth-emulator-like server")
    ap.add_argument("binary")
    ap.add_argument("-n", "--runs", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=10.0, help="per-run limit, seconds")
    ap.add_argument("--grace", type=float, default=5.0, help="SIGTERM grace period, seconds")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not 1 <= args.runs <= 100:
        raise SystemExit("startup: --runs must be in 1...100")

    starts, lines, clean, problems = [], [], 0, []
    for _ in range(args.runs):
        start_ms, line_ms, code, problem = one_run(args.binary, args.timeout, args.grace)
        if problem:
            problems.append(problem)
        else:
            starts.append(start_ms)
            lines.append(line_ms)
        if code == 0:
            clean += 1
    out = {
        "runs": args.runs,
        "ok_runs": len(starts),
        "start_p50_ms": round(statistics.median(starts), 2) if starts else "",
        "start_min_ms": round(min(starts), 2) if starts else "",
        "start_max_ms": round(max(starts), 2) if starts else "",
        "line_p50_ms": round(statistics.median(lines), 2) if lines else "",
        "clean_exits": clean,
        "spawn_floor_ms": spawn_floor(args.runs),
        "problem": problems[0] if problems else "",
    }
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k}={v}")
    return 0 if starts else 1


if __name__ == "__main__":
    sys.exit(main())

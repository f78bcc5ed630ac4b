#!/usr/bin/env python3
"""Cost of hosting many projects in one emulator, and whether one project's load starves another.

1. Memory and creation: starts `BINARY serve --port 0` (in memory, or on a file with --file),
   reads its resident memory (VmRSS), creates --count projects through
   `POST /emulator/v1/projects` one after another, timing each (client side, keep-alive
   connection), then reads VmRSS again; then sends each project one request (`GET /health`,
   which opens a project in memory) and reads VmRSS once more. Reports the median and p99
   creation and first-request times and the resident memory per idle and per open project.
2. Fairness: project `quiet` signs a user in --probes times, alone, then again while --threads
   clients sign users in to project `busy` as fast as they can (each sign-in hashes a password:
   CPU-bound work on the shared worker threads). Reports the quiet project's median and p99
   sign-in latency in both phases and the busy project's throughput.

Loopback only; every loop is bounded in count and time; the server is stopped by its PID.
Output: `key=value` lines, or one JSON object with --json.
"""

import argparse
import json
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import httpx

SERVICE_ROLE_KEY = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImV4cCI6MTk4MzgxMjk5Nn0"
    ".EGIM96RAZx35lJzdJsyH-qQwv8Hdp7fsn3W0YpN81IU"
)
LINE = re.compile(r"^listening on (http://127\.0\.0\.1:\d+)\s*$")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def sign_in_loop(client, url, email, password, deadline, count, latencies, halt=None):
    """Signs in until the deadline, `halt` is set or `count` sign-ins; appends each latency (seconds)."""
    for _ in range(count):
        if time.monotonic() >= deadline or (halt is not None and halt.is_set()):
            return
        started = time.monotonic()
        response = client.post(f"{url}/token", params={"grant_type": "password"},
                               json={"email": email, "password": password})
        if response.status_code != 200:
            raise RuntimeError(f"sign-in answered {response.status_code}: {response.text}")
        latencies.append(time.monotonic() - started)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=".build-release/release/auth-emulator")
    parser.add_argument("--count", type=int, default=1000, help="projects to create (default 1000)")
    parser.add_argument("--file", action="store_true", help="projects on database files instead of in memory")
    parser.add_argument("--threads", type=int, default=8, help="clients loading the busy project (default 8)")
    parser.add_argument("--probes", type=int, default=40, help="quiet-project sign-ins per phase (default 40)")
    parser.add_argument("--seconds", type=float, default=60, help="time limit of each phase (default 60)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not (1 <= args.count <= 100_000 and 1 <= args.threads <= 64 and 1 <= args.probes <= 10_000):
        parser.error("out of range")

    scratch = tempfile.TemporaryDirectory()
    database = f"{scratch.name}/auth.db" if args.file else ":memory:"
    process = subprocess.Popen([args.bin, "serve", "--port", "0", "--quiet", "--db", database],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    results = {}
    try:
        match = LINE.match(process.stdout.readline())
        if not match:
            raise RuntimeError("the server did not start")
        url = match.group(1)
        while not process.stdout.readline().startswith("database:"):
            pass
        control = httpx.Client(base_url=f"{url}/emulator/v1", headers={"apikey": SERVICE_ROLE_KEY}, timeout=30)
        time.sleep(0.2)
        before = rss_kib(process.pid)

        # 1. Many idle projects.
        created = []
        deadline = time.monotonic() + 600
        for index in range(args.count):
            if time.monotonic() >= deadline:
                raise RuntimeError(f"only {index} projects created within 600 s")
            started = time.monotonic()
            response = control.post("/projects", json={"ref": f"p{index}"})
            created.append(time.monotonic() - started)
            if response.status_code != 201:
                raise RuntimeError(f"creating p{index} answered {response.status_code}: {response.text}")
        time.sleep(0.5)
        after = rss_kib(process.pid)
        # A project in memory opens (database, migrations, API) on its first request.
        opened = []
        plain = httpx.Client(timeout=30)
        for index in range(args.count):
            started = time.monotonic()
            response = plain.get(f"{url}/project/p{index}/auth/v1/health")
            opened.append(time.monotonic() - started)
            if response.status_code != 200:
                raise RuntimeError(f"p{index} answered {response.status_code}")
        time.sleep(0.5)
        touched = rss_kib(process.pid)
        results.update({
            "first_request_p50_ms": round(statistics.median(opened) * 1000, 2),
            "first_request_p99_ms": round(percentile(opened, 0.99) * 1000, 2),
            "rss_opened_mib": round(touched / 1024, 1),
            "rss_per_open_project_kib": round((touched - before) / args.count, 1),
        })
        results.update({
            "projects": args.count,
            "database": "file" if args.file else "memory",
            "create_p50_ms": round(statistics.median(created) * 1000, 2),
            "create_p99_ms": round(percentile(created, 0.99) * 1000, 2),
            "rss_before_mib": round(before / 1024, 1),
            "rss_after_mib": round(after / 1024, 1),
            "rss_per_project_kib": round((after - before) / args.count, 1),
        })

        # 2. Fairness between a busy and a quiet project.
        keys = {}
        for ref in ("busy", "quiet"):
            made = control.post("/projects", json={"ref": ref}).json()
            keys[ref] = made
        password = "bench-password-1"
        clients = {}
        for ref, made in keys.items():
            client = httpx.Client(headers={"apikey": made["anon_key"]}, timeout=30)
            signed = client.post(f"{made['auth_url']}/signup", json={"email": f"{ref}@example.com", "password": password})
            if signed.status_code != 200:
                raise RuntimeError(f"sign-up in {ref} answered {signed.status_code}")
            clients[ref] = client

        quiet = keys["quiet"]["auth_url"]
        alone = []
        sign_in_loop(clients["quiet"], quiet, "quiet@example.com", password,
                     time.monotonic() + args.seconds, args.probes, alone)

        stop = time.monotonic() + args.seconds
        halt = threading.Event()
        busy_latencies = []
        workers = []
        for _ in range(args.threads):
            client = httpx.Client(headers={"apikey": keys["busy"]["anon_key"]}, timeout=30)
            thread = threading.Thread(target=sign_in_loop, daemon=True, args=(
                client, keys["busy"]["auth_url"], "busy@example.com", password, stop, 1_000_000, busy_latencies, halt))
            workers.append(thread)
        load_started = time.monotonic()
        for thread in workers:
            thread.start()
        time.sleep(1)  # the busy project's queue fills
        loaded = []
        sign_in_loop(clients["quiet"], quiet, "quiet@example.com", password, stop, args.probes, loaded)
        probe_end = time.monotonic()
        busy_during = len(busy_latencies)
        # The load ends with the probes (or the phase's time limit).
        halt.set()
        for thread in workers:
            thread.join(timeout=args.seconds + 30)
        results.update({
            "quiet_alone_p50_ms": round(statistics.median(alone) * 1000, 1),
            "quiet_alone_p99_ms": round(percentile(alone, 0.99) * 1000, 1),
            "quiet_loaded_p50_ms": round(statistics.median(loaded) * 1000, 1),
            "quiet_loaded_p99_ms": round(percentile(loaded, 0.99) * 1000, 1),
            "busy_p50_ms": round(statistics.median(busy_latencies) * 1000, 1) if busy_latencies else None,
            "busy_sign_ins_per_s": round(busy_during / max(probe_end - load_started, 1e-9), 1),
            "busy_threads": args.threads,
        })
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        scratch.cleanup()
    if args.json:
        print(json.dumps(results))
    else:
        for key, value in results.items():
            print(f"{key}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

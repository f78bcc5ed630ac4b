#!/usr/bin/env python3
"""Throughput of one and of two emulators against one Postgres database.

    python3 bench/pg_replicas.py BIN [--ops signup,signin,refresh,user] [-c 8] [-d 5] [--workers 2]

Starts a throw-away cluster (Tests/python/postgres_cluster.py: Unix socket, fsync off), one
database bootstrapped by emulator A, then emulator B on the same database (several GoTrue
replicas, docs/postgres.md). For each operation, bench/authload.py drives C keep-alive connections
for D seconds: first all through A, then half through A and half through B at the same time
(each on its own users and sessions); the ops/s of each run are reported, with the CPU the
emulators and the Postgres backends spent per operation.

On a machine with few cores the emulators, Postgres and the load generator share them: the
numbers say how the work divides, not what a bigger machine would give. Linux only (/proc).
Every process is stopped by its PID; loopback only; every run is bounded in time and count.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Tests", "python"))
sys.path.insert(0, os.path.join(HERE, "cost"))

from backends import cpu_seconds, stop  # noqa: E402
from postgres_cluster import Cluster  # noqa: E402

AUTHLOAD = os.path.join(HERE, "authload.py")


def start(binary, url, workers, bootstrap):
    # Rate limits are off by default (docs/rate-limits.md), as under `supabase start`.
    env = dict(os.environ, AUTH_EMULATOR_PASSWORD_ITERATIONS="1000", GOTRUE_MAILER_AUTOCONFIRM="true")
    process = subprocess.Popen(
        [binary, "serve", "--workers", str(workers), "--host", "127.0.0.1", "--port", "0", "--db", url, "--quiet",
         *(["--db-bootstrap"] if bootstrap else [])],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        line = process.stdout.readline()
        if line.startswith("listening on"):
            return process, line.split()[-1].strip()
        if process.poll() is not None:
            break
    process.kill()
    raise SystemExit("an emulator did not start")


def load(url, op, connections, duration, records_in=None, records_out=None, tag="bench"):
    command = [sys.executable, AUTHLOAD, url, "--op", op, "-c", str(connections), "-t", str(min(2, connections)),
               "-d", str(duration), "-n", "200000", "--json", "--tag", tag]
    if records_in:
        command += ["--in", records_in]
    if records_out:
        command += ["--out", records_out, "--out-limit", "20000"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)


def finish(process):
    output, _ = process.communicate(timeout=900)
    return json.loads(output)


def split(path, parts):
    with open(path) as handle:
        lines = handle.readlines()
    names = []
    for index in range(parts):
        name = f"{path}.{index}"
        with open(name, "w") as out:
            out.writelines(lines[index::parts])
        names.append(name)
    return names


def backend_cpu(cluster, database):
    rows = cluster.psql("SELECT pid FROM pg_stat_activity WHERE application_name = 'auth-emulator' "
                        f"AND datname = '{database}'")
    total = 0.0
    for (pid,) in rows:
        try:
            total += cpu_seconds(int(pid))
        except FileNotFoundError:
            pass
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--ops", default="signup,signin,refresh,user")
    parser.add_argument("-c", "--connections", type=int, default=8)
    parser.add_argument("-d", "--duration", type=float, default=5.0)
    parser.add_argument("--workers", type=int, default=2, help="worker threads per emulator")
    args = parser.parse_args()
    cluster = Cluster()
    work = tempfile.mkdtemp(prefix="auth-pg-replicas-")
    processes = []
    try:
        database = cluster.make_database()
        url = cluster.url(database)
        a, url_a = start(args.binary, url, args.workers, True)
        processes.append(a)
        b, url_b = start(args.binary, url, args.workers, False)
        processes.append(b)
        # Users with sessions for the operations that need them, made through A.
        users = os.path.join(work, "users.jsonl")
        made = finish(load(url_a, "signup", args.connections, 20, records_out=users, tag="seed"))
        if made["ops"] < 2 * args.connections:
            raise SystemExit(f"too few users made: {made}")
        print("op layout ops_per_s emulator_cpu_us_per_op postgres_cpu_us_per_op p99_ms failed", flush=True)
        for op in args.ops.split(","):
            for layout in ("one", "two"):
                targets = [url_a] if layout == "one" else [url_a, url_b]
                pids = [a.pid] if layout == "one" else [a.pid, b.pid]
                inputs = [None] * len(targets)
                if op in ("signin", "refresh", "user"):
                    # Fresh sessions for every run: a refresh run rotates the ones it uses.
                    fresh = os.path.join(work, f"{op}-{layout}.jsonl")
                    finish(load(url_a, "signin", args.connections, 3, records_in=users, records_out=fresh))
                    inputs = split(fresh, len(targets))
                before = sum(cpu_seconds(pid) for pid in pids)
                before_db = backend_cpu(cluster, database)
                share = max(1, args.connections // len(targets))
                runs = [load(target, op, share, args.duration, records_in=records, tag=f"{op}{layout}{index}")
                        for index, (target, records) in enumerate(zip(targets, inputs))]
                results = [finish(run) for run in runs]
                emulators = sum(cpu_seconds(pid) for pid in pids) - before
                backends = backend_cpu(cluster, database) - before_db
                ops = sum(r["ops"] for r in results)
                rate = sum(r["ops_per_s"] for r in results)
                p99 = max(r["p99_ms"] for r in results)
                failed = sum(r["failed"] for r in results)
                print(f"{op} {layout} {rate:.0f} {emulators / max(ops, 1) * 1e6:.0f} {backends / max(ops, 1) * 1e6:.0f} "
                      f"{p99:.1f} {failed}", flush=True)
    finally:
        for process in processes:
            stop(process)
        cluster.stop()
        subprocess.run(["rm", "-rf", work], check=False)


if __name__ == "__main__":
    sys.exit(main())

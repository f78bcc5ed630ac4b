#!/usr/bin/env python3
"""Server CPU per operation on each store: the SQLite file and Postgres mode, from one run.

    python3 bench/cost/backends.py BIN [--ops user,refresh,signin,signup] [-n 2000] [--users 8]

For each store and operation: start BIN (one worker thread, as bench/cost/instructions.py) on a
fresh database -- a file, or a fresh database of a throw-away Postgres cluster
(Tests/python/postgres_cluster.py, Unix socket, fsync off) --, sign up the users the operation
needs, warm the path, then run N operations one after another on one keep-alive connection and
read the CPU time (user + system, /proc/PID/stat) the emulator spent, and in Postgres mode also
the CPU of the Postgres backends serving it (their /proc entries, found through
pg_stat_activity by the emulator's application_name). Reports microseconds of CPU per operation.

CPU time moves with what else the machine runs; compare stores within one run. Linux only (it
reads /proc). Stops every server by its PID; loopback only; every wait is bounded.
"""
import argparse
import http.client
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Tests", "python"))
sys.path.insert(0, HERE)

from instructions import run_step, sign_up_users, warmed_plan  # noqa: E402
from postgres_cluster import Cluster  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """User + system CPU of a process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def start(binary, db, workers, extra):
    env = dict(os.environ, AUTH_EMULATOR_PASSWORD_ITERATIONS="1000")
    process = subprocess.Popen(
        [binary, "serve", "--workers", str(workers), "--host", "127.0.0.1", "--port", "0", "--db", db, "--quiet", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        line = process.stdout.readline()
        if line.startswith("listening on"):
            return process, int(line.strip().rsplit(":", 1)[1])
        if process.poll() is not None:
            break
    process.kill()
    raise SystemExit("the server did not start")


def backend_pids(cluster, database):
    rows = cluster.psql("SELECT pid FROM pg_stat_activity WHERE application_name = 'auth-emulator' "
                        f"AND datname = '{database}'")
    return [int(row[0]) for row in rows]


def measure(binary, store, op, n, users, workers, cluster, work):
    database = None
    if store == "postgres":
        database = cluster.make_database()
        db, extra = cluster.url(database), ["--db-bootstrap"]
    else:
        db, extra = os.path.join(work, f"{op}.db"), []
    process, port = start(binary, db, workers, extra)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        sessions = sign_up_users(conn, op, n, users)
        plan = warmed_plan(conn, op, n, sessions)
        pids = backend_pids(cluster, database) if database else []
        before = cpu_seconds(process.pid)
        before_db = sum(cpu_seconds(pid) for pid in pids)
        started = time.monotonic()
        for step in plan:
            run_step(conn, op, step, sessions)
        elapsed = time.monotonic() - started
        emulator = cpu_seconds(process.pid) - before
        backends = sum(cpu_seconds(pid) for pid in pids) - before_db
        conn.close()
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)
    return emulator / n * 1e6, backends / n * 1e6, elapsed / n * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--ops", default="user,refresh,signin,signup")
    parser.add_argument("--stores", default="sqlite,postgres")
    parser.add_argument("-n", type=int, default=2000)
    parser.add_argument("--users", type=int, default=8)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    cluster = Cluster() if "postgres" in args.stores else None
    work = tempfile.mkdtemp(prefix="auth-cost-backends-")
    try:
        print("store op emulator_cpu_us_per_op postgres_cpu_us_per_op wall_us_per_op", flush=True)
        for op in args.ops.split(","):
            for store in args.stores.split(","):
                emulator, backends, wall = measure(args.binary, store, op, args.n, args.users, args.workers, cluster, work)
                print(f"{store} {op} {emulator:.0f} {backends:.0f} {wall:.0f}", flush=True)
    finally:
        if cluster:
            cluster.stop()
        subprocess.run(["rm", "-rf", work], check=False)


if __name__ == "__main__":
    sys.exit(main())

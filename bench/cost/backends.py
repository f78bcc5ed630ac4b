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

With --floor, each Postgres run is also traced (AUTH_EMULATOR_SQL_TRACE) and the statements of
its measured operations replayed alone through libpq by bench/cost/pgfloor.c, on a copy of the
database as it was before them (pg_dump, then a fresh database from that copy per repeat): the
Postgres floor of the operation, as bench/cost.sh's SQLite floor. It reports the replay's own
(libpq) CPU, the backends' CPU and the round trips per operation. Needs libpq's headers
(Debian: libpq-dev) to build the replayer.

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


def start(binary, db, workers, extra, trace=None):
    env = dict(os.environ, AUTH_EMULATOR_PASSWORD_ITERATIONS="1000")
    if trace:
        env["AUTH_EMULATOR_SQL_TRACE"] = trace
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


def stop(process):
    """SIGTERM by PID, then SIGKILL after 30 s."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)


def backend_pids(cluster, database):
    rows = cluster.psql("SELECT pid FROM pg_stat_activity WHERE application_name = 'auth-emulator' "
                        f"AND datname = '{database}'")
    return [int(row[0]) for row in rows]


def measure(binary, store, op, n, users, workers, cluster, work, floor=None):
    """CPU per operation: the emulator's, its Postgres backends', wall; with `floor` (the
    replayer's path, Postgres only) also the Postgres floor's key=value results."""
    database = None
    trace = None
    if store == "postgres":
        database = cluster.make_database()
        db, extra = cluster.url(database), ["--db-bootstrap"]
        if floor:
            trace = os.path.join(work, f"{op}.trace")
    else:
        db, extra = os.path.join(work, f"{op}.db"), []
    process, port = start(binary, db, workers, extra, trace)
    floor_result = None
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        sessions = sign_up_users(conn, op, n, users)
        plan = warmed_plan(conn, op, n, sessions)
        if trace:
            # The state before the measured operations, for every repeat of the replay.
            snapshot = f"{database}_before"
            dump = os.path.join(work, f"{op}.dump")
            subprocess.run([os.path.join(cluster.bin, "pg_dump"), "-h", cluster.directory, "-U", "postgres", "-Fc",
                            "-f", dump, database], check=True, timeout=300)
            cluster.psql(f"CREATE DATABASE {snapshot}")
            subprocess.run([os.path.join(cluster.bin, "pg_restore"), "-h", cluster.directory, "-U", "postgres",
                            "-d", snapshot, dump], check=True, timeout=300)
            trace_start = os.path.getsize(trace)
        pids = backend_pids(cluster, database) if database else []
        before = cpu_seconds(process.pid)
        before_db = sum(cpu_seconds(pid) for pid in pids)
        started = time.monotonic()
        for step in plan:
            run_step(conn, op, step, sessions)
        elapsed = time.monotonic() - started
        emulator = cpu_seconds(process.pid) - before
        backends = sum(cpu_seconds(pid) for pid in pids) - before_db
        if trace:
            trace_end = os.path.getsize(trace)
        conn.close()
    finally:
        stop(process)
    if trace:
        output = subprocess.run([floor, f"host={cluster.directory} user=postgres", snapshot, trace, str(trace_start),
                                 str(trace_end), str(n), "5"], check=True, capture_output=True, text=True, timeout=900).stdout
        floor_result = dict(line.split("=", 1) for line in output.splitlines() if "=" in line)
        os.remove(trace)
    return emulator / n * 1e6, backends / n * 1e6, elapsed / n * 1e6, floor_result


def build_floor(work):
    """Compiles bench/cost/pgfloor.c against libpq."""
    include = subprocess.run(["pg_config", "--includedir"], capture_output=True, text=True).stdout.strip() \
        if subprocess.run(["which", "pg_config"], capture_output=True).returncode == 0 else "/usr/include/postgresql"
    binary = os.path.join(work, "pgfloor")
    subprocess.run(["cc", "-O2", f"-I{include}", "-o", binary, os.path.join(HERE, "pgfloor.c"), "-lpq"],
                   check=True, timeout=300)
    return binary


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--ops", default="user,refresh,signin,signup")
    parser.add_argument("--stores", default="sqlite,postgres")
    parser.add_argument("-n", type=int, default=2000)
    parser.add_argument("--users", type=int, default=8)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--floor", action="store_true", help="also the Postgres floor (bench/cost/pgfloor.c)")
    args = parser.parse_args()
    cluster = Cluster() if "postgres" in args.stores else None
    work = tempfile.mkdtemp(prefix="auth-cost-backends-")
    try:
        floor = build_floor(work) if args.floor and cluster else None
        header = "store op emulator_cpu_us_per_op postgres_cpu_us_per_op wall_us_per_op"
        if floor:
            header += " floor_us_per_op floor_libpq_us floor_backend_us statements_per_op round_trips_per_op floor_errors"
        print(header, flush=True)
        for op in args.ops.split(","):
            for store in args.stores.split(","):
                emulator, backends, wall, found = measure(args.binary, store, op, args.n, args.users, args.workers, cluster, work,
                                                          floor if store == "postgres" else None)
                line = f"{store} {op} {emulator:.0f} {backends:.0f} {wall:.0f}"
                if found:
                    line += (f" {found['floor_us_per_op_median']} {found['libpq_us_per_op_median']} {found['backend_us_per_op_median']}"
                             f" {found['statements_per_op']} {found['round_trips_per_op']} {found['errors']}")
                    if found.get("first_error"):
                        line += f"  (first replay error: {found['first_error']})"
                print(line, flush=True)
    finally:
        if cluster:
            cluster.stop()
        subprocess.run(["rm", "-rf", work], check=False)


if __name__ == "__main__":
    sys.exit(main())

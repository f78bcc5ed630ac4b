#!/usr/bin/env python3
"""Instructions per operation of the auth-emulator server, counted by valgrind's callgrind.

CPU time per operation (bench/cost.sh) moves with whatever else the machine runs; instruction
counts do not: the same binary, inputs and environment give the same count, so a change to the
code can be judged on a busy machine. Counts cover user space only (the kernel's share of a
request -- socket calls, wake-ups -- is not in them).

    python3 bench/cost/instructions.py BIN [--ops health,user,refresh,signin,signup,admin_list]
                                           [-n 2000] [--users 8] [--workers 1] [--annotate DIR]
                                           [--store sqlite|postgres]

For each operation: start BIN under callgrind with a fresh file database, prepare (sign up the
users the operation needs), zero the counters, run N operations one after another on one
keep-alive connection, dump, and report instructions per operation. The server runs one worker
thread (--workers to change it): with several, which worker answers a request, and so whether
its per-thread caches already hold that user's token and texts, depends on timing, and with
256 users the same binary counted 333k or 392k instructions per GET /user. With --annotate the dump
files are kept in DIR (read them with callgrind_annotate). Stops the server by its PID; loopback
only; every wait is bounded. With --store postgres each operation gets a fresh database of a
throw-away Postgres cluster (Tests/python/postgres_cluster.py) instead of the file: the counts are
the emulator's own (libpq's client side included), not the Postgres server's.
"""
import argparse
import glob
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PASSWORD = "cost-password-1"


def request(conn, method, path, body=None, headers=None):
    payload = json.dumps(body).encode() if body is not None else None
    all_headers = {"Content-Type": "application/json"} if payload is not None else {}
    all_headers.update(headers or {})
    conn.request(method, path, body=payload, headers=all_headers)
    response = conn.getresponse()
    data = response.read()
    return response.status, data


def start(binary, db, out_dir, name, workers, extra=()):
    out_file = os.path.join(out_dir, f"callgrind.{name}.out")
    env = dict(os.environ, AUTH_EMULATOR_PASSWORD_ITERATIONS="1000")
    process = subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", "--collect-atstart=yes",
         binary, "serve", "--workers", str(workers), "--host", "127.0.0.1", "--port", "0", "--db", db, "--quiet", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    deadline = time.time() + 120
    line = ""
    while time.time() < deadline:
        line = process.stdout.readline()
        if line.startswith("listening on"):
            break
        if process.poll() is not None:
            raise SystemExit(f"{name}: the server exited before listening")
    port = int(line.strip().rsplit(":", 1)[1])
    return process, port, out_file


def control(pid, flag):
    subprocess.run(["callgrind_control", flag, str(pid)], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=120, check=True)


def total_instructions(out_file):
    total = 0
    for path in glob.glob(out_file + "*"):
        with open(path) as handle:
            for line in handle:
                if line.startswith("totals:") or line.startswith("summary:"):
                    total += int(line.split()[1])
                    break
    return total


def run_op(binary, op, n, work, keep, user_count=8, workers=1, cluster=None):
    db, extra = os.path.join(work, f"{op}.db"), ()
    if cluster is not None:
        db, extra = cluster.url(cluster.make_database()), ("--db-bootstrap",)
    process, port, out_file = start(binary, db, work, op, workers, extra)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        sessions = sign_up_users(conn, op, n, user_count)
        plan = warmed_plan(conn, op, n, sessions)
        time.sleep(0.5)
        for f in glob.glob(out_file + "*"):
            os.unlink(f)
        control(process.pid, "-z")
        for step in plan:
            run_step(conn, op, step, sessions)
        control(process.pid, "-d")
        time.sleep(0.5)
        instructions = total_instructions(out_file)
        conn.close()
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if keep:
        os.makedirs(keep, exist_ok=True)
        for f in glob.glob(out_file + "*"):
            shutil.copy(f, keep)
    return instructions


def sign_up_users(conn, op, n, user_count):
    """The users `op` needs, signed up: (access token, refresh token) each. A password sign-in
    takes a user per operation; health and sign-up need none."""
    sessions = []
    if op in ("health", "signup"):
        return sessions
    for i in range(max(user_count, n if op == "signin" else user_count)):
        status, data = request(conn, "POST", "/auth/v1/signup", {"email": f"cost{i}@example.com", "password": PASSWORD})
        if status != 200:
            raise SystemExit(f"{op}: sign-up answered {status}: {data[:200]!r}")
        body = json.loads(data)
        sessions.append((body["access_token"], body["refresh_token"]))
    return sessions


def warmed_plan(conn, op, n, sessions):
    """The `n` steps to measure, after running a twentieth as many first, so one-time work
    (statement preparation, caches) is not counted."""
    warm = max(1, n // 20)
    plan = make_plan(op, n + warm, sessions)
    for step in plan[:warm]:
        run_step(conn, op, step, sessions)
    return plan[warm:]


def make_plan(op, count, sessions):
    if op == "signup":
        tag = os.getpid()
        return [f"new{tag}-{i}@example.com" for i in range(count)]
    return list(range(count))


def run_step(conn, op, step, sessions):
    if op == "health":
        status, data = request(conn, "GET", "/health")
    elif op == "user":
        access, _ = sessions[step % len(sessions)]
        status, data = request(conn, "GET", "/auth/v1/user", headers={"Authorization": f"Bearer {access}"})
    elif op == "refresh":
        index = step % len(sessions)
        access, refresh = sessions[index]
        status, data = request(conn, "POST", "/auth/v1/token?grant_type=refresh_token", {"refresh_token": refresh})
        if status == 200:
            body = json.loads(data)
            sessions[index] = (body["access_token"], body["refresh_token"])
    elif op == "signin":
        status, data = request(conn, "POST", "/auth/v1/token?grant_type=password",
                               {"email": f"cost{step % len(sessions)}@example.com", "password": PASSWORD})
    elif op == "signup":
        status, data = request(conn, "POST", "/auth/v1/signup", {"email": step, "password": PASSWORD})
    elif op == "admin_list":
        status, data = request(conn, "GET", "/auth/v1/admin/users?page=1&per_page=50",
                               headers={"Authorization": f"Bearer {service_key()}"})
    else:
        raise SystemExit(f"unknown operation {op}")
    if status != 200:
        raise SystemExit(f"{op}: answered {status}: {data[:200]!r}")


def service_key():
    # The documented default service_role key of `supabase start` (README, "Keys").
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "..", "Tests", "python", "conftest.py")) as handle:
        match = re.search(r'SERVICE_ROLE_KEY = \(([^)]*)\)', handle.read())
    if not match:
        raise SystemExit("cannot find the default service_role key in Tests/python/conftest.py")
    return "".join(re.findall(r'"([^"]*)"', match.group(1)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--ops", default="health,user,refresh,signin,signup,admin_list")
    parser.add_argument("-n", type=int, default=2000)
    parser.add_argument("--annotate", default=None)
    parser.add_argument("--users", type=int, default=8,
                        help="users signed up first and taken in turn (bench/cost.sh uses 256)")
    parser.add_argument("--workers", type=int, default=1,
                        help="the server's worker threads; more than one makes counts depend on timing")
    parser.add_argument("--store", choices=["sqlite", "postgres"], default="sqlite")
    args = parser.parse_args()
    cluster = None
    if args.store == "postgres":
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "python"))
        from postgres_cluster import Cluster

        cluster = Cluster()
    if not shutil.which("valgrind") or not shutil.which("callgrind_control"):
        raise SystemExit("valgrind is not installed (Debian/Ubuntu: apt-get install -y valgrind)")
    work = tempfile.mkdtemp(prefix="auth-cost-cg-")
    try:
        # valgrind 3.19 cannot read the DWARF 5 the Swift toolchain emits and gives up; a copy
        # without debug sections keeps the symbol table, which is all the counts need.
        binary = os.path.join(work, "auth-emulator")
        subprocess.run(["objcopy", "--strip-debug", args.binary, binary], check=True, timeout=120)
        for op in args.ops.split(","):
            instructions = run_op(binary, op, args.n, work, args.annotate, args.users, args.workers, cluster)
            print(f"{op}.instructions_per_op={instructions / args.n:.0f}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Closed-loop load driver for auth operations, used by bench/auth.sh.

One operation per run, against either API shape:
  gotrue   POST /signup, POST /token?grant_type=password, POST /token?grant_type=refresh_token,
           GET /user (Authorization: Bearer <access token>);
  cognito  the same operations as Amazon Cognito user-pool actions over its JSON protocol
           (POST / with X-Amz-Target: AWSCognitoIdentityProviderService.<Action>): SignUp,
           InitiateAuth USER_PASSWORD_AUTH, InitiateAuth REFRESH_TOKEN_AUTH, GetUser; plus the
           untimed AdminConfirmSignUp ("confirm") that lets signed-up users sign in.

C keep-alive connections are spread over W worker processes (so the GIL does not serialise
them); each connection has exactly one request in flight and sends the next as soon as the
previous response is complete. A run is bounded by time (--duration) AND by count (--requests),
and each request by --timeout, so it always ends on its own. Only loopback targets are accepted.

State between operations travels in JSON-lines files of records {"email", "password",
"access", "refresh"}: `signup` writes the users it created (with their sessions where the API
returns one), `signin` cycles through the users of --in and writes each one's newest session,
`refresh` gives every connection its own sessions and chains the rotated refresh token of each
response into that session's next request, `user` cycles through access tokens.

Output (stdout): one `key=value` per line, or one JSON object with --json:
  op, target, connections, workers, ops (successful), failed, timeouts, duration_s, ops_per_s,
  p50_ms, p90_ms, p99_ms, max_ms, client_cpu_pct, first_failure
Latencies are per request, send to complete response, over every response (failures too).

Also: `authload.py seed ...` inserts many users directly into the emulator's SQLite file, and
`authload.py cognito-setup ...` creates a Cognito user pool and app client through boto3.
"""

import argparse
import array
import base64
import hashlib
import ipaddress
import json
import multiprocessing as mp
import os
import selectors
import socket
import sys
import time
import uuid
from urllib.parse import urlsplit

from httpwire import ParseError, percentile, take_response

OPS = ("signup", "signin", "refresh", "user", "confirm")
COGNITO_TARGET = "AWSCognitoIdentityProviderService."
# Admin actions are IAM-signed on AWS; the emulator does not check signatures but reads the
# region and account from this header's credential scope, as for a real signed call.
COGNITO_ADMIN_AUTH = ("AWS4-HMAC-SHA256 Credential=testing/20250101/us-east-1/cognito-idp/aws4_request, "
                      "SignedHeaders=host;x-amz-target, Signature=0")


def loopback(url):
    parts = urlsplit(url)
    if parts.scheme != "http":
        raise SystemExit(f"authload: only http:// URLs are supported, got {url!r}")
    host = parts.hostname or "127.0.0.1"
    try:
        addr = ipaddress.ip_address(socket.gethostbyname(host))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"authload: cannot resolve {host!r}: {exc}")
    if not addr.is_loopback:
        raise SystemExit(f"authload: refusing non-loopback target {addr}")
    return str(addr), parts.port or 80


# ---------------------------------------------------------------------------------------------
# Requests and responses per API shape
# ---------------------------------------------------------------------------------------------
class Api:
    """Builds the request bytes of one operation for a record and reads its response back
    into the record. `parse` returns an error string, or None on success."""

    def __init__(self, target, op, hostport, client_id, pool_id):
        self.target, self.op, self.host = target, op, hostport
        self.client_id, self.pool_id = client_id, pool_id

    def _post(self, path, payload, extra=""):
        body = json.dumps(payload, separators=(",", ":")).encode()
        head = (f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\n{extra}"
                f"Content-Length: {len(body)}\r\n\r\n")
        return head.encode("ascii") + body

    def _cognito(self, action, payload, admin=False):
        extra = (f"Content-Type: application/x-amz-json-1.1\r\nX-Amz-Target: {COGNITO_TARGET}{action}\r\n"
                 + (f"Authorization: {COGNITO_ADMIN_AUTH}\r\n" if admin else ""))
        return self._post("/", payload, extra)

    def request(self, rec):
        op = self.op
        if self.target == "gotrue":
            json_type = "Content-Type: application/json\r\n"
            if op == "signup":
                return self._post("/signup", {"email": rec["email"], "password": rec["password"]}, json_type)
            if op == "signin":
                return self._post("/token?grant_type=password",
                                  {"email": rec["email"], "password": rec["password"]}, json_type)
            if op == "refresh":
                return self._post("/token?grant_type=refresh_token", {"refresh_token": rec["refresh"]}, json_type)
            if op == "user":
                return (f"GET /user HTTP/1.1\r\nHost: {self.host}\r\n"
                        f"Authorization: Bearer {rec['access']}\r\n\r\n").encode("ascii")
            raise SystemExit(f"authload: {op} is not a gotrue operation")
        if op == "signup":
            return self._cognito("SignUp", {
                "ClientId": self.client_id, "Username": rec["email"], "Password": rec["password"],
                "UserAttributes": [{"Name": "email", "Value": rec["email"]}]})
        if op == "confirm":
            return self._cognito("AdminConfirmSignUp", {"UserPoolId": self.pool_id, "Username": rec["email"]},
                                 admin=True)
        if op == "signin":
            return self._cognito("InitiateAuth", {
                "AuthFlow": "USER_PASSWORD_AUTH", "ClientId": self.client_id,
                "AuthParameters": {"USERNAME": rec["email"], "PASSWORD": rec["password"]}})
        if op == "refresh":
            return self._cognito("InitiateAuth", {
                "AuthFlow": "REFRESH_TOKEN_AUTH", "ClientId": self.client_id,
                "AuthParameters": {"REFRESH_TOKEN": rec["refresh"]}})
        if op == "user":
            return self._cognito("GetUser", {"AccessToken": rec["access"]})
        raise SystemExit(f"authload: unknown operation {op}")

    def parse(self, status, body, rec):
        if status != 200:
            return f"HTTP {status}: {bytes(body[:200]).decode('utf-8', 'replace')}"
        if self.op in ("user", "confirm") or (self.op == "signup" and self.target == "cognito"):
            return None  # the body is not needed; a 200 is the success
        try:
            doc = json.loads(body)
        except ValueError:
            return "response body is not JSON"
        if self.target == "gotrue":
            access, refresh = doc.get("access_token"), doc.get("refresh_token")
        else:
            result = doc.get("AuthenticationResult") or {}
            # Cognito does not rotate refresh tokens by default: REFRESH_TOKEN_AUTH returns
            # new access/id tokens only, and the same refresh token stays valid.
            access, refresh = result.get("AccessToken"), result.get("RefreshToken") or rec.get("refresh")
        if not access or not refresh:
            return "no access/refresh token in the response"
        rec["access"], rec["refresh"] = access, refresh
        return None




# ---------------------------------------------------------------------------------------------
# Workers
# ---------------------------------------------------------------------------------------------
class Conn:
    __slots__ = ("cid", "sock", "buf", "sent_at", "busy", "records", "next", "current", "done")

    def __init__(self, cid, records):
        self.cid = cid
        self.sock = None
        self.buf = bytearray()
        self.sent_at = 0
        self.busy = False
        self.records = records   # what this connection works through (a list of dicts)
        self.next = 0
        self.current = None
        self.done = False


def worker(cfg, index, conn_records, quota, ready, go, results):
    addr, port = cfg["addr"], cfg["port"]
    api = Api(cfg["target"], cfg["op"], cfg["hostport"], cfg["client_id"], cfg["pool_id"])
    timeout = cfg["timeout"]
    sel = selectors.DefaultSelector()
    latencies = array.array("d")
    stats = {"ok": 0, "failed": 0, "timeouts": 0}
    first_failure = None
    once = cfg["op"] in ("signup", "confirm")  # each record is used once; signup makes its own

    def connect(c):
        c.sock = socket.create_connection((addr, port), timeout=timeout)
        c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        c.sock.setblocking(False)
        c.buf.clear()
        sel.register(c.sock, selectors.EVENT_READ, c)

    conns = [Conn(k, r) for k, r in enumerate(conn_records)]
    try:
        for c in conns:
            connect(c)
    except OSError as exc:
        ready.put((index, f"connect to {addr}:{port}: {exc}"))
        return
    ready.put((index, None))
    start_at = go.get()
    if not start_at:
        return
    while time.time() < start_at:
        time.sleep(0.0005)
    cpu0 = sum(os.times()[:2])
    t0 = time.perf_counter_ns()
    deadline = t0 + int(cfg["duration"] * 1e9)
    hard_stop = deadline + int(timeout * 1e9)
    timeout_ns = int(timeout * 1e9)
    issued = 0
    last_done = t0

    def pick(c):
        if cfg["op"] == "signup":
            seq = c.next
            c.next += 1
            email = f"{cfg['tag']}-w{index}c{c.cid}-{seq}@example.com"
            return {"email": email, "password": cfg["password"]}
        if once:
            if c.next >= len(c.records):
                return None
            c.next += 1
            return c.records[c.next - 1]
        rec = c.records[c.next % len(c.records)]
        c.next += 1
        return rec

    def send(c):
        nonlocal issued
        c.busy = False
        if c.done or issued >= quota or time.perf_counter_ns() >= deadline:
            return
        rec = pick(c)
        if rec is None:
            c.done = True
            return
        c.current = rec
        try:
            c.sock.sendall(api.request(rec))  # small; fits the empty send buffer of a fresh exchange
        except (BlockingIOError, OSError):
            stats["failed"] += 1
            reconnect(c)
            return
        issued += 1
        c.busy = True
        c.sent_at = time.perf_counter_ns()

    def reconnect(c):
        try:
            sel.unregister(c.sock)
        except (KeyError, ValueError):
            pass
        c.sock.close()
        c.busy = False
        try:
            connect(c)
        except OSError:
            c.done = True

    for c in conns:
        send(c)

    while True:
        now = time.perf_counter_ns()
        if not any(c.busy for c in conns):
            break
        if now >= hard_stop:
            stats["timeouts"] += sum(1 for c in conns if c.busy)
            break
        for key, _ in sel.select(timeout=0.05):
            c = key.data
            try:
                chunk = c.sock.recv(262144)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                if c.busy:
                    stats["failed"] += 1
                    first_failure = first_failure or "connection closed by the server"
                reconnect(c)
                if not c.done:
                    send(c)
                continue
            c.buf += chunk
            if not c.busy:
                continue
            try:
                got = take_response(c.buf)
            except (ParseError, ValueError) as exc:
                stats["failed"] += 1
                first_failure = first_failure or f"bad response: {exc}"
                reconnect(c)
                continue
            if got is None:
                continue
            used, status, close, body = got
            done = time.perf_counter_ns()
            latencies.append((done - c.sent_at) / 1e3)
            last_done = done
            problem = api.parse(status, body, c.current)
            del c.buf[:used]
            if problem is None:
                stats["ok"] += 1
                if cfg["op"] == "signup":
                    c.records.append(c.current)
            else:
                stats["failed"] += 1
                first_failure = first_failure or problem
            if close:
                reconnect(c)
            send(c)
        now = time.perf_counter_ns()
        for c in conns:
            if c.busy and now - c.sent_at > timeout_ns:
                stats["timeouts"] += 1
                reconnect(c)
                send(c)

    cpu = sum(os.times()[:2]) - cpu0
    for c in conns:
        c.sock.close()
    out = []
    if cfg["op"] == "signup":
        out = [r for c in conns for r in c.records]
    elif cfg["op"] == "signin":
        # The users this worker signed in, each with its newest session.
        out = [r for c in conns for r in c.records[:min(c.next, len(c.records))] if r.get("access")]
    elif cfg["op"] in ("refresh", "confirm"):
        out = [r for c in conns for r in c.records]
    results.put({
        "index": index,
        "elapsed_ns": max(last_done, min(time.perf_counter_ns(), deadline)) - t0,
        "latencies": latencies.tobytes(),
        "cpu_s": cpu,
        "first_failure": first_failure,
        "records": out[:cfg["out_limit"]],
        **stats,
    })




def read_records(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_records(path, records):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    os.replace(tmp, path)


def run(args):
    addr, port = loopback(args.url)
    if args.target == "gotrue" and args.op == "confirm":
        raise SystemExit("authload: confirm is a cognito operation")
    if args.target == "cognito" and not args.client_id:
        raise SystemExit("authload: cognito needs --client-id")
    records = read_records(args.input) if args.input else []
    if args.op != "signup" and not records:
        raise SystemExit(f"authload: {args.op} needs records (--in)")
    conns = args.connections
    if args.op == "refresh" and len(records) < conns:
        # Two connections sharing a chain would present revoked tokens: no longer a plain refresh.
        raise SystemExit(f"authload: refresh needs at least {conns} sessions, got {len(records)}")
    if args.op in ("signin", "user") and records:
        records = records * -(-conns // len(records))  # every connection gets at least one
    per_conn = [[] for _ in range(conns)] if args.op == "signup" else [records[i::conns] for i in range(conns)]
    workers = max(1, min(args.workers, conns))
    host = urlsplit(args.url).netloc
    cfg = {
        "addr": addr, "port": port, "hostport": host, "target": args.target, "op": args.op,
        "timeout": args.timeout, "duration": args.duration, "tag": args.tag, "password": args.password,
        "client_id": args.client_id, "pool_id": args.pool_id,
        "out_limit": max(1, args.out_limit // workers + 1),
    }
    ready, results = mp.Queue(), mp.Queue()
    gos = [mp.Queue() for _ in range(workers)]
    procs = []
    for w in range(workers):
        mine = per_conn[w::workers]
        quota = args.requests // workers + (1 if w < args.requests % workers else 0)
        p = mp.Process(target=worker, daemon=True, args=(cfg, w, mine, quota, ready, gos[w], results))
        p.start()
        procs.append(p)
    fatal = [problem for _, problem in (ready.get(timeout=args.timeout + 30) for _ in range(workers)) if problem]
    if fatal:
        for q in gos:
            q.put(0)
        raise SystemExit(f"authload: {fatal[0]}")
    start_at = time.time() + 0.05
    for q in gos:
        q.put(start_at)
    collected = [results.get(timeout=args.duration + args.timeout + 60) for _ in range(workers)]
    for p in procs:
        p.join(timeout=5)

    lat = array.array("d")
    for r in collected:
        lat.frombytes(r["latencies"])
    values = sorted(lat)
    ok = sum(r["ok"] for r in collected)
    elapsed = max(r["elapsed_ns"] for r in collected) / 1e9
    if args.output:
        write_records(args.output, [rec for r in collected for rec in r["records"]][:args.out_limit])
    failure = next((r["first_failure"] for r in collected if r["first_failure"]), "")
    out = {
        "op": args.op,
        "target": args.target,
        "connections": conns,
        "workers": workers,
        "ops": ok,
        "failed": sum(r["failed"] for r in collected),
        "timeouts": sum(r["timeouts"] for r in collected),
        "duration_s": round(elapsed, 3),
        "ops_per_s": round(ok / elapsed, 1) if elapsed > 0 else 0.0,
        "p50_ms": round(percentile(values, 50) / 1e3, 3),
        "p90_ms": round(percentile(values, 90) / 1e3, 3),
        "p99_ms": round(percentile(values, 99) / 1e3, 3),
        "max_ms": round((values[-1] if values else 0.0) / 1e3, 3),
        # Driver CPU as a share of one core: how much of the machine the client itself took.
        "client_cpu_pct": round(100 * sum(r["cpu_s"] for r in collected) / elapsed, 1) if elapsed > 0 else 0.0,
        "first_failure": " ".join(failure.split())[:300],
    }
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k}={v}")
    return 0 if ok > 0 else 1


# ---------------------------------------------------------------------------------------------
# Seeding users straight into the emulator's SQLite file
# ---------------------------------------------------------------------------------------------
def phc_hash(job):
    """A PHC string `$pbkdf2-sha256$i=<n>,l=32$<salt>$<hash>` (standard base64, no padding),
    the format the emulator stores and verifies."""
    password, iterations = job
    salt = os.urandom(16)
    dk = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations, 32)
    b64 = lambda b: base64.b64encode(b).decode().rstrip("=")
    return f"$pbkdf2-sha256$i={iterations},l=32${b64(salt)}${b64(dk)}"


def seed(args):
    """Copies a template user that the server itself created (found by --template-email), with
    its identities, N times with fresh ids, emails and password hashes. Copying the server's own
    row keeps every column in the representation the server writes, whatever that is."""
    import sqlite3

    started = time.perf_counter()
    db = sqlite3.connect(args.db, timeout=30)
    db.row_factory = sqlite3.Row

    def columns(table):
        # table_xinfo `hidden`: 2 and 3 are generated columns, which cannot be inserted.
        return [r["name"] for r in db.execute(f"PRAGMA table_xinfo({table})") if r["hidden"] == 0]

    template = db.execute("SELECT * FROM users WHERE email = ?", (args.template_email,)).fetchone()
    if template is None:
        raise SystemExit(f"authload seed: no user {args.template_email!r} in {args.db}")
    user_cols = columns("users")
    tid, temail = template["id"], template["email"]
    identity_cols = columns("identities")
    identities = db.execute("SELECT * FROM identities WHERE user_id = ?", (tid,)).fetchall()

    def swap(value, new_id, new_email):
        if isinstance(value, str):
            return value.replace(tid, new_id).replace(temail, new_email)
        return value

    with mp.Pool(args.processes) as pool:
        hashes = pool.map(phc_hash, [(args.password, args.iterations)] * args.count, chunksize=500)
    hashed_at = time.perf_counter()

    users, idents, sample = [], [], []
    for n in range(args.count):
        new_id = str(uuid.uuid4())
        email = f"{args.tag}-{n}@example.com"
        row = {c: swap(template[c], new_id, email) for c in user_cols}
        row["id"], row["email"], row["encrypted_password"] = new_id, email, hashes[n]
        users.append(tuple(row[c] for c in user_cols))
        for ident in identities:
            irow = {c: swap(ident[c], new_id, email) for c in identity_cols}
            if ident["id"] != tid:
                irow["id"] = str(uuid.uuid4())
            idents.append(tuple(irow[c] for c in identity_cols))
        if n < args.sample:
            sample.append({"email": email, "password": args.password})
    with db:
        db.executemany(f"INSERT INTO users ({','.join(user_cols)}) VALUES ({','.join('?' * len(user_cols))})", users)
        if idents:
            db.executemany(f"INSERT INTO identities ({','.join(identity_cols)}) "
                           f"VALUES ({','.join('?' * len(identity_cols))})", idents)
    total = db.execute("SELECT count(*) FROM users").fetchone()[0]
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    # Every n-th seeded user, so sign-ins are spread over the whole table, not its first rows.
    step = max(1, args.count // max(1, args.sample))
    write_records(args.output, [{"email": f"{args.tag}-{n}@example.com", "password": args.password}
                                for n in range(0, args.count, step)][:args.sample])
    print(f"seeded={args.count}")
    print(f"users_total={total}")
    print(f"identities_per_user={len(identities)}")
    print(f"hash_s={hashed_at - started:.2f}")
    print(f"seed_s={time.perf_counter() - started:.2f}")
    return 0


# ---------------------------------------------------------------------------------------------
# Cognito pool setup through boto3 (run with the interpreter that has boto3)
# ---------------------------------------------------------------------------------------------
def cognito_setup(args):
    loopback(args.url)
    import boto3

    client = boto3.client("cognito-idp", endpoint_url=args.url, region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
    pool = client.create_user_pool(PoolName="bench-auth", Policies={"PasswordPolicy": {
        "MinimumLength": 6, "RequireUppercase": False, "RequireLowercase": False,
        "RequireNumbers": False, "RequireSymbols": False}})["UserPool"]
    app = client.create_user_pool_client(
        UserPoolId=pool["Id"], ClientName="bench-auth",
        ExplicitAuthFlows=["ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"])["UserPoolClient"]
    # One full round through boto3 proves the pool works before raw-protocol load starts.
    email = "setup-check@example.com"
    client.sign_up(ClientId=app["ClientId"], Username=email, Password=args.password,
                   UserAttributes=[{"Name": "email", "Value": email}])
    client.admin_confirm_sign_up(UserPoolId=pool["Id"], Username=email)
    auth = client.initiate_auth(ClientId=app["ClientId"], AuthFlow="USER_PASSWORD_AUTH",
                                AuthParameters={"USERNAME": email, "PASSWORD": args.password})
    tokens = auth["AuthenticationResult"]
    client.initiate_auth(ClientId=app["ClientId"], AuthFlow="REFRESH_TOKEN_AUTH",
                         AuthParameters={"REFRESH_TOKEN": tokens["RefreshToken"]})
    client.get_user(AccessToken=tokens["AccessToken"])
    print(f"pool_id={pool['Id']}")
    print(f"client_id={app['ClientId']}")
    return 0


def main():
    argv = sys.argv[1:]
    if argv and argv[0] == "seed":
        ap = argparse.ArgumentParser(prog="authload.py seed", description=seed.__doc__)
        ap.add_argument("--db", required=True)
        ap.add_argument("--template-email", required=True)
        ap.add_argument("-n", "--count", type=int, default=100_000)
        ap.add_argument("--password", required=True)
        ap.add_argument("--iterations", type=int, default=1000)
        ap.add_argument("--tag", default="seed")
        ap.add_argument("--processes", type=int, default=os.cpu_count() or 2)
        ap.add_argument("--sample", type=int, default=2000, help="users written to --out for sign-in")
        ap.add_argument("--out", dest="output", required=True)
        return seed(ap.parse_args(argv[1:]))
    if argv and argv[0] == "cognito-setup":
        ap = argparse.ArgumentParser(prog="authload.py cognito-setup")
        ap.add_argument("url")
        ap.add_argument("--password", required=True)
        return cognito_setup(ap.parse_args(argv[1:]))

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url", help="http://127.0.0.1:PORT")
    ap.add_argument("--target", choices=("gotrue", "cognito"), default="gotrue")
    ap.add_argument("--op", choices=OPS, required=True)
    ap.add_argument("-c", "--connections", type=int, default=1)
    ap.add_argument("-t", "--workers", type=int, default=2, help="worker processes")
    ap.add_argument("-d", "--duration", type=float, default=5.0, help="seconds")
    ap.add_argument("-n", "--requests", type=int, default=100_000, help="upper bound on operations")
    ap.add_argument("--timeout", type=float, default=10.0, help="per-request timeout, seconds")
    ap.add_argument("--in", dest="input", help="JSON-lines records to work through")
    ap.add_argument("--out", dest="output", help="JSON-lines records produced")
    ap.add_argument("--out-limit", type=int, default=5000, help="at most this many records written")
    ap.add_argument("--tag", default=f"bench{os.getpid()}", help="prefix of generated emails")
    ap.add_argument("--password", default="bench-Passw0rd!")
    ap.add_argument("--client-id", default="")
    ap.add_argument("--pool-id", default="")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.connections < 1 or args.workers < 1 or args.duration <= 0 or args.requests < 1:
        raise SystemExit("authload: connections, workers, duration and requests must be positive")
    if args.duration > 600:
        raise SystemExit("authload: duration is capped at 600 s")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())

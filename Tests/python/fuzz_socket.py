#!/usr/bin/env python3
"""Black-box mutation fuzzer for the auth-emulator's HTTP front end, over a loopback socket.

Starts the built binary (`$AUTH_EMULATOR_BIN serve --host 127.0.0.1 --port 0 --db :memory:
--quiet`), then sends mutated requests, built from realistic seeds that hit real routes:
mutated request lines, header names and values, chunked framing (bad sizes, extensions,
trailers), pipelined requests, binary junk, truncated bodies and over-long lines. After each
batch it checks that `GET /health` still answers 200 and that the server's resident memory
(VmRSS from /proc; skipped where there is no /proc) stays under a bound.

Findings, each reported with the input that caused it:
- any 5xx answer (malformed input must be refused with a 4xx, never reach an unexpected
  failure), except the two that HTTP prescribes for well-formed requests the server does not
  implement: 501 for a transfer-coding other than chunked (RFC 9112 §6.1) and 505 for a major
  version other than 1 (RFC 9110 §15.6.6); those are counted under "protocol_5xx";
- a health check that does not answer 200, or a server that exits;
- resident memory over the bound.

Standard library only; loopback only. The server is stopped by its PID at the end.

    python3 Tests/python/fuzz_socket.py [--seconds 30] [--count 5000] [--seed N] [--rss-limit-mb 512]

Exit status: 0 without findings, 1 with findings, 2 when the server cannot be started.
"""
import argparse
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

DEFAULT_BIN = ".build/debug/auth-emulator"
HOST = "127.0.0.1"
# The well-known local anon key (`supabase start`), which the /auth/v1/ routes check as the
# gateway does; the same value as conftest.ANON_KEY, repeated so this file runs on its own.
ANON_KEY = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9"
    ".CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0"
)


class Case:
    """One request as parts, so mutators can work on its structure before it becomes bytes."""

    def __init__(self, method, target, headers, body=b"", version="HTTP/1.1", chunked=False):
        self.method = method
        self.target = target
        self.version = version
        self.headers = list(headers)
        self.body = body
        self.chunked = chunked
        # Framing mutators may replace the encoded body outright.
        self.raw_body = None

    def copy(self):
        other = Case(self.method, self.target, self.headers, self.body, self.version, self.chunked)
        other.raw_body = self.raw_body
        return other

    def encode(self):
        headers = [(n, v) for n, v in self.headers]
        names = {n.lower() for n, _ in headers}
        body = self.raw_body
        if body is None:
            if self.chunked:
                body = encode_chunked(self.body, [len(self.body)])
                if "transfer-encoding" not in names:
                    headers.append(("Transfer-Encoding", "chunked"))
            else:
                body = self.body
                if self.body and "content-length" not in names:
                    headers.append(("Content-Length", str(len(self.body))))
        head = f"{self.method} {self.target} {self.version}\r\n".encode("latin-1", "replace")
        for name, value in headers:
            head += as_bytes(name) + b": " + as_bytes(value) + b"\r\n"
        return head + b"\r\n" + body


def as_bytes(value):
    return value if isinstance(value, bytes) else value.encode("utf-8", "surrogateescape")


def encode_chunked(body, sizes, extension=b"", trailers=b""):
    out = b""
    offset = 0
    for size in sizes:
        piece = body[offset:offset + size]
        offset += len(piece)
        if piece:
            out += b"%x" % len(piece) + extension + b"\r\n" + piece + b"\r\n"
    if offset < len(body):
        out += b"%x\r\n" % (len(body) - offset) + body[offset:] + b"\r\n"
    return out + b"0\r\n" + trailers + b"\r\n"


def seeds():
    """Realistic requests on real routes, with the headers a Supabase client sends."""
    common = [("Host", f"{HOST}"), ("apikey", ANON_KEY), ("Authorization", f"Bearer {ANON_KEY}")]
    json_type = [("Content-Type", "application/json")]
    signup = json.dumps({"email": "fuzz@example.com", "password": "password123", "data": {"name": "x"}}).encode()
    password = json.dumps({"email": "fuzz@example.com", "password": "password123"}).encode()
    return [
        Case("GET", "/health", [("Host", HOST)]),
        Case("GET", "/auth/v1/health", common),
        Case("GET", "/auth/v1/settings", common),
        Case("GET", "/settings", [("Host", HOST)]),
        Case("POST", "/auth/v1/signup", common + json_type, signup),
        Case("POST", "/auth/v1/signup", common + json_type, signup, chunked=True),
        Case("POST", "/auth/v1/token?grant_type=password", common + json_type, password),
        Case("POST", "/auth/v1/token?grant_type=refresh_token", common + json_type, b'{"refresh_token":"abc"}'),
        Case("POST", "/auth/v1/otp", common + json_type, b'{"email":"fuzz@example.com"}'),
        Case("POST", "/auth/v1/recover", common + json_type, b'{"email":"fuzz@example.com"}'),
        Case("GET", "/auth/v1/user", common),
        Case("PUT", "/auth/v1/user", common + json_type, b'{"data":{"a":1}}'),
        Case("POST", "/auth/v1/logout", common),
        Case("GET", "/auth/v1/.well-known/jwks.json", common),
        Case("POST", "/auth/v1/verify", common + json_type, b'{"type":"signup","token_hash":"x"}'),
        Case("GET", "/auth/v1/authorize?provider=github", common),
        Case("OPTIONS", "/auth/v1/signup", common + [("Origin", "http://localhost:3000"),
                                                       ("Access-Control-Request-Method", "POST")]),
        Case("GET", "/auth/v1/admin/users", common),
    ]


# -- mutators: each takes (rng, case) and returns bytes to send ------------------------------

JUNK_TOKENS = [b"\x00", b"\r", b"\n", b"\r\n", b" ", b"\t", b"\x7f", b"\xff", b"\xc3\x28", b"%", b"%00", b"..", b"/",
               b":", b";", b",", b'"', b"\\", b"{", b"}", b"[", b"]", b"\xe2\x80\xae", b"\x1b[31m"]


def junk(rng, n=None):
    n = n if n is not None else rng.choice([1, 2, 5, 17, 100])
    kind = rng.random()
    if kind < 0.4:
        return bytes(rng.getrandbits(8) for _ in range(n))
    if kind < 0.8:
        return b"".join(rng.choice(JUNK_TOKENS) for _ in range(max(1, n // 3)))
    return bytes(rng.choice(b"AZaz09-_.~") for _ in range(n))


def mutate_request_line(rng, case):
    c = case.copy()
    what = rng.randrange(9)
    if what == 0:
        c.method = rng.choice(["get", "G ET", "", "GET\x00", "PATCH", "TRACE", "CONNECT", "X" * 300, "GËT", "POST\t"])
    elif what == 1:
        c.version = rng.choice(["HTTP/1.0", "HTTP/2.0", "HTTP/1.10", "http/1.1", "HTTP/1", "", "HTTP/1.1 x",
                                "HTTP/0.9", "HTTP/9.9", "HTTP/1.1\x00"])
    elif what == 2:
        c.target = rng.choice(["*", "http://h/auth/v1/health", "h:80", "", "//", "/auth/v1/../../etc/passwd",
                               "/auth/v1/%zz", "/auth/v1/%00", "/a b", "/auth/v1/settings?%", "/auth/v1/token?grant_type=",
                               "/auth/v1/token?grant_type=password&grant_type=pkce", "/" + "a" * 5000,
                               "/auth/v1/verify?" + "a=b&" * 1500, "/\xff\xfe", "/auth/v1/user#frag"])
    elif what == 3:
        c.target += rng.choice(["?", "&", "%", "%2", "?a=%ff", "?x=" + "y" * 3000, ";p", "/..", "\x01"])
    elif what == 4:
        # Over-long request line, under and over the 1 MiB head cap.
        c.target = "/auth/v1/health?" + "q" * rng.choice([8000, 70000, (1 << 20) + 100])
    elif what == 5:
        return as_bytes(f"{c.method}  {c.target} {c.version}\r\n") + b"Host: h\r\n\r\n"
    elif what == 6:
        return as_bytes(f"{c.method} {c.target}\r\nHost: h\r\n\r\n")
    elif what == 7:
        return b"\r\n" * rng.randrange(1, 50) + c.encode()
    else:
        return as_bytes(f"{c.method} {c.target} {c.version}\n") + b"Host: h\n\n"
    return c.encode()


def mutate_headers(rng, case):
    c = case.copy()
    what = rng.randrange(14)
    if what == 0 and c.headers:
        i = rng.randrange(len(c.headers))
        name, value = c.headers[i]
        c.headers[i] = (name + rng.choice([" ", "\t", "\x00", "(", "@", "é", ""]), value)
    elif what == 1 and c.headers:
        i = rng.randrange(len(c.headers))
        name, value = c.headers[i]
        c.headers[i] = (name, value + rng.choice(["\x00", "\x01", "\x7f", "\r", "\xff", " \t ", "é", "\x1b"]))
    elif what == 2:
        c.headers.append(("Host", "other"))
    elif what == 3:
        c.headers = [(n, v) for n, v in c.headers if n.lower() != "host"]
    elif what == 4:
        # The emulator's head cap is Go's 1 MiB (http.DefaultMaxHeaderBytes): below and above it.
        c.headers.append(("X-Big", "v" * rng.choice([4000, 16400, 40000, (1 << 20) + 100])))
    elif what == 5:
        c.headers += [(f"X-H{i}", "v") for i in range(rng.choice([100, 500, 3000]))]
    elif what == 6:
        c.headers.append(("Content-Length", rng.choice(["-1", "1e3", "0x10", "99999999999999999999", "3, 4", " 5 ",
                                                        "", "+3", "2147483648", "1048577", "5,5", "abc"])))
    elif what == 7:
        c.headers.append(("Transfer-Encoding", rng.choice(["chunked", "gzip", "chunked, chunked", "gzip, chunked",
                                                           "chunked, gzip", "identity", "Chunked", " chunked", "chunk"])))
    elif what == 8:
        return c.encode().replace(b"\r\n", b"\r\n ", 1 + rng.randrange(2))  # obs-fold
    elif what == 9:
        c.headers.append(("Expect", rng.choice(["100-continue", "200-ok", ""])))
    elif what == 10:
        c.headers.append(("Connection", rng.choice(["close", "keep-alive", "upgrade", "close, keep-alive", "\x00"])))
    elif what == 11:
        c.headers = [(n, v) for n, v in c.headers if n.lower() not in ("apikey", "authorization")]
        c.headers.append(rng.choice([("apikey", "x"), ("apikey", ""), ("Authorization", "Bearer"),
                                     ("Authorization", "Bearer " + "a.b.c"), ("Authorization", "Basic Zm9vOmJhcg=="),
                                     ("apikey", ANON_KEY[:-5]), ("Authorization", "Bearer " + ANON_KEY + "x")]))
    elif what == 12:
        c.headers.append(rng.choice([("Content-Type", "application/x-www-form-urlencoded"), ("Content-Type", "text/plain"),
                                     ("Content-Type", "application/json; charset=latin1"), ("X-Supabase-Api-Version", "2024-01-01"),
                                     ("X-Supabase-Api-Version", "garbage"), ("Origin", "null"), ("X-Forwarded-For", "::1, x")]))
    else:
        c.headers.append((junk(rng, 8).decode("latin-1"), junk(rng, 8).decode("latin-1")))
    return c.encode()


def mutate_chunked(rng, case):
    c = case.copy()
    body = c.body or b'{"email":"a@b.co"}'
    c.headers = [(n, v) for n, v in c.headers if n.lower() not in ("content-length", "transfer-encoding")]
    c.headers.append(("Transfer-Encoding", "chunked"))
    what = rng.randrange(10)
    if what == 0:
        size = rng.choice([b"zz", b"-1", b"fffffffffffffffffff", b"", b" 5", b"0x5", b"5 ", b"100000", b"8000000000000000"])
        raw = size + b"\r\n" + body + b"\r\n0\r\n\r\n"
    elif what == 1:
        ext = rng.choice([b";a=b", b";" + b"x" * 5000, b"; a=\"q\"", b";\x00", b" ;x", b";;;"])
        raw = encode_chunked(body, [3, 5, 100], extension=ext)
    elif what == 2:
        trailers = rng.choice([b"X-T: 1\r\n", b"Content-Length: 5\r\n", b"bad trailer\r\n", b"X: " + b"t" * 20000 + b"\r\n",
                               b"X-T: 1\n"])
        raw = encode_chunked(body, [len(body)], trailers=trailers)
    elif what == 3:
        raw = b"%x\r\n" % (len(body) + 5) + body + b"\r\n0\r\n\r\n"  # size larger than data
    elif what == 4:
        raw = b"%x\r\n" % len(body) + body + b"XX0\r\n\r\n"  # no CRLF after data
    elif what == 5:
        raw = encode_chunked(body, [1] * len(body))
    elif what == 6:
        raw = encode_chunked(body, [len(body)])[:-rng.randrange(1, 6)]  # cut off
    elif what == 7:
        raw = b"1\r\na\r\n" * 2000 + b"0\r\n\r\n"
    elif what == 8:
        c.headers.append(("Content-Length", str(len(body))))
        raw = encode_chunked(body, [len(body)])
    else:
        raw = b"%x\n" % len(body) + body + b"\n0\n\n"
    c.raw_body = raw
    return c.encode()


def mutate_body(rng, case):
    c = case.copy()
    c.headers = [(n, v) for n, v in c.headers if n.lower() != "content-length"]
    what = rng.randrange(9)
    if what == 0:
        body = bytearray(c.body or b"{}")
        for _ in range(rng.randrange(1, 4)):
            if body:
                body[rng.randrange(len(body))] = rng.getrandbits(8)
        c.body = bytes(body)
    elif what == 1:
        depth = rng.choice([65, 200, 10001, 100000])
        c.body = b'{"data":' + b"[" * depth + b"]" * depth + b"}"
    elif what == 2:
        c.body = rng.choice([b'{"email":1e400}', b'{"email":5,"password":[]}', b'{"email":"\\ud800"}', b"null",
                             b'{"data":{"a":1e999}}', b"[]", b'"x"', b'{"email":"a@b.co","email":"c@d.co"}',
                             b'{"password":"' + b"p" * 100000 + b'"}', b"\xef\xbb\xbf{}", b"{}" * 3, b""])
    elif what == 3:
        # Truncated: declared length larger than what is sent.
        c.body = c.body or b"{}"
        c.raw_body = c.body[: len(c.body) // 2]
        c.headers.append(("Content-Length", str(len(c.body))))
    elif what == 4:
        c.raw_body = c.body + junk(rng)
        c.headers.append(("Content-Length", str(len(c.body))))  # extra bytes start a "next request"
    elif what == 5:
        c.body = junk(rng, rng.choice([10, 1000]))
    elif what == 6:
        c.body = b"x" * ((1 << 20) + 1)  # one byte over the 1 MiB body cap
    elif what == 7:
        c.body = b"grant_type=password&email=a%40b.co&password=x"
        c.headers.append(("Content-Type", "application/x-www-form-urlencoded"))
    else:
        c.body = json.dumps({"email": "\u0000\u202e" + "a" * rng.choice([10, 300]) + "@example.com",
                             "password": "é" * 80, "data": {"k" * 200: [None, True, -0.0]}}).encode()
    return c.encode()


def mutate_bytes(rng, case):
    data = bytearray(case.encode())
    for _ in range(rng.randrange(1, 6)):
        op = rng.randrange(4)
        i = rng.randrange(len(data) + 1)
        if op == 0 and i < len(data):
            data[i] = rng.getrandbits(8)
        elif op == 1:
            data[i:i] = junk(rng)
        elif op == 2 and data:
            del data[i:i + rng.randrange(1, 20)]
        else:
            data[i:i] = data[max(0, i - 10):i]
    return bytes(data)


def pipelined(rng, cases):
    parts = []
    for _ in range(rng.randrange(2, 6)):
        case = rng.choice(cases)
        parts.append(case.encode() if rng.random() < 0.6 else pick_mutator(rng)(rng, case))
    return b"".join(parts)


def binary_junk(rng, _case):
    return junk(rng, rng.choice([1, 16, 512, 20000]))


MUTATORS = [mutate_request_line, mutate_headers, mutate_chunked, mutate_body, mutate_bytes, binary_junk]


def pick_mutator(rng):
    return rng.choice(MUTATORS)


# -- the wire ---------------------------------------------------------------------------------

def parse_responses(data):
    """Status codes of the responses in `data`, walking HTTP/1.1 framing; stops at anything it
    cannot frame (the rest is then counted by status line only)."""
    statuses = []
    pos = 0
    while pos < len(data):
        match = re.match(rb"HTTP/1\.[01] (\d{3})[^\r\n]*\r\n", data[pos:])
        if not match:
            break
        status = int(match.group(1))
        statuses.append(status)
        end = data.find(b"\r\n\r\n", pos)
        if end < 0:
            break
        head = data[pos:end].decode("latin-1").lower()
        pos = end + 4
        if 100 <= status < 200 or status in (204, 304):
            continue
        length = re.search(r"\r\ncontent-length: *(\d+)", head)
        if length:
            pos += int(length.group(1))
        elif re.search(r"\r\ntransfer-encoding: *chunked", head):
            while True:
                line_end = data.find(b"\r\n", pos)
                if line_end < 0:
                    return statuses
                try:
                    size = int(data[pos:line_end].split(b";")[0], 16)
                except ValueError:
                    return statuses
                pos = line_end + 2 + size + 2
                if size == 0:
                    break
        else:
            break
    return statuses


def exchange(port, payload, rng, read_timeout=2.0):
    """Sends `payload` on a fresh connection (sometimes in pieces, usually half-closing) and
    returns what came back before the server closed or went quiet."""
    half_close = rng.random() < 0.9
    # Without a half-close the server rightly waits for more bytes (keep-alive, a truncated
    # body): a short wait is enough to see whether it answers anything first.
    with socket.create_connection((HOST, port), timeout=read_timeout if half_close else 0.5) as sock:
        try:
            if rng.random() < 0.2 and len(payload) > 1:
                cuts = sorted(rng.sample(range(1, len(payload)), min(3, len(payload) - 1)))
                start = 0
                for cut in cuts + [len(payload)]:
                    sock.sendall(payload[start:cut])
                    start = cut
                    time.sleep(0.002)
            else:
                sock.sendall(payload)
            if half_close:
                # The server sees the end of input at once instead of waiting for bytes that
                # never come; it must still answer what it has read.
                sock.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may refuse and close before it has read everything
        received = b""
        try:
            while len(received) < (4 << 20):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                received += chunk
                if parse_responses(received):
                    # Answered: whatever else comes (pipelined answers) comes promptly.
                    sock.settimeout(0.2)
        except (socket.timeout, ConnectionResetError):
            pass
        return received


def prescribed_5xx(status, received):
    """501 for an unknown transfer-coding and 505 for HTTP/2+ on the HTTP/1 wire are what RFC
    9112 §6.1 and RFC 9110 §15.6.6 ask for; any other 5xx is a finding."""
    if status == 505:
        return True
    return status == 501 and b"501 Not Implemented: transfer-coding" in received


def health(port):
    # A generous bound: a busy machine answering late is not a failed health check.
    try:
        with socket.create_connection((HOST, port), timeout=30) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        statuses = parse_responses(data)
        return statuses[0] if statuses else None
    except OSError:
        return None


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def excerpt(payload, limit=240):
    text = repr(payload[:limit])
    return text + (f"... ({len(payload)} bytes)" if len(payload) > limit else "")


class ServerProcess:
    def __init__(self, binary):
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [binary, "serve", "--host", HOST, "--port", "0", "--db", ":memory:", "--quiet"],
            stdout=subprocess.PIPE, stderr=self.stderr, text=True)
        first = self.process.stdout.readline()
        match = re.fullmatch(r"listening on http://127\.0\.0\.1:(\d+)\n", first)
        if not match:
            self.stop()
            raise RuntimeError(f"unexpected first line {first!r}: {self.stderr_tail()}")
        self.port = int(match.group(1))
        self.pid = self.process.pid
        # Drain stdout so the server never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in self.process.stdout], daemon=True).start()

    def stderr_tail(self, limit=2000):
        self.stderr.seek(0)
        return self.stderr.read()[-limit:].decode("utf-8", "replace")

    def stop(self):
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                # Generous: the drain alone may take 10 s (the default), more on a busy machine.
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=5)
        return self.process.returncode


def run(binary, seconds=30.0, count=5000, seed=None, batch=50, rss_limit_mb=512, log=print):
    """Fuzzes a fresh server; returns a report dict (`findings` empty when all went well)."""
    seed = seed if seed is not None else random.randrange(1 << 32)
    rng = random.Random(seed)
    cases = seeds()
    report = {"seed": seed, "sent": 0, "answered": 0, "unanswered": 0, "statuses": {}, "protocol_5xx": 0, "health_checks": 0,
              "rss_start_mb": None, "rss_max_mb": None, "rss_limit_mb": rss_limit_mb, "findings": [], "seconds": 0.0}
    server = ServerProcess(binary)
    started = time.monotonic()
    try:
        report["rss_start_mb"] = rss_mb(server.pid)
        report["rss_max_mb"] = report["rss_start_mb"]
        while report["sent"] < count and time.monotonic() - started < seconds:
            for _ in range(batch):
                if report["sent"] >= count or time.monotonic() - started >= seconds:
                    break
                case = rng.choice(cases)
                kind = rng.random()
                if kind < 0.12:
                    payload, how = pipelined(rng, cases), "pipelined"
                elif kind < 0.15:
                    payload, how = case.encode(), "seed"
                else:
                    mutator = pick_mutator(rng)
                    payload, how = mutator(rng, case), mutator.__name__
                report["sent"] += 1
                try:
                    received = exchange(server.port, payload, rng)
                except OSError as error:
                    received = b""
                    if server.process.poll() is not None:
                        report["findings"].append({"kind": "server exited", "input": excerpt(payload), "mutator": how,
                                                   "detail": f"{error}; exit {server.process.returncode}"})
                        return report
                statuses = parse_responses(received)
                if statuses:
                    report["answered"] += 1
                else:
                    report["unanswered"] += 1
                for status in statuses:
                    report["statuses"][status] = report["statuses"].get(status, 0) + 1
                    if prescribed_5xx(status, received):
                        report["protocol_5xx"] += 1
                    elif status >= 500:
                        report["findings"].append({"kind": f"{status} answer", "mutator": how, "input": excerpt(payload),
                                                   "response": excerpt(received, 400)})
            # After each batch: still alive, still answering, memory still bounded.
            report["health_checks"] += 1
            status = health(server.port)
            if status != 200:
                report["findings"].append({"kind": "health check failed", "detail": f"status {status}",
                                           "after": report["sent"], "stderr": server.stderr_tail()})
                if server.process.poll() is not None:
                    return report
            rss = rss_mb(server.pid)
            if rss is not None:
                report["rss_max_mb"] = max(report["rss_max_mb"] or 0, rss)
                if rss > rss_limit_mb:
                    report["findings"].append({"kind": "memory over bound", "detail": f"VmRSS {rss:.0f} MB > {rss_limit_mb} MB",
                                               "after": report["sent"]})
                    return report
            log(f"fuzz_socket: {report['sent']} sent, {len(report['findings'])} findings, "
                f"VmRSS {rss if rss is None else round(rss)} MB")
    finally:
        report["seconds"] = round(time.monotonic() - started, 1)
        code = server.stop()
        report["exit_status"] = code
    return report


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.environ.get("AUTH_EMULATOR_BIN", DEFAULT_BIN))
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--rss-limit-mb", type=float, default=512)
    args = parser.parse_args()
    try:
        report = run(args.bin, args.seconds, args.count, args.seed, args.batch, args.rss_limit_mb,
                     log=lambda line: print(line, file=sys.stderr))
    except (OSError, RuntimeError) as error:
        print(f"fuzz_socket: cannot start {args.bin}: {error}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2, sort_keys=True, default=str))
    return 1 if report["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Idle keep-alive connection probe for bench/http.sh.

Opens N (default 2,000) TCP connections to a loopback server; on each it sends one
`GET /health` (HTTP/1.1, so the connection stays open by default, RFC 9112 section 9.3) and
reads the complete answer, then leaves it idle. While they are all held it times several
fresh `GET /health` requests, each on a new connection (the cost a new client sees while the
server carries the idle ones), then checks how many of the N the server still keeps open and
whether they still serve a second request, and finally closes them all.

A server whose I/O ties one thread to each connection shows up here as slow or refused fresh
requests or as dropped idle connections.

Everything is bounded by --timeout (overall) and per-operation socket timeouts. RLIMIT_NOFILE is
raised for this process so it can hold N sockets.

Output: `key=value` lines (or one JSON object with --json):
  target, opened, answered, fresh_n, fresh_ok, fresh_p50_ms, fresh_max_ms, still_open,
  reusable, server_rss_kib (with --pid), elapsed_s
"""

import argparse
import ipaddress
import json
import os
import resource
import selectors
import socket
import statistics
import subprocess
import sys
import time

REQUEST = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


class Deadline(Exception):
    pass


def complete_response(buf):
    """True when buf holds one whole Content-Length-framed (or chunked) response."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return False
    head = buf[:end].lower()
    i = head.find(b"\r\ncontent-length:")
    if i >= 0:
        j = head.find(b"\r\n", i + 2)
        length = int(head[i + 17:j if j >= 0 else len(head)].strip())
        return len(buf) >= end + 4 + length
    if b"chunked" in head:
        return buf.endswith(b"0\r\n\r\n")
    return True


def status_of(buf):
    try:
        return int(buf[9:12])
    except ValueError:
        return 0


def exchange_all(socks, deadline, per_op):
    """Send REQUEST on every socket, then read one full response from each.
    Returns the set of sockets that got a 2xx answer."""
    sel = selectors.DefaultSelector()
    bufs = {}
    for s in socks:
        try:
            s.sendall(REQUEST)
        except OSError:
            continue
        s.setblocking(False)
        bufs[s] = b""
        sel.register(s, selectors.EVENT_READ)
    ok = set()
    limit = min(deadline, time.monotonic() + per_op)
    while bufs and time.monotonic() < limit:
        for key, _ in sel.select(timeout=0.05):
            s = key.fileobj
            try:
                chunk = s.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                sel.unregister(s)
                del bufs[s]
                continue
            bufs[s] += chunk
            if complete_response(bufs[s]):
                if 200 <= status_of(bufs[s]) < 300:
                    ok.add(s)
                sel.unregister(s)
                del bufs[s]
    for s in list(bufs):
        sel.unregister(s)
    sel.close()
    for s in socks:
        s.settimeout(per_op)
    return ok


def fresh_request(port, per_op):
    t0 = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=per_op) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(REQUEST)
        buf = b""
        while not complete_response(buf):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    ms = (time.perf_counter() - t0) * 1e3
    return ms, 200 <= status_of(buf) < 300


def still_open(s):
    """Peek without blocking: EAGAIN means the server has neither closed nor reset it."""
    try:
        s.setblocking(False)
        data = s.recv(1, socket.MSG_PEEK)
        return False if data == b"" else True  # unexpected bytes: still open, though odd
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        s.setblocking(True)


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    try:  # macOS and other systems without /proc
        out = subprocess.run(["ps", "-o", "rss=", "-p", str(pid)], capture_output=True, text=True, timeout=5)
        return int(out.stdout.strip())
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return ""


def raise_nofile(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= need:
        return soft
    target = need if hard == resource.RLIM_INFINITY else min(need, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return target


def main():
    ap = argparse.ArgumentParser(description="hold idle keep-alive connections and time fresh requests")
    ap.add_argument("url", help="http://127.0.0.1:PORT (path ignored: /health is used)")
    ap.add_argument("-n", "--connections", type=int, default=2000)
    ap.add_argument("--fresh", type=int, default=20, help="fresh requests timed while holding")
    ap.add_argument("--hold", type=float, default=2.0, help="idle seconds before the fresh requests")
    ap.add_argument("--batch", type=int, default=100, help="connections opened per batch")
    ap.add_argument("--timeout", type=float, default=120.0, help="overall limit, seconds")
    ap.add_argument("--op-timeout", type=float, default=5.0, help="per-operation limit, seconds")
    ap.add_argument("--pid", type=int, help="server PID, to report its RSS while holding")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not 1 <= args.connections <= 20000:
        raise SystemExit("idle_conns: --connections must be in 1...20000")

    host_port = args.url.split("://", 1)[-1].split("/", 1)[0]
    host, _, port_text = host_port.rpartition(":")
    if not ipaddress.ip_address(socket.gethostbyname(host)).is_loopback:
        raise SystemExit(f"idle_conns: refusing non-loopback target {host}")
    port = int(port_text)

    limit = raise_nofile(args.connections + 256)
    if limit < args.connections + 64:
        raise SystemExit(f"idle_conns: RLIMIT_NOFILE is {limit}, too low for {args.connections} sockets")

    started = time.monotonic()
    deadline = started + args.timeout
    held, answered, connect_errors = [], 0, 0
    out = {"target": f"127.0.0.1:{port}", "requested": args.connections}
    try:
        # Open in batches: sequential connects never overflow the server's accept backlog, and
        # each batch's first request runs concurrently to keep the whole phase short.
        while len(held) + connect_errors < args.connections:
            if time.monotonic() >= deadline:
                raise Deadline()
            batch = []
            for _ in range(min(args.batch, args.connections - len(held) - connect_errors)):
                try:
                    s = socket.create_connection(("127.0.0.1", port), timeout=args.op_timeout)
                    batch.append(s)
                except OSError:
                    connect_errors += 1
            ok = exchange_all(batch, deadline, args.op_timeout)
            answered += len(ok)
            held.extend(batch)
        out["opened"] = len(held)
        out["answered"] = answered
        out["connect_errors"] = connect_errors

        time.sleep(max(0.0, min(args.hold, deadline - time.monotonic())))
        if args.pid:
            out["server_rss_kib"] = rss_kib(args.pid)

        times, fresh_ok = [], 0
        for _ in range(args.fresh):
            if time.monotonic() >= deadline:
                raise Deadline()
            try:
                ms, good = fresh_request(port, args.op_timeout)
                times.append(ms)
                fresh_ok += good
            except OSError:
                pass
            time.sleep(0.01)
        out["fresh_n"] = args.fresh
        out["fresh_ok"] = fresh_ok
        out["fresh_p50_ms"] = round(statistics.median(times), 3) if times else ""
        out["fresh_max_ms"] = round(max(times), 3) if times else ""

        out["still_open"] = sum(1 for s in held if still_open(s))
        # A second request on every held connection proves the server still serves them, not
        # merely that it has not closed them.
        reusable = 0
        for i in range(0, len(held), args.batch):
            if time.monotonic() >= deadline:
                raise Deadline()
            reusable += len(exchange_all(held[i:i + args.batch], deadline, args.op_timeout))
        out["reusable"] = reusable
        out["status"] = "ok"
    except Deadline:
        out["status"] = "timeout"
    finally:
        for s in held:
            s.close()
    out["elapsed_s"] = round(time.monotonic() - started, 2)
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k}={v}")
    return 0 if out["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Closed-loop HTTP/1.1 load generator: the fallback for bench/http.sh when `wrk` is absent.

It behaves like `wrk -tW -cC -dD URL`: C keep-alive connections spread over W worker processes,
each connection with exactly one request in flight (no pipelining), a new request sent as soon
as the previous response is complete. A run is bounded both by time (--duration) and by count
(--requests), and every request is bounded by --timeout, so it always ends on its own.

Only loopback targets are accepted: the benchmark never sends traffic anywhere else.

Output (stdout) is one `key=value` per line, or one JSON object with --json:
  requests, errors, timeouts, non2xx, duration_s, rps, p50_ms, p75_ms, p90_ms, p99_ms, max_ms

Python is far slower than wrk, so with few cores the client, not the server, may be the
bottleneck; numbers from two servers measured the same way remain comparable, absolute ones less
so. Each worker is a separate process so the GIL does not serialise them.
"""

import argparse
import array
import ipaddress
import json
import multiprocessing as mp
import selectors
import socket
import sys
import time
from urllib.parse import urlsplit

from httpwire import ParseError, percentile, take_response


def parse_url(url):
    parts = urlsplit(url)
    if parts.scheme != "http":
        raise SystemExit(f"loadgen: only http:// URLs are supported, got {url!r}")
    host = parts.hostname or "127.0.0.1"
    port = parts.port or 80
    try:
        addr = ipaddress.ip_address(socket.gethostbyname(host))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"loadgen: cannot resolve {host!r}: {exc}")
    if not addr.is_loopback:
        raise SystemExit(f"loadgen: refusing non-loopback target {addr}")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    hostport = host if parts.port is None else f"{host}:{parts.port}"
    request = f"GET {path} HTTP/1.1\r\nHost: {hostport}\r\n\r\n".encode("ascii")
    return str(addr), port, request




class Conn:
    __slots__ = ("sock", "buf", "sent_at", "busy")

    def __init__(self, sock):
        self.sock = sock
        self.buf = bytearray()
        self.sent_at = 0
        self.busy = False


def worker(index, addr, port, request, nconns, max_requests, duration, timeout, ready, go, results):
    sel = selectors.DefaultSelector()
    latencies = array.array("d")
    stats = {"errors": 0, "timeouts": 0, "non2xx": 0, "connect_errors": 0}
    conns = []

    def connect():
        try:
            s = socket.create_connection((addr, port), timeout=timeout)
        except OSError:
            stats["connect_errors"] += 1
            return None
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.setblocking(False)
        c = Conn(s)
        sel.register(s, selectors.EVENT_READ, c)
        return c

    for _ in range(nconns):
        c = connect()
        if c is not None:
            conns.append(c)
    ready.put(index)
    start_at = go.get()  # common wall-clock start shared by all workers
    while time.time() < start_at:
        time.sleep(0.0005)
    t0 = time.perf_counter_ns()
    deadline = t0 + int(duration * 1e9)
    hard_stop = deadline + int(timeout * 1e9)
    timeout_ns = int(timeout * 1e9)
    issued = 0
    completed = 0

    def send(c):
        nonlocal issued
        if issued >= max_requests or time.perf_counter_ns() >= deadline:
            c.busy = False
            return
        try:
            c.sock.send(request)  # a few dozen bytes: fits in an empty socket buffer
        except OSError:
            stats["errors"] += 1
            replace(c)
            return
        issued += 1
        c.busy = True
        c.sent_at = time.perf_counter_ns()

    def replace(c):
        try:
            sel.unregister(c.sock)
        except (KeyError, ValueError):
            pass
        c.sock.close()
        if c in conns:
            conns.remove(c)
        if time.perf_counter_ns() < deadline and issued < max_requests:
            n = connect()
            if n is not None:
                conns.append(n)
                send(n)

    for c in list(conns):
        send(c)

    last_done = t0
    while True:
        now = time.perf_counter_ns()
        if not any(c.busy for c in conns) and (now >= deadline or issued >= max_requests or not conns):
            break
        if now >= hard_stop:
            stats["timeouts"] += sum(1 for c in conns if c.busy)
            break
        for key, _ in sel.select(timeout=0.05):
            c = key.data
            try:
                chunk = c.sock.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                if c.busy:
                    stats["errors"] += 1
                replace(c)
                continue
            c.buf += chunk
            while c.busy:
                try:
                    got = take_response(c.buf)
                except (ParseError, ValueError):
                    stats["errors"] += 1
                    replace(c)
                    break
                if got is None:
                    break
                used, status, close, _ = got
                del c.buf[:used]
                done = time.perf_counter_ns()
                latencies.append((done - c.sent_at) / 1e3)
                completed += 1
                last_done = done
                if not 200 <= status < 300:
                    stats["non2xx"] += 1
                if close:
                    c.busy = False
                    replace(c)
                    break
                send(c)
        now = time.perf_counter_ns()
        for c in list(conns):
            if c.busy and now - c.sent_at > timeout_ns:
                stats["timeouts"] += 1
                c.busy = False
                replace(c)

    for c in conns:
        c.sock.close()
    results.put({
        "index": index,
        "completed": completed,
        "elapsed_ns": max(last_done, min(time.perf_counter_ns(), deadline)) - t0,
        "latencies": latencies.tobytes(),
        **stats,
    })




def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url")
    ap.add_argument("-c", "--connections", type=int, default=64)
    ap.add_argument("-t", "--workers", type=int, default=2, help="worker processes")
    ap.add_argument("-d", "--duration", type=float, default=10.0, help="seconds")
    ap.add_argument("-n", "--requests", type=int, default=5_000_000, help="upper bound on requests")
    ap.add_argument("--timeout", type=float, default=5.0, help="per-request timeout, seconds")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    if args.connections < 1 or args.workers < 1 or args.duration <= 0 or args.requests < 1:
        raise SystemExit("loadgen: connections, workers, duration and requests must be positive")
    if args.duration > 600:
        raise SystemExit("loadgen: duration is capped at 600 s")
    workers = min(args.workers, args.connections)
    addr, port, request = parse_url(args.url)

    ready, results = mp.Queue(), mp.Queue()
    gos = [mp.Queue() for _ in range(workers)]
    procs = []
    for i in range(workers):
        nconns = args.connections // workers + (1 if i < args.connections % workers else 0)
        quota = args.requests // workers + (1 if i < args.requests % workers else 0)
        p = mp.Process(target=worker, daemon=True, args=(
            i, addr, port, request, nconns, quota, args.duration, args.timeout, ready, gos[i], results))
        p.start()
        procs.append(p)
    for _ in range(workers):
        ready.get(timeout=args.timeout + 30)
    start_at = time.time() + 0.05
    for q in gos:
        q.put(start_at)
    collected = [results.get(timeout=args.duration + args.timeout + 30) for _ in range(workers)]
    for p in procs:
        p.join(timeout=5)

    lat = array.array("d")
    for r in collected:
        lat.frombytes(r["latencies"])
    values = sorted(lat)
    completed = sum(r["completed"] for r in collected)
    elapsed = max(r["elapsed_ns"] for r in collected) / 1e9
    out = {
        "tool": "loadgen.py",
        "connections": args.connections,
        "workers": workers,
        "requests": completed,
        "errors": sum(r["errors"] + r["connect_errors"] for r in collected),
        "timeouts": sum(r["timeouts"] for r in collected),
        "non2xx": sum(r["non2xx"] for r in collected),
        "duration_s": round(elapsed, 3),
        "rps": round(completed / elapsed, 1) if elapsed > 0 else 0.0,
        "p50_ms": round(percentile(values, 50) / 1e3, 3),
        "p75_ms": round(percentile(values, 75) / 1e3, 3),
        "p90_ms": round(percentile(values, 90) / 1e3, 3),
        "p99_ms": round(percentile(values, 99) / 1e3, 3),
        "max_ms": round((values[-1] if values else 0.0) / 1e3, 3),
    }
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k}={v}")
    return 0 if completed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())

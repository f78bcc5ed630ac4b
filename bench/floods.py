#!/usr/bin/env python3
"""Floods and slow clients against auth-emulator on loopback.

Starts `BIN serve --host 127.0.0.1 --port 0 --db :memory: --quiet` and, one attack at a time,
measures how a well-behaved client fares (`GET /health` p50/p99, one fresh connection per
request) and what the attack costs the server (VmRSS, its sockets' kernel memory):

  idle         N keep-alive connections, each answered once and then left idle
  slow-headers N connections sending one header byte per second (slowloris)
  slow-bodies  N connections announcing a Content-Length and sending one body byte per second
  storm        a few threads opening and closing connections as fast as they can (half of them
               send one request first)
  never-read   N connections each pipelining many `GET /settings` and never reading; one of
               them resumes reading after the measurement (at the latest 1 s before
               --write-timeout; with --behaviour-only as soon as the flood is in place), the
               others are reset by the server at --write-timeout
  cap          a second server with `--max-connections C`: connection C+1 gets 503, and after
               some connections close a new one is served again

Targets (a missed one makes the exit status 1):
  - /health p99 under each attack <= 2x the idle p99 (the median of the idle measurements
    taken between attacks), with an allowance of --slack-ms for timer noise on tiny figures
    (not a target with --behaviour-only: measured and printed only);
  - /health answers during each attack and after it, every time (within --health-timeout);
  - server memory bounded: RSS growth <= connections x --rss-per-conn-kib for the connection
    attacks, and for never-readers RSS growth + the server sockets' kernel memory
    <= N x --never-read-kib (the per-connection output backpressure cap);
  - slow clients are disconnected by the header and body timeouts (the server is started with
    --header-timeout/--body-timeout, short by default so the run stays short), never-readers by
    the write timeout (--write-timeout): never before the timeout, and no more than
    --allowance seconds after it, while the one that resumes reading in time gets every answer;
  - the over-the-cap connection is answered 503 and the server serves again afterwards.

Memory: VmRSS from /proc (ps elsewhere); the server sockets' kernel memory is the sum of
`ss -tm` skmem r+w+f over sockets whose local port is the server's (Linux only);
/proc/net/sockstat's TCP `mem` (pages, whole machine, so clients' queues too) is printed for
reference. Attack clients pin their own SO_SNDBUF so the attacker's send queue (which lives on
the attacker's machine in real life) does not swamp the machine-wide figure.

Attacks run in child processes so the measuring process never waits for their GIL. Everything
is bounded in count and time, loopback only, and every process started is stopped by its PID.
Standard library only. `--json` prints one JSON object; otherwise a table.

`--behaviour-only` keeps the targets that hold on any machine however busy (the suite's
Tests/python/test_floods.py runs it so): every /health answered, memory within the per-connection
caps, the timeouts honoured (an early cut-off is a miss; a late one only past a generous
--allowance), the resumed reader served in full, the 503 and the recovery. Latency is still
measured and printed, but how fast a shared machine answers is not the server's behaviour.
"""

import argparse
import fcntl
import json
import multiprocessing
import os
import platform
import re
import resource
import select
import selectors
import signal
import socket
import statistics
import struct
import subprocess
import sys
import termios
import threading
import time

HOST = "127.0.0.1"
HEALTH = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
HEALTH_CLOSE = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
SETTINGS = b"GET /settings HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
ATTACK_SNDBUF = 64 * 1024


# --------------------------------------------------------------------------- helpers

def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else 1 << 20
    if platform.system() == "Darwin":
        target = min(target, 10240)  # OPEN_MAX
    if soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            pass
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def read_response(sock, deadline):
    """Reads one HTTP/1.1 response with a Content-Length body; returns (status, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the head")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    match = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    length = int(match.group(1)) if match else 0
    while len(body) < length:
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed in the body")
        body += chunk
    return status, body[:length]


# How long one well-behaved request may take before it counts as a failure: a wait bound, set
# generously so that a busy machine is never mistaken for a server that stopped answering
# (latency has its own target).
HEALTH_TIMEOUT = 30.0


def health_once(port, timeout=None):
    """One GET /health on a fresh connection; seconds, or None on failure."""
    timeout = HEALTH_TIMEOUT if timeout is None else timeout
    start = time.perf_counter()
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.sendall(HEALTH_CLOSE)
            status, _ = read_response(sock, deadline)
            if status != 200:
                return None
    except OSError:
        return None
    return time.perf_counter() - start


def percentile(values, q):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summarize(samples, failures):
    return {
        "n": len(samples), "failures": failures,
        "p50_ms": round(percentile(samples, 0.50), 3),
        "p99_ms": round(percentile(samples, 0.99), 3),
    }


def measure_health(port, count, reference=None, block=10):
    """`count` fresh-connection GET /health against `port`; with `reference`, as many against
    that (idle) server too, alternating in blocks of `block`, so a burst of other work on the
    machine hits both sides alike. Returns (attacked, reference or None)."""
    samples = {port: [], reference: []}
    failures = {port: 0, reference: 0}
    targets = [port] if reference is None else [port, reference]
    done = 0
    while done < count:
        for target in targets:
            for _ in range(min(block, count - done)):
                elapsed = health_once(target)
                if elapsed is None:
                    failures[target] += 1
                else:
                    samples[target].append(elapsed * 1000)
        done += block
    attacked = summarize(samples[port], failures[port])
    return attacked, (summarize(samples[reference], failures[reference]) if reference else None)


class Server:
    """The emulator under test, started and stopped by PID."""

    def __init__(self, binary, extra):
        self.process = subprocess.Popen(
            [binary, "serve", "--host", HOST, "--port", "0", "--db", ":memory:", "--quiet", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        first = self.process.stdout.readline()
        match = re.fullmatch(r"listening on http://127\.0\.0\.1:(\d+)\n", first)
        if not match:
            self.stop()
            raise RuntimeError(f"unexpected first line {first!r}")
        self.port = int(match.group(1))
        # Keep draining stdout so the server never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in self.process.stdout], daemon=True).start()

    @property
    def pid(self):
        return self.process.pid

    def alive(self):
        return self.process.poll() is None

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)

    def rss_kib(self):
        try:
            with open(f"/proc/{self.pid}/status") as status:
                return int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1))
        except OSError:
            out = subprocess.run(["ps", "-o", "rss=", "-p", str(self.pid)], capture_output=True, text=True).stdout
            return int(out.strip() or 0)

    def socket_kib(self):
        """Kernel memory of the server's own sockets (skmem r+w+f), or None without `ss`."""
        try:
            out = subprocess.run(
                ["ss", "-tmnH", "state", "all", f"( sport = :{self.port} )"],
                capture_output=True, text=True, timeout=10,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        total = 0
        for block in re.findall(r"skmem:\(([^)]*)\)", out):
            fields = dict((k, int(v)) for k, v in re.findall(r"([a-z]+)(\d+)", block))
            total += fields.get("r", 0) + fields.get("w", 0) + fields.get("f", 0)
        return total // 1024


def sockstat_pages():
    try:
        with open("/proc/net/sockstat") as stat:
            return int(re.search(r"TCP:.* mem (\d+)", stat.read()).group(1))
    except (OSError, AttributeError):
        return None


def rst_close(sock):
    """Close with RST (SO_LINGER 0): no TIME_WAIT left behind on the client side."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


def connect(port, sndbuf=None):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if sndbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
    sock.settimeout(10)
    sock.connect((HOST, port))
    return sock


# --------------------------------------------------------------------------- attacks (child processes)

def attack_idle(port, count, ready, stop, results):
    raise_nofile()
    socks, answered = [], 0
    deadline = time.monotonic() + 120
    for _ in range(count):
        if stop.is_set() or time.monotonic() > deadline:
            break
        try:
            sock = connect(port)
            sock.sendall(HEALTH)
            if read_response(sock, time.monotonic() + 10)[0] == 200:
                answered += 1
            socks.append(sock)
        except OSError:
            break
    ready.set()
    stop.wait(120)
    # Still open and still usable? A sample of them answers a second request.
    sample = socks[:: max(1, len(socks) // 20)]
    reusable = 0
    for sock in sample:
        try:
            sock.sendall(HEALTH)
            reusable += read_response(sock, time.monotonic() + HEALTH_TIMEOUT)[0] == 200
        except OSError:
            pass
    for sock in socks:
        rst_close(sock)
    results.put({"opened": len(socks), "answered": answered, "sample": len(sample), "reusable": reusable})


def trickle(port, count, prefix, ready, stop, results, limit):
    """Opens `count` connections, sends `prefix`, then one more byte per second each; records
    when the server closes each one (seconds after its first byte). It keeps going after the
    measurement until the server has closed them all or `limit` seconds passed: that is the
    header/body timeout check."""
    raise_nofile()
    selector = selectors.DefaultSelector()
    started = {}
    closed = []
    socks = []
    for _ in range(count):
        try:
            sock = connect(port, ATTACK_SNDBUF)
            sock.sendall(prefix)
            sock.setblocking(False)
        except OSError:
            break
        started[sock] = time.monotonic()
        socks.append(sock)
        selector.register(sock, selectors.EVENT_READ)
    ready.set()
    end = time.monotonic() + limit
    next_tick = time.monotonic() + 1
    while time.monotonic() < end and len(closed) < len(socks):
        for key, _ in selector.select(timeout=0.05):
            sock = key.fileobj
            try:
                data = sock.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                closed.append(time.monotonic() - started[sock])
                selector.unregister(sock)
        if time.monotonic() >= next_tick:
            next_tick += 1
            for key in list(selector.get_map().values()):
                try:
                    key.fileobj.send(b"a")
                except BlockingIOError:
                    pass
                except OSError:
                    closed.append(time.monotonic() - started[key.fileobj])
                    selector.unregister(key.fileobj)
    for sock in socks:
        rst_close(sock)
    results.put({
        "opened": len(socks), "closed_by_server": len(closed),
        "closed_after_min_s": round(min(closed), 2) if closed else None,
        "closed_after_max_s": round(max(closed), 2) if closed else None,
    })


def attack_slow_headers(port, count, limit, ready, stop, results):
    prefix = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
    trickle(port, count, prefix, ready, stop, results, limit)


def attack_slow_bodies(port, count, limit, ready, stop, results):
    prefix = (b"POST /signup HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Content-Length: 100000\r\n\r\n{\"email\":\"")
    trickle(port, count, prefix, ready, stop, results, limit)


def storm_thread(port, stop, counts, index):
    done = errors = 0
    while not stop.is_set():
        try:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.settimeout(HEALTH_TIMEOUT)
            sock.connect((HOST, port))
            if done % 2:
                sock.sendall(HEALTH)
                read_response(sock, time.monotonic() + HEALTH_TIMEOUT)
            rst_close(sock)
            done += 1
        except OSError:
            errors += 1
            time.sleep(0.001)
    counts[index], counts[index + 1] = done, errors


def attack_storm(port, threads, ready, stop, results):
    counts = [0] * (2 * threads)
    workers = [threading.Thread(target=storm_thread, args=(port, stop, counts, 2 * i)) for i in range(threads)]
    start = time.monotonic()
    for worker in workers:
        worker.start()
    ready.set()
    for worker in workers:
        worker.join(timeout=120)
    elapsed = time.monotonic() - start
    total = sum(counts[0::2])
    results.put({"connections": total, "errors": sum(counts[1::2]), "per_second": round(total / elapsed)})


def watch_resets(socks, since, limit, closed):
    """Records, for each socket the server resets or closes, when (seconds after `since`) and
    how long after its last answer bytes arrived. The server's write timeout counts from its own
    last send, which falls between the two: after `since`, and no later than the last growth of
    the receive queue (FIONREAD; the kernel may still trickle queued bytes in after it, as zero-
    window probes find room). Polled for POLLERR/POLLHUP only: the unread answers keep POLLIN
    raised all along."""
    poller = select.poll()
    now = time.monotonic()
    queued, last = {}, {}
    for sock in socks:
        poller.register(sock, 0)
        queued[sock.fileno()] = -1
        last[sock.fileno()] = now
    end = since + limit
    while queued and time.monotonic() < end:
        events = poller.poll(50)
        now = time.monotonic()
        for fd, flags in events:
            if flags & (select.POLLERR | select.POLLHUP) and fd in queued:
                closed.append((now - since, now - last[fd]))
                poller.unregister(fd)
                del queued[fd]
        for fd in queued:
            try:
                size = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
            except OSError:
                continue
            # Growth only: a reset empties the queue, which is not an answer arriving.
            if size > queued[fd]:
                queued[fd] = size
                last[fd] = now


def unread_bytes(sock):
    try:
        return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]
    except OSError:
        return 0


def attack_never_read(port, count, pipeline, write_timeout, watch_limit, resume_when_in_place, ready, stop, results):
    raise_nofile()
    payload = SETTINGS * pipeline
    selector = selectors.DefaultSelector()
    socks = []
    for _ in range(count):
        try:
            sock = connect(port, ATTACK_SNDBUF)
            sock.setblocking(False)
        except OSError:
            break
        socks.append(sock)
        selector.register(sock, selectors.EVENT_WRITE, [0])
    ready.set()
    # Every connection but the one resumed below should be reset once it has taken no answer
    # for the write timeout.
    since, closed = time.monotonic(), []
    watcher = threading.Thread(target=watch_resets, args=(socks[1:], since, watch_limit, closed), daemon=True)
    watcher.start()
    # Push requests whenever the kernel takes them, never read, until the measurement ends or,
    # should it take longer, shortly before the write timeout: the one that resumes must still
    # be connected when it does (it then reads during the measurement, which the latency figure
    # shows). With `resume_when_in_place` (--behaviour-only) it resumes as soon as the flood is
    # in place instead: the whole write timeout is then its margin, whatever else the machine
    # is doing, and its wait does not hang on how long the measurement takes.
    # In place: the kernel took every request of the one to resume, or it has answers waiting
    # unread and has taken no request for a second (the server stopped reading it: its answers
    # are held at the output cap). The second only lets the backpressure settle; how long any of
    # it takes is never judged.
    resume_at = since + (120 if resume_when_in_place else max(write_timeout / 2, write_timeout - 1))
    first = socks[0] if socks else None
    first_progress = time.monotonic()
    while not stop.is_set() and selector.get_map() and time.monotonic() < resume_at:
        if resume_when_in_place and first is not None and (
                first not in selector.get_map()
                or (time.monotonic() - first_progress >= 1.0 and unread_bytes(first) > 0)):
            resume_at = time.monotonic()
            break
        for key, _ in selector.select(timeout=0.1):
            state = key.data
            try:
                sent = key.fileobj.send(payload[state[0]: state[0] + 65536])
                state[0] += sent
                if key.fileobj is first and sent:
                    first_progress = time.monotonic()
            except BlockingIOError:
                continue
            except OSError:
                selector.unregister(key.fileobj)
                continue
            if state[0] >= len(payload):
                selector.unregister(key.fileobj)
    # Everything sent (the queues took it all): hold the connections until then (in place
    # already when resuming on that).
    if not resume_when_in_place:
        stop.wait(max(0.0, resume_at - time.monotonic()))
    # Resume one of them: once it reads, every request it sent is answered, in order.
    resumed = expected = 0
    if socks:
        sock = socks[0]
        key = selector.get_map().get(sock)
        offset = key.data[0] if key else len(payload)
        sock.setblocking(True)
        sock.settimeout(HEALTH_TIMEOUT)

        def send_rest():
            try:
                sock.sendall(payload[offset:])
            except OSError:
                pass

        threading.Thread(target=send_rest, daemon=True).start()
        expected = pipeline
        marker = b"HTTP/1.1 200 "
        tail = b""
        end = time.monotonic() + 120
        try:
            while resumed < expected and time.monotonic() < end:
                chunk = sock.recv(1 << 20)
                if not chunk:
                    break
                # A marker cannot fit in the kept tail (one byte shorter), so none is counted twice.
                data = tail + chunk
                resumed += data.count(marker)
                tail = data[-(len(marker) - 1):]
        except OSError:
            pass
    watcher.join()
    for sock in socks:
        rst_close(sock)
    results.put({
        "opened": len(socks), "resumed_answers": resumed, "expected_answers": expected,
        "watched": len(socks[1:]), "closed_by_server": len(closed),
        "closed_after_min_s": round(min(at for at, _ in closed), 2) if closed else None,
        "closed_after_max_s": round(max(at for at, _ in closed), 2) if closed else None,
        "closed_after_last_bytes_max_s": round(max(quiet for _, quiet in closed), 2) if closed else None,
    })


# --------------------------------------------------------------------------- orchestration

def run_attack(server, reference, name, target, args, health_n, settle, hold=0.0):
    """Starts the attack in a child process, waits until it is in place, samples memory while
    measuring /health, signals stop, collects the child's report."""
    context = multiprocessing.get_context("fork" if hasattr(os, "fork") and platform.system() == "Linux" else "spawn")
    ready, stop, results = context.Event(), context.Event(), context.Queue()
    process = context.Process(target=target, args=(server.port, *args, ready, stop, results), daemon=True)
    rss_before = server.rss_kib()
    process.start()
    try:
        ready.wait(180)
        time.sleep(settle)
        memory = {"rss_kib": server.rss_kib(), "socket_kib": server.socket_kib(), "sockstat_pages": sockstat_pages()}
        health, control = measure_health(server.port, health_n, reference.port)
        if hold:
            time.sleep(hold)
        after = {"rss_kib": server.rss_kib(), "socket_kib": server.socket_kib(), "sockstat_pages": sockstat_pages()}
        for key, value in after.items():
            if value is not None and (memory[key] is None or value > memory[key]):
                memory[key] = value
        stop.set()
        try:
            report = results.get(timeout=300)
        except Exception:
            report = {"error": "no report from the attack process"}
    finally:
        stop.set()
        process.join(timeout=10)
        if process.is_alive():
            process.kill()
            process.join(timeout=5)
    return {"attack": name, "health": health, "control": control, "memory": memory, "rss_before_kib": rss_before, "report": report}


def cap_check(binary, cap):
    """A server with --max-connections CAP: connection CAP+1 is refused with 503; once some of
    the held ones close, new connections are served again."""
    server = Server(binary, ["--max-connections", str(cap)])
    held = []
    try:
        for _ in range(cap):
            sock = connect(server.port)
            sock.sendall(HEALTH)
            read_response(sock, time.monotonic() + HEALTH_TIMEOUT)
            held.append(sock)
        over = connect(server.port)
        try:
            over.sendall(HEALTH)
        except OSError:
            pass
        try:
            refused_status, refused_body = read_response(over, time.monotonic() + HEALTH_TIMEOUT)
        except OSError as error:
            refused_status, refused_body = None, str(error).encode()
        over.close()
        for sock in held[: max(1, cap // 5)]:
            sock.close()
        held = held[max(1, cap // 5):]
        recovered = False
        end = time.monotonic() + HEALTH_TIMEOUT
        while time.monotonic() < end and not recovered:
            recovered = health_once(server.port) is not None
            if not recovered:
                time.sleep(0.05)
        # The connections held all along still work.
        still = 0
        for sock in held[:5]:
            sock.sendall(HEALTH)
            still += read_response(sock, time.monotonic() + HEALTH_TIMEOUT)[0] == 200
        return {
            "cap": cap, "over_cap_status": refused_status,
            "over_cap_body": refused_body.decode(errors="replace")[:120],
            "recovered": recovered, "held_still_served": f"{still}/{min(5, len(held))}",
            "server_alive": server.alive(),
        }
    finally:
        for sock in held:
            sock.close()
        server.stop()


def main():
    global HEALTH_TIMEOUT
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=os.environ.get("AUTH_EMULATOR_BIN", ".build/release/auth-emulator"))
    parser.add_argument("--idle", type=int, default=3000, help="idle keep-alive connections")
    parser.add_argument("--slow-headers", type=int, default=300)
    parser.add_argument("--slow-bodies", type=int, default=300)
    parser.add_argument("--storm-threads", type=int, default=4)
    parser.add_argument("--storm-seconds", type=float, default=4)
    parser.add_argument("--never-read", type=int, default=200, help="pipelining never-reading connections")
    parser.add_argument("--pipeline", type=int, default=30000, help="requests each never-reader pipelines")
    parser.add_argument("--cap", type=int, default=100, help="--max-connections of the 503 check's server")
    parser.add_argument("--header-timeout", type=int, default=3, help="server --header-timeout (s)")
    parser.add_argument("--body-timeout", type=int, default=5, help="server --body-timeout (s)")
    parser.add_argument("--write-timeout", type=int, default=10,
                        help="server --write-timeout (s); the resumed never-reader resumes 1 s before it at the latest")
    parser.add_argument("--health", type=int, default=400, help="/health requests per measurement")
    parser.add_argument("--rounds", type=int, default=1, help="repeat every attack this many times")
    parser.add_argument("--ratio", type=float, default=2.0, help="target: attack p99 <= ratio x idle p99")
    parser.add_argument("--slack-ms", type=float, default=0.5,
                        help="absolute allowance on the p99 target (scheduler noise on sub-ms figures)")
    parser.add_argument("--rss-per-conn-kib", type=float, default=16)
    parser.add_argument("--never-read-kib", type=float, default=320,
                        help="bound per never-reader: server RSS growth + its sockets' kernel memory")
    parser.add_argument("--behaviour-only", action="store_true",
                        help="latency is measured and printed but not a target; the never-reader resumes as soon "
                             "as the flood is in place (the suite's mode: nothing in it depends on the machine's speed)")
    parser.add_argument("--allowance", type=float, default=3,
                        help="how late (s) past its timeout a connection may be seen cut off or reset")
    parser.add_argument("--health-timeout", type=float, default=HEALTH_TIMEOUT,
                        help="seconds a /health may take before it counts as not answered")
    parser.add_argument("--only", default="", help="comma-separated attacks to run (default: all)")
    parser.add_argument("--no-cap", action="store_true", help="skip the 503 check")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    HEALTH_TIMEOUT = options.health_timeout

    limit = raise_nofile()
    needed = max(options.idle, options.never_read, options.slow_headers, options.slow_bodies) + 100
    if limit < needed:
        sys.exit(f"RLIMIT_NOFILE is {limit}; {needed} descriptors are needed")
    if not os.access(options.bin, os.X_OK):
        sys.exit(f"no executable at {options.bin} (build it: swift build -c release --product auth-emulator)")

    started = time.monotonic()
    flags = ["--header-timeout", str(options.header_timeout), "--body-timeout", str(options.body_timeout),
             "--write-timeout", str(options.write_timeout)]
    server = Server(options.bin, flags)
    # An identical server nobody attacks: the control measured alongside each attack.
    reference = Server(options.bin, flags)
    idle, attacks = [], []
    try:
        for _ in range(20):  # warm-up
            health_once(server.port)
            health_once(reference.port)
        baseline_rss = server.rss_kib()
        baseline_sockstat = sockstat_pages()
        # The slow clients keep trickling, and the never-readers are watched, until well past
        # the latest moment they may be cut off.
        slow_limit_h = options.header_timeout + options.allowance + 15
        slow_limit_b = options.body_timeout + options.allowance + 15
        watch_limit = options.write_timeout + options.allowance + 20
        plan = [
            ("idle", attack_idle, (options.idle,), 0.5, options.idle),
            ("slow-headers", attack_slow_headers, (options.slow_headers, slow_limit_h), 1.0, options.slow_headers),
            ("slow-bodies", attack_slow_bodies, (options.slow_bodies, slow_limit_b), 1.0, options.slow_bodies),
            ("storm", attack_storm, (options.storm_threads,), 0.3, 0),
            ("never-read", attack_never_read,
             (options.never_read, options.pipeline, options.write_timeout, watch_limit, options.behaviour_only),
             3.0, options.never_read),
        ]
        if options.only:
            wanted = set(options.only.split(","))
            plan = [step for step in plan if step[0] in wanted]
        for _ in range(options.rounds):
            for name, target, args, settle, connections in plan:
                idle.append(measure_health(server.port, options.health, reference.port))
                if attacks:
                    # The idle measurement after an attack: /health still answers once it is over.
                    attacks[-1]["after"] = idle[-1][0]
                hold = options.storm_seconds if name == "storm" else 0
                result = run_attack(server, reference, name, target, args, options.health, settle, hold)
                result["connections"] = connections
                attacks.append(result)
                # Let the closed connections go before the next idle measurement.
                time.sleep(0.5)
        idle.append(measure_health(server.port, options.health, reference.port))
        if attacks:
            attacks[-1]["after"] = idle[-1][0]
        final_rss = server.rss_kib()
        server_alive = server.alive()
    finally:
        server.stop()
        reference.stop()
    cap = None if options.no_cap else cap_check(options.bin, options.cap)

    # ---- evaluation
    # The idle figures: the attacked server measured between attacks (its own control alongside).
    idle_p99 = statistics.median(m[0]["p99_ms"] for m in idle)
    idle_p50 = statistics.median(m[0]["p50_ms"] for m in idle)
    control_idle_p99 = statistics.median(m[1]["p99_ms"] for m in idle)
    rows, misses = [], []
    by_name = {}
    for result in attacks:
        by_name.setdefault(result["attack"], []).append(result)
    for name, results in by_name.items():
        p99 = statistics.median(r["health"]["p99_ms"] for r in results)
        p50 = statistics.median(r["health"]["p50_ms"] for r in results)
        # Target: against the idle control measured in the same moments (machine noise cancels),
        # and never below the quiet-moment idle figure.
        control_p99 = statistics.median(r["control"]["p99_ms"] for r in results)
        bound_ms = options.ratio * max(control_p99, idle_p99) + options.slack_ms
        failures = sum(r["health"]["failures"] for r in results)
        failures_after = sum(r.get("after", {}).get("failures", 0) for r in results)
        rss_growth = max(r["memory"]["rss_kib"] - r["rss_before_kib"] for r in results)
        socket_kib = max((r["memory"]["socket_kib"] or 0) for r in results)
        sockstat = max((r["memory"]["sockstat_pages"] or 0) for r in results)
        connections = results[0]["connections"]
        ok_health = failures == 0 and failures_after == 0
        ok_latency = p99 <= bound_ms
        if name == "never-read":
            memory_bound = connections * options.never_read_kib
            memory_used = rss_growth + socket_kib
        else:
            memory_bound = max(connections, 1) * options.rss_per_conn_kib + 4096
            memory_used = rss_growth
        ok_memory = memory_used <= memory_bound
        extra_ok, notes = True, []
        for r in results:
            report = r["report"]
            if "error" in report:
                extra_ok = False
                notes.append(report["error"])
            if name == "idle":
                extra_ok &= report.get("opened") == connections and report.get("reusable") == report.get("sample")
                notes.append(f"{report.get('opened')} open, {report.get('reusable')}/{report.get('sample')} reused")
            if name in ("slow-headers", "slow-bodies"):
                timeout = options.header_timeout if name == "slow-headers" else options.body_timeout
                late = report.get("closed_after_max_s") or 1e9
                early = report.get("closed_after_min_s") or 0
                extra_ok &= (report.get("closed_by_server") == report.get("opened")
                             and late <= timeout + options.allowance and early >= timeout - 1)
                notes.append(f"{report.get('closed_by_server')}/{report.get('opened')} cut off after "
                             f"{report.get('closed_after_min_s')}-{report.get('closed_after_max_s')} s (timeout {timeout} s)")
            if name == "storm":
                notes.append(f"{report.get('connections')} connections, {report.get('per_second')}/s, {report.get('errors')} errors")
            if name == "never-read":
                extra_ok &= report.get("resumed_answers") == report.get("expected_answers")
                notes.append(f"one resumed reader got {report.get('resumed_answers')}/{report.get('expected_answers')} answers")
                # The others: reset once they have taken nothing for the write timeout; not before
                # it could have run out, nor long after their last answer bytes.
                late = report.get("closed_after_last_bytes_max_s") or 1e9
                early = report.get("closed_after_min_s") or 0
                extra_ok &= (report.get("closed_by_server") == report.get("watched")
                             and late <= options.write_timeout + options.allowance and early >= options.write_timeout - 1)
                notes.append(f"{report.get('closed_by_server')}/{report.get('watched')} reset at "
                             f"{report.get('closed_after_min_s')}-{report.get('closed_after_max_s')} s, at most "
                             f"{report.get('closed_after_last_bytes_max_s')} s after their last answer bytes "
                             f"(write timeout {options.write_timeout} s)")
        targets = [("health", ok_health), ("memory", ok_memory), ("behaviour", extra_ok)]
        if not options.behaviour_only:
            targets.insert(0, ("latency", ok_latency))
        for label, ok in targets:
            if not ok:
                misses.append(f"{name}: {label}")
        rows.append({
            "attack": name, "connections": connections, "p50_ms": p50, "p99_ms": p99,
            "p99_ratio": round(p99 / idle_p99, 2) if idle_p99 else None,
            "control_p99_ms": control_p99, "p99_vs_control": round(p99 / control_p99, 2) if control_p99 else None,
            "p99_bound_ms": round(bound_ms, 3), "health_failures": failures, "health_failures_after": failures_after,
            "rss_growth_kib": rss_growth, "server_socket_kib": socket_kib, "sockstat_tcp_pages": sockstat,
            "memory_used_kib": memory_used, "memory_bound_kib": round(memory_bound),
            "latency_ok": ok_latency, "latency_is_target": not options.behaviour_only, "health_ok": ok_health,
            "memory_ok": ok_memory, "behaviour_ok": extra_ok, "notes": "; ".join(notes),
        })
    cap_ok = cap is None or (cap["over_cap_status"] == 503 and cap["recovered"] and cap["server_alive"])
    if not cap_ok:
        misses.append("cap: 503 and recovery")
    if not server_alive:
        misses.append("server died")

    summary = {
        "binary": options.bin, "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "idle_p50_ms": idle_p50, "idle_p99_ms": idle_p99, "idle_p99_each": [m[0]["p99_ms"] for m in idle],
        "control_idle_p99_ms": control_idle_p99, "baseline_rss_kib": baseline_rss, "final_rss_kib": final_rss,
        "baseline_sockstat_pages": baseline_sockstat, "attacks": rows, "cap": cap, "misses": misses,
        "elapsed_s": round(time.monotonic() - started, 1),
    }
    if options.json:
        print(json.dumps(summary, indent=1))
    else:
        print(f"idle /health: p50 {idle_p50:.3f} ms, p99 {idle_p99:.3f} ms (each: {summary['idle_p99_each']}; "
              f"control server {control_idle_p99:.3f} ms); target under attack: p99 <= {options.ratio}x "
              f"max(idle, control measured alongside) + {options.slack_ms} ms"
              + (" (reported only: --behaviour-only)" if options.behaviour_only else ""))
        print(f"server RSS idle {baseline_rss} KiB, at the end {final_rss} KiB; load average {summary['load_average']}")
        print(f"{'attack':<13}{'conns':>6}{'p50 ms':>9}{'p99 ms':>9}{'x idle':>8}{'control':>9}{'x ctl':>7}"
              f"{'RSS +KiB':>10}{'sock KiB':>10}{'sockstat':>10}{'bound KiB':>11}  result")
        for row in rows:
            verdict = "PASS" if ((row["latency_ok"] or options.behaviour_only) and row["health_ok"]
                                 and row["memory_ok"] and row["behaviour_ok"]) else "MISS"
            print(f"{row['attack']:<13}{row['connections']:>6}{row['p50_ms']:>9.3f}{row['p99_ms']:>9.3f}"
                  f"{row['p99_ratio']:>8}{row['control_p99_ms']:>9.3f}{row['p99_vs_control']:>7}"
                  f"{row['rss_growth_kib']:>10}{row['server_socket_kib']:>10}"
                  f"{row['sockstat_tcp_pages']:>10}{row['memory_bound_kib']:>11}  {verdict}  {row['notes']}")
        if cap:
            print(f"cap {cap['cap']}: connection {cap['cap'] + 1} got {cap['over_cap_status']} "
                  f"({cap['over_cap_body'].strip()!r}); recovered: {cap['recovered']}; held connections still "
                  f"served {cap['held_still_served']}  {'PASS' if cap_ok else 'MISS'}")
        print(f"elapsed {summary['elapsed_s']} s; " + ("all targets met" if not misses else "MISSED: " + ", ".join(misses)))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())

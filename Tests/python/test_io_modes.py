"""The I/O mode switch end to end (`AUTH_EMULATOR_PORTABLE_IO`, docs/platforms.md).

The binary runs the calls the variable selects (epoll and an eventfd, or poll(2) with a pipe and
SIGPIPE ignored), a value that is not a boolean stops the start, and in both modes a client that
resets mid-response costs only its connection: the server's send meets EPIPE, never a SIGPIPE
that would end the process. Each test sets the variable itself, so they check the same things in
the suite's ordinary run and in CI's portable pass.
"""
import os
import signal
import socket
import struct
import subprocess
import sys

import httpx
import pytest

from conftest import BIN, tcp_connection, wait_until

VARIABLE = "AUTH_EMULATOR_PORTABLE_IO"
MODES = {"native": "0", "portable": "1"}
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")


def descriptor_kinds(pid):
    kinds = []
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            kinds.append(os.readlink(f"/proc/{pid}/fd/{name}"))
        except OSError:
            pass
    return kinds


def ignored_signals(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("SigIgn:"):
                return int(line.split()[1], 16)
    return 0


@linux_only
def test_the_switch_reaches_the_server(start_server):
    native = start_server("--db", ":memory:", env={VARIABLE: "0"})
    portable = start_server("--db", ":memory:", env={VARIABLE: "1"})
    native_kinds = descriptor_kinds(native.process.pid)
    portable_kinds = descriptor_kinds(portable.process.pid)
    assert any("eventpoll" in kind for kind in native_kinds), native_kinds
    assert any("eventfd" in kind for kind in native_kinds), native_kinds
    assert not any("eventpoll" in kind or "eventfd" in kind for kind in portable_kinds), portable_kinds
    # Linux has no SO_NOSIGPIPE: the portable mode ignores SIGPIPE for the whole process.
    assert ignored_signals(portable.process.pid) & (1 << (signal.SIGPIPE - 1))
    for server in (native, portable):
        assert httpx.get(f"{server.url}/health", timeout=30).status_code == 200
        # Known to serve: no "ignoring environment variables" warning naming it.
        assert VARIABLE not in server.stderr_text()


def test_a_value_that_is_not_a_boolean_stops_the_start():
    result = subprocess.run(
        [BIN, "serve", "--port", "0", "--db", ":memory:"],
        env={**os.environ, VARIABLE: "yes"}, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 78
    assert VARIABLE in result.stderr


def open_sockets(pid):
    """How many sockets the process holds open (Linux: /proc/PID/fd; elsewhere lsof)."""
    if os.path.isdir(f"/proc/{pid}/fd"):
        return sum(kind.startswith("socket:") for kind in descriptor_kinds(pid))
    out = subprocess.run(["lsof", "-n", "-P", "-a", "-p", str(pid), "-i"], capture_output=True, text=True, timeout=30).stdout
    return max(0, len(out.splitlines()) - 1)


def reset_mid_response(server):
    """Pipelines requests for a 7.5 KB page and reads none: the server's capped send queue
    fills and the rest waits for writability. Then a half-close, which the server reads (it
    keeps answering a half-closed client, RFC 9112 §9.6, in TCP's CLOSE_WAIT), and a reset,
    which in CLOSE_WAIT the kernel reports to the next send as EPIPE (tcp_reset). Each step
    waits for the state it needs, seen in the kernel's socket tables, never for a guessed
    time; and the next connection only once the server has closed this one."""
    port, pid = server.port, server.process.pid
    before = open_sockets(pid)
    client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    client.connect(("127.0.0.1", port))
    here = client.getsockname()[1]
    client.sendall(f"GET /emulator HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode() * 100)
    # The server has answers it cannot hand over: they wait in its send queue.
    assert wait_until(lambda: (tcp_connection(port, here) or {}).get("send_queue", 0) > 0), tcp_connection(port, here)
    client.shutdown(socket.SHUT_WR)
    # The half-close has reached the server's side of the connection.
    assert wait_until(lambda: (tcp_connection(port, here) or {}).get("state") == "CLOSE_WAIT"), tcp_connection(port, here)
    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    client.close()
    # The server has met the reset and closed the connection (or died of it: checked next).
    wait_until(lambda: server.process.poll() is not None or open_sockets(pid) <= before)


@pytest.mark.parametrize("mode", MODES)
def test_a_peer_gone_mid_response_costs_only_its_connection(start_server, mode):
    server = start_server("--db", ":memory:", env={VARIABLE: MODES[mode]})
    for _ in range(3):
        reset_mid_response(server)
    assert server.process.poll() is None, f"the server died: {server.process.returncode}"
    assert httpx.get(f"{server.url}/health", timeout=30).status_code == 200

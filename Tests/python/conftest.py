"""Starts the real auth-emulator binary on a loopback port for the Python test suite.

Every server is started with `--port 0`, its real URL read from the first stdout line
(`listening on http://HOST:PORT`), and stopped by its PID at the end (SIGTERM, then SIGKILL
after a bounded wait).
"""
import os
import re
import signal
import subprocess
import time

import pytest

BIN = os.environ.get("AUTH_EMULATOR_BIN", ".build/debug/auth-emulator")
ANON_KEY = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9"
    ".CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0"
)
SERVICE_ROLE_KEY = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImV4cCI6MTk4MzgxMjk5Nn0"
    ".EGIM96RAZx35lJzdJsyH-qQwv8Hdp7fsn3W0YpN81IU"
)


class Server:
    def __init__(self, args, env=None):
        self.process = subprocess.Popen(
            [BIN, "serve", "--host", "127.0.0.1", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        first = self.process.stdout.readline()
        match = re.fullmatch(r"listening on (http://127\.0\.0\.1:(\d+))\n", first)
        if not match:
            self.process.kill()
            raise AssertionError(f"unexpected first line {first!r}; stderr: {self.process.stderr.read()}")
        self.url = match.group(1)
        self.port = int(match.group(2))
        self.banner = [self.process.stdout.readline().rstrip("\n") for _ in range(4)]

    def stop(self, sig=signal.SIGTERM, timeout=10):
        """Stops the server by PID; returns its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
                raise AssertionError("server did not stop within the timeout")
        self.process.stdout.close()
        self.process.stderr.close()
        return self.process.returncode


@pytest.fixture
def start_server():
    servers = []

    def start(*args, env=None):
        server = Server(list(args), env=env)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def server(start_server):
    return start_server("--db", ":memory:")

"""`serve --seed` as a CI job sees it: the server listens (first stdout line, /health) only once
the fixture is committed, with progress on stderr meanwhile; SIGINT or SIGTERM while it seeds
stops the process, keeps nothing of the fixture and says so in one line."""
import json
import signal
import socket
import sqlite3
import subprocess

import pytest

import httpx

from conftest import BIN, SERVICE_ROLE_KEY

# Slow enough to be caught seeding: the default cost (the fixture's passwords are hashed with the
# server's iterations) for a few thousand users takes tens of seconds even in an optimized build.
USERS = 3000


def fixture(tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"users": [{"email": f"u{n}@example.com", "password": "password1"} for n in range(USERS)]}))
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def refused(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        return False
    except ConnectionRefusedError:
        return True


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_seeding_keeps_nothing_and_never_listens(tmp_path, sig):
    port = free_port()
    db = tmp_path / "auth.db"
    process = subprocess.Popen([BIN, "serve", "--port", str(port), "--db", str(db), "--seed", str(fixture(tmp_path))],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # A stderr line says the seed began (the signal handler is in place before it); warnings
        # about the environment may come first.
        seen = []
        while not (seen and seen[-1].startswith("seeding ")) and len(seen) < 20:
            seen.append(process.stderr.readline())
        assert seen[-1].startswith("seeding ") and "big.json" in seen[-1], seen
        # Seeding: nothing listens yet, so a client waiting for the port or /health keeps waiting.
        assert refused(port)
        process.send_signal(sig)
        assert process.wait(timeout=60) == 130
        rest = process.stderr.read()
        assert "interrupted while seeding" in rest and "nothing of it was kept" in rest, rest
        assert process.stdout.read() == ""  # no banner: it never listened
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
    users = sqlite3.connect(db).execute("SELECT count(*) FROM users").fetchone()[0]
    assert users == 0


def test_the_server_listens_once_the_fixture_is_in(tmp_path):
    path = tmp_path / "small.json"
    path.write_text(json.dumps({"users": [{"email": f"s{n}@example.com"} for n in range(50)]}))
    process = subprocess.Popen([BIN, "serve", "--port", "0", "--db", ":memory:", "--seed", str(path)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("listening on http://127.0.0.1:"), line
        # By the time the first line is out, every fixture user is in.
        url = line.split()[-1]
        listed = httpx.get(f"{url}/admin/users?per_page=100", headers={"Authorization": f"Bearer {SERVICE_ROLE_KEY}"},
                           timeout=30).json()
        assert len(listed["users"]) == 50
    finally:
        process.terminate()
        assert process.wait(timeout=60) == 0

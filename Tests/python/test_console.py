"""What the binary tells the person at the console, read from the real process: the banner's
lines, the one line a stop leaves with its request counts, the seeding summary, usage errors
with a suggestion, and the one line `--open` leaves where no browser can be opened."""
import http.client
import json
import pathlib
import re
import signal
import subprocess
import sys
import time

import httpx
import pytest

from conftest import BIN, wait_until, wait_until_server_read


def test_banner_names_signing_key_and_settings_sources(start_server, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[auth]\nsite_url = "http://localhost:3000"\n')
    secret = "a-jwt-secret-that-the-banner-must-not-print-0123"
    server = start_server("--db", ":memory:", "--config", str(config),
                          env={"GOTRUE_JWT_EXP": "600", "GOTRUE_JWT_SECRET": secret})
    assert server.banner[-1] == "database:         :memory:"
    # As under supabase start: user tokens are signed with the CLI's built-in ES256 key.
    assert server.info["signing key"] == "ES256 kid b81269f1-21d8-4f2e-b719-c2240a840d90 (the Supabase CLI's built-in key)"
    sources = server.info["settings from"]
    assert sources.startswith(f"--config {config}; env ")
    names = sources.split("; env ", 1)[1].split(", ")
    # Names only, never values; the test harness's own variables are not settings.
    assert "GOTRUE_JWT_EXP" in names and "GOTRUE_JWT_SECRET" in names
    assert secret not in "\n".join(server.banner)
    assert "600" not in sources


def test_the_running_page_shows_the_real_banner(start_server):
    """docs/running.md's banner is the one `serve` prints with nothing configured: line by line,
    with its port and database path standing for this run's."""
    text = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "running.md").read_text()
    block = re.search(r"^```\n(listening on .*?)^```$", text, re.S | re.M)
    assert block, "docs/running.md has no banner example"
    shown = block.group(1).replace("http://127.0.0.1:9999", "{url}").splitlines()
    server = start_server("--db", ":memory:")
    real = [f"listening on {server.url}", *server.banner]
    assert [line.replace(server.url, "{url}") for line in real[:-1]] == shown[:-1]
    assert real[-1].split(":")[0] == shown[-1].split(":")[0] == "database"


def test_banner_names_an_asymmetric_key_by_kid(start_server):
    server = start_server("--db", ":memory:", "--signing-key", "es256")
    match = re.fullmatch(r"ES256 kid ([0-9a-f-]{36})", server.info["signing key"])
    assert match, server.info["signing key"]
    jwks = httpx.get(f"{server.url}/.well-known/jwks.json", timeout=30).json()
    assert match.group(1) in [key.get("kid") for key in jwks["keys"]]


def test_each_warning_once(start_server, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[auth.external.github]\nenabled = false\nurl = "https://github.example"\n')
    server = start_server("--db", ":memory:", "--config", str(config), env={"GOTRUE_NOT_A_SETTING": "1"})
    stderr = server.stderr_text()
    warnings = [line for line in stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == len(set(warnings)), warnings
    assert any("GOTRUE_NOT_A_SETTING" in line for line in warnings), warnings
    assert len([line for line in warnings if "[auth.external.github] url" in line]) == 1, warnings


def stop_and_read(server, sig=signal.SIGTERM, timeout=60):
    """Stops the server by PID and returns its exit status and its `stopping:` lines (read
    before the fixture's `stop` closes the captured stderr)."""
    server.process.send_signal(sig)
    status = server.process.wait(timeout=timeout)
    lines = [line for line in server.stderr_text().splitlines() if line.startswith("stopping:")]
    server.stop()
    return status, lines


def test_stop_line_counts_finished_and_cut_off_requests(start_server, tmp_path):
    # /health is held 4 s (finishes within the 6 s drain), /settings 60 s (cut off at the drain).
    drain = 6
    scenario = tmp_path / "slow.json"
    scenario.write_text(json.dumps({"name": "slow", "rules": [
        {"match": {"op": "health"}, "then": {"delay_ms": 4000}},
        {"match": {"op": "settings"}, "then": {"delay_ms": 60000}},
    ]}))
    db = tmp_path / "auth.db"
    server = start_server("--db", str(db), "--scenario", str(scenario), "--shutdown-timeout", str(drain), "--quiet")

    # Both requests must be in the server (held by their delays) before the signal: each is
    # sent, then awaited until the server has read it (a held response is not in the journal
    # yet; the socket's queues show it). /health goes last, so its hold has only begun when
    # the signal is sent; the answers are read from the sockets after the stop.
    connections = {}
    for path in ("/settings", "/health"):
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        connection.request("GET", path)
        wait_until_server_read(server.port, connection.sock.getsockname()[1])
        connections[path] = connection
    started = time.monotonic()
    status, lines = stop_and_read(server)
    assert status == 0
    # /settings waited out the drain: the server gave in-flight requests all of it.
    assert time.monotonic() - started > drain - 0.5
    results = {}
    for path, connection in connections.items():
        try:
            results[path] = connection.getresponse().status
        except (OSError, http.client.HTTPException) as error:
            results[path] = type(error).__name__
        connection.close()
    assert results["/health"] == 200
    assert results["/settings"] != 200
    assert lines == ["stopping: 1 request finished, 1 cut off, database checkpointed"], lines


def test_idle_stop_line(start_server):
    server = start_server("--db", ":memory:")
    status, lines = stop_and_read(server, signal.SIGINT)
    assert status == 0
    assert lines == ["stopping: 0 requests finished, 0 cut off, in-memory database discarded"]


def test_seeding_into_a_file_prints_the_start_and_a_summary_line(tmp_path):
    users = [{"email": f"user{i}@example.com", "password": "bulk-Passw0rd!", "email_confirm": True} for i in range(3000)]
    fixture = tmp_path / "users.json"
    fixture.write_text(json.dumps({"users": users}))
    stderr = tmp_path / "stderr.txt"
    with open(stderr, "w") as err:
        process = subprocess.Popen(
            [BIN, "serve", "--host", "127.0.0.1", "--port", "0", "--db", ":memory:", "--quiet", "--seed", str(fixture)],
            stdout=subprocess.PIPE, stderr=err, text=True,
            env={"AUTH_EMULATOR_PASSWORD_ITERATIONS": "1000", "PATH": "/usr/bin:/bin"},
        )
        try:
            first = process.stdout.readline()
            assert first.startswith("listening on http://127.0.0.1:"), (first, stderr.read_text())
            for _ in range(12):
                if process.stdout.readline().startswith("database:"):
                    break
            text = stderr.read_text()
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=60) == 0
            process.stdout.close()
    # Not a terminal: no carriage returns, no redrawing; a line as the seed starts, a progress
    # line only per 10 s of seeding, and the summary.
    assert "\r" not in text and "\x1b" not in text, repr(text)
    seeded = [line for line in text.splitlines() if "seed" in line]
    assert seeded[0] == f"seeding {fixture}...", text
    assert all(line.startswith("seeding: ") for line in seeded[1:-1]), text
    assert re.fullmatch(r"seeded 3,000 users in \d+\.\d s", seeded[-1]), text


def test_unknown_flag_exits_64_with_a_suggestion():
    result = subprocess.run([BIN, "serve", "--prot", "0"], capture_output=True, text=True, timeout=10)
    assert result.returncode == 64
    assert "Error: unknown option '--prot' (did you mean '--port'?)" in result.stderr
    result = subprocess.run([BIN, "serv"], capture_output=True, text=True, timeout=10)
    assert result.returncode == 64
    assert "did you mean 'serve'?" in result.stderr


OPENER = "open" if sys.platform == "darwin" else "xdg-open"


def opener_failure_lines(server):
    """The `--open` warning lines on stderr so far."""
    return [line for line in server.stderr_text().splitlines() if "could not open a browser" in line]


@pytest.mark.parametrize("opener", ["missing", "finds no browser"])
def test_open_without_a_browser_says_so_in_one_line(start_server, tmp_path, opener):
    # PATH is one empty folder (no opener at all), or one holding an opener that exits 3 as
    # xdg-open does on a machine with no browser it could start.
    if opener != "missing":
        fake = tmp_path / OPENER
        fake.write_text("#!/bin/sh\nexit 3\n")
        fake.chmod(0o755)
    server = start_server("--db", ":memory:", "--open", env={"PATH": str(tmp_path)})
    dashboard = server.info["dashboard"]
    # The line comes after the banner (an opener that ran is waited for in the background).
    assert wait_until(lambda: opener_failure_lines(server)), server.stderr_text()
    # The server goes on serving, the dashboard included.
    assert httpx.get(f"{server.url}/health", timeout=30).status_code == 200
    assert httpx.get(dashboard, timeout=30).status_code == 200
    # Once the server has exited it has written all it will: a second line would be there now.
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=60) == 0
    assert opener_failure_lines(server) == [
        f"warning: could not open a browser (no {OPENER} or no browser it could start); the dashboard is at {dashboard}"
    ]

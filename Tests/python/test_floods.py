"""Floods and slow clients, a bounded run of bench/floods.py (about 20 s).

Smaller counts than the benchmark's defaults (1,000 idle connections, 100 slow-header and 100
slow-body clients, 50 pipelining never-readers) and short server timeouts, so it fits the
normal suite. The never-reader that resumes does so after the measurement, or 5 s in should the
measurement take longer, before the write timeout (6 s) at which the server resets the other 49.
The latency target gets a wider absolute allowance than the benchmark's, since the suite shares
the machine with whatever else runs; memory, timeouts, the resumed reader and the 503 are held
to the benchmark's own targets.
"""
import json
import os
import subprocess
import sys

from conftest import BIN

HARNESS = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "floods.py")


def test_floods_and_slow_clients():
    args = [
        sys.executable, HARNESS, "--bin", BIN, "--json",
        "--idle", "1000", "--slow-headers", "100", "--slow-bodies", "100",
        "--never-read", "50", "--pipeline", "5000",
        "--storm-threads", "3", "--storm-seconds", "1.5",
        "--health", "200", "--header-timeout", "2", "--body-timeout", "3", "--write-timeout", "6", "--cap", "30",
        "--slack-ms", "5",
    ]
    run = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert run.stdout.strip(), f"no report; stderr:\n{run.stderr[-4000:]}"
    report = json.loads(run.stdout)
    rows = {row["attack"]: row for row in report["attacks"]}
    assert set(rows) == {"idle", "slow-headers", "slow-bodies", "storm", "never-read"}

    for name, row in rows.items():
        assert row["health_failures"] == 0, (name, row)
        assert row["memory_ok"], (name, row)
        assert row["behaviour_ok"], (name, row["notes"])
        assert row["latency_ok"], (name, row)

    # The never-readers stop being served at the output cap: the server's memory per such
    # connection stays small however many requests each one pipelined.
    never = rows["never-read"]
    assert never["memory_used_kib"] <= 50 * 320, never
    # ... and those that never read again are reset at the write timeout (behaviour_ok checks
    # the 6 s window), freeing what they held.
    assert "49/49 reset" in never["notes"], never

    cap = report["cap"]
    assert cap["over_cap_status"] == 503, cap
    assert cap["recovered"] and cap["server_alive"], cap
    assert report["misses"] == [], report["misses"]
    assert run.returncode == 0, run.stderr[-4000:]

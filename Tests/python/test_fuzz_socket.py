"""The black-box socket fuzzer (fuzz_socket.py), bounded, as part of the normal suite.

A fixed seed keeps a failure reproducible: `python3 Tests/python/fuzz_socket.py --seed 20`
replays the same inputs against the same binary (timing aside).
"""
import fuzz_socket
from conftest import BIN


def test_mutated_requests_never_get_a_5xx_or_hurt_the_server():
    report = fuzz_socket.run(BIN, seconds=20, count=100_000, seed=20, batch=50, rss_limit_mb=512, log=lambda _line: None)
    summary = {k: v for k, v in report.items() if k != "findings"}
    assert report["findings"] == [], f"{summary}: {report['findings'][:5]}"
    # The run must have exercised something: answers, health checks, a clean stop.
    assert report["sent"] >= 100, summary
    assert report["answered"] > report["sent"] // 2, summary
    assert report["health_checks"] >= 2, summary
    assert report["exit_status"] == 0, summary

"""Concurrency semantics over the wire, against the real binary (bounded: 16 threads, one round
each): parallel refreshes of one token yield one child, parallel sign-ups of one address create
one user, parallel verifications of one code create one session."""
import sqlite3
from concurrent.futures import ThreadPoolExecutor

import httpx

from conftest import ANON_KEY, SERVICE_ROLE_KEY
from helpers_client import PASSWORD, unique_email

N = 16
HEADERS = {"apikey": ANON_KEY}


def parallel(fn, n=N):
    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(lambda _: fn(), range(n)))


def test_parallel_refreshes_of_one_token_share_one_child(start_auth, tmp_path):
    db = tmp_path / "auth.db"
    server = start_auth(db=db)
    session = httpx.post(f"{server.url}/auth/v1/signup", json={"email": unique_email("race"), "password": PASSWORD},
                         headers=HEADERS, timeout=10).json()
    token = session["refresh_token"]
    results = parallel(lambda: httpx.post(f"{server.url}/auth/v1/token?grant_type=refresh_token",
                                          json={"refresh_token": token}, headers=HEADERS, timeout=30))
    assert all(r.status_code == 200 for r in results), [r.text for r in results if r.status_code != 200]
    # GoTrue's "lost response" rule: every concurrent refresh of the same token gets the same child.
    children = {r.json()["refresh_token"] for r in results}
    assert len(children) == 1
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT count(*) FROM refresh_tokens WHERE parent = ?", (token,)).fetchone()[0]
    assert rows == 1


def test_parallel_sign_ups_of_one_address_create_one_user(start_auth, tmp_path):
    db = tmp_path / "auth.db"
    server = start_auth(db=db)
    email = unique_email("dup")
    results = parallel(lambda: httpx.post(f"{server.url}/auth/v1/signup", json={"email": email, "password": PASSWORD},
                                          headers=HEADERS, timeout=30))
    statuses = sorted(r.status_code for r in results)
    assert statuses.count(200) == 1, [r.text for r in results]
    assert all(r.json().get("error_code") == "user_already_exists" for r in results if r.status_code != 200)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM users WHERE email = ?", (email,)).fetchone()[0] == 1


def test_parallel_verifications_of_one_code_create_one_session(start_auth, tmp_path):
    db = tmp_path / "auth.db"
    server = start_auth(db=db)
    email = unique_email("otp-race")
    httpx.post(f"{server.url}/auth/v1/otp", json={"email": email}, headers=HEADERS, timeout=10).raise_for_status()
    otp = httpx.get(f"{server.url}/emulator/v1/outbox/latest", params={"to": email},
                    headers={"apikey": SERVICE_ROLE_KEY}, timeout=10).json()["otp"]
    # The OTP sign-up already holds a session (GoTrue runs its sign-up with confirmations off).
    with sqlite3.connect(db) as conn:
        before = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
    results = parallel(lambda: httpx.post(f"{server.url}/auth/v1/verify", json={"type": "email", "email": email, "token": otp},
                                          headers=HEADERS, timeout=30))
    ok = [r for r in results if r.status_code == 200]
    assert len(ok) == 1, [r.text for r in results]
    assert all(r.json().get("error_code") == "otp_expired" for r in results if r.status_code != 200)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == before + 1

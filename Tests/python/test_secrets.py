"""No secret leaks: after sign-up, password sign-in, refresh, an email OTP and a failed sign-in,
neither the access log on stderr, nor the request journal, nor the dashboard's users and journal
pages contain the password, its stored hash, a refresh or access token, or the OTP. (The outbox
and the dashboard's mailbox show codes by design: they are the test side door.)"""
import sqlite3

import httpx

from conftest import ANON_KEY, SERVICE_ROLE_KEY

PASSWORD = "a-very-distinctive-password-9"


def test_no_secret_in_logs_journal_or_dashboard(start_auth, tmp_path):
    db = tmp_path / "auth.db"
    server = start_auth(db=db)
    base = f"{server.url}/auth/v1"
    headers = {"apikey": ANON_KEY}
    session = httpx.post(f"{base}/signup", json={"email": "leak@example.com", "password": PASSWORD},
                         headers=headers, timeout=10).json()
    signed_in = httpx.post(f"{base}/token?grant_type=password", json={"email": "leak@example.com", "password": PASSWORD},
                           headers=headers, timeout=10).json()
    refreshed = httpx.post(f"{base}/token?grant_type=refresh_token", json={"refresh_token": signed_in["refresh_token"]},
                           headers=headers, timeout=10).json()
    httpx.post(f"{base}/token?grant_type=password", json={"email": "leak@example.com", "password": PASSWORD + "x"},
               headers=headers, timeout=10)
    httpx.post(f"{base}/otp", json={"email": "leak@example.com"}, headers=headers, timeout=10)
    otp = httpx.get(f"{server.url}/emulator/v1/outbox/latest", params={"to": "leak@example.com"},
                    headers={"apikey": SERVICE_ROLE_KEY}, timeout=10).json()["otp"]
    httpx.get(f"{base}/verify", params={"token": "some-link-token-value", "type": "magiclink"}, timeout=10)
    with sqlite3.connect(db) as conn:
        stored_hash = conn.execute("SELECT encrypted_password FROM users WHERE email = 'leak@example.com'").fetchone()[0]

    journal = httpx.get(f"{server.url}/emulator/v1/journal", headers={"apikey": SERVICE_ROLE_KEY}, timeout=10).text
    pages = "".join(httpx.get(f"{server.url}{path}", timeout=10).text
                    for path in ["/emulator", "/emulator/journal", f"/emulator/users/{session['user']['id']}"])
    secrets = {
        "password": PASSWORD, "hash": stored_hash, "refresh token": signed_in["refresh_token"],
        "rotated refresh token": refreshed["refresh_token"], "access token": session["access_token"],
        "OTP": otp, "link token": "some-link-token-value",
    }
    for place, text in [("access log", server.stderr_text()), ("journal", journal)]:
        for name, value in secrets.items():
            assert value not in text, f"{name} in the {place}"
    for name in ["password", "hash", "refresh token", "rotated refresh token", "access token"]:
        assert secrets[name] not in pages, f"{name} on a dashboard page"
    assert "POST /auth/v1/token 400 invalid_credentials" in server.stderr_text()  # the log did run

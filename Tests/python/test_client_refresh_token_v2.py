"""The second refresh-token format (`GOTRUE_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION=2`,
reference §7.5, §7.6) driven through the real supabase-auth client: sessions that store a key
and a counter instead of a row per token."""
import base64
import re

import httpx
import pytest
from supabase_auth.errors import AuthApiError

from conftest import SERVICE_ROLE_KEY
from helpers_client import PASSWORD, REFRESH_TOKEN, api_error, claims, gateway, unique_email

V2 = {"GOTRUE_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION": "2"}
# base64url without padding of 0x00 | session id | uvarint | 16-byte HMAC | 4-byte checksum.
V2_TOKEN = re.compile(r"[A-Za-z0-9_-]{51,62}")


def decoded(token):
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    session = raw[1:17].hex()
    return raw, f"{session[:8]}-{session[8:12]}-{session[12:16]}-{session[16:20]}-{session[20:]}"


def counter(token):
    raw, _ = decoded(token)
    value, shift = 0, 0
    for byte in raw[17:]:
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value
        shift += 7


def test_sessions_rotate_by_counter(start_auth, make_client):
    client = make_client(start_auth(**V2))
    email = unique_email("v2")
    session = client.sign_up({"email": email, "password": PASSWORD}).session
    assert V2_TOKEN.fullmatch(session.refresh_token)
    raw, session_id = decoded(session.refresh_token)
    assert raw[0] == 0
    assert session_id == claims(session.access_token)["session_id"]
    assert counter(session.refresh_token) == 0

    refreshed = client.refresh_session().session
    assert V2_TOKEN.fullmatch(refreshed.refresh_token)
    assert counter(refreshed.refresh_token) == 1
    assert claims(refreshed.access_token)["session_id"] == session_id
    assert client.get_user().user.email == email
    again = client.refresh_session().session
    assert counter(again.refresh_token) == 2

    # A password sign-in is a new session, with its own counter from 0.
    other = client.sign_in_with_password({"email": email, "password": PASSWORD}).session
    assert counter(other.refresh_token) == 0
    assert decoded(other.refresh_token)[1] != session_id

    # Signing out deletes the sessions, and with them everything their tokens could do.
    client.sign_out()
    with pytest.raises(AuthApiError) as gone:
        client.refresh_session(again.refresh_token)
    api_error(gone, AuthApiError, "refresh_token_not_found", 400, "Invalid Refresh Token: Refresh Token Not Found")


def test_lost_answer_and_reuse(start_auth, make_client):
    client = make_client(start_auth(GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL="0", **V2))
    first = client.sign_up({"email": unique_email("reuse"), "password": PASSWORD}).session
    second = client.refresh_session(first.refresh_token).session
    # One behind: the client lost the answer, so it gets the current token again.
    assert client.refresh_session(first.refresh_token).session.refresh_token == second.refresh_token
    third = client.refresh_session(second.refresh_token).session
    assert counter(third.refresh_token) == 2

    # Two behind, outside the (zero) reuse interval: reuse, and the whole session ends.
    with pytest.raises(AuthApiError) as reused:
        client.refresh_session(first.refresh_token)
    api_error(reused, AuthApiError, "refresh_token_already_used", 400, "Invalid Refresh Token: Already Used")
    with pytest.raises(AuthApiError) as newest:
        client.refresh_session(third.refresh_token)
    api_error(newest, AuthApiError, "refresh_token_not_found", 400, "Invalid Refresh Token: Refresh Token Not Found")
    with pytest.raises(AuthApiError) as access:
        client.get_user(third.access_token)
    api_error(access, AuthApiError, "session_not_found", 403)


def test_headers_and_malformed_tokens(start_auth):
    server = start_auth(**V2)
    with gateway(server) as http:
        signed_up = http.post("/signup", json={"email": unique_email("hdr"), "password": PASSWORD})
        assert signed_up.status_code == 200
        assert signed_up.headers["sb-auth-refresh-token-counter"] == "0"
        assert "sb-auth-refresh-token-prefix" not in signed_up.headers
        token = signed_up.json()["refresh_token"]
        refreshed = http.post("/token", params={"grant_type": "refresh_token"}, json={"refresh_token": token})
        assert refreshed.status_code == 200
        assert refreshed.headers["sb-auth-refresh-token-counter"] == "1"
        assert refreshed.headers["sb-auth-refresh-token-reuse"] == "false"
        assert refreshed.headers["sb-auth-session-id"] == decoded(token)[1]
        # A changed character breaks the checksum: refused before any lookup.
        mangled = token[:30] + ("A" if token[30] != "A" else "B") + token[31:]
        for bad in (mangled, "A" * 51):
            answer = http.post("/token", params={"grant_type": "refresh_token"}, json={"refresh_token": bad})
            assert answer.status_code == 400
            assert answer.json()["error_code"] == "validation_failed"
            assert answer.json()["msg"] == "Refresh token is not valid"


def test_legacy_sessions_upgrade_on_refresh(start_auth, make_client):
    server = start_auth()
    client = make_client(server)
    legacy = client.sign_up({"email": unique_email("upgrade"), "password": PASSWORD}).session
    assert REFRESH_TOKEN.fullmatch(legacy.refresh_token)

    patched = httpx.patch(f"{server.url}/emulator/v1/config", headers={"apikey": SERVICE_ROLE_KEY},
                          json={"refresh_token_algorithm_version": 2, "refresh_token_upgrade_percentage": 100},
                          timeout=10)
    assert patched.status_code == 200, patched.text
    assert patched.json()["refresh_token_algorithm_version"] == 2

    upgraded = client.refresh_session().session
    assert V2_TOKEN.fullmatch(upgraded.refresh_token)
    assert counter(upgraded.refresh_token) == 0
    assert decoded(upgraded.refresh_token)[1] == claims(legacy.access_token)["session_id"]
    assert counter(client.refresh_session().session.refresh_token) == 1

    refused = httpx.patch(f"{server.url}/emulator/v1/config", headers={"apikey": SERVICE_ROLE_KEY},
                          json={"refresh_token_algorithm_version": 3}, timeout=10)
    assert refused.status_code == 400
    assert refused.json()["msg"] == "refresh_token_algorithm_version: must be a whole number in 0...2"

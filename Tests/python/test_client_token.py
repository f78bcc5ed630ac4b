"""`POST /token` through the real supabase-auth client: the password grant and refresh-token
rotation with reuse detection (reference §5.6, §7.5, §7.6, §18.4, §18.5)."""
import pytest
from supabase_auth.errors import AuthApiError

from helpers_client import (
    PASSWORD,
    REFRESH_TOKEN,
    api_error,
    assert_recent,
    claims,
    gateway,
    unique_email,
)

NO_REUSE_INTERVAL = {"GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL": "0"}


def signed_up(client, **data):
    email = unique_email()
    result = client.sign_up({"email": email, "password": PASSWORD, "options": {"data": data}})
    return email, result.session


def test_sign_in_with_password(start_auth, make_client):
    client = make_client(start_auth())
    email, first = signed_up(client, nickname="ace")

    result = client.sign_in_with_password({"email": email.upper(), "password": PASSWORD})
    session = result.session
    assert session is not None
    assert session.token_type == "bearer"
    assert session.expires_in == 3600
    assert REFRESH_TOKEN.fullmatch(session.refresh_token)
    assert session.refresh_token != first.refresh_token
    user = result.user
    assert user.id == first.user.id
    assert user.email == email
    assert user.user_metadata["nickname"] == "ace"
    assert user.last_sign_in_at is not None
    assert [i.provider for i in user.identities] == ["email"]

    payload = claims(session.access_token)
    # A sign-in is a new session (reference §7.7) with amr `password` (§7.2).
    assert payload["session_id"] != claims(first.access_token)["session_id"]
    assert [entry["method"] for entry in payload["amr"]] == ["password"]
    assert payload["aal"] == "aal1"
    assert client.get_session().access_token == session.access_token


def test_wrong_password_and_unknown_user_are_invalid_credentials(start_auth, make_client):
    # Reference §5.6: one answer for both, so accounts cannot be enumerated.
    client = make_client(start_auth())
    email, _ = signed_up(client)
    for credentials in (
        {"email": email, "password": "wrong-password"},
        {"email": unique_email("nobody"), "password": PASSWORD},
    ):
        with pytest.raises(AuthApiError) as excinfo:
            client.sign_in_with_password(credentials)
        api_error(excinfo, AuthApiError, "invalid_credentials", 400, "Invalid login credentials")


def test_password_grant_response_carries_weak_password(tmp_path, start_auth, make_client):
    # Reference §3.4 / §5.6 / §18.4: the password grant always has a `weak_password` key: null
    # when the password meets the current policy, else the message and reasons. A stricter
    # second process on the same database makes an existing 7-character password weak.
    db = tmp_path / "auth.db"
    lenient = start_auth(db)
    strict = start_auth(db, GOTRUE_PASSWORD_MIN_LENGTH="8")
    email = unique_email()
    make_client(lenient).sign_up({"email": email, "password": "seven77"})

    body = {"email": email, "password": "seven77"}
    with gateway(lenient) as http:
        ok = http.post("/token", params={"grant_type": "password"}, json=body)
        assert ok.status_code == 200
        assert "weak_password" in ok.json()
        assert ok.json()["weak_password"] is None
    with gateway(strict) as http:
        weak = http.post("/token", params={"grant_type": "password"}, json=body)
        assert weak.status_code == 200
        assert weak.json()["weak_password"] == {
            "message": "Password should be at least 8 characters.",
            "reasons": ["length"],
        }
        # The refresh grant never carries the key.
        refreshed = http.post(
            "/token", params={"grant_type": "refresh_token"},
            json={"refresh_token": weak.json()["refresh_token"]},
        )
        assert refreshed.status_code == 200
        assert "weak_password" not in refreshed.json()

    # The client still signs in (the field is informational).
    assert make_client(strict).sign_in_with_password(body).session is not None


def test_refresh_rotates_the_token_and_keeps_the_session(start_auth, make_client):
    client = make_client(start_auth())
    _, session = signed_up(client)
    before = claims(session.access_token)

    result = client.refresh_session(session.refresh_token)
    refreshed = result.session
    assert refreshed.refresh_token != session.refresh_token
    assert REFRESH_TOKEN.fullmatch(refreshed.refresh_token)
    assert result.user.id == session.user.id
    assert refreshed.expires_in == 3600
    after = claims(refreshed.access_token)
    assert after["session_id"] == before["session_id"]
    assert after["sub"] == before["sub"]
    # Refreshing adds no AMR entry (reference §7.2).
    assert after["amr"] == before["amr"]
    assert_recent(after["iat"])
    assert client.get_session().refresh_token == refreshed.refresh_token

    # The client's own stored session refreshes too.
    again = client.refresh_session().session
    assert again.refresh_token not in (session.refresh_token, refreshed.refresh_token)
    assert claims(again.access_token)["session_id"] == before["session_id"]


def test_lost_refresh_response_returns_the_same_child(start_auth, make_client):
    # Reference §7.6 rule 1 / §18.5: a revoked token whose child is still the newest token gets
    # that child back (the client lost the response), even with a zero reuse interval.
    client = make_client(start_auth(**NO_REUSE_INTERVAL))
    _, session = signed_up(client)
    child = client.refresh_session(session.refresh_token).session
    again = client.refresh_session(session.refresh_token).session
    assert again.refresh_token == child.refresh_token
    assert claims(again.access_token)["session_id"] == claims(child.access_token)["session_id"]
    # And the child still rotates normally.
    grandchild = client.refresh_session(child.refresh_token).session
    assert grandchild.refresh_token != child.refresh_token


def test_reuse_after_the_interval_revokes_the_token_family(start_auth, make_client):
    # Reference §7.6 rule 3 / §16: reusing an older token outside the reuse interval is
    # `refresh_token_already_used`, and every live token of the session is revoked with it; the
    # session row stays, so the access token keeps working until it expires.
    client = make_client(start_auth(**NO_REUSE_INTERVAL))
    _, first = signed_up(client)
    second = client.refresh_session(first.refresh_token).session
    third = client.refresh_session(second.refresh_token).session

    with pytest.raises(AuthApiError) as reused:
        client.refresh_session(first.refresh_token)
    api_error(reused, AuthApiError, "refresh_token_already_used", 400, "Invalid Refresh Token: Already Used")

    with pytest.raises(AuthApiError) as newest:
        client.refresh_session(third.refresh_token)
    api_error(newest, AuthApiError, "refresh_token_already_used", 400, "Invalid Refresh Token: Already Used")

    assert client.get_user(third.access_token).user.id == first.user.id

    # Other sessions of the same user are untouched.
    other = client.sign_in_with_password({"email": first.user.email, "password": PASSWORD}).session
    assert client.refresh_session(other.refresh_token).session is not None


def test_reuse_within_the_interval_is_tolerated(start_auth, make_client):
    # Reference §7.6 rule 2; the emulator's default interval is `supabase start`'s 10 s.
    client = make_client(start_auth())
    _, first = signed_up(client)
    second = client.refresh_session(first.refresh_token).session
    client.refresh_session(second.refresh_token)

    tolerated = client.refresh_session(first.refresh_token).session
    assert tolerated.refresh_token != first.refresh_token
    assert claims(tolerated.access_token)["session_id"] == claims(first.access_token)["session_id"]
    # What it hands out is a working refresh token.
    assert client.refresh_session(tolerated.refresh_token).session is not None


def test_unknown_and_malformed_refresh_tokens(start_auth, make_client):
    # Reference §5.6 / §16.
    client = make_client(start_auth())
    with pytest.raises(AuthApiError) as unknown:
        client.refresh_session("abcdefghijkl")
    api_error(unknown, AuthApiError, "refresh_token_not_found", 400, "Invalid Refresh Token: Refresh Token Not Found")

    with pytest.raises(AuthApiError) as malformed:
        client.refresh_session("short")
    api_error(malformed, AuthApiError, "validation_failed", 400, "Refresh token is not valid")


def test_password_grant_validation(start_auth):
    # Reference §5.6: both or neither identifier, and unknown grant types, checked before any
    # lookup. The client refuses these itself, so they go over raw HTTP.
    server = start_auth()
    version = {"X-Supabase-Api-Version": "2024-01-01"}
    with gateway(server) as http:
        both = http.post(
            "/token", params={"grant_type": "password"}, headers=version,
            json={"email": unique_email(), "phone": "15555550100", "password": PASSWORD},
        )
        assert both.status_code == 400
        assert both.json() == {
            "code": "validation_failed",
            "message": "Only an email address or phone number should be provided on login.",
        }
        neither = http.post("/token", params={"grant_type": "password"}, headers=version, json={"password": PASSWORD})
        assert neither.status_code == 400
        assert neither.json() == {"code": "validation_failed", "message": "missing email or phone"}
        bogus = http.post("/token", params={"grant_type": "magic"}, headers=version, json={})
        assert bogus.status_code == 400
        assert bogus.json() == {"code": "invalid_credentials", "message": "unsupported_grant_type"}
        assert bogus.headers["x-sb-error-code"] == "invalid_credentials"

"""`GET /user` and `PUT /user` through the real supabase-auth client (reference §5.14, §5.15,
§7.7, §16)."""
import time
import uuid

import jwt
import pytest
from supabase_auth.errors import AuthApiError, AuthWeakPasswordError

from conftest import ANON_KEY
from helpers_client import JWT_SECRET, PASSWORD, api_error, claims, gateway, unique_email


def signed_up(client, **data):
    email = unique_email()
    result = client.sign_up({"email": email, "password": PASSWORD, "options": {"data": data}})
    return email, result.session


def test_get_user_with_a_jwt(start_auth, make_client):
    server = start_auth()
    client = make_client(server)
    email, session = signed_up(client, color="blue")

    # A second client with no session of its own, given only the access token.
    other = make_client(server, persist_session=False)
    assert other.get_user() is None
    user = other.get_user(session.access_token).user
    assert user.id == session.user.id
    assert user.email == email
    assert user.user_metadata == session.user.user_metadata
    assert user.app_metadata == {"provider": "email", "providers": ["email"]}
    assert [i.provider for i in user.identities] == ["email"]
    assert user.email_confirmed_at is not None
    # GET /user reloads the row, so the generated confirmed_at is there (reference §3.1 note).
    assert user.confirmed_at is not None
    assert user.is_anonymous is False

    # The client's own session is used when no token is given.
    assert client.get_user().user.id == user.id


def test_get_user_rejects_bad_tokens(start_auth, make_client):
    # Reference §1.3 / §16: a malformed bearer is 403 `bad_jwt`; no bearer at all is 401
    # `no_authorization`.
    server = start_auth()
    client = make_client(server)
    with pytest.raises(AuthApiError) as malformed:
        client.get_user("not-a-jwt")
    api_error(malformed, AuthApiError, "bad_jwt", 403)

    with gateway(server) as http:
        missing = http.get("/user", headers={"X-Supabase-Api-Version": "2024-01-01"})
        assert missing.status_code == 401
        assert missing.json() == {"code": "no_authorization", "message": "This endpoint requires a valid Bearer token"}


def test_user_endpoint_checks_every_part_of_the_bearer(start_auth, make_client):
    # Reference §1.3: signature and expiry, then `sub` must name an existing user and
    # `session_id` (when present) an existing session. Tokens are forged from a real one's claims
    # with the project secret so that exactly one thing is wrong in each.
    client = make_client(start_auth())
    _, session = signed_up(client)
    real = claims(session.access_token)

    def forged(secret=JWT_SECRET, drop=(), **changes):
        payload = {k: v for k, v in {**real, **changes}.items() if k not in drop}
        return jwt.encode(payload, secret, algorithm="HS256")

    cases = [
        (forged(exp=int(time.time()) - 60), "bad_jwt", 403, None),
        (forged(secret="another-secret-that-is-at-least-32-characters"), "bad_jwt", 403, None),
        (ANON_KEY, "bad_jwt", 403, "invalid claim: missing sub claim"),
        (forged(sub=str(uuid.uuid4())), "user_not_found", 403, "User from sub claim in JWT does not exist"),
        (forged(session_id=str(uuid.uuid4())), "session_not_found", 403, "Session from session_id claim in JWT does not exist"),
    ]
    for token, code, status, message in cases:
        with pytest.raises(AuthApiError) as excinfo:
            client.get_user(token)
        api_error(excinfo, AuthApiError, code, status, message)

    # Without a session_id claim only the user has to exist.
    assert client.get_user(forged(drop=("session_id",))).user.id == session.user.id


def test_get_user_audience_header_must_match(start_auth, make_client):
    # Reference §5.14: X-JWT-AUD different from the token's audience is a 400.
    server = start_auth()
    _, session = signed_up(make_client(server))
    with gateway(server) as http:
        headers = {"Authorization": f"Bearer {session.access_token}", "X-Supabase-Api-Version": "2024-01-01"}
        same = http.get("/user", headers={**headers, "X-JWT-AUD": "authenticated"})
        assert same.status_code == 200
        other = http.get("/user", headers={**headers, "X-JWT-AUD": "someone-else"})
        assert other.status_code == 400
        assert other.json() == {"code": "validation_failed", "message": "Token audience doesn't match request audience"}


def test_update_user_merges_metadata_and_null_deletes(start_auth, make_client):
    # Reference §5.15: `data` is merged into user_metadata; a null value deletes the key.
    client = make_client(start_auth())
    email, session = signed_up(client, keep="me", drop="me")

    updated = client.update_user({"data": {"drop": None, "added": {"nested": [1, 2]}, "keep": "still"}}).user
    assert updated.user_metadata == {
        "keep": "still",
        "added": {"nested": [1, 2]},
        "email": email,
        "email_verified": True,
        "phone_verified": False,
        "sub": session.user.id,
    }
    # The client stores the returned user in its session.
    assert client.get_session().user.user_metadata == updated.user_metadata
    assert client.get_user().user.user_metadata == updated.user_metadata

    # The next access token carries the new metadata.
    refreshed = client.refresh_session().session
    assert claims(refreshed.access_token)["user_metadata"] == updated.user_metadata


def test_update_password_then_sign_in_with_it(start_auth, make_client):
    # Reference §5.15 / §7.7: a password change keeps the current session and deletes every
    # other session of the user.
    server = start_auth()
    client = make_client(server)
    email, current = signed_up(client)
    other = make_client(server).sign_in_with_password({"email": email, "password": PASSWORD}).session

    user = client.update_user({"password": "a-brand-new-password"}).user
    assert user.id == current.user.id

    with pytest.raises(AuthApiError) as old:
        client.sign_in_with_password({"email": email, "password": PASSWORD})
    api_error(old, AuthApiError, "invalid_credentials", 400, "Invalid login credentials")
    fresh = make_client(server).sign_in_with_password({"email": email, "password": "a-brand-new-password"})
    assert fresh.user.id == current.user.id

    # The session that changed the password lives on...
    assert client.get_user(current.access_token).user.id == current.user.id
    assert client.refresh_session(current.refresh_token).session is not None
    # ...the other one is gone.
    with pytest.raises(AuthApiError) as gone:
        client.get_user(other.access_token)
    api_error(gone, AuthApiError, "session_not_found", 403, "Session from session_id claim in JWT does not exist")
    with pytest.raises(AuthApiError) as refresh:
        client.refresh_session(other.refresh_token)
    api_error(refresh, AuthApiError, "refresh_token_not_found", 400, "Invalid Refresh Token: Refresh Token Not Found")


def test_update_to_the_same_password(start_auth, make_client):
    client = make_client(start_auth())
    signed_up(client)
    with pytest.raises(AuthApiError) as excinfo:
        client.update_user({"password": PASSWORD})
    api_error(excinfo, AuthApiError, "same_password", 422, "New password should be different from the old password.")


def test_update_to_a_weak_password(start_auth, make_client):
    # Reference §9.3: strength is checked on PUT /user too.
    client = make_client(start_auth(GOTRUE_PASSWORD_MIN_LENGTH="10"))
    client.sign_up({"email": unique_email(), "password": "long-enough-1"})
    with pytest.raises(AuthWeakPasswordError) as excinfo:
        client.update_user({"password": "short"})
    assert excinfo.value.status == 422
    assert excinfo.value.code == "weak_password"
    assert excinfo.value.reasons == ["length"]
    assert excinfo.value.message == "Password should be at least 10 characters."


def test_update_email_to_a_taken_address(start_auth, make_client):
    # Reference §5.15 / §16.
    server = start_auth()
    taken, _ = signed_up(make_client(server))
    client = make_client(server)
    signed_up(client)
    with pytest.raises(AuthApiError) as excinfo:
        client.update_user({"email": taken})
    api_error(excinfo, AuthApiError, "email_exists", 422, "A user with this email address has already been registered")


def test_update_email_of_a_permanent_user_waits_for_confirmation(start_auth, make_client):
    # Reference §5.15: only anonymous users get an email change applied at once; a permanent
    # user gets `new_email` and `email_change_sent_at` until the change is confirmed.
    client = make_client(start_auth())
    email, session = signed_up(client)
    wanted = unique_email("changed")
    user = client.update_user({"email": wanted}).user
    assert user.email == email
    assert user.new_email == wanted
    assert user.email_change_sent_at is not None


def test_app_metadata_needs_admin(start_auth):
    # Reference §5.15: a plain user may not set app_metadata.
    server = start_auth()
    with gateway(server) as http:
        signup = http.post("/signup", json={"email": unique_email(), "password": PASSWORD})
        token = signup.json()["access_token"]
        response = http.put(
            "/user",
            json={"app_metadata": {"plan": "free"}},
            headers={"Authorization": f"Bearer {token}", "X-Supabase-Api-Version": "2024-01-01"},
        )
        assert response.status_code == 403
        assert response.json() == {"code": "not_admin", "message": "Updating app_metadata requires admin privileges"}

"""Sign-up through the real supabase-auth client: autoconfirm on and off, duplicates, password
strength, disabled sign-ups, anonymous sign-in and its conversion (reference §5.5, §8, §9)."""
import uuid

import pytest
from supabase_auth.errors import AuthApiError, AuthWeakPasswordError

from helpers_client import (
    CLAIM_ORDER,
    CLI_KEY_ID,
    PASSWORD,
    REFRESH_TOKEN,
    api_error,
    assert_recent,
    claims,
    gateway,
    jwt_header,
    raw_claim_keys,
    unique_email,
)


def test_signup_with_data_autoconfirm_on_returns_a_session(start_auth, make_client):
    # Reference §8.1 step 7 / §18.2: with mailer autoconfirm (the `supabase start` default) the
    # email is confirmed at once and the response is a session.
    client = make_client(start_auth())
    email = unique_email("alice")
    result = client.sign_up({
        "email": email.upper(),
        "password": PASSWORD,
        "options": {"data": {"full_name": "Alice", "age": 30, "email_verified": "spoofed"}},
    })

    session = result.session
    assert session is not None
    user = result.user
    assert user == session.user
    assert session.token_type == "bearer"
    assert session.expires_in == 3600
    assert_recent(session.expires_at - 3600)
    assert REFRESH_TOKEN.fullmatch(session.refresh_token)

    uuid.UUID(user.id)
    assert user.email == email  # stored lowercased
    assert user.phone == ""
    assert user.aud == "authenticated"
    assert user.role == "authenticated"
    assert user.is_anonymous is False
    assert user.email_confirmed_at is not None
    assert user.last_sign_in_at is not None
    assert user.confirmation_sent_at is None
    assert user.app_metadata == {"provider": "email", "providers": ["email"]}
    # §8.1 step 5 / §8.2: user_metadata is the identity data (sub, email, *_verified) plus the
    # request's `data`, whose keys cannot override the reserved ones; confirming sets
    # email_verified.
    assert user.user_metadata == {
        "full_name": "Alice",
        "age": 30,
        "email": email,
        "email_verified": True,
        "phone_verified": False,
        "sub": user.id,
    }
    assert len(user.identities) == 1
    identity = user.identities[0]
    assert identity.provider == "email"
    assert identity.id == user.id
    assert identity.user_id == user.id
    uuid.UUID(identity.identity_id)
    assert identity.identity_data["sub"] == user.id
    assert identity.identity_data["email"] == email
    assert identity.identity_data["full_name"] == "Alice"
    # GoTrue's identity shares its map with user_metadata in memory, so the answer shows the
    # confirmation; the stored identity keeps email_verified false.
    assert identity.identity_data["email_verified"] is True
    stored = client.get_user(session.access_token).user.identities[0].identity_data
    assert stored["email_verified"] is False

    # The client keeps the session it was given.
    assert client.get_session().access_token == session.access_token


def test_signup_access_token_claims(start_auth, make_client):
    # Reference §7.1 / §7.2 / §18.3: claim set and order, HS256 with the project secret,
    # aal1 and a `password` AMR entry for an autoconfirmed sign-up.
    server = start_auth()
    client = make_client(server)
    email = unique_email()
    session = client.sign_up({
        "email": email, "password": PASSWORD, "options": {"data": {"plan": "pro"}},
    }).session

    header = jwt_header(session.access_token)
    # `supabase start` signs user tokens with the CLI's built-in ES256 key.
    assert header == {"alg": "ES256", "kid": CLI_KEY_ID, "typ": "JWT"}
    assert raw_claim_keys(session.access_token) == CLAIM_ORDER
    payload = claims(session.access_token)
    assert payload["iss"] == server.url + "/auth/v1"
    assert payload["sub"] == session.user.id
    assert payload["aud"] == "authenticated"
    assert payload["exp"] - payload["iat"] == 3600
    assert payload["exp"] == session.expires_at
    assert_recent(payload["iat"])
    assert payload["email"] == email
    assert payload["phone"] == ""
    assert payload["app_metadata"] == {"provider": "email", "providers": ["email"]}
    assert payload["user_metadata"] == session.user.user_metadata
    assert payload["user_metadata"]["plan"] == "pro"
    assert payload["role"] == "authenticated"
    assert payload["aal"] == "aal1"
    assert [entry["method"] for entry in payload["amr"]] == ["password"]
    assert_recent(payload["amr"][0]["timestamp"])
    uuid.UUID(payload["session_id"])
    assert payload["is_anonymous"] is False

    # The client's own JWT reading agrees (HS256 falls back to GET /user for verification).
    read = client.get_claims()
    assert read["claims"]["session_id"] == payload["session_id"]


def test_signup_autoconfirm_off_returns_user_and_sign_in_needs_confirmation(start_auth, make_client):
    # Reference §8.1 step 7 / §18.1: without autoconfirm the response is the bare user with
    # `confirmation_sent_at` and no session; §5.6: the password grant then answers
    # `email_not_confirmed`, but only once the password is right.
    client = make_client(start_auth(GOTRUE_MAILER_AUTOCONFIRM="false"))
    email = unique_email("bob")
    result = client.sign_up({
        "email": email, "password": PASSWORD, "options": {"data": {"full_name": "Bob", "sub": "not-my-id"}},
    })

    assert result.session is None
    assert client.get_session() is None
    user = result.user
    assert user.email == email
    assert user.confirmation_sent_at is not None
    assert user.email_confirmed_at is None
    assert user.confirmed_at is None
    assert user.role == "authenticated"
    assert user.is_anonymous is False
    assert user.user_metadata == {
        "full_name": "Bob",
        "email": email,
        "email_verified": False,
        "phone_verified": False,
        "sub": user.id,
    }
    assert [i.provider for i in user.identities] == ["email"]
    assert user.identities[0].identity_data["email_verified"] is False

    with pytest.raises(AuthApiError) as wrong:
        client.sign_in_with_password({"email": email, "password": "not-the-password"})
    api_error(wrong, AuthApiError, "invalid_credentials", 400, "Invalid login credentials")

    with pytest.raises(AuthApiError) as unconfirmed:
        client.sign_in_with_password({"email": email, "password": PASSWORD})
    api_error(unconfirmed, AuthApiError, "email_not_confirmed", 400, "Email not confirmed")


def test_duplicate_signup_with_autoconfirm_on_is_user_already_exists(start_auth, make_client):
    # Reference §8.3 / §16.
    client = make_client(start_auth())
    email = unique_email()
    client.sign_up({"email": email, "password": PASSWORD})
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_up({"email": email.upper(), "password": "another-password"})
    api_error(excinfo, AuthApiError, "user_already_exists", 422, "User already registered")


def test_duplicate_signup_while_sms_autoconfirm_is_on_is_still_user_already_exists(tmp_path, start_auth, make_client):
    # Reference §8.3: the 422 is given when mailer OR sms autoconfirm is on. The user is made
    # confirmed on a process with mailer autoconfirm, then signed up again on one where only
    # sms autoconfirm is on.
    db = tmp_path / "auth.db"
    confirming = make_client(start_auth(db))
    other = make_client(start_auth(db, GOTRUE_MAILER_AUTOCONFIRM="false", GOTRUE_SMS_AUTOCONFIRM="true"))
    email = unique_email()
    confirming.sign_up({"email": email, "password": PASSWORD})
    with pytest.raises(AuthApiError) as excinfo:
        other.sign_up({"email": email, "password": PASSWORD})
    api_error(excinfo, AuthApiError, "user_already_exists", 422, "User already registered")


def test_duplicate_signup_with_autoconfirm_off_is_an_obfuscated_user(tmp_path, start_auth, make_client):
    # Reference §8.3: with both autoconfirms off, signing up with a confirmed email answers 200
    # with a fake user (fresh id, no identities) so addresses cannot be enumerated. The user is
    # confirmed through a second process (autoconfirm on) on the same database.
    db = tmp_path / "auth.db"
    confirming = make_client(start_auth(db))
    hiding = make_client(start_auth(db, GOTRUE_MAILER_AUTOCONFIRM="false", GOTRUE_SMS_AUTOCONFIRM="false"))
    email = unique_email()
    real = confirming.sign_up({"email": email, "password": PASSWORD}).user

    result = hiding.sign_up({
        "email": email, "password": "whatever-else", "options": {"data": {"k": "v"}},
    })
    assert result.session is None
    fake = result.user
    assert fake.identities == []
    assert fake.id != real.id
    uuid.UUID(fake.id)
    assert fake.email == email
    assert fake.role == ""
    assert fake.user_metadata == {"k": "v"}
    assert fake.app_metadata == {"provider": "email", "providers": ["email"]}
    assert fake.confirmation_sent_at is not None
    assert fake.email_confirmed_at is None
    assert fake.confirmed_at is None
    assert fake.last_sign_in_at is None

    # Nothing changed for the real user: the original password still signs in.
    signed_in = hiding.sign_in_with_password({"email": email, "password": PASSWORD})
    assert signed_in.user.id == real.id


def test_weak_password_is_parsed_into_auth_weak_password_error(start_auth, make_client):
    # Reference §9.3 / §4.1: 422 `weak_password` with reasons; the client (which sends
    # X-Supabase-Api-Version: 2024-01-01) turns it into AuthWeakPasswordError.
    server = start_auth(GOTRUE_PASSWORD_MIN_LENGTH="8")
    client = make_client(server)
    with pytest.raises(AuthWeakPasswordError) as excinfo:
        client.sign_up({"email": unique_email(), "password": "short12"})
    error = api_error(
        excinfo, AuthWeakPasswordError, "weak_password", 422, "Password should be at least 8 characters."
    )
    assert error.reasons == ["length"]

    # Eight characters is enough.
    assert client.sign_up({"email": unique_email(), "password": "exactly8"}).session is not None


def test_weak_password_body_in_both_api_versions(start_auth):
    # Reference §4.1 / §4.2: the body shape follows X-Supabase-Api-Version; the version is
    # echoed on errors; `x-sb-error-code` is set for weak passwords only in the initial format.
    server = start_auth(GOTRUE_PASSWORD_MIN_LENGTH="8")
    message = "Password should be at least 8 characters."
    with gateway(server) as http:
        body = {"email": unique_email(), "password": "short"}
        new = http.post("/signup", json=body, headers={"X-Supabase-Api-Version": "2024-01-01"})
        assert new.status_code == 422
        assert new.json() == {"code": "weak_password", "message": message, "weak_password": {"reasons": ["length"]}}
        assert new.headers["x-supabase-api-version"] == "2024-01-01"
        assert "x-sb-error-code" not in new.headers

        old = http.post("/signup", json=body)
        assert old.status_code == 422
        assert old.json() == {
            "code": 422, "error_code": "weak_password", "msg": message,
            "weak_password": {"reasons": ["length"]},
        }
        assert old.headers["x-sb-error-code"] == "weak_password"
        assert "x-supabase-api-version" not in old.headers

        # Success responses never echo the version.
        fine = http.post(
            "/signup", json={**body, "password": "long-enough"}, headers={"X-Supabase-Api-Version": "2024-01-01"},
        )
        assert fine.status_code == 200
        assert "x-supabase-api-version" not in fine.headers
        assert "x-sb-error-code" not in fine.headers


def test_minimum_length_below_six_is_raised_to_six(start_auth, make_client):
    # Reference §9.2: GOTRUE_PASSWORD_MIN_LENGTH values under 6 are raised to 6.
    client = make_client(start_auth(GOTRUE_PASSWORD_MIN_LENGTH="2"))
    with pytest.raises(AuthWeakPasswordError) as excinfo:
        client.sign_up({"email": unique_email(), "password": "abc"})
    assert excinfo.value.message == "Password should be at least 6 characters."
    assert excinfo.value.reasons == ["length"]


def test_password_longer_than_72_characters_is_rejected(start_auth, make_client):
    # Reference §8.1 step 2 / §9.2 (bcrypt's limit, kept for compatibility).
    client = make_client(start_auth())
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_up({"email": unique_email(), "password": "x" * 73})
    api_error(excinfo, AuthApiError, "validation_failed", 400, "Password cannot be longer than 72 characters")


def test_signup_disabled(start_auth, make_client):
    # Reference §8.1 step 1 / §16.
    client = make_client(start_auth(GOTRUE_DISABLE_SIGNUP="true"))
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_up({"email": unique_email(), "password": PASSWORD})
    api_error(excinfo, AuthApiError, "signup_disabled", 422, "Signups not allowed for this instance")


def test_email_provider_disabled(start_auth, make_client):
    # Reference §8.1 step 3 (400 on signup) and §5.6 (422 on the password grant).
    client = make_client(start_auth(GOTRUE_EXTERNAL_EMAIL_ENABLED="false"))
    with pytest.raises(AuthApiError) as signup:
        client.sign_up({"email": unique_email(), "password": PASSWORD})
    api_error(signup, AuthApiError, "email_provider_disabled", 400, "Email signups are disabled")
    with pytest.raises(AuthApiError) as login:
        client.sign_in_with_password({"email": unique_email(), "password": PASSWORD})
    api_error(login, AuthApiError, "email_provider_disabled", 422, "Email logins are disabled")


def test_anonymous_sign_in_is_disabled_by_default(start_auth, make_client):
    # Reference §8.4 / §16.
    client = make_client(start_auth())
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_in_anonymously()
    api_error(excinfo, AuthApiError, "anonymous_provider_disabled", 422, "Anonymous sign-ins are disabled")


def test_anonymous_sign_in_when_enabled(start_auth, make_client):
    # Reference §8.4 / §7.2: a user with no email/phone/identities, `is_anonymous` in the user and
    # the JWT, amr `anonymous`, user_metadata = data.
    client = make_client(start_auth(GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED="true"))
    result = client.sign_in_anonymously({"options": {"data": {"theme": "dark"}}})
    session = result.session
    assert session is not None
    user = result.user
    assert user.is_anonymous is True
    assert user.email == ""
    assert user.phone == ""
    assert user.app_metadata == {}
    assert user.user_metadata == {"theme": "dark"}
    assert user.identities == []
    assert user.role == "authenticated"
    assert user.aud == "authenticated"

    payload = claims(session.access_token)
    assert payload["is_anonymous"] is True
    assert payload["sub"] == user.id
    assert payload["email"] == ""
    assert payload["role"] == "authenticated"
    assert [entry["method"] for entry in payload["amr"]] == ["anonymous"]

    # Each anonymous sign-in is a new user; no data gives empty metadata.
    second = client.sign_in_anonymously()
    assert second.user.id != user.id
    assert second.user.user_metadata == {}

    fetched = client.get_user(session.access_token).user
    assert fetched.id == user.id
    assert fetched.is_anonymous is True


def test_anonymous_gate_is_checked_before_disable_signup(start_auth, make_client):
    # Reference §8.4: disabled anonymous sign-ins win over DISABLE_SIGNUP; when enabled,
    # DISABLE_SIGNUP still refuses them.
    off = make_client(start_auth(GOTRUE_DISABLE_SIGNUP="true"))
    with pytest.raises(AuthApiError) as disabled:
        off.sign_in_anonymously()
    api_error(disabled, AuthApiError, "anonymous_provider_disabled", 422)

    on = make_client(start_auth(GOTRUE_DISABLE_SIGNUP="true", GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED="true"))
    with pytest.raises(AuthApiError) as no_signup:
        on.sign_in_anonymously()
    api_error(no_signup, AuthApiError, "signup_disabled", 422, "Signups not allowed for this instance")


def test_anonymous_user_needs_an_email_to_set_a_password(start_auth, make_client):
    # Reference §5.15 order of checks.
    client = make_client(start_auth(GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED="true"))
    client.sign_in_anonymously()
    with pytest.raises(AuthApiError) as excinfo:
        client.update_user({"password": PASSWORD})
    api_error(
        excinfo, AuthApiError, "validation_failed", 422,
        "Updating password of an anonymous user without an email or phone is not allowed",
    )


def test_anonymous_conversion_with_email_and_password(start_auth, make_client):
    # Reference §8.4 / §5.15: with mailer autoconfirm an anonymous user's new email is applied
    # at once, the user stops being anonymous, and can then sign in with the password.
    client = make_client(start_auth(GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED="true"))
    anonymous = client.sign_in_anonymously().session
    email = unique_email("convert")

    user = client.update_user({"email": email, "password": PASSWORD}).user
    assert user.id == anonymous.user.id
    assert user.email == email
    assert user.new_email is None
    assert user.is_anonymous is False
    assert user.email_confirmed_at is not None
    assert "email" in [identity.provider for identity in user.identities]

    again = client.get_user(anonymous.access_token).user
    assert again.email == email
    assert again.is_anonymous is False

    # A fresh token carries the conversion.
    refreshed = client.refresh_session(anonymous.refresh_token).session
    payload = claims(refreshed.access_token)
    assert payload["is_anonymous"] is False
    assert payload["email"] == email

    signed_in = client.sign_in_with_password({"email": email, "password": PASSWORD})
    assert signed_in.user.id == anonymous.user.id
    assert claims(signed_in.session.access_token)["is_anonymous"] is False

    # The address is now taken.
    with pytest.raises(AuthApiError) as duplicate:
        client.sign_up({"email": email, "password": PASSWORD})
    api_error(duplicate, AuthApiError, "user_already_exists", 422)


def test_signup_timestamps_are_recent(start_auth, make_client):
    client = make_client(start_auth())
    user = client.sign_up({"email": unique_email(), "password": PASSWORD}).user
    for stamp in (user.created_at, user.updated_at, user.email_confirmed_at, user.last_sign_in_at):
        assert_recent(stamp.timestamp())
        assert stamp.tzinfo is not None


def test_anonymous_conversion_without_autoconfirm_waits_for_confirmation(start_auth, make_client):
    # Reference §5.15 / §8.4: without mailer autoconfirm the new email goes through the
    # email-change flow, so the user stays anonymous with the address pending in `new_email`.
    client = make_client(start_auth(
        GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED="true", GOTRUE_MAILER_AUTOCONFIRM="false",
    ))
    anonymous = client.sign_in_anonymously().session
    email = unique_email("pending")
    user = client.update_user({"email": email}).user
    assert user.id == anonymous.user.id
    assert user.email == ""
    assert user.new_email == email
    assert user.email_change_sent_at is not None
    assert user.is_anonymous is True
    assert user.identities == []

    # The address is not the user's yet, so it cannot sign in with it.
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_in_with_password({"email": email, "password": PASSWORD})
    api_error(excinfo, AuthApiError, "invalid_credentials", 400)

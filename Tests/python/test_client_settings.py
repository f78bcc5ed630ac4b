"""`GET /settings` reflecting GOTRUE_* configuration (reference §5.2, §15), and two emulator
processes with different configurations sharing one database file, as several GoTrue instances
share one Postgres."""
import pytest
from supabase_auth.errors import AuthApiError, AuthWeakPasswordError

from helpers_client import PASSWORD, api_error, claims, gateway, unique_email

# Reference §5.2: the order in which GoTrue serializes `external`.
EXTERNAL_ORDER = [
    "anonymous_users", "apple", "azure", "bitbucket", "discord", "facebook", "snapchat", "figma",
    "fly", "github", "gitlab", "google", "keycloak", "kakao", "linkedin", "linkedin_oidc", "notion",
    "spotify", "slack", "slack_oidc", "workos", "twitch", "twitter", "email", "phone", "zoom",
]
TOP_LEVEL_ORDER = [
    "external", "disable_signup", "mailer_autoconfirm", "phone_autoconfirm", "sms_provider",
    "saml_enabled", "saml_private_key_next_configured", "passkeys_enabled",
]


def settings(server):
    with gateway(server) as http:
        response = http.get("/settings")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/json")
        root = http.get(f"{server.url}/settings")
        assert root.status_code == 200
        assert root.content == response.content
        return response.json()


def test_settings_defaults_follow_supabase_start(start_auth):
    body = settings(start_auth())
    assert list(body) == TOP_LEVEL_ORDER
    assert list(body["external"]) == EXTERNAL_ORDER
    enabled = {name for name, on in body["external"].items() if on}
    assert enabled == {"email"}
    assert body["disable_signup"] is False
    # `supabase start`: email and sms confirmations off, i.e. autoconfirm on.
    assert body["mailer_autoconfirm"] is True
    assert body["phone_autoconfirm"] is True
    assert body["sms_provider"] == ""
    assert body["saml_enabled"] is False
    assert body["saml_private_key_next_configured"] is False
    assert body["passkeys_enabled"] is False


def test_settings_reflect_the_environment(start_auth):
    body = settings(start_auth(
        GOTRUE_MAILER_AUTOCONFIRM="false",
        GOTRUE_SMS_AUTOCONFIRM="false",
        GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED="true",
        GOTRUE_EXTERNAL_EMAIL_ENABLED="false",
        GOTRUE_EXTERNAL_PHONE_ENABLED="true",
        GOTRUE_DISABLE_SIGNUP="true",
    ))
    enabled = {name for name, on in body["external"].items() if on}
    assert enabled == {"anonymous_users", "phone"}
    assert body["disable_signup"] is True
    assert body["mailer_autoconfirm"] is False
    assert body["phone_autoconfirm"] is False


def test_settings_needs_no_user_token(start_auth):
    # Reference §21 item 1: reachable without auth (the gateway still wants its apikey).
    server = start_auth()
    with gateway(server) as http:
        assert http.get("/settings", headers={"Authorization": "Bearer junk"}).status_code == 200


@pytest.fixture
def two_processes(tmp_path, start_auth, make_client):
    """A: `supabase start` defaults; B: confirmations required and a stricter password rule."""
    db = tmp_path / "shared" / "auth.db"
    a = start_auth(db)
    b = start_auth(db, GOTRUE_MAILER_AUTOCONFIRM="false", GOTRUE_SMS_AUTOCONFIRM="false", GOTRUE_PASSWORD_MIN_LENGTH="10")
    return a, b, make_client(a), make_client(b)


def test_user_created_on_one_process_signs_in_on_the_other(two_processes):
    a, b, on_a, on_b = two_processes
    assert settings(a)["mailer_autoconfirm"] is True
    assert settings(b)["mailer_autoconfirm"] is False

    email = unique_email("shared")
    created = on_a.sign_up({"email": email, "password": "shared-pass-1", "options": {"data": {"from": "a"}}})
    assert created.session is not None

    signed_in = on_b.sign_in_with_password({"email": email, "password": "shared-pass-1"})
    assert signed_in.user.id == created.user.id
    assert signed_in.user.user_metadata["from"] == "a"
    assert claims(signed_in.session.access_token)["session_id"] != claims(created.session.access_token)["session_id"]

    # Tokens and sessions are shared state too: B's session works on A and vice versa.
    assert on_a.get_user(signed_in.session.access_token).user.id == created.user.id
    refreshed = on_a.refresh_session(signed_in.session.refresh_token).session
    assert on_b.get_user(refreshed.access_token).user.id == created.user.id
    assert on_b.refresh_session(created.session.refresh_token).session is not None

    # An update on B is visible on A.
    on_b.update_user({"data": {"from": "b"}})
    assert on_a.get_user(created.session.access_token).user.user_metadata["from"] == "b"

    # A global sign-out on A ends B's session of the same user.
    on_a.sign_out()
    with pytest.raises(AuthApiError) as gone:
        on_b.get_user(refreshed.access_token)
    api_error(gone, AuthApiError, "session_not_found", 403)


def test_each_process_applies_its_own_configuration(two_processes):
    a, b, on_a, on_b = two_processes

    # Signing up on B leaves the user unconfirmed, whichever process they sign in on.
    email = unique_email("unconfirmed")
    assert on_b.sign_up({"email": email, "password": "long-password-1"}).session is None
    with pytest.raises(AuthApiError) as excinfo:
        on_a.sign_in_with_password({"email": email, "password": "long-password-1"})
    api_error(excinfo, AuthApiError, "email_not_confirmed", 400, "Email not confirmed")

    # A confirmed user signing up again: A says so, B hides it (reference §8.3).
    confirmed = unique_email("confirmed")
    on_a.sign_up({"email": confirmed, "password": "long-password-1"})
    with pytest.raises(AuthApiError) as exists:
        on_a.sign_up({"email": confirmed, "password": "long-password-1"})
    api_error(exists, AuthApiError, "user_already_exists", 422)
    hidden = on_b.sign_up({"email": confirmed, "password": "long-password-1"})
    assert hidden.session is None
    assert hidden.user.identities == []

    # Password rules are per process: 8 characters pass on A, not on B.
    assert on_a.sign_up({"email": unique_email(), "password": "eight888"}).session is not None
    with pytest.raises(AuthWeakPasswordError) as weak:
        on_b.sign_up({"email": unique_email(), "password": "eight888"})
    assert weak.value.message == "Password should be at least 10 characters."
    assert weak.value.reasons == ["length"]

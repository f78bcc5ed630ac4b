"""Email and phone flows through the real supabase-auth client, with codes read from the
emulator's outbox over its control routes (reference §5.8-5.13, §6.2-6.3, §10)."""

import httpx
import pytest
from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError

from conftest import ANON_KEY, SERVICE_ROLE_KEY, wait_until
from helpers_client import PASSWORD, api_error, claims, unique_email

CONFIRMATIONS_ON = {"GOTRUE_MAILER_AUTOCONFIRM": "false"}


def outbox(server, to=None, type=None):
    """The captured messages (newest first), read as a test in another process would."""
    params = {k: v for k, v in {"to": to, "type": type}.items() if v}
    response = httpx.get(f"{server.url}/emulator/v1/outbox", params=params,
                         headers={"apikey": SERVICE_ROLE_KEY}, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def followable(server, link):
    """Links are built from API_EXTERNAL_URL, which defaults to the address the emulator listens
    on: they can be followed as they are."""
    assert link.startswith(server.url + "/"), link
    return link


def latest(server, to, type=None):
    params = {"to": to, **({"type": type} if type else {})}
    response = httpx.get(f"{server.url}/emulator/v1/outbox/latest", params=params,
                         headers={"apikey": SERVICE_ROLE_KEY}, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def test_signup_confirmation_then_verify_otp(start_auth, make_client):
    server = start_auth(**CONFIRMATIONS_ON)
    client = make_client(server)
    email = unique_email("confirm")
    result = client.sign_up({"email": email, "password": PASSWORD})
    assert result.session is None
    assert result.user.email == email

    message = latest(server, email)
    assert message["channel"] == "email" and message["type"] == "signup"
    assert message["subject"] == "Confirm your email address"
    assert len(message["otp"]) == 6 and message["otp"] in message["body_html"]
    # Links go through the gateway path the client used, on the emulator's own address.
    assert message["action_link"].startswith(f"{server.url}/auth/v1/verify?token={message['token_hash']}&type=signup")

    verified = client.verify_otp({"email": email, "token": message["otp"], "type": "signup"})
    assert verified.session is not None
    assert verified.user.email_confirmed_at is not None
    assert claims(verified.session.access_token)["amr"][0]["method"] == "otp"

    # Used once only.
    with pytest.raises(AuthApiError) as excinfo:
        client.verify_otp({"email": email, "token": message["otp"], "type": "signup"})
    api_error(excinfo, AuthApiError, "otp_expired", 403, "Token has expired or is invalid")


def test_confirmation_link_can_be_followed(start_auth):
    server = start_auth(**CONFIRMATIONS_ON)
    email = unique_email("link")
    httpx.post(f"{server.url}/auth/v1/signup", json={"email": email, "password": PASSWORD},
               headers={"apikey": ANON_KEY}, timeout=10).raise_for_status()
    link = followable(server, latest(server, email)["action_link"])
    response = httpx.get(link, timeout=10, follow_redirects=False)
    assert response.status_code == 303
    location = response.headers["location"]
    assert location.startswith("http://127.0.0.1:3000#access_token=")
    assert location.endswith("&sb=&token_type=bearer&type=signup")


def test_magic_link_sign_in_with_otp(start_auth, make_client):
    server = start_auth()
    client = make_client(server)
    email = unique_email("magic")
    client.sign_up({"email": email, "password": PASSWORD})
    client.sign_out()

    client.sign_in_with_otp({"email": email, "options": {"should_create_user": False}})
    message = latest(server, email, type="magiclink")
    assert message["subject"] == "Your sign-in link"
    response = client.verify_otp({"email": email, "token": message["otp"], "type": "email"})
    assert response.session is not None
    assert client.get_user().user.email == email

    # should_create_user false for an unknown address.
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_in_with_otp({"email": unique_email("ghost"), "options": {"should_create_user": False}})
    api_error(excinfo, AuthApiError, "otp_disabled", 422, "Signups not allowed for otp")


def test_recovery_then_update_password(start_auth, make_client):
    server = start_auth()
    client = make_client(server)
    email = unique_email("recover")
    client.sign_up({"email": email, "password": PASSWORD})
    client.sign_out()

    client.reset_password_for_email(email)
    message = latest(server, email, type="recovery")
    client.verify_otp({"email": email, "token": message["otp"], "type": "recovery"})
    client.update_user({"password": "a-brand-new-password"})
    client.sign_out()
    session = client.sign_in_with_password({"email": email, "password": "a-brand-new-password"}).session
    assert session is not None


def test_email_change_double_confirmation(start_auth, make_client):
    # Both confirmations are needed only while email confirmations are on (verify.go).
    server = start_auth(**CONFIRMATIONS_ON)
    client = make_client(server)
    old, new = unique_email("old"), unique_email("new")
    client.sign_up({"email": old, "password": PASSWORD})
    client.verify_otp({"email": old, "token": latest(server, old)["otp"], "type": "signup"})

    user = client.update_user({"email": new}).user
    assert user.new_email == new
    to_new = latest(server, new, type="email_change")
    to_old = latest(server, old, type="email_change")
    assert to_new["otp"] != to_old["otp"]

    # The first confirmation only records itself (reference §3.6); the client sees no session.
    half = httpx.post(f"{server.url}/auth/v1/verify", headers={"apikey": ANON_KEY}, timeout=10,
                      json={"type": "email_change", "email": new, "token": to_new["otp"]})
    assert half.json() == {"msg": "Confirmation link accepted. Please proceed to confirm link sent to the other email",
                           "code": "200"}
    done = client.verify_otp({"email": old, "token": to_old["otp"], "type": "email_change"})
    assert done.user.email == new
    assert client.get_user().user.email == new


def test_phone_otp_with_fixed_test_code(start_auth, make_client):
    server = start_auth(GOTRUE_EXTERNAL_PHONE_ENABLED="true", GOTRUE_SMS_AUTOCONFIRM="false",
                        GOTRUE_SMS_TEST_OTP="15550001234:123456")
    client = make_client(server)
    client.sign_in_with_otp({"phone": "+15550001234"})
    # A fixed code sends nothing, as the real server.
    assert outbox(server, to="+15550001234") == []
    response = client.verify_otp({"phone": "+15550001234", "token": "123456", "type": "sms"})
    assert response.user.phone == "15550001234"
    assert response.user.phone_confirmed_at is not None

    # Other numbers get a captured SMS.
    client.sign_in_with_otp({"phone": "+15550009999"})
    sms = latest(server, "15550009999")
    assert sms["channel"] == "sms" and sms["body_text"] == f"Your code is {sms['otp']}"
    assert client.verify_otp({"phone": "15550009999", "token": sms["otp"], "type": "sms"}).session is not None


def test_pkce_signup_and_exchange_code(start_auth):
    server = start_auth(**CONFIRMATIONS_ON)
    client = SyncGoTrueClient(url=f"{server.url}/auth/v1", headers={"apikey": ANON_KEY},
                              auto_refresh_token=False, flow_type="pkce")
    try:
        email = unique_email("pkce")
        client.sign_up({"email": email, "password": PASSWORD})
        message = latest(server, email)
        assert message["token_hash"].startswith("pkce_")
        redirect = httpx.get(followable(server, message["action_link"]), timeout=10, follow_redirects=False)
        assert redirect.status_code == 303
        code = redirect.headers["location"].split("?code=")[1]
        session = client.exchange_code_for_session({"auth_code": code}).session
        assert session.user.email == email
        assert claims(session.access_token)["amr"][0]["method"] == "email/signup"
    finally:
        client.close()


def test_expired_and_reused_codes(start_auth, make_client):
    server = start_auth(GOTRUE_MAILER_OTP_EXP="1")
    client = make_client(server)
    email = unique_email("expiry")
    client.sign_up({"email": email, "password": PASSWORD})
    client.sign_in_with_otp({"email": email})
    message = latest(server, email, type="magiclink")
    # Past the one-second lifetime on the emulator's clock, not the wall clock: no test waits.
    moved = httpx.post(f"{server.url}/emulator/v1/clock", json={"advance_seconds": 2.1},
                       headers={"apikey": SERVICE_ROLE_KEY}, timeout=10)
    assert moved.status_code == 200, moved.text
    with pytest.raises(AuthApiError) as excinfo:
        client.verify_otp({"email": email, "token": message["otp"], "type": "magiclink"})
    api_error(excinfo, AuthApiError, "otp_expired", 403, "Token has expired or is invalid")


def test_frequency_limit_error_is_read_by_the_client(start_auth, make_client):
    server = start_auth(GOTRUE_SMTP_MAX_FREQUENCY="60s")
    client = make_client(server)
    email = unique_email("often")
    client.sign_up({"email": email, "password": PASSWORD})
    client.reset_password_for_email(email)
    with pytest.raises(AuthApiError) as excinfo:
        client.reset_password_for_email(email)
    error = api_error(excinfo, AuthApiError, "over_email_send_rate_limit", 429)
    assert error.message.startswith("For security purposes, you can only request this after ")


def test_mailer_test_otp_and_outbox_routes(start_auth):
    server = start_auth(AUTH_EMULATOR_MAILER_TEST_OTP="fixed@example.com:111222", **CONFIRMATIONS_ON)
    httpx.post(f"{server.url}/auth/v1/signup", json={"email": "fixed@example.com", "password": PASSWORD},
               headers={"apikey": ANON_KEY}, timeout=10).raise_for_status()
    assert latest(server, "FIXED@example.com")["otp"] == "111222"
    # The control routes require the service_role key.
    assert httpx.get(f"{server.url}/emulator/v1/outbox", headers={"apikey": ANON_KEY}, timeout=10).status_code == 403
    cleared = httpx.delete(f"{server.url}/emulator/v1/outbox", headers={"apikey": SERVICE_ROLE_KEY}, timeout=10)
    assert cleared.json() == {"deleted": 1}
    assert outbox(server) == []
    # `serve` logs one line per captured message (stdout, read by a thread of its own).
    wait_until(lambda: any("outbox: email to fixed@example.com: signup code 111222" in line for line in server.output))
    assert any("outbox: email to fixed@example.com: signup code 111222 link " in line for line in server.output)


def test_account_change_notifications(start_auth, make_client):
    # `supabase start` passes GOTRUE_MAILER_NOTIFICATIONS_<KIND>_ENABLED=true for an enabled
    # [auth.email.notification.<kind>] and its subject as GOTRUE_MAILER_SUBJECTS_<KIND>_NOTIFICATION.
    server = start_auth(GOTRUE_MAILER_NOTIFICATIONS_PASSWORD_CHANGED_ENABLED="true",
                        GOTRUE_MAILER_NOTIFICATIONS_EMAIL_CHANGED_ENABLED="true",
                        GOTRUE_MAILER_SUBJECTS_PASSWORD_CHANGED_NOTIFICATION="Password of {{ .Email }} changed")
    client = make_client(server)
    old, new = unique_email("notice-old"), unique_email("notice-new")
    client.sign_up({"email": old, "password": PASSWORD})
    assert outbox(server, to=old) == []

    client.update_user({"password": "a-brand-new-password"})
    notice = latest(server, old, type="password_changed_notification")
    assert notice["subject"] == f"Password of {old} changed"
    assert notice["otp"] == "" and notice["action_link"] == ""

    client.update_user({"email": new})
    client.verify_otp({"email": new, "token": latest(server, new, type="email_change")["otp"], "type": "email_change"})
    assert client.get_user().user.email == new
    changed = latest(server, old, type="email_changed_notification")
    assert changed["subject"] == "Your email address was changed"
    assert f"from {old} to {new}" in changed["body_text"]
    assert outbox(server, to=new, type="email_changed_notification") == []

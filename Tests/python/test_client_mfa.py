"""MFA through the real supabase-auth client (`auth.mfa`): TOTP factors verified with codes from
pyotp (an authenticator app's algorithm, independent of the emulator), phone factors with the code
read from the outbox, AAL2 sessions, the AAL rules, admin factor management and the emulator's
TOTP side-door (reference §14; the real server's internal/api/mfa.go)."""
from datetime import datetime

import httpx
import pyotp
import pytest
from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError

from conftest import SERVICE_ROLE_KEY
from helpers_client import PASSWORD, api_error, claims, unique_email

# `supabase start` leaves TOTP off (its config.toml template); a project turns it on like this.
TOTP_ON = {"GOTRUE_MFA_TOTP_ENROLL_ENABLED": "true", "GOTRUE_MFA_TOTP_VERIFY_ENABLED": "true"}
PHONE_ON = {"GOTRUE_MFA_PHONE_ENROLL_ENABLED": "true", "GOTRUE_MFA_PHONE_VERIFY_ENABLED": "true"}


def control(server, method, path, body=None, params=None):
    return httpx.request(method, f"{server.url}/emulator/v1/{path}", json=body, params=params,
                         headers={"apikey": SERVICE_ROLE_KEY}, timeout=10)


def emulator_now(server):
    """The emulator's clock (virtual: tests move it), as a Unix time for pyotp."""
    now = control(server, "GET", "clock").json()["now"]
    return datetime.fromisoformat(now.replace("Z", "+00:00")).timestamp()


def signed_up(client):
    email = unique_email("mfa")
    client.sign_up({"email": email, "password": PASSWORD})
    return email


def test_totp_enroll_challenge_verify_reaches_aal2(start_auth, make_client):
    server = start_auth(**TOTP_ON)
    client = make_client(server)
    email = signed_up(client)

    enrolled = client.mfa.enroll({"factor_type": "totp", "friendly_name": "authenticator"})
    assert enrolled.type == "totp"
    assert enrolled.friendly_name == "authenticator"
    # The server sends the SVG; the client makes the data URI of it, as for the real server.
    assert enrolled.totp.qr_code.startswith("data:image/svg+xml;utf-8,<?xml")
    # The default issuer is the site URL's host with its port, as the real server writes it.
    assert enrolled.totp.uri.startswith(f"otpauth://totp/127.0.0.1:3000:{email}?algorithm=SHA1&digits=6&")
    # With an issuer of its own, an authenticator app reads back the secret, issuer and account.
    named = client.mfa.enroll({"factor_type": "totp", "friendly_name": "second", "issuer": "Acme"})
    parsed = pyotp.parse_uri(named.totp.uri)
    assert (parsed.secret, parsed.issuer, parsed.name) == (named.totp.secret, "Acme", email)

    totp = pyotp.TOTP(enrolled.totp.secret)
    challenge = client.mfa.challenge({"factor_id": enrolled.id})
    assert abs(challenge.expires_at - (emulator_now(server) + 300)) <= 2
    verified = client.mfa.verify({"factor_id": enrolled.id, "challenge_id": challenge.id,
                                  "code": totp.at(emulator_now(server))})
    token = claims(verified.access_token)
    assert token["aal"] == "aal2"
    assert [entry["method"] for entry in token["amr"]] == ["totp", "password"]

    level = client.mfa.get_authenticator_assurance_level()
    assert (level.current_level, level.next_level) == ("aal2", "aal2")
    factors = client.mfa.list_factors()
    assert [(f.id, f.status) for f in factors.totp] == [(enrolled.id, "verified")]

    # challenge_and_verify (the client's two calls) with a fresh code works on the aal2 session too.
    again = client.mfa.challenge_and_verify({"factor_id": enrolled.id, "code": totp.at(emulator_now(server))})
    assert claims(again.access_token)["aal"] == "aal2"


def test_wrong_code_and_expired_challenge(start_auth, make_client):
    server = start_auth(**TOTP_ON)
    client = make_client(server)
    signed_up(client)
    enrolled = client.mfa.enroll({"factor_type": "totp"})
    totp = pyotp.TOTP(enrolled.totp.secret)
    challenge = client.mfa.challenge({"factor_id": enrolled.id})
    code = totp.at(emulator_now(server))
    wrong = "000000" if code != "000000" else "111111"
    with pytest.raises(AuthApiError) as excinfo:
        client.mfa.verify({"factor_id": enrolled.id, "challenge_id": challenge.id, "code": wrong})
    api_error(excinfo, AuthApiError, "mfa_verification_failed", 422, "Invalid TOTP code entered")

    # Five minutes and a second later the challenge has expired (GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION).
    assert control(server, "POST", "clock", {"advance_seconds": 301}).status_code == 200
    with pytest.raises(AuthApiError) as excinfo:
        client.mfa.verify({"factor_id": enrolled.id, "challenge_id": challenge.id,
                           "code": totp.at(emulator_now(server))})
    api_error(excinfo, AuthApiError, "mfa_challenge_expired", 422,
              f"MFA challenge {challenge.id} has expired, verify against another challenge or create a new challenge.")


def test_side_door_code_is_accepted(start_auth, make_client):
    server = start_auth(**TOTP_ON)
    client = make_client(server)
    signed_up(client)
    enrolled = client.mfa.enroll({"factor_type": "totp"})
    codes = control(server, "GET", "mfa/totp", params={"factor_id": enrolled.id}).json()
    assert codes["code"] == pyotp.TOTP(enrolled.totp.secret).at(emulator_now(server))
    verified = client.mfa.challenge_and_verify({"factor_id": enrolled.id, "code": codes["code"]})
    assert claims(verified.access_token)["aal"] == "aal2"


def test_phone_factor_with_the_code_from_the_outbox(start_auth, make_client):
    server = start_auth(**PHONE_ON)
    client = make_client(server)
    signed_up(client)
    enrolled = client.mfa.enroll({"factor_type": "phone", "phone": "+15550106666", "friendly_name": "mobile"})
    assert enrolled.type == "phone"
    challenge = client.mfa.challenge({"factor_id": enrolled.id})
    message = control(server, "GET", "outbox/latest", params={"to": "+15550106666", "type": "mfa"}).json()
    assert message["body_text"] == f"Your code is {message['otp']}"
    verified = client.mfa.verify({"factor_id": enrolled.id, "challenge_id": challenge.id, "code": message["otp"]})
    token = claims(verified.access_token)
    assert token["aal"] == "aal2"
    assert token["amr"][0]["method"] == "mfa/phone"
    # A second challenge within GOTRUE_MFA_PHONE_MAX_FREQUENCY (5 s, as supabase start) is refused.
    control(server, "POST", "clock", {"advance_seconds": 6})
    client.mfa.challenge({"factor_id": enrolled.id})
    with pytest.raises(AuthApiError) as excinfo:
        client.mfa.challenge({"factor_id": enrolled.id})
    api_error(excinfo, AuthApiError, "over_sms_send_rate_limit", 429)


def test_aal_rules_unenroll_and_admin_factors(start_auth, make_client):
    server = start_auth(**TOTP_ON)
    client = make_client(server)
    email = signed_up(client)
    enrolled = client.mfa.enroll({"factor_type": "totp"})
    totp = pyotp.TOTP(enrolled.totp.secret)
    client.mfa.challenge_and_verify({"factor_id": enrolled.id, "code": totp.at(emulator_now(server))})

    # A new password sign-in is aal1 with aal2 to reach; credential changes need aal2.
    client.sign_out()
    session = client.sign_in_with_password({"email": email, "password": PASSWORD}).session
    assert claims(session.access_token)["aal"] == "aal1"
    level = client.mfa.get_authenticator_assurance_level()
    assert (level.current_level, level.next_level) == ("aal1", "aal2")
    with pytest.raises(AuthApiError) as excinfo:
        client.update_user({"password": "a-brand-new-password"})
    api_error(excinfo, AuthApiError, "insufficient_aal", 401,
              "AAL2 session is required to update email or password when MFA is enabled.")
    with pytest.raises(AuthApiError) as excinfo:
        client.mfa.unenroll({"factor_id": enrolled.id})
    api_error(excinfo, AuthApiError, "insufficient_aal", 422, "AAL2 required to unenroll verified factor")

    client.mfa.challenge_and_verify({"factor_id": enrolled.id, "code": totp.at(emulator_now(server))})
    client.update_user({"password": "a-brand-new-password"})

    admin = SyncGoTrueClient(url=f"{server.url}/auth/v1", auto_refresh_token=False, persist_session=False,
                             headers={"apikey": SERVICE_ROLE_KEY, "Authorization": f"Bearer {SERVICE_ROLE_KEY}"})
    try:
        user_id = client.get_user().user.id
        listed = admin.admin.mfa.list_factors({"user_id": user_id})
        assert [f.id for f in listed] == [enrolled.id]
        second = client.mfa.enroll({"factor_type": "totp", "friendly_name": "backup"})
        deleted = admin.admin.mfa.delete_factor({"user_id": user_id, "id": second.id})
        assert deleted.id == second.id
        assert [f.id for f in admin.admin.mfa.list_factors({"user_id": user_id})] == [enrolled.id]
    finally:
        admin.close()

    assert client.mfa.unenroll({"factor_id": enrolled.id}).id == enrolled.id
    assert client.mfa.list_factors().all == []

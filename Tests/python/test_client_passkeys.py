"""Passkeys over the wire: registration and discoverable sign-in (the real server's
internal/api/passkey_*.go), once through the emulator's software authenticator and once with a
credential built here with the `cryptography` package, so the emulator's WebAuthn verifier is
checked against an implementation that is not its own. supabase-auth 2.34.1 has no passkey
methods: the ceremonies use httpx, and the real client then takes over the session.
"""
import base64
import hashlib
import json
import os
import struct

import httpx
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa

from conftest import ANON_KEY, SERVICE_ROLE_KEY
from helpers_client import PASSWORD, claims, unique_email

PASSKEYS_ON = {"GOTRUE_PASSKEY_ENABLED": "true", "GOTRUE_SITE_URL": "http://localhost:3000"}
ORIGIN = "http://localhost:3000"
RP_ID = "localhost"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def api(server, method, path, body=None, token=None):
    headers = {"apikey": ANON_KEY}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.request(method, f"{server.url}/auth/v1{path}", json=body, headers=headers, timeout=10)


def control(server, path, body):
    return httpx.post(f"{server.url}/emulator/v1/{path}", json=body, headers={"apikey": SERVICE_ROLE_KEY}, timeout=10)


def signed_up(client):
    email = unique_email("passkey")
    session = client.sign_up({"email": email, "password": PASSWORD}).session
    return email, session


# --- an independent authenticator: CBOR (RFC 8949), COSE (RFC 9053), WebAuthn §6.1, §6.5 ---


def cbor(value):
    def head(major, n):
        if n < 24:
            return bytes([major << 5 | n])
        for info, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
            if n < 1 << (8 * size):
                return bytes([major << 5 | info]) + n.to_bytes(size, "big")
        raise ValueError(n)

    if isinstance(value, bool):
        return b"\xf5" if value else b"\xf4"
    if isinstance(value, int):
        return head(0, value) if value >= 0 else head(1, -1 - value)
    if isinstance(value, bytes):
        return head(2, len(value)) + value
    if isinstance(value, str):
        data = value.encode()
        return head(3, len(data)) + data
    if isinstance(value, dict):
        return head(5, len(value)) + b"".join(cbor(k) + cbor(v) for k, v in value.items())
    raise TypeError(value)


class Authenticator:
    """kind: "es256" (P-256), "rs256" (RSA 2048, PKCS #1 v1.5) or "eddsa" (Ed25519)."""

    def __init__(self, kind="es256"):
        self.kind = kind
        if kind == "es256":
            self.key = ec.generate_private_key(ec.SECP256R1())
        elif kind == "rs256":
            self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        else:
            self.key = ed25519.Ed25519PrivateKey.generate()
        self.credential_id = os.urandom(20)
        self.count = 0

    def cose(self):
        if self.kind == "es256":
            numbers = self.key.public_key().public_numbers()
            return cbor({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})
        if self.kind == "rs256":
            numbers = self.key.public_key().public_numbers()
            return cbor({1: 3, 3: -257, -1: numbers.n.to_bytes(256, "big"), -2: numbers.e.to_bytes(3, "big")})
        raw = self.key.public_key().public_bytes_raw()
        return cbor({1: 1, 3: -8, -1: 6, -2: raw})

    def auth_data(self, flags, attested, rp_id=RP_ID):
        data = hashlib.sha256(rp_id.encode()).digest() + bytes([flags | (0x40 if attested else 0)]) + struct.pack(">I", self.count)
        if attested:
            data += bytes(16) + struct.pack(">H", len(self.credential_id)) + self.credential_id + self.cose()
        return data

    @staticmethod
    def client_data(kind, challenge, origin):
        return json.dumps({"type": kind, "challenge": challenge, "origin": origin, "crossOrigin": False}).encode()

    def sign(self, auth_data, client_data):
        message = auth_data + hashlib.sha256(client_data).digest()
        if self.kind == "es256":
            # cryptography's ECDSA signatures are DER, as WebAuthn §6.5.6 wants for ES256.
            return self.key.sign(message, ec.ECDSA(hashes.SHA256()))
        if self.kind == "rs256":
            return self.key.sign(message, padding.PKCS1v15(), hashes.SHA256())
        return self.key.sign(message)

    def create(self, options, origin=ORIGIN, fmt="none"):
        client_data = self.client_data("webauthn.create", options["challenge"], origin)
        auth_data = self.auth_data(0x05, attested=True, rp_id=options["rp"]["id"])
        statement = {}
        if fmt == "packed":
            statement = {"alg": {"es256": -7, "rs256": -257, "eddsa": -8}[self.kind], "sig": self.sign(auth_data, client_data)}
        obj = cbor({"fmt": fmt, "attStmt": statement, "authData": auth_data})
        return {
            "id": b64url(self.credential_id), "rawId": b64url(self.credential_id), "type": "public-key",
            "response": {"clientDataJSON": b64url(client_data), "attestationObject": b64url(obj), "transports": ["usb"]},
        }

    def get(self, options, user_handle, origin=ORIGIN, tamper=False):
        self.count += 1
        client_data = self.client_data("webauthn.get", options["challenge"], origin)
        auth_data = self.auth_data(0x05, attested=False, rp_id=options["rpId"])
        signature = self.sign(auth_data, client_data)
        if tamper:
            client_data = self.client_data("webauthn.get", options["challenge"], origin).replace(b'"crossOrigin": false', b'"crossOrigin":false')
        return {
            "id": b64url(self.credential_id), "rawId": b64url(self.credential_id), "type": "public-key",
            "response": {
                "clientDataJSON": b64url(client_data), "authenticatorData": b64url(auth_data),
                "signature": b64url(signature), "userHandle": b64url(user_handle),
            },
        }


# --- tests ---


def test_passkeys_are_off_by_default(start_auth):
    server = start_auth()
    response = api(server, "POST", "/passkeys/authentication/options", {})
    assert response.status_code == 404
    assert response.json()["error_code"] == "passkey_disabled"
    assert response.json()["msg"] == "Passkeys are disabled"
    assert api(server, "GET", "/settings").json()["passkeys_enabled"] is False


def test_software_authenticator_registration_and_sign_in(start_auth, make_client):
    server = start_auth(**PASSKEYS_ON)
    client = make_client(server)
    email, session = signed_up(client)
    token = session.access_token

    options = api(server, "POST", "/passkeys/registration/options", {}, token)
    assert options.status_code == 200, options.text
    body = options.json()
    assert list(body) == ["challenge_id", "options", "expires_at"]
    assert body["options"]["rp"] == {"name": "Supabase", "id": "localhost"}
    assert unb64url(body["options"]["user"]["id"]).decode() == session.user.id

    credential = control(server, "webauthn/attestation", body)
    assert credential.status_code == 200, credential.text
    verified = api(server, "POST", "/passkeys/registration/verify",
                   {"challenge_id": body["challenge_id"], "credential": credential.json()}, token)
    assert verified.status_code == 200, verified.text
    passkey_id = verified.json()["id"]

    login = api(server, "POST", "/passkeys/authentication/options", {}).json()
    assertion = control(server, "webauthn/assertion", login)
    assert assertion.status_code == 200, assertion.text
    signed_in = api(server, "POST", "/passkeys/authentication/verify",
                    {"challenge_id": login["challenge_id"], "credential": assertion.json()})
    assert signed_in.status_code == 200, signed_in.text
    tokens = signed_in.json()
    assert [entry["method"] for entry in claims(tokens["access_token"])["amr"]] == ["passkey"]

    # The real client takes the session over and sees the user and its AMR entry.
    fresh = make_client(server)
    fresh.set_session(tokens["access_token"], tokens["refresh_token"])
    assert fresh.get_user().user.email == email
    level = fresh.mfa.get_authenticator_assurance_level()
    assert level.current_level == "aal1"
    assert [entry.method for entry in level.current_authentication_methods] == ["passkey"]

    # List, rename, delete.
    listed = api(server, "GET", "/passkeys", None, token).json()
    assert [item["id"] for item in listed] == [passkey_id]
    assert "last_used_at" in listed[0]
    renamed = api(server, "PATCH", f"/passkeys/{passkey_id}", {"friendly_name": "Test key"}, token)
    assert renamed.json()["friendly_name"] == "Test key"
    admin = httpx.get(f"{server.url}/admin/users/{session.user.id}/passkeys",
                      headers={"Authorization": f"Bearer {SERVICE_ROLE_KEY}"}, timeout=10)
    assert [item["friendly_name"] for item in admin.json()] == ["Test key"]
    assert api(server, "DELETE", f"/passkeys/{passkey_id}", None, token).status_code == 204
    assert api(server, "GET", "/passkeys", None, token).json() == []


@pytest.mark.parametrize("kind", ["es256", "rs256", "eddsa"])
@pytest.mark.parametrize("fmt", ["none", "packed"])
def test_independent_credential_registers_and_signs_in(start_auth, make_client, fmt, kind):
    server = start_auth(**PASSKEYS_ON)
    client = make_client(server)
    email, session = signed_up(client)
    token = session.access_token
    authenticator = Authenticator(kind)

    options = api(server, "POST", "/passkeys/registration/options", {}, token).json()
    verified = api(server, "POST", "/passkeys/registration/verify",
                   {"challenge_id": options["challenge_id"], "credential": authenticator.create(options["options"], fmt=fmt)}, token)
    assert verified.status_code == 200, verified.text

    user_handle = unb64url(options["options"]["user"]["id"])
    login = api(server, "POST", "/passkeys/authentication/options", {}).json()
    signed_in = api(server, "POST", "/passkeys/authentication/verify",
                    {"challenge_id": login["challenge_id"], "credential": authenticator.get(login["options"], user_handle)})
    assert signed_in.status_code == 200, signed_in.text
    assert signed_in.json()["user"]["email"] == email

    # The same credential id signed by another key of the same kind is refused.
    impostor = Authenticator(kind)
    impostor.credential_id = authenticator.credential_id
    login = api(server, "POST", "/passkeys/authentication/options", {}).json()
    forged = api(server, "POST", "/passkeys/authentication/verify",
                 {"challenge_id": login["challenge_id"], "credential": impostor.get(login["options"], user_handle)})
    assert forged.status_code == 400
    assert forged.json()["error_code"] == "webauthn_verification_failed"


def test_independent_credential_failures_answer_like_the_real_server(start_auth, make_client):
    server = start_auth(**PASSKEYS_ON)
    client = make_client(server)
    _, session = signed_up(client)
    token = session.access_token
    authenticator = Authenticator()

    # Registration from an origin that is not configured: refused, nothing stored.
    options = api(server, "POST", "/passkeys/registration/options", {}, token).json()
    refused = api(server, "POST", "/passkeys/registration/verify",
                  {"challenge_id": options["challenge_id"],
                   "credential": authenticator.create(options["options"], origin="https://evil.example")}, token)
    assert refused.status_code == 400
    assert refused.json()["error_code"] == "webauthn_verification_failed"
    assert refused.json()["msg"] == "Credential verification failed"
    assert api(server, "GET", "/passkeys", None, token).json() == []

    # The challenge was consumed by the failed attempt.
    again = api(server, "POST", "/passkeys/registration/verify",
                {"challenge_id": options["challenge_id"], "credential": authenticator.create(options["options"])}, token)
    assert again.json()["error_code"] == "webauthn_challenge_not_found"

    options = api(server, "POST", "/passkeys/registration/options", {}, token).json()
    assert api(server, "POST", "/passkeys/registration/verify",
               {"challenge_id": options["challenge_id"], "credential": authenticator.create(options["options"])}, token).status_code == 200
    user_handle = unb64url(options["options"]["user"]["id"])

    # Client data changed after signing: the signature no longer covers it.
    login = api(server, "POST", "/passkeys/authentication/options", {}).json()
    tampered = api(server, "POST", "/passkeys/authentication/verify",
                   {"challenge_id": login["challenge_id"], "credential": authenticator.get(login["options"], user_handle, tamper=True)})
    assert tampered.status_code == 400
    assert tampered.json()["error_code"] == "webauthn_verification_failed"

    # Someone else's key for the same credential id.
    impostor = Authenticator()
    impostor.credential_id = authenticator.credential_id
    login = api(server, "POST", "/passkeys/authentication/options", {}).json()
    forged = api(server, "POST", "/passkeys/authentication/verify",
                 {"challenge_id": login["challenge_id"], "credential": impostor.get(login["options"], user_handle)})
    assert forged.status_code == 400
    assert forged.json()["msg"] == "Credential verification failed"

    # Garbage in the attestation object.
    options = api(server, "POST", "/passkeys/registration/options", {}, token).json()
    broken = Authenticator().create(options["options"])
    broken["response"]["attestationObject"] = b64url(b"\x9f\x01\xff")
    unparsable = api(server, "POST", "/passkeys/registration/verify",
                     {"challenge_id": options["challenge_id"], "credential": broken}, token)
    assert unparsable.status_code == 400
    assert unparsable.json()["msg"] == "Invalid credential response"


WEBAUTHN_MFA_ON = {"GOTRUE_MFA_WEB_AUTHN_ENROLL_ENABLED": "true", "GOTRUE_MFA_WEB_AUTHN_VERIFY_ENABLED": "true",
                   "GOTRUE_SITE_URL": "http://localhost:3000"}


def test_webauthn_factor_reaches_aal2_with_an_independent_credential(start_auth, make_client):
    """mfa.go: enroll (factor_type webauthn), a "create" challenge answered by a credential built
    here, verify to aal2; then a "request" challenge after a fresh password sign-in."""
    server = start_auth(**WEBAUTHN_MFA_ON)
    client = make_client(server)
    email, session = signed_up(client)
    token = session.access_token
    authenticator = Authenticator()

    factor = api(server, "POST", "/factors", {"factor_type": "webauthn", "friendly_name": "key"}, token).json()
    challenge = api(server, "POST", f"/factors/{factor['id']}/challenge", {}, token).json()
    assert challenge["webauthn"]["type"] == "create"
    options = challenge["webauthn"]["credential_options"]["publicKey"]
    verified = api(server, "POST", f"/factors/{factor['id']}/verify", {
        "challenge_id": challenge["id"],
        "webauthn": {"type": "create", "credential_response": authenticator.create(options)},
    }, token)
    assert verified.status_code == 200, verified.text
    assert claims(verified.json()["access_token"])["aal"] == "aal2"

    # The real client sees the aal2 session and its methods.
    client.set_session(verified.json()["access_token"], verified.json()["refresh_token"])
    level = client.mfa.get_authenticator_assurance_level()
    assert (level.current_level, level.next_level) == ("aal2", "aal2")
    assert [entry.method for entry in level.current_authentication_methods] == ["mfa/webauthn", "password"]

    aal1 = make_client(server)
    aal1.sign_in_with_password({"email": email, "password": PASSWORD})
    level = aal1.mfa.get_authenticator_assurance_level()
    assert (level.current_level, level.next_level) == ("aal1", "aal2")
    token = aal1.get_session().access_token
    challenge = api(server, "POST", f"/factors/{factor['id']}/challenge", {}, token).json()
    assert challenge["webauthn"]["type"] == "request"
    request = challenge["webauthn"]["credential_options"]["publicKey"]
    assert request["allowCredentials"] == [{"type": "public-key", "id": b64url(authenticator.credential_id), "transports": ["usb"]}]
    again = api(server, "POST", f"/factors/{factor['id']}/verify", {
        "challenge_id": challenge["id"],
        "webauthn": {"type": "request", "credential_response": authenticator.get(request, b"")},
    }, token)
    assert again.status_code == 200, again.text
    assert claims(again.json()["access_token"])["aal"] == "aal2"

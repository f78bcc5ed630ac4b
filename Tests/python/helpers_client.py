"""Shared helpers for the real-client suite (`test_client_*.py`): token decoding against the
default keys, unique addresses, raw HTTP for what the client library does not expose."""
import base64
import json
import re
import time
import uuid

import httpx
import jwt

from conftest import ANON_KEY

# `supabase start`'s JWT secret, which the emulator uses unless configured otherwise: it signs
# the anon and service_role keys, and user tokens under `--defaults gotrue`.
JWT_SECRET = "super-secret-jwt-token-with-at-least-32-characters-long"

# The public half of the Supabase CLI's built-in ES256 key, which signs user tokens under the
# default (`cli`) profile, as under `supabase start`; taken from the CLI's published default
# configuration, not from the emulator.
CLI_KEY_ID = "b81269f1-21d8-4f2e-b719-c2240a840d90"
CLI_PUBLIC_JWK = {
    "kty": "EC", "crv": "P-256", "kid": CLI_KEY_ID, "alg": "ES256",
    "x": "M5Sjqn5zwC9Kl1zVfUUGvv9boQjCGd45G8sdopBExB4",
    "y": "P6IXMvA2WYXSHSOMTBH2jsw_9rrzGy89FjPf6oOsIxQ",
}


def default_verification_key(access_token):
    """The key a default server signed `access_token` with: the CLI's ES256 key when the header
    names it, else the JWT secret (HS256)."""
    header = jwt.get_unverified_header(access_token)
    if header.get("alg") == "ES256" and header.get("kid") == CLI_KEY_ID:
        return jwt.PyJWK(CLI_PUBLIC_JWK).key, "ES256"
    return JWT_SECRET, "HS256"

# Access-token claims GoTrue sets, in its serialization order (reference §7.1, §18.3): the
# registered claims first (`iss` only when configured), then the custom ones.
# `iss` first: `supabase start` always sets GOTRUE_JWT_ISSUER (the auth URL), and so does the
# emulator's default profile.
CLAIM_ORDER = [
    "iss", "sub", "aud", "exp", "iat", "email", "phone", "app_metadata", "user_metadata", "role",
    "aal", "amr", "session_id", "is_anonymous",
]

# Legacy refresh tokens: 12 characters of lowercase base32 (reference §7.5).
REFRESH_TOKEN = re.compile(r"[a-z2-7]{12}")

PASSWORD = "correct-horse-1"


def unique_email(prefix="user"):
    return f"{prefix}-{uuid.uuid4().hex[:10]}@example.com"


def claims(access_token, audience="authenticated"):
    """Verifies the signature with the default keys (`default_verification_key`) and returns
    the payload."""
    key, algorithm = default_verification_key(access_token)
    return jwt.decode(
        access_token,
        key,
        algorithms=[algorithm],
        audience=audience,
        options={"require": ["sub", "exp", "iat", "session_id"]},
    )


def raw_claim_keys(access_token):
    """The payload's keys in wire order (PyJWT hands back a dict but does not promise order)."""
    payload = access_token.split(".")[1]
    payload += "=" * (-len(payload) % 4)
    return list(json.loads(base64.urlsafe_b64decode(payload)).keys())


def jwt_header(access_token):
    return jwt.get_unverified_header(access_token)


def assert_recent(timestamp, slack=30):
    assert abs(timestamp - time.time()) <= slack, timestamp


def gateway(server):
    """A plain HTTP client on the gateway prefix, with the anon key, for raw checks."""
    return httpx.Client(base_url=f"{server.url}/auth/v1", headers={"apikey": ANON_KEY}, timeout=10)


def api_error(excinfo, cls, code, status, message=None):
    """Asserts the client raised exactly `cls` with the parsed code/status (and message)."""
    error = excinfo.value
    assert type(error) is cls, f"{type(error).__name__}: {error!r}"
    assert error.code == code, (error.code, error.message)
    assert error.status == status, (error.status, error.message)
    if message is not None:
        assert error.message == message
    return error


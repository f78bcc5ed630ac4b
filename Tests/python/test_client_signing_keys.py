"""Asymmetric signing keys (reference §5.3, §7.3, §7.4) through the real supabase-auth client:
tokens signed RS256 / ES256 / EdDSA with the key's kid, `get_claims()` verifying them through
`/.well-known/jwks.json`, admin calls with an asymmetric service_role key, tokens from unknown
keys refused with GoTrue's error, GoTrue's own RSA + oct test key setup, and a signing key kept
in the database across a restart."""
import json
import pathlib
import time
import uuid

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError

from helpers_client import JWT_SECRET, PASSWORD, api_error, jwt_header, unique_email

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "Fixtures" / "signing_keys"
KEY_FILES = {"RS256": "rsa.json", "ES256": "ec.json", "EdDSA": "ed25519.json"}


def key_text(name):
    return (FIXTURES / name).read_text()


def first_key(name):
    return json.loads(key_text(name))[0]


@pytest.fixture
def clients():
    made = []

    def make(server, key=None, admin=False):
        key = key or server.info["anon key"]
        headers = {"apikey": key}
        if admin:
            headers["Authorization"] = f"Bearer {key}"
        client = SyncGoTrueClient(url=f"{server.url}/auth/v1", headers=headers, auto_refresh_token=False,
                                  persist_session=not admin)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


@pytest.mark.parametrize("alg", ["RS256", "ES256", "EdDSA"])
def test_sign_in_and_get_claims_through_the_jwks(start_auth, clients, alg):
    server = start_auth(GOTRUE_JWT_KEYS=key_text(KEY_FILES[alg]))
    key = first_key(KEY_FILES[alg])
    client = clients(server)
    email = unique_email(alg.lower())
    signed_up = client.sign_up({"email": email, "password": PASSWORD})
    header = jwt_header(signed_up.session.access_token)
    assert header == {"alg": alg, "kid": key["kid"], "typ": "JWT"}

    signed_in = client.sign_in_with_password({"email": email, "password": PASSWORD})
    if alg != "EdDSA":
        # get_claims() fetches the JWKS and verifies locally (no /user call for asymmetric
        # tokens). supabase-py's header type admits RS256, ES256 and HS256 only, so EdDSA
        # tokens are checked through PyJWT below (the Supabase CLI makes RS256/ES256 keys only).
        result = client.get_claims()
        assert result["claims"]["email"] == email
        session_id = jwt.decode(signed_in.session.access_token, options={"verify_signature": False})["session_id"]
        assert result["claims"]["session_id"] == session_id
        assert result["headers"]["kid"] == key["kid"]
    assert client.get_user().user.email == email

    # PyJWT verifies the same token through the emulator's JWKS on its own.
    jwks_client = jwt.PyJWKClient(f"{server.url}/auth/v1/.well-known/jwks.json")
    signing_key = jwks_client.get_signing_key_from_jwt(signed_in.session.access_token)
    decoded = jwt.decode(signed_in.session.access_token, signing_key.key, algorithms=[alg], audience="authenticated")
    assert decoded["email"] == email

    # Theirs verified by us: PyJWT signs with the same private JWK; the emulator accepts it.
    private_key = jwt.get_algorithm_by_name(alg).from_jwk(json.dumps(key))
    theirs = jwt.encode(decoded, private_key, algorithm=alg, headers={"kid": key["kid"]})
    assert client.get_user(theirs).user.email == email

    # The refresh grant keeps signing with the same key.
    refreshed = client.refresh_session()
    assert jwt_header(refreshed.session.access_token)["kid"] == key["kid"]


def test_jwks_never_exposes_private_or_symmetric_keys(start_auth):
    import httpx

    server = start_auth(GOTRUE_JWT_KEYS=key_text("rsa-and-oct.json"))
    response = httpx.get(f"{server.url}/.well-known/jwks.json", timeout=10)
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=600"
    keys = response.json()["keys"]
    assert [k["kty"] for k in keys] == ["RSA"]
    assert not {"d", "p", "q", "dp", "dq", "qi", "k"} & set(keys[0])
    assert keys[0]["use"] == "sig" and keys[0]["key_ops"] == ["verify"]

    plain = start_auth(GOTRUE_JWT_KEYS="[]")
    assert httpx.get(f"{plain.url}/.well-known/jwks.json", timeout=10).json() == {"keys": []}


def test_rsa_signing_key_with_oct_verify_only_key(start_auth, clients):
    """GoTrue's own test setup: tokens with the oct kid and kid-less HS256 tokens still work."""
    server = start_auth(GOTRUE_JWT_KEYS=key_text("rsa-and-oct.json"))
    client = clients(server)
    email = unique_email("mixed")
    session = client.sign_up({"email": email, "password": PASSWORD}).session
    assert jwt_header(session.access_token)["alg"] == "RS256"
    payload = jwt.decode(session.access_token, options={"verify_signature": False})

    oct_key = json.loads(key_text("rsa-and-oct.json"))[1]
    secret = jwt.utils.base64url_decode(oct_key["k"])
    with_oct_kid = jwt.encode(payload, secret, algorithm="HS256", headers={"kid": oct_key["kid"]})
    assert client.get_user(with_oct_kid).user.email == email
    kidless = jwt.encode(payload, JWT_SECRET, algorithm="HS256")
    assert client.get_user(kidless).user.email == email


def test_tokens_from_unknown_keys_are_refused(start_auth, clients):
    server = start_auth(GOTRUE_JWT_KEYS=key_text("ec.json"))
    client = clients(server)
    session = client.sign_up({"email": unique_email("forged"), "password": PASSWORD}).session
    payload = jwt.decode(session.access_token, options={"verify_signature": False})
    stranger = ec.generate_private_key(ec.SECP256R1())
    forged = jwt.encode(payload, stranger, algorithm="ES256", headers={"kid": "not-ours"})
    with pytest.raises(AuthApiError) as excinfo:
        client.get_user(forged)
    api_error(excinfo, AuthApiError, "bad_jwt", 403,
              "invalid JWT: unable to parse or verify signature, token is unverifiable: error while executing keyfunc: "
              "unrecognized JWT kid not-ours for algorithm ES256")
    # The right kid, the wrong key: Go's crypto/ecdsa error.
    wrong = jwt.encode(payload, stranger, algorithm="ES256", headers={"kid": first_key("ec.json")["kid"]})
    with pytest.raises(AuthApiError) as excinfo:
        client.get_user(wrong)
    api_error(excinfo, AuthApiError, "bad_jwt", 403,
              "invalid JWT: unable to parse or verify signature, token signature is invalid: crypto/ecdsa: verification error")


def test_admin_client_with_an_rs256_service_role_key(start_server, clients):
    server = start_server("--db", ":memory:", "--signing-key", "rs256", env={"AUTH_EMULATOR_PASSWORD_ITERATIONS": "1000"})
    service_role = server.info["service_role key"]
    header = jwt_header(service_role)
    assert header["alg"] == "RS256" and header["kid"]
    assert jwt.decode(service_role, options={"verify_signature": False})["role"] == "service_role"
    admin = clients(server, key=service_role, admin=True)
    email = unique_email("admin")
    created = admin.admin.create_user({"email": email, "password": PASSWORD, "email_confirm": True})
    assert created.user.email == email
    assert any(user.email == email for user in admin.admin.list_users())


def test_signing_key_survives_a_restart(start_server, clients, tmp_path):
    db = tmp_path / "auth.db"
    args = ("--db", str(db), "--signing-key", "es256")
    env = {"AUTH_EMULATOR_PASSWORD_ITERATIONS": "1000"}
    first = start_server(*args, env=env)
    client = clients(first)
    email = unique_email("restart")
    session = client.sign_up({"email": email, "password": PASSWORD}).session
    kid = jwt_header(session.access_token)["kid"]
    assert first.stop() == 0

    second = start_server(*args, env=env)
    again = clients(second)
    assert again.get_user(session.access_token).user.email == email
    refreshed = again.refresh_session(session.refresh_token)
    assert jwt_header(refreshed.session.access_token)["kid"] == kid
    assert again.get_claims(refreshed.session.access_token)["claims"]["email"] == email

"""The OAuth 2.1 server: admin client management through the real supabase-auth client
(`auth.admin.oauth.*`), and an authorization-code flow with PKCE driven by a plain HTTP client
acting as the third-party app: authorize → consent API as the signed-in user → code → token →
userinfo → refresh → revoke grant, the id_token verified with PyJWT through the JWKS
(the real server's internal/api/oauthserver)."""
import base64
import hashlib
import secrets
from urllib.parse import parse_qs, urlparse

import httpx
import jwt
import pytest
from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError

from conftest import ANON_KEY, SERVICE_ROLE_KEY
from helpers_client import PASSWORD, unique_email

OAUTH_ON = {"GOTRUE_OAUTH_SERVER_ENABLED": "true", "GOTRUE_OAUTH_SERVER_AUTHORIZATION_PATH": "/oauth/consent"}


@pytest.fixture
def admin_for():
    made = []

    def make(server):
        client = SyncGoTrueClient(url=f"{server.url}/auth/v1", auto_refresh_token=False, persist_session=False,
                                  headers={"apikey": SERVICE_ROLE_KEY, "Authorization": f"Bearer {SERVICE_ROLE_KEY}"})
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


def test_admin_manages_clients_with_the_real_client(start_auth, admin_for):
    server = start_auth(**OAUTH_ON)
    admin = admin_for(server)
    created = admin.admin.oauth.create_client({"client_name": "Acme", "redirect_uris": ["https://app.example/cb"]}).client
    assert created.client_type == "confidential" and created.client_secret
    assert created.registration_type == "manual"
    assert admin.admin.oauth.get_client(created.client_id).client.client_secret is None
    assert [c.client_id for c in admin.admin.oauth.list_clients().clients] == [created.client_id]
    updated = admin.admin.oauth.update_client(created.client_id, {"client_name": "Acme 2"}).client
    assert updated.client_name == "Acme 2"
    regenerated = admin.admin.oauth.regenerate_client_secret(created.client_id).client
    assert regenerated.client_secret and regenerated.client_secret != created.client_secret
    admin.admin.oauth.delete_client(created.client_id)
    assert admin.admin.oauth.list_clients().clients == []
    with pytest.raises(AuthApiError) as excinfo:
        admin.admin.oauth.get_client(created.client_id)
    assert excinfo.value.status == 404 and excinfo.value.code == "oauth_client_not_found"


def test_authorization_code_flow_as_a_third_party_app(start_auth, make_client, admin_for):
    # A project signing with its secret alone (no keys, as a bare GoTrue container; `supabase
    # start` always hands GoTrue a key).
    server = start_auth(**OAUTH_ON, GOTRUE_JWT_KEYS="[]")
    admin = admin_for(server)
    app = admin.admin.oauth.create_client({"client_name": "Third party", "redirect_uris": ["http://localhost:4000/cb"],
                                           "token_endpoint_auth_method": "none"}).client
    assert app.client_type == "public"

    # The user signs in to the Supabase project's own site.
    user_client = make_client(server)
    email = unique_email("oauth")
    session = user_client.sign_up({"email": email, "password": PASSWORD}).session

    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    base = f"{server.url}/auth/v1"
    authorize = httpx.get(f"{base}/oauth/authorize", follow_redirects=False, timeout=10, params={
        "client_id": app.client_id, "redirect_uri": "http://localhost:4000/cb", "response_type": "code",
        "scope": "openid email profile", "state": "st-1", "code_challenge": challenge, "code_challenge_method": "S256",
        "nonce": "nonce-1"})
    assert authorize.status_code == 302
    consent_page = urlparse(authorize.headers["location"])
    assert consent_page.path == "/oauth/consent"
    authorization_id = parse_qs(consent_page.query)["authorization_id"][0]

    # The project's consent page asks the API as the signed-in user, then approves.
    user_headers = {"apikey": ANON_KEY, "Authorization": f"Bearer {session.access_token}"}
    details = httpx.get(f"{base}/oauth/authorizations/{authorization_id}", headers=user_headers, timeout=10).json()
    assert details["client"]["name"] == "Third party" and details["scope"] == "openid email profile"
    assert details["user"]["email"] == email
    approved = httpx.post(f"{base}/oauth/authorizations/{authorization_id}/consent", json={"action": "approve"},
                          headers=user_headers, timeout=10).json()
    redirect = urlparse(approved["redirect_url"])
    query = parse_qs(redirect.query)
    assert query["state"] == ["st-1"]
    code = query["code"][0]

    # The third-party app exchanges the code with its PKCE verifier.
    token = httpx.post(f"{base}/oauth/token", timeout=10, data={
        "grant_type": "authorization_code", "code": code, "client_id": app.client_id, "code_verifier": verifier,
        "redirect_uri": "http://localhost:4000/cb"})
    assert token.status_code == 500  # HS256 project: no id_token can be signed, as the real server
    assert token.json()["msg"] == "Error generating ID token"


def test_id_token_verified_through_the_jwks(start_server, admin_for, make_client):
    server = start_server("--db", ":memory:", "--signing-key", "es256",
                          env={**OAUTH_ON, "AUTH_EMULATOR_PASSWORD_ITERATIONS": "1000"})
    admin = admin_for(server)
    app = admin.admin.oauth.create_client({"client_name": "RP", "redirect_uris": ["http://localhost:4000/cb"]}).client
    user_client = make_client(server)
    email = unique_email("oidc")
    session = user_client.sign_up({"email": email, "password": PASSWORD}).session
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    base = f"{server.url}/auth/v1"
    location = httpx.get(f"{base}/oauth/authorize", follow_redirects=False, timeout=10, params={
        "client_id": app.client_id, "redirect_uri": "http://localhost:4000/cb", "scope": "openid email",
        "code_challenge": challenge, "code_challenge_method": "S256", "nonce": "n-42"}).headers["location"]
    authorization_id = parse_qs(urlparse(location).query)["authorization_id"][0]
    user_headers = {"apikey": ANON_KEY, "Authorization": f"Bearer {session.access_token}"}
    httpx.get(f"{base}/oauth/authorizations/{authorization_id}", headers=user_headers, timeout=10)
    redirect = httpx.post(f"{base}/oauth/authorizations/{authorization_id}/consent", json={"action": "approve"},
                          headers=user_headers, timeout=10).json()["redirect_url"]
    code = parse_qs(urlparse(redirect).query)["code"][0]

    # A confidential client authenticates with HTTP Basic (client_secret_basic).
    tokens = httpx.post(f"{base}/oauth/token", timeout=10, auth=(app.client_id, app.client_secret), data={
        "grant_type": "authorization_code", "code": code, "code_verifier": verifier}).json()
    assert tokens["token_type"] == "bearer" and tokens["expires_in"] == 3600

    # The relying party verifies the id_token with the key the discovery document points to.
    discovery = httpx.get(f"{base}/.well-known/oauth-authorization-server", timeout=10).json()
    assert discovery["jwks_uri"].endswith("/.well-known/jwks.json")
    assert discovery["code_challenge_methods_supported"] == ["S256", "plain"]
    keys = jwt.PyJWKClient(f"{base}/.well-known/jwks.json").get_signing_key_from_jwt(tokens["id_token"])
    claims = jwt.decode(tokens["id_token"], keys.key, algorithms=["ES256"], audience=app.client_id)
    assert claims["nonce"] == "n-42" and claims["email"] == email and claims["email_verified"] is True

    # userinfo with the OAuth access token; refresh through the client; then the user revokes.
    info = httpx.get(f"{base}/oauth/userinfo", headers={"Authorization": f"Bearer {tokens['access_token']}"}, timeout=10).json()
    assert info["email"] == email
    refreshed = httpx.post(f"{base}/oauth/token", timeout=10, auth=(app.client_id, app.client_secret), data={
        "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}).json()
    assert refreshed["access_token"] and "id_token" not in refreshed
    grants = httpx.get(f"{base}/user/oauth/grants", headers=user_headers, timeout=10).json()
    assert [g["client"]["id"] for g in grants] == [app.client_id]
    revoked = httpx.delete(f"{base}/user/oauth/grants", params={"client_id": app.client_id}, headers=user_headers, timeout=10)
    assert revoked.status_code == 204
    after = httpx.post(f"{base}/oauth/token", timeout=10, auth=(app.client_id, app.client_secret), data={
        "grant_type": "refresh_token", "refresh_token": refreshed["refresh_token"]})
    assert after.status_code == 400

"""Custom OAuth/OIDC providers (the real server's /admin/custom-providers, custom_oauth_admin.go):
managed over HTTP with the service_role key (the supabase-auth client has no admin wrapper for
them), then sign-ins through the emulator's fake OIDC issuer for that provider: the real
client's sign_in_with_id_token with provider "custom:<name>", and the PKCE redirect flow ending
in its exchange_code_for_session."""
import httpx
import pytest
from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError

from conftest import ANON_KEY, SERVICE_ROLE_KEY

ADMIN = {"apikey": SERVICE_ROLE_KEY, "Authorization": f"Bearer {SERVICE_ROLE_KEY}"}


def fake_issuer(server, name):
    """The issuer the fake provider `custom:<name>` announces in its discovery document."""
    document = httpx.get(f"{server.url}/emulator/v1/idp/custom:{name}/.well-known/openid-configuration", timeout=10)
    assert document.status_code == 200, document.text
    return document.json()["issuer"]


def test_crud_through_http(start_auth):
    server = start_auth()
    base = f"{server.url}/auth/v1/admin/custom-providers"
    with httpx.Client(headers=ADMIN, timeout=10) as http:
        issuer = fake_issuer(server, "acme")
        created = http.post(base, json={"provider_type": "oidc", "identifier": "custom:acme", "name": "Acme",
                                        "client_id": "acme-web", "client_secret": "s3cret", "issuer": issuer,
                                        "scopes": ["email"]})
        assert created.status_code == 201, created.text
        body = created.json()
        assert body["scopes"] == ["openid", "email"]
        assert body["pkce_enabled"] is True and body["enabled"] is True and body["email_optional"] is False
        assert body["discovery_document"]["issuer"] == issuer
        assert "client_secret" not in body

        duplicate = http.post(base, json={"provider_type": "oidc", "identifier": "custom:acme", "name": "Acme",
                                          "client_id": "acme-web", "client_secret": "s3cret", "issuer": issuer})
        assert duplicate.status_code == 400 and duplicate.json()["error_code"] == "conflict"

        reserved = http.post(base, json={"provider_type": "oauth2", "identifier": "custom:gh", "name": "GH",
                                         "client_id": "a", "client_secret": "b",
                                         "authorization_url": "https://gh.example.com/authorize",
                                         "token_url": "https://gh.example.com/token",
                                         "userinfo_url": "https://gh.example.com/user",
                                         "authorization_params": {"redirect_uri": "https://evil.example"}})
        assert reserved.status_code == 400
        assert reserved.json()["msg"] == "Cannot override reserved OAuth parameter: redirect_uri"

        listed = http.get(base, params={"type": "oidc"})
        assert [p["identifier"] for p in listed.json()["providers"]] == ["custom:acme"]
        updated = http.put(f"{base}/custom:acme", json={"name": "Acme Corp", "acceptable_client_ids": ["acme-ios"]})
        assert updated.status_code == 200 and updated.json()["name"] == "Acme Corp"
        assert updated.json()["acceptable_client_ids"] == ["acme-ios"]
        assert http.delete(f"{base}/custom:acme").status_code == 204
        missing = http.get(f"{base}/custom:acme")
        assert missing.status_code == 404 and missing.json()["error_code"] == "custom_provider_not_found"


def test_disabled_setting(start_auth):
    server = start_auth(GOTRUE_CUSTOM_OAUTH_ENABLED="false")
    response = httpx.get(f"{server.url}/auth/v1/admin/custom-providers", headers=ADMIN, timeout=10)
    assert response.status_code == 404
    assert response.json()["error_code"] == "feature_disabled"
    assert response.json()["msg"] == "Custom OAuth providers are disabled"


def test_sign_in_with_id_token_through_the_fake_issuer(start_auth, make_client):
    server = start_auth()
    issuer = fake_issuer(server, "acme")
    created = httpx.post(f"{server.url}/auth/v1/admin/custom-providers", headers=ADMIN, timeout=10,
                         json={"provider_type": "oidc", "identifier": "custom:acme", "name": "Acme",
                               "client_id": "acme-web", "client_secret": "s3cret", "issuer": issuer,
                               "acceptable_client_ids": ["acme-ios"]})
    assert created.status_code == 201, created.text
    minted = httpx.post(f"{server.url}/emulator/v1/idp/custom:acme/id_token", headers=ADMIN, timeout=10,
                        json={"email": "ada@example.com", "name": "Ada", "aud": "acme-ios", "nonce": "raw-nonce"})
    assert minted.status_code == 200, minted.text

    client = make_client(server)
    result = client.sign_in_with_id_token({"provider": "custom:acme", "token": minted.json()["id_token"],
                                           "nonce": "raw-nonce"})
    assert result.user.email == "ada@example.com"
    assert result.user.app_metadata["provider"] == "custom:acme"
    assert [i.provider for i in result.user.identities] == ["custom:acme"]
    assert result.session.access_token

    with pytest.raises(AuthApiError) as excinfo:
        client.sign_in_with_id_token({"provider": "custom:other", "token": minted.json()["id_token"]})
    assert excinfo.value.status == 400
    assert excinfo.value.message == 'Custom provider "custom:other" not found'


def test_oauth_redirect_flow_through_the_fake_issuer(start_server):
    """The PKCE redirect flow with provider custom:<name>: /authorize → the fake sign-in page (approved
    at once for login_hint with --idp-auto-approve) → /callback → code → session (PKCE)."""
    server = start_server("--db", ":memory:", "--idp-auto-approve")
    issuer = fake_issuer(server, "acme")
    created = httpx.post(f"{server.url}/auth/v1/admin/custom-providers", headers=ADMIN, timeout=10,
                         json={"provider_type": "oidc", "identifier": "custom:acme", "name": "Acme",
                               "client_id": "acme-web", "client_secret": "s3cret", "issuer": issuer,
                               "attribute_mapping": {"nickname": "email"}})
    assert created.status_code == 201, created.text

    auth = SyncGoTrueClient(url=f"{server.url}/auth/v1", headers={"apikey": ANON_KEY}, flow_type="pkce",
                            auto_refresh_token=False)
    try:
        # sign_in_with_oauth builds this URL, then wraps it in an OAuthResponse whose `provider`
        # admits only the built-in names, so a custom one fails there; the URL (and the PKCE
        # verifier it stores for exchange_code_for_session) comes from the same helper.
        location, _ = auth._get_url_for_provider(f"{server.url}/auth/v1/authorize", "custom:acme", {
            "redirect_to": "http://127.0.0.1:3000/cb", "login_hint": "ann@example.com"})
        for _ in range(5):
            if location.startswith("http://127.0.0.1:3000/cb"):
                break
            location = str(httpx.URL(location).join(httpx.get(location, timeout=10).headers["location"]))
        session = auth.exchange_code_for_session({"auth_code": httpx.URL(location).params["code"]}).session
        assert session.user.email == "ann@example.com"
        identity = session.user.identities[0]
        assert identity.provider == "custom:acme"
        assert identity.identity_data["nickname"] == "ann@example.com"
    finally:
        auth.close()

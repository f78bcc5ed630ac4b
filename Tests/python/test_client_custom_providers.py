"""Custom OAuth/OIDC providers (the real server's /admin/custom-providers, custom_oauth_admin.go):
managed over HTTP with the service_role key (the supabase-auth client has no admin wrapper for
them), then a sign-in through the real client's sign_in_with_id_token with provider
"custom:<name>", the id_token issued by the emulator's fake OIDC issuer for that provider."""
import httpx
import pytest
from supabase_auth.errors import AuthApiError

from conftest import SERVICE_ROLE_KEY

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

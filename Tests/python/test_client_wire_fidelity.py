"""Wire fidelity with `supabase start` through the real supabase-auth client: the gateway's key
translation for opaque keys, links built from the CLI's URL paths, a named SMS provider's
validation, and disabled features answering with the real server's errors."""
from urllib.parse import urlparse

import pytest
from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError

from helpers_client import PASSWORD, api_error, unique_email


@pytest.fixture
def client_with():
    made = []

    def make(server, key, bearer=True):
        headers = {"apikey": key}
        if bearer:
            headers["Authorization"] = f"Bearer {key}"
        client = SyncGoTrueClient(url=f"{server.url}/auth/v1", headers=headers, auto_refresh_token=False,
                                  persist_session=False)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


def test_opaque_secret_key_reaches_the_admin_api(start_auth, client_with):
    server = start_auth()
    admin = client_with(server, server.info["secret key"])
    email = unique_email("opaque")
    created = admin.admin.create_user({"email": email, "password": PASSWORD, "email_confirm": True})
    assert created.user.email == email
    # The publishable key becomes the anon JWT: no admin rights.
    anon = client_with(server, server.info["publishable key"])
    with pytest.raises(AuthApiError) as excinfo:
        anon.admin.list_users()
    api_error(excinfo, AuthApiError, "not_admin", 403, "User not allowed")


def test_links_follow_the_cli_url_paths(start_auth, client_with):
    # What `supabase start` passes: absolute URL paths ending in /auth/v1/verify.
    server = start_auth(GOTRUE_MAILER_URLPATHS_INVITE="http://127.0.0.1:54321/auth/v1/verify",
                        API_EXTERNAL_URL="http://127.0.0.1:54321")
    admin = client_with(server, server.info["service_role key"])
    link = admin.admin.generate_link({"type": "invite", "email": unique_email("invite")})
    parsed = urlparse(link.properties.action_link)
    assert (parsed.scheme, parsed.netloc, parsed.path) == ("http", "127.0.0.1:54321", "/auth/v1/verify")


def test_named_sms_provider_without_credentials_fails_like_the_real_server(start_auth, client_with):
    server = start_auth(GOTRUE_EXTERNAL_PHONE_ENABLED="true", GOTRUE_SMS_AUTOCONFIRM="false",
                        GOTRUE_SMS_PROVIDER="twilio", GOTRUE_SMS_TWILIO_ACCOUNT_SID="AC1")
    client = client_with(server, server.info["anon key"], bearer=False)
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_up({"phone": "+15550109999", "password": PASSWORD})
    api_error(excinfo, AuthApiError, "unexpected_failure", 500, "Unable to get SMS provider")
    # Nothing was kept: the same sign-up succeeds once capture is forced.
    forced = start_auth(GOTRUE_EXTERNAL_PHONE_ENABLED="true", GOTRUE_SMS_AUTOCONFIRM="false",
                        GOTRUE_SMS_PROVIDER="twilio", AUTH_EMULATOR_SMS="capture")
    ok = client_with(forced, forced.info["anon key"], bearer=False).sign_up({"phone": "+15550109999", "password": PASSWORD})
    assert ok.user.phone == "15550109999"


def test_sso_answers_that_saml_is_disabled(start_auth, client_with):
    server = start_auth()
    client = client_with(server, server.info["anon key"], bearer=False)
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_in_with_sso({"domain": "example.com"})
    api_error(excinfo, AuthApiError, "saml_provider_disabled", 404, "SAML 2.0 is disabled")

"""Social sign-in through the real supabase-auth client, offline: the id_token grant (reference
§11) with tokens from the emulator's fake issuers, real-provider-shaped JWTs and plain claims; the
OAuth redirect flow (§5.16-5.19) through the fake provider, implicit and PKCE; manual identity
linking and unlinking; Apple's first-authorization `user` name (form_post).

Redirects are followed by hand (plain `http.client`, one hop at a time, reading `Location`) and
stop at the app's redirect target, which is never contacted: the test only reads the URL the
browser would land on.
"""
import hashlib
import http.client
import json
import time
import urllib.parse
from html.parser import HTMLParser

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError

from conftest import ANON_KEY, FAST_HASHING, SERVICE_ROLE_KEY
from helpers_client import PASSWORD, api_error, claims, unique_email

GOOGLE_CLIENT = "google-client.apps.googleusercontent.com"
APPLE_SERVICE = "com.example.service"
IOS_BUNDLE = "com.example.app"

# Providers configured as the real server reads them (reference §15): the OAuth flow needs a
# client id and a secret; the id_token grant accepts Apple tokens for the service id and the
# iOS bundle id.
SOCIAL = {
    "GOTRUE_EXTERNAL_GOOGLE_ENABLED": "true",
    "GOTRUE_EXTERNAL_GOOGLE_CLIENT_ID": GOOGLE_CLIENT,
    "GOTRUE_EXTERNAL_GOOGLE_SECRET": "google-secret",
    "GOTRUE_EXTERNAL_APPLE_ENABLED": "true",
    "GOTRUE_EXTERNAL_APPLE_CLIENT_ID": APPLE_SERVICE,
    "GOTRUE_EXTERNAL_APPLE_SECRET": "apple-secret",
    "GOTRUE_EXTERNAL_IOS_BUNDLE_ID": IOS_BUNDLE,
}
MANUAL_LINKING = {"GOTRUE_SECURITY_MANUAL_LINKING_ENABLED": "true"}

# The app's redirect target: a loopback literal, which the redirect policy accepts without an
# allow list entry. Nothing listens there; the flow stops at the URL.
APP = "http://127.0.0.1:3000/auth/callback"

NONCE_BOTH_OR_NEITHER = "Passed nonce and nonce in id_token should either both exist or not."


@pytest.fixture
def start_social(start_server):
    """An emulator with Google and Apple enabled; extra CLI flags and GOTRUE_* settings."""

    def start(*flags, **env):
        return start_server("--db", ":memory:", *flags, env={**FAST_HASHING, **SOCIAL, **env})

    return start


@pytest.fixture
def make_pkce_client():
    clients = []

    def make(server):
        client = SyncGoTrueClient(
            url=f"{server.url}/auth/v1",
            headers={"apikey": ANON_KEY},
            auto_refresh_token=False,
            persist_session=True,
            flow_type="pkce",
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def mint(server, provider, **body):
    """An id_token from the fake issuer (service_role only), as a native SDK would receive it."""
    response = httpx.post(
        f"{server.url}/emulator/v1/idp/{provider}/id_token",
        json=body,
        headers={"apikey": SERVICE_ROLE_KEY, "Authorization": f"Bearer {SERVICE_ROLE_KEY}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    return response.json()["id_token"]


def sha256_hex(text):
    return hashlib.sha256(text.encode()).hexdigest()


def unverified(token):
    return jwt.decode(token, options={"verify_signature": False})


def amr_methods(access_token):
    return [entry["method"] for entry in claims(access_token)["amr"]]


# --- raw HTTP: one hop at a time -------------------------------------------------------------


def request(url, method="GET", form=None):
    """One request without following redirects: (status, headers, body text)."""
    parts = urllib.parse.urlsplit(url)
    assert parts.hostname == "127.0.0.1", url  # loopback only
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        headers = {}
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        connection.request(method, target, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode()
    finally:
        connection.close()


def follow(url, stop=APP, max_hops=6):
    """Follows 302s until the Location leaves for `stop` (returned, never requested)."""
    for _ in range(max_hops):
        status, headers, body = request(url)
        assert status in (302, 303), (url, status, body[:500])
        location = headers["Location"]
        if location.startswith(stop):
            return location
        url = location
    raise AssertionError(f"no redirect to {stop} within {max_hops} hops")


def fragment_params(location):
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).fragment, keep_blank_values=True))


def query_params(location):
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query, keep_blank_values=True))


class Forms(HTMLParser):
    """The forms of a page: id, action and the inputs (name, value, type) and buttons."""

    def __init__(self, html):
        super().__init__()
        self.forms = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms.append({"id": attrs.get("id"), "action": attrs.get("action"), "inputs": [], "buttons": []})
        elif tag == "input" and self.forms:
            self.forms[-1]["inputs"].append((attrs.get("name"), attrs.get("value") or "", attrs.get("type")))
        elif tag == "button" and self.forms:
            self.forms[-1]["buttons"].append(attrs)

    def by_id(self, form_id):
        matches = [form for form in self.forms if form["id"] == form_id]
        assert len(matches) == 1, [form["id"] for form in self.forms]
        return matches[0]


def hidden(form):
    return [(name, value) for name, value, kind in form["inputs"] if kind == "hidden"]


def approve_on_page(page_url, email, name):
    """Fills the consent page as a person would and presses Continue; returns the response."""
    status, _, html = request(page_url)
    assert status == 200, html[:500]
    form = Forms(html).by_id("consent")
    fields = hidden(form) + [("email", email), ("name", name), ("email_verified", "true"), ("action", "approve")]
    return request(urllib.parse.urljoin(page_url, form["action"]), "POST", fields)


# --- id_token grant ----------------------------------------------------------------------------


def test_apple_id_token_with_nonce(start_social, make_client):
    server = start_social()
    client = make_client(server)
    email = unique_email("apple")
    raw_nonce = "raw-nonce-apple-1"
    token = mint(server, "apple", sub="001234.abcdef0123456789abcdef0123456789.0042", email=email, nonce=raw_nonce)
    # Apple puts the SHA-256 hex of the app's raw nonce into the token (reference §11.3 step 3).
    assert unverified(token)["nonce"] == sha256_hex(raw_nonce)
    assert unverified(token)["aud"] == APPLE_SERVICE

    result = client.sign_in_with_id_token({"provider": "apple", "token": token, "nonce": raw_nonce})
    session, user = result.session, result.user
    assert session is not None and session.access_token
    assert user.email == email
    # Apple's emails are always taken as verified (§11.3 step 5).
    assert user.email_confirmed_at is not None
    assert user.app_metadata["provider"] == "apple"
    assert user.app_metadata["providers"] == ["apple"]
    assert [(i.provider, i.id) for i in user.identities] == [("apple", "001234.abcdef0123456789abcdef0123456789.0042")]
    assert user.identities[0].identity_data["email"] == email
    payload = claims(session.access_token)
    assert payload["sub"] == user.id
    assert payload["email"] == email
    assert amr_methods(session.access_token) == ["oauth"]
    assert payload["app_metadata"]["provider"] == "apple"
    assert client.get_session().access_token == session.access_token

    # A token for the iOS bundle id is just as acceptable, and the same subject is the same user.
    again = mint(server, "apple", sub="001234.abcdef0123456789abcdef0123456789.0042", email=email, aud=IOS_BUNDLE,
                 nonce="second")
    second = client.sign_in_with_id_token({"provider": "apple", "token": again, "nonce": "second"})
    assert second.user.id == user.id
    assert claims(second.session.access_token)["session_id"] != payload["session_id"]


def test_google_id_token_with_nonce(start_social, make_client):
    server = start_social()
    client = make_client(server)
    email = unique_email("google")
    token = mint(server, "google", sub="109876543210987654321", email=email, name="Grace Hopper",
                 picture="https://example.com/grace.png", nonce="google-nonce")

    result = client.sign_in_with_id_token({"provider": "google", "token": token, "nonce": "google-nonce"})
    user = result.user
    assert user.email == email
    assert user.email_confirmed_at is not None
    assert user.app_metadata == {"provider": "google", "providers": ["google"]}
    assert [(i.provider, i.id) for i in user.identities] == [("google", "109876543210987654321")]
    identity_data = user.identities[0].identity_data
    assert identity_data["sub"] == "109876543210987654321"
    assert identity_data["email_verified"] is True
    assert user.user_metadata["full_name"] == "Grace Hopper"
    assert user.user_metadata["avatar_url"] == "https://example.com/grace.png"
    assert amr_methods(result.session.access_token) == ["oauth"]
    assert client.get_user().user.id == user.id


@pytest.mark.parametrize("flag", [None, "true"], ids=["default", "experimental-flag"])
def test_a_first_password_on_a_google_account(start_social, make_client, flag):
    """GoTrue adds an email identity for a first password only behind
    GOTRUE_EXPERIMENTAL_CREATE_EMAIL_IDENTITY_ON_PASSWORD_SET_ENABLED (identity.go,
    ensureEmailIdentityForPassword); by default the account keeps its one identity."""
    env = {"GOTRUE_EXPERIMENTAL_CREATE_EMAIL_IDENTITY_ON_PASSWORD_SET_ENABLED": flag} if flag else {}
    server = start_social(**env)
    client = make_client(server)
    email = unique_email("first-password")
    client.sign_in_with_id_token({"provider": "google", "token": mint(server, "google", email=email)})
    user = client.update_user({"password": PASSWORD}).user
    expected = ["google", "email"] if flag else ["google"]
    assert [i.provider for i in user.identities] == expected
    assert user.app_metadata == {"provider": "google", "providers": expected}
    assert [i.provider for i in client.get_user_identities().identities] == expected
    # Either way the password signs in: the password grant looks up the user by email.
    client.sign_out()
    assert client.sign_in_with_password({"email": email, "password": PASSWORD}).user.id == user.id


def test_id_token_nonce_errors(start_social, make_client):
    server = start_social()
    client = make_client(server)
    token = mint(server, "apple", email=unique_email("nonce"), nonce="the-raw-nonce")

    # Wrong raw nonce: GoTrue's OAuth-shaped error, no error code (reference §11.3 step 3).
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_in_with_id_token({"provider": "apple", "token": token, "nonce": "another-nonce"})
    api_error(excinfo, AuthApiError, None, 400, "Nonces mismatch")
    # The hashed value is not the raw nonce either.
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_in_with_id_token({"provider": "apple", "token": token, "nonce": sha256_hex("the-raw-nonce")})
    api_error(excinfo, AuthApiError, None, 400, "Nonces mismatch")

    # Missing on one side: both or neither.
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_in_with_id_token({"provider": "apple", "token": token})
    api_error(excinfo, AuthApiError, None, 400, NONCE_BOTH_OR_NEITHER)
    without = mint(server, "apple", email=unique_email("nonce"))
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_in_with_id_token({"provider": "apple", "token": without, "nonce": "unexpected"})
    api_error(excinfo, AuthApiError, None, 400, NONCE_BOTH_OR_NEITHER)

    # Neither: fine.
    assert client.sign_in_with_id_token({"provider": "apple", "token": without}).session is not None


def test_skip_nonce_check_setting(start_social, make_client):
    server = start_social(GOTRUE_EXTERNAL_GOOGLE_SKIP_NONCE_CHECK="true")
    client = make_client(server)
    token = mint(server, "google", email=unique_email("skip"), nonce="raw")
    assert client.sign_in_with_id_token({"provider": "google", "token": token, "nonce": "other"}).session
    assert client.sign_in_with_id_token({"provider": "google", "token": token}).session


def test_id_token_wrong_audience(start_social, make_client):
    server = start_social()
    client = make_client(server)
    token = mint(server, "google", email=unique_email("aud"), aud="someone-elses-client")
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_in_with_id_token({"provider": "google", "token": token})
    api_error(excinfo, AuthApiError, None, 400, "Unacceptable audience in id_token: [someone-elses-client]")
    # An Apple token addressed to the Google client is refused the same way.
    apple = mint(server, "apple", email=unique_email("aud"), aud=GOOGLE_CLIENT)
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_in_with_id_token({"provider": "apple", "token": apple})
    api_error(excinfo, AuthApiError, None, 400, f"Unacceptable audience in id_token: [{GOOGLE_CLIENT}]")


def test_id_token_disabled_provider(start_server, make_client):
    # Only Apple on: Google's tokens meet `provider_disabled` (reference §11.2).
    apple_only = {k: v for k, v in SOCIAL.items() if "GOOGLE" not in k}
    server = start_server("--db", ":memory:", env={**FAST_HASHING, **apple_only})
    client = make_client(server)
    token = mint(server, "google", email=unique_email("off"), aud=GOOGLE_CLIENT)
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_in_with_id_token({"provider": "google", "token": token})
    api_error(excinfo, AuthApiError, "provider_disabled", 400,
              'Provider (issuer "https://accounts.google.com") is not enabled')


def real_provider_token(email, sub="115555555555555555555", **extra):
    """A JWT shaped like Google's, signed by a key the emulator cannot know (as a real one is)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    payload = {
        "iss": "https://accounts.google.com", "azp": GOOGLE_CLIENT, "aud": GOOGLE_CLIENT, "sub": sub,
        "email": email, "email_verified": True, "name": "Real Person", "iat": now, "exp": now + 3600, **extra,
    }
    return jwt.encode(payload, key, algorithm="RS256", headers={"kid": "0123456789abcdef0123456789abcdef01234567"})


def test_real_provider_token_accepted_with_warning(start_social, make_client):
    server = start_social()
    client = make_client(server)
    email = unique_email("real")
    token = real_provider_token(email, nonce=sha256_hex("real-nonce"))
    result = client.sign_in_with_id_token({"provider": "google", "token": token, "nonce": "real-nonce"})
    assert result.user.email == email
    assert [(i.provider, i.id) for i in result.user.identities] == [("google", "115555555555555555555")]
    assert amr_methods(result.session.access_token) == ["oauth"]
    # The signature cannot be checked offline: the server says so in its log.
    assert "without a signature check" in server.stderr_text()

    # Issuer and expiry are still checked: any failure is "Bad ID token" (§11.3 step 1).
    expired = real_provider_token(email, exp=int(time.time()) - 60)
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_in_with_id_token({"provider": "google", "token": expired})
    api_error(excinfo, AuthApiError, None, 400, "Bad ID token")
    foreign = real_provider_token(email, iss="https://issuer.example.com")
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_in_with_id_token({"provider": "google", "token": foreign})
    api_error(excinfo, AuthApiError, None, 400, "Bad ID token")


def test_strict_mode_refuses_unverifiable_tokens(start_social, make_client):
    server = start_social("--strict-id-tokens")
    client = make_client(server)
    email = unique_email("strict")
    for token in (real_provider_token(email), json.dumps({"sub": "plain-1", "aud": GOOGLE_CLIENT, "email": email})):
        with pytest.raises(AuthApiError) as excinfo:
            client.sign_in_with_id_token({"provider": "google", "token": token})
        api_error(excinfo, AuthApiError, None, 400, "Bad ID token")
    # The emulator's own tokens are verified, so they still pass.
    assert client.sign_in_with_id_token({"provider": "google", "token": mint(server, "google", email=email)}).user.email == email


def test_plain_json_claims(start_social, make_client):
    server = start_social()
    client = make_client(server)
    email = unique_email("plain")
    token = json.dumps({"sub": "plain-subject-1", "aud": GOOGLE_CLIENT, "email": email, "email_verified": True,
                        "name": "Plain Claims"})
    result = client.sign_in_with_id_token({"provider": "google", "token": token})
    assert result.user.email == email
    assert result.user.identities[0].id == "plain-subject-1"
    assert result.user.user_metadata["full_name"] == "Plain Claims"
    # Plain claims follow the same rules: the audience still has to be a configured client id.
    with pytest.raises(AuthApiError) as excinfo:
        client.sign_in_with_id_token({"provider": "google", "token": json.dumps({"sub": "x", "aud": "nope"})})
    api_error(excinfo, AuthApiError, None, 400, "Unacceptable audience in id_token: [nope]")


def test_minted_token_verifies_against_published_jwks(start_social):
    # The fake issuer is a real OpenID provider to any library: discovery (OpenID Connect
    # Discovery 1.0 §4), JWKS (RFC 7517 §5), RS256 signatures (RFC 7518 §3.3).
    server = start_social()
    email = unique_email("jwks")
    token = mint(server, "google", email=email, nonce="n")
    discovery = httpx.get(f"{server.url}/emulator/v1/idp/google/.well-known/openid-configuration", timeout=10)
    assert discovery.status_code == 200
    config = discovery.json()
    issuer = f"{server.url}/emulator/v1/idp/google"
    assert config["issuer"] == issuer
    assert config["id_token_signing_alg_values_supported"] == ["RS256"]
    jwks = httpx.get(config["jwks_uri"], timeout=10)
    assert jwks.status_code == 200
    kid = jwt.get_unverified_header(token)["kid"]
    matching = [key for key in jwks.json()["keys"] if key["kid"] == kid]
    assert len(matching) == 1
    assert "d" not in matching[0]  # the public half only
    key = jwt.PyJWK(matching[0])
    assert key.algorithm_name == "RS256"

    payload = jwt.decode(token, key, algorithms=["RS256"], audience=GOOGLE_CLIENT, issuer=issuer,
                         options={"require": ["iss", "aud", "exp", "iat", "sub"]})
    assert payload["email"] == email
    assert payload["nonce"] == sha256_hex("n")
    # A different audience or issuer fails the independent check.
    with pytest.raises(jwt.InvalidAudienceError):
        jwt.decode(token, key, algorithms=["RS256"], audience="other", issuer=issuer)
    with pytest.raises(jwt.InvalidIssuerError):
        jwt.decode(token, key, algorithms=["RS256"], audience=GOOGLE_CLIENT, issuer="https://accounts.google.com")
    # Apple's issuer signs with the same published key.
    apple = mint(server, "apple", email=email)
    apple_jwks = httpx.get(f"{server.url}/emulator/v1/idp/apple/jwks", timeout=10).json()
    apple_key = jwt.PyJWK([k for k in apple_jwks["keys"] if k["kid"] == jwt.get_unverified_header(apple)["kid"]][0])
    assert jwt.decode(apple, apple_key, algorithms=["RS256"], audience=APPLE_SERVICE,
                      issuer=f"{server.url}/emulator/v1/idp/apple")["email"] == email


# --- OAuth redirect flow -----------------------------------------------------------------------


def test_oauth_pkce_flow(start_social, make_pkce_client):
    server = start_social("--idp-auto-approve")
    client = make_pkce_client(server)
    email = unique_email("pkce")
    response = client.sign_in_with_oauth({
        "provider": "google",
        "options": {"redirect_to": APP, "query_params": {"login_hint": email}},
    })
    assert response.url.startswith(f"{server.url}/auth/v1/authorize?")
    sent = query_params(response.url)
    assert sent["code_challenge_method"] == "s256"

    # /authorize → the fake provider (auto-approved) → /callback → the app with ?code=.
    status, headers, _ = request(response.url)
    assert status == 302
    provider_page = headers["Location"]
    assert provider_page.startswith(f"{server.url}/emulator/v1/idp/google/authorize?")
    authorization = query_params(provider_page)
    assert authorization["client_id"] == GOOGLE_CLIENT
    assert authorization["redirect_uri"] == f"{server.url}/auth/v1/callback"
    assert authorization["login_hint"] == email
    location = follow(provider_page)
    assert location.startswith(APP + "?code=")
    code = query_params(location)["code"]
    assert "#" not in location

    # The verifier the client kept when it built the URL (RFC 7636 §4.1), for the replay below.
    verifier = client._storage.get_item(f"{client._storage_key}-code-verifier")
    assert verifier
    result = client.exchange_code_for_session({"auth_code": code})
    assert result.user.email == email
    assert result.user.app_metadata["provider"] == "google"
    assert result.session.provider_token
    assert amr_methods(result.session.access_token) == ["oauth"]
    assert client.get_session().access_token == result.session.access_token
    # The code is single use, even with the right verifier.
    with pytest.raises(AuthApiError) as excinfo:
        client.exchange_code_for_session({"auth_code": code, "code_verifier": verifier})
    api_error(excinfo, AuthApiError, "flow_state_not_found", 404, "invalid flow state, no valid flow state found")


def test_oauth_implicit_flow(start_social, make_client):
    server = start_social("--idp-auto-approve")
    client = make_client(server)
    email = unique_email("implicit")
    response = client.sign_in_with_oauth({
        "provider": "google",
        "options": {"redirect_to": APP, "query_params": {"login_hint": email}},
    })
    assert "code_challenge" not in query_params(response.url)
    location = follow(response.url)
    assert location.startswith(APP + "#access_token=")
    params = fragment_params(location)
    assert params["token_type"] == "bearer"
    assert params["expires_in"] == "3600"
    assert params["refresh_token"] and params["provider_token"]
    user = client.get_user(params["access_token"]).user
    assert user.email == email
    assert user.app_metadata == {"provider": "google", "providers": ["google"]}
    assert [i.provider for i in user.identities] == ["google"]
    assert amr_methods(params["access_token"]) == ["oauth"]
    # The refresh token from the fragment is a working session.
    session = client.set_session(params["access_token"], params["refresh_token"]).session
    assert session.user.id == user.id


def test_link_and_unlink_identity(start_social, make_client):
    server = start_social("--idp-auto-approve", **MANUAL_LINKING)
    client = make_client(server)
    email = unique_email("linker")
    client.sign_up({"email": email, "password": PASSWORD})
    google_email = unique_email("linked-google")

    linked = client.link_identity({
        "provider": "google",
        "options": {"redirect_to": APP, "query_params": {"login_hint": google_email}},
    })
    assert linked.url.startswith(f"{server.url}/emulator/v1/idp/google/authorize?")
    location = follow(linked.url)
    assert "#access_token=" in location, location

    identities = client.get_user_identities().identities
    assert [i.provider for i in identities] == ["email", "google"]
    google = identities[1]
    assert google.identity_data["email"] == google_email
    user = client.get_user().user
    # Linking keeps the account's own email (reference §5.19).
    assert user.email == email
    assert user.app_metadata["providers"] == ["email", "google"]

    client.unlink_identity(google)
    identities = client.get_user_identities().identities
    assert [i.provider for i in identities] == ["email"]
    assert client.get_user().user.app_metadata["providers"] == ["email"]

    with pytest.raises(AuthApiError) as excinfo:
        client.unlink_identity(identities[0])
    api_error(excinfo, AuthApiError, "single_identity_not_deletable", 422,
              "User must have at least 1 identity after unlinking")


def test_link_identity_needs_manual_linking(start_social, make_client):
    server = start_social("--idp-auto-approve")
    client = make_client(server)
    client.sign_up({"email": unique_email(), "password": PASSWORD})
    with pytest.raises(AuthApiError) as excinfo:
        client.link_identity({"provider": "google"})
    api_error(excinfo, AuthApiError, "manual_linking_disabled", 404, "Manual linking is disabled")


def test_anonymous_user_upgraded_by_linking_google(start_social, make_client):
    server = start_social("--idp-auto-approve", GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED="true", **MANUAL_LINKING)
    client = make_client(server)
    anonymous = client.sign_in_anonymously()
    assert anonymous.user.is_anonymous is True
    assert claims(anonymous.session.access_token)["is_anonymous"] is True
    email = unique_email("upgraded")

    linked = client.link_identity({
        "provider": "google",
        "options": {"redirect_to": APP, "query_params": {"login_hint": email}},
    })
    params = fragment_params(follow(linked.url))
    user = client.get_user(params["access_token"]).user
    assert user.id == anonymous.user.id
    assert user.is_anonymous is False
    assert user.email == email
    assert [i.provider for i in user.identities] == ["google"]
    assert claims(params["access_token"])["is_anonymous"] is False


def test_apple_name_only_on_first_authorization(start_social, make_client):
    # Apple sends the person's name once, as the `user` field of the first form_post to the
    # callback; its id_token never carries a name. GoTrue stores it in user_metadata, where it
    # stays on later sign-ins.
    server = start_social()
    client = make_client(server)
    email = unique_email("apple-web")

    def sign_in(name):
        response = client.sign_in_with_oauth({"provider": "apple", "options": {"redirect_to": APP}})
        status, headers, _ = request(response.url)
        assert status == 302
        page = headers["Location"]
        assert query_params(page)["response_mode"] == "form_post"
        status, _, html = approve_on_page(page, email, name)
        # The answer is an auto-submitting form to GoTrue's callback, not a redirect.
        assert status == 200, html[:500]
        form = Forms(html).by_id("response")
        assert form["action"] == f"{server.url}/auth/v1/callback"
        fields = hidden(form)
        status, headers, body = request(form["action"], "POST", fields)
        assert status == 302, body
        location = headers["Location"]
        assert location.startswith(APP + "#access_token="), location
        return dict(fields), fragment_params(location)["access_token"]

    fields, access_token = sign_in("Ada Lovelace")
    assert json.loads(fields["user"]) == {"name": {"firstName": "Ada", "lastName": "Lovelace"}, "email": email}
    user = client.get_user(access_token).user
    assert user.email == email
    assert user.user_metadata["full_name"] == "Ada Lovelace"
    assert user.user_metadata["name"] == "Ada Lovelace"
    assert user.app_metadata["provider"] == "apple"

    fields, access_token = sign_in("Someone Else")
    assert "user" not in fields
    again = client.get_user(access_token).user
    assert again.id == user.id
    assert again.user_metadata["full_name"] == "Ada Lovelace"

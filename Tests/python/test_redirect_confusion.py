"""Redirect targets that parsers read differently (reference §1.5, docs/wire-behaviour.md, "Redirect URLs").

Each candidate goes in as `redirect_to`; the emulator's `Location` is then read by ada, an
implementation of the WHATWG URL Standard (what browsers follow), never by the emulator's own
parser. Whatever the emulator decided, the browser must land on the site URL's host, or on the
very host the browser reads from the candidate when that host is one the allow-list allows.
"""
import http.client
import ipaddress
from urllib.parse import urlencode, urlsplit

import httpx
import pytest
from ada_url import URL

from conftest import ANON_KEY, SERVICE_ROLE_KEY
from helpers_client import unique_email

SITE = "http://localhost:3000"
SETTINGS = {
    "GOTRUE_SITE_URL": SITE,
    "GOTRUE_URI_ALLOW_LIST": "https://app.example.com/**",
    "GOTRUE_RATE_LIMIT_EMAIL_SENT": "1000",
}
# Hosts the configuration above allows: the site's (any port, it is loopback), the allow-list's,
# and loopback IP literals (`is_allowed`).
ALLOWED_NAMES = {"localhost", "app.example.com"}


def is_allowed(host):
    if host in ALLOWED_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or (mapped is not None and mapped.is_loopback)

CONFUSIONS = [
    # The example: Go and the WHATWG parser split the authority differently.
    "http://evil.example\\@127.0.0.1:3000/",
    "http://evil.example\\@localhost:3000/",
    "http://localhost:3000\\@evil.example/",
    "http://127.0.0.1:3000\\@evil.example/",
    "https://app.example.com\\@evil.example/",
    "http://evil.example\\.localhost:3000/",
    "http:\\\\evil.example\\@localhost:3000/",
    "http:\\\\evil.example",
    "http:\\\\localhost:3000/",
    "http:/evil.example/",
    "http:evil.example",
    "http:///evil.example/",
    "//evil.example/",
    "/\\evil.example/",
    "\\\\evil.example",
    # `@` in every place.
    "http://evil.example@localhost:3000/",
    "http://localhost:3000@evil.example/",
    "http://a@b@localhost:3000/",
    "http://localhost@evil.example@localhost:3000/",
    "http://localhost:3000/@evil.example",
    "http://localhost:3000?@evil.example",
    "http://localhost:3000#@evil.example",
    "http://@localhost:3000/",
    "http://localhost:3000@/",
    # Tabs, newlines and carriage returns, which browsers strip.
    "http://evil.example\t@localhost:3000/",
    "http://local\thost:3000/",
    "http://evil.exa\nmple\\@localhost:3000/",
    "http://localhost:3000\r\n@evil.example/",
    " http://evil.example\\@localhost:3000/",
    # Percent-encoded separators in the host.
    "http://evil.example%2f@localhost:3000/",
    "http://evil.example%2flocalhost:3000/",
    "http://evil.example%40localhost:3000/",
    "http://evil.example%5clocalhost:3000/",
    "http://evil.example%5c@localhost:3000/",
    "http://localhost%2f@evil.example/",
    "http://%6c%6fcalhost:3000/",
    "http://127.0.0.1%2f.evil.example/",
    # IPv6 literals and zones.
    "http://[::1]:3000/",
    "http://[::1%25eth0]:3000/",
    "http://[::1]@evil.example/",
    "http://[::ffff:127.0.0.1]:3000/",
    "http://[127.0.0.1]/",
    "http://[::1]evil.example/",
    # Case, IPv4 spellings, trailing dots.
    "HTTP://localhost:3000/",
    "HTTP://EVIL.EXAMPLE\\@LOCALHOST:3000/",
    "http://0x7f.0.0.1:3000/",
    "http://0x7f000001/",
    "http://2130706433/",
    "http://127.1:3000/",
    "http://017700000001/",
    "http://127.0.0.1.:3000/",
    "http://localhost.:3000/",
    # Ports.
    "http://localhost:03000/",
    "http://localhost:99999/",
    "http://localhost:3000:80/",
    "http://localhost:80:evil.example/",
    "http://localhost:/",
    "http://:3000/",
    # Non-ASCII hosts (IDNA maps full-width letters to ASCII).
    "http://ｌｏｃａｌｈｏｓｔ:3000/",
    "http://evil。example\\@localhost:3000/",
    "http://lоcalhost:3000/",
    # Plainly allowed and plainly refused, for contrast.
    "http://localhost:3000/welcome",
    "https://app.example.com/callback",
    "https://evil.example/",
]


def location(url):
    """The `Location` of a GET answered 303, read raw: httpx itself refuses some of the URLs
    under test when it prepares to follow them."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        connection.request("GET", parts.path + "?" + parts.query, headers={"apikey": ANON_KEY})
        response = connection.getresponse()
        assert response.status == 303, response.read()
        return response.getheader("Location")
    finally:
        connection.close()


def browser_host(url):
    """The host a browser reads from `url`, or None where it cannot parse it."""
    try:
        return URL(url).hostname
    except ValueError:
        return None


def assert_lands_safely(candidate, location):
    landed = browser_host(location)
    assert landed is not None, f"{candidate!r}: unparseable Location {location!r}"
    if landed == browser_host(SITE):
        return
    assert landed == browser_host(candidate) and is_allowed(landed), (
        f"{candidate!r}: Location {location!r} sends the browser to {landed!r}")


@pytest.fixture(scope="module")
def auth():
    # One server for the whole table (the table's requests are independent of each other).
    import conftest

    server = conftest.Server(["--db", ":memory:"], env={**conftest.FAST_HASHING, **SETTINGS})
    yield server
    server.stop()


@pytest.mark.parametrize("candidate", CONFUSIONS)
def test_verify_error_redirect_lands_where_the_browser_expects(auth, candidate):
    # GET /verify with a token that matches nothing redirects to `redirect_to` with the error:
    # the same redirect resolution as a link that works, with no mail needed.
    query = urlencode({"token": "0" * 56, "type": "magiclink", "redirect_to": candidate})
    assert_lands_safely(candidate, location(f"{auth.url}/auth/v1/verify?{query}"))


@pytest.mark.parametrize("candidate", [
    "http://evil.example\\@127.0.0.1:3000/",
    "http:\\\\evil.example\\@localhost:3000/",
    "http://evil.example%5c@localhost:3000/",
    "http://localhost:3000/welcome",
])
def test_magic_link_tokens_reach_only_allowed_hosts(auth, candidate):
    # The emailed link, followed as a browser would: its tokens must not reach another host.
    email = unique_email("confusion")
    sent = httpx.post(f"{auth.url}/auth/v1/otp", params={"redirect_to": candidate},
                      json={"email": email, "create_user": True}, headers={"apikey": ANON_KEY}, timeout=10)
    assert sent.status_code == 200, sent.text
    mail = httpx.get(f"{auth.url}/emulator/v1/outbox/latest", params={"to": email},
                     headers={"apikey": SERVICE_ROLE_KEY}, timeout=10)
    assert mail.status_code == 200, mail.text
    landed = location(mail.json()["action_link"])
    assert "access_token=" in landed
    assert_lands_safely(candidate, landed)

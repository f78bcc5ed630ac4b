"""Web3 sign-in over the wire (`POST /token?grant_type=web3`, the real server's
internal/api/web3.go): once with the emulator's software wallet, and once with keys held here,
signed with the `cryptography` package and hashed with a Keccak-256 written here, so the
emulator's secp256k1 recovery, Keccak and Ed25519 checks are proven against implementations
that are not its own. supabase-auth 2.34.1 has no Web3 method: the grant is posted the way
supabase-js's `signInWithWeb3` posts it, and the real client then takes over the session.
"""
import base64
import datetime

import httpx
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, utils

from conftest import ANON_KEY, SERVICE_ROLE_KEY
from helpers_client import claims

WEB3_ON = {
    "GOTRUE_EXTERNAL_WEB3_SOLANA_ENABLED": "true",
    "GOTRUE_EXTERNAL_WEB3_ETHEREUM_ENABLED": "true",
    "GOTRUE_SITE_URL": "http://localhost:3000",
}

# What supabase-js sends with every auth request (GoTrueClient `headers`, `_request`).
CLIENT_HEADERS = {
    "apikey": ANON_KEY,
    "Authorization": f"Bearer {ANON_KEY}",
    "X-Client-Info": "supabase-js-web/2.50.0",
    "X-Supabase-Api-Version": "2024-01-01",
    "Content-Type": "application/json;charset=UTF-8",
}


def grant(server, chain, message, signature):
    return httpx.post(
        f"{server.url}/auth/v1/token?grant_type=web3",
        json={"chain": chain, "message": message, "signature": signature},
        headers=CLIENT_HEADERS,
        timeout=10,
    )


def control(server, path, body):
    return httpx.post(f"{server.url}/emulator/v1/{path}", json=body, headers={"apikey": SERVICE_ROLE_KEY}, timeout=10)


# --- Keccak-256 (the Keccak team's reference description, padding 0x01 ... 0x80) ---

ROUND_CONSTANTS = [
    0x0000000000000001, 0x0000000000008082, 0x800000000000808A, 0x8000000080008000, 0x000000000000808B,
    0x0000000080000001, 0x8000000080008081, 0x8000000000008009, 0x000000000000008A, 0x0000000000000088,
    0x0000000080008009, 0x000000008000000A, 0x000000008000808B, 0x800000000000008B, 0x8000000000008089,
    0x8000000000008003, 0x8000000000008002, 0x8000000000000080, 0x000000000000800A, 0x800000008000000A,
    0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
]
MASK = (1 << 64) - 1


def keccak_f(state):
    # The rotation offsets come from the (x, y) -> (y, 2x + 3y) walk of the rho step.
    offsets = [[0] * 5 for _ in range(5)]
    x, y = 1, 0
    for t in range(24):
        offsets[x][y] = ((t + 1) * (t + 2) // 2) % 64
        x, y = y, (2 * x + 3 * y) % 5
    for rc in ROUND_CONSTANTS:
        c = [state[x][0] ^ state[x][1] ^ state[x][2] ^ state[x][3] ^ state[x][4] for x in range(5)]
        d = [c[(x - 1) % 5] ^ (((c[(x + 1) % 5] << 1) | (c[(x + 1) % 5] >> 63)) & MASK) for x in range(5)]
        state = [[state[x][y] ^ d[x] for y in range(5)] for x in range(5)]
        b = [[0] * 5 for _ in range(5)]
        for x in range(5):
            for y in range(5):
                r = offsets[x][y]
                b[y][(2 * x + 3 * y) % 5] = ((state[x][y] << r) | (state[x][y] >> (64 - r))) & MASK if r else state[x][y]
        state = [[b[x][y] ^ (~b[(x + 1) % 5][y] & b[(x + 2) % 5][y]) for y in range(5)] for x in range(5)]
        state[0][0] ^= rc
    return state


def keccak256(data):
    rate = 136
    padded = bytearray(data) + b"\x01" + b"\x00" * ((-len(data) - 1) % rate)
    padded[-1] |= 0x80
    state = [[0] * 5 for _ in range(5)]
    for offset in range(0, len(padded), rate):
        block = padded[offset:offset + rate]
        for i in range(rate // 8):
            state[i % 5][i // 5] ^= int.from_bytes(block[8 * i:8 * i + 8], "little")
        state = keccak_f(state)
    return b"".join(state[i % 5][i // 5].to_bytes(8, "little") for i in range(4))


def test_python_keccak_matches_published_vectors():
    assert keccak256(b"").hex() == "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"
    assert keccak256(b"abc").hex() == "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45"


# --- secp256k1 public-key recovery (SEC 1 section 4.1.6), to find v for a cryptography signature ---

P = 2**256 - 2**32 - 977
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
G = (0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798,
     0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8)


def point_add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if a[0] == b[0] and (a[1] + b[1]) % P == 0:
        return None
    if a == b:
        slope = 3 * a[0] * a[0] * pow(2 * a[1], -1, P) % P
    else:
        slope = (b[1] - a[1]) * pow(b[0] - a[0], -1, P) % P
    x = (slope * slope - a[0] - b[0]) % P
    return x, (slope * (a[0] - x) - a[1]) % P


def point_mul(k, point):
    result = None
    while k:
        if k & 1:
            result = point_add(result, point)
        point = point_add(point, point)
        k >>= 1
    return result


def recover(digest, r, s, parity):
    y = pow((r ** 3 + 7) % P, (P + 1) // 4, P)
    if y % 2 != parity:
        y = P - y
    e = int.from_bytes(digest, "big")
    r_inv = pow(r, -1, N)
    return point_add(point_mul(-e * r_inv % N, G), point_mul(s * r_inv % N, (r, y)))


def eip191_hash(message):
    data = message.encode()
    return keccak256(b"\x19Ethereum Signed Message:\n" + str(len(data)).encode() + data)


def ethereum_address(public_key):
    numbers = public_key.public_numbers()
    raw = keccak256(numbers.x.to_bytes(32, "big") + numbers.y.to_bytes(32, "big"))[12:]
    # EIP-55 checksum
    lower = raw.hex()
    digest = keccak256(lower.encode()).hex()
    return "0x" + "".join(c.upper() if c.isalpha() and int(digest[i], 16) >= 8 else c for i, c in enumerate(lower))


def personal_sign(private_key, message):
    digest = eip191_hash(message)
    r, s = utils.decode_dss_signature(private_key.sign(digest, ec.ECDSA(utils.Prehashed(hashes.SHA256()))))
    numbers = private_key.public_key().public_numbers()
    parity = next(p for p in (0, 1) if recover(digest, r, s, p) == (numbers.x, numbers.y))
    return "0x" + r.to_bytes(32, "big").hex() + s.to_bytes(32, "big").hex() + bytes([27 + parity]).hex()


BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def base58(data):
    n = int.from_bytes(data, "big")
    out = ""
    while n:
        n, digit = divmod(n, 58)
        out = BASE58[digit] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def now_rfc3339(offset_seconds=0):
    moment = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=offset_seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def sign_in_message(chain, address, statement, expires_in=300):
    title = "Solana" if chain == "solana" else "Ethereum"
    lines = [f"localhost:3000 wants you to sign in with your {title} account:", address, "", statement, "",
             "URI: http://localhost:3000", "Version: 1"]
    if chain == "ethereum":
        lines.append("Chain ID: 1")
    lines += ["Nonce: k3fJq8ZtP0aLm2Qx", f"Issued At: {now_rfc3339()}", f"Expiration Time: {now_rfc3339(expires_in)}"]
    return "\n".join(lines)


# --- tests ---


def test_web3_is_off_by_default(start_auth):
    server = start_auth()
    response = grant(server, "ethereum", "x" * 80, "0x" + "0" * 130)
    assert response.status_code == 422
    assert response.headers["x-sb-error-code"] == "web3_provider_disabled"
    assert response.json()["message"] == "Web3 provider is disabled"


@pytest.mark.parametrize("chain", ["solana", "ethereum"])
def test_software_wallet_signs_in_and_the_client_takes_over(start_auth, make_client, chain):
    server = start_auth(**WEB3_ON)
    wallet = control(server, "web3/wallets", {"chain": chain, "label": "alice"}).json()
    built = control(server, "web3/message", {"chain": chain, "label": "alice", "statement": "Sign in to the demo app"})
    assert built.status_code == 200, built.text
    message = built.json()["message"]
    assert message.startswith(f"localhost:3000 wants you to sign in with your {chain.title()} account:\n{wallet['address']}\n")
    signature = control(server, "web3/sign", {"chain": chain, "message": message}).json()["signature"]

    response = grant(server, chain, message, signature)
    assert response.status_code == 200, response.text
    tokens = response.json()
    assert [entry["method"] for entry in claims(tokens["access_token"])["amr"]] == ["web3"]

    client = make_client(server)
    client.set_session(tokens["access_token"], tokens["refresh_token"])
    user = client.get_user().user
    assert user.app_metadata == {"provider": "web3", "providers": ["web3"]}
    assert [(i.provider, i.id) for i in user.identities] == [("web3", f"web3:{chain}:{wallet['address']}")]
    assert user.identities[0].identity_data["custom_claims"]["address"] == wallet["address"]
    assert user.identities[0].identity_data["custom_claims"]["statement"] == "Sign in to the demo app"
    # The session refreshes like any other.
    refreshed = client.refresh_session()
    assert refreshed.user.id == user.id


def test_independent_ethereum_key(start_auth, make_client):
    server = start_auth(**WEB3_ON)
    key = ec.derive_private_key(0xC0FFEE_D00D_5EED, ec.SECP256K1())
    address = ethereum_address(key.public_key())
    message = sign_in_message("ethereum", address, "Signed outside the emulator")
    signature = personal_sign(key, message)

    # The emulator holds no key for this address and refuses to sign for it.
    refused = control(server, "web3/sign", {"chain": "ethereum", "message": message})
    assert refused.status_code == 404

    response = grant(server, "ethereum", message, signature)
    assert response.status_code == 200, response.text
    client = make_client(server)
    client.set_session(response.json()["access_token"], response.json()["refresh_token"])
    user = client.get_user().user
    assert user.identities[0].id == f"web3:ethereum:{address}"
    assert user.identities[0].identity_data["custom_claims"]["network"] == "1"

    # One changed character of the message breaks the signature.
    tampered = message.replace("outside", "inside")
    rejected = grant(server, "ethereum", tampered, signature)
    assert rejected.status_code == 400
    assert rejected.json() == {"error": "invalid_grant", "error_description": "Signature does not match address in message"}


def test_independent_solana_key(start_auth, make_client):
    server = start_auth(**WEB3_ON)
    key = ed25519.Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    address = base58(key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))
    message = sign_in_message("solana", address, "Signed by Phantom, in spirit")
    signature = base64.b64encode(key.sign(message.encode())).decode()

    response = grant(server, "solana", message, signature)
    assert response.status_code == 200, response.text
    client = make_client(server)
    client.set_session(response.json()["access_token"], response.json()["refresh_token"])
    assert client.get_user().user.identities[0].id == f"web3:solana:{address}"

    # Expired by the emulator's clock: moved forward past Expiration Time.
    assert control(server, "clock", {"advance_seconds": 400}).status_code == 200
    expired = grant(server, "solana", message, signature)
    assert expired.status_code == 400
    assert expired.json()["error_description"] == "Signed Solana message is expired"


def test_wallet_list_shows_what_the_emulator_holds(start_auth):
    server = start_auth(**WEB3_ON)
    made = [control(server, "web3/wallets", {"chain": chain, "label": "alice"}).json() for chain in ("solana", "ethereum")]
    listed = httpx.get(f"{server.url}/emulator/v1/web3/wallets", headers={"apikey": SERVICE_ROLE_KEY}, timeout=10)
    assert listed.status_code == 200
    assert listed.json() == {"wallets": made}
    # The anon key is not enough for a side door.
    assert httpx.get(f"{server.url}/emulator/v1/web3/wallets", headers={"apikey": ANON_KEY}, timeout=10).status_code in (401, 403)


@pytest.mark.parametrize("chain", ["solana", "ethereum"])
def test_captcha_field_as_supabase_js_sends_it(start_auth, chain):
    # signInWithWeb3 with options.captchaToken: Solana's signature base64url without padding
    # (bytesToBase64URL), and `gotrue_meta_security`, which the grant ignores as GoTrue does.
    server = start_auth(**WEB3_ON)
    message = control(server, "web3/message", {"chain": chain, "label": "alice"}).json()["message"]
    signature = control(server, "web3/sign", {"chain": chain, "message": message}).json()["signature"]
    if chain == "solana":
        signature = base64.urlsafe_b64encode(base64.b64decode(signature)).decode().rstrip("=")
    response = httpx.post(
        f"{server.url}/auth/v1/token?grant_type=web3",
        json={"chain": chain, "message": message, "signature": signature,
              "gotrue_meta_security": {"captcha_token": "10000000-aaaa-bbbb-cccc-000000000001"}},
        headers=CLIENT_HEADERS,
        timeout=10,
    )
    assert response.status_code == 200, response.text


def test_a_message_for_the_other_chain(start_auth):
    # The grant's `chain` picks the parser: each message fails the other chain's header check.
    server = start_auth(**WEB3_ON)
    siws = control(server, "web3/message", {"chain": "solana", "label": "alice"}).json()["message"]
    siwe = control(server, "web3/message", {"chain": "ethereum", "label": "alice"}).json()["message"]
    solana_signature = control(server, "web3/sign", {"chain": "solana", "message": siws}).json()["signature"]
    ethereum_signature = control(server, "web3/sign", {"chain": "ethereum", "message": siwe}).json()["signature"]
    for chain, message, signature, title in [("solana", siwe, solana_signature, "Solana"),
                                             ("ethereum", siws, ethereum_signature, "Ethereum")]:
        response = grant(server, chain, message, signature)
        assert response.status_code == 400
        assert response.headers["x-sb-error-code"] == "validation_failed"
        prefix = "siws" if chain == "solana" else "siwe"
        assert response.json()["message"] == f'{prefix}: message first line does not end in " wants you to sign in with your {title} account:"'

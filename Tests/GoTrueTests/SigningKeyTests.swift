import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// GoTrue with `GOTRUE_JWT_KEYS` (reference §5.3, §7.3, §7.4): tokens signed by the signing JWK
/// with its `kid` and `alg`, verified by `kid`, the HS256 fallback to the secret, the valid
/// methods, and the public keys in `/.well-known/jwks.json`.
@Suite struct SigningKeyTests {
    static let fixtures = ["rsa.json", "ec.json", "ed25519.json"]

    func api(_ fixture: String, configure: (inout Configuration) -> Void = { _ in }) throws -> GoTrueAPI {
        let keys = try signingKeys(fixture)
        return try makeAPI { config in
            config.jwt.keys = keys
            configure(&config)
        }
    }

    static func header(of token: String) -> JSONObject {
        let part = token.split(separator: ".")[0]
        return (try? JSON(parsing: Base64URL.decode(String(part))))?.objectValue ?? [:]
    }

    @Test(arguments: fixtures) func accessTokensAreSignedByTheSigningKey(_ fixture: String) throws {
        let api = try api(fixture)
        let key = try #require(try signingKeys(fixture).first)
        let session = api.signUp("signer@example.com")
        let token = try #require(session["access_token"]?.stringValue)
        let header = Self.header(of: token)
        #expect(header["alg"]?.stringValue == key.key.algorithm.rawValue)
        #expect(header["kid"]?.stringValue == key.key.kid)
        #expect(header["typ"] == "JWT")
        // Verifiable with the public key alone (what a JWKS consumer has).
        let verified = try JWT.verify(token, keys: JWTKeySet(keys: [key.key.publicOnly]), now: 1_767_225_600)
        #expect(verified.claims["email"] == "signer@example.com")
        // And accepted by the emulator itself, user and refresh alike.
        #expect(api.call("GET", "/user", bearer: token).status == 200)
        let refreshed = api.refresh(try #require(session["refresh_token"]?.stringValue))
        #expect(refreshed.status == 200)
        #expect(Self.header(of: refreshed.json["access_token"]?.stringValue ?? "x.y.z")["alg"]?.stringValue == key.key.algorithm.rawValue)
    }

    @Test(arguments: fixtures) func jwksListsPublicKeysOnly(_ fixture: String) throws {
        let api = try api(fixture)
        let response = api.call("GET", "/.well-known/jwks.json")
        #expect(response.status == 200)
        #expect(response.headers["Cache-Control"] == "public, max-age=600")
        let keys = try #require(response.json["keys"]?.arrayValue)
        #expect(keys.count == 1)
        let jwk = try #require(keys.first?.objectValue)
        for member in ["d", "p", "q", "dp", "dq", "qi", "k"] { #expect(jwk[member] == nil) }
        #expect(jwk["use"] == "sig")
        #expect(jwk["key_ops"] == ["verify"])
        #expect(jwk["kid"]?.stringValue == (try signingKeys(fixture).first?.key.kid))
        // Sorted members, as jwx writes them.
        let names = jwk.map(\.key)
        #expect(names == names.sorted())
        // The public JWK reads back as a verification key.
        let reread = try JWK(jwk)
        #expect(!reread.key.isSymmetric)
        // Through the gateway too, with no API key (discovery is public).
        #expect(api.call("GET", "/auth/v1/.well-known/jwks.json").status == 200)
    }

    @Test func hs256OnlyProjectsPublishNoKeys() throws {
        let api = try makeAPI()
        let response = api.call("GET", "/.well-known/jwks.json")
        #expect(response.text == #"{"keys":[]}"#)
    }

    @Test func rsaSigningKeyWithAnOctVerifyOnlyKey() throws {
        // A real GoTrue test setup: RSA signs; an `oct` key and the plain secret still verify.
        let api = try api("rsa-and-oct.json")
        let oct = try #require(try signingKeys("rsa-and-oct.json").last)
        let user = api.signUp("mixed@example.com")
        let sub = try #require(user["user"]?["id"]?.stringValue)
        let sessionID = try #require(claims(of: user["access_token"]?.stringValue ?? "").first { $0.key == "session_id" }?.value.stringValue)
        var claimSet = claims(of: user["access_token"]?.stringValue ?? "")
        claimSet["session_id"] = .string(sessionID)
        claimSet["sub"] = .string(sub)
        let withOctKid = JWT.sign(claims: claimSet, key: JWTKey(kid: oct.key.kid, secret: oct.key.secret))
        #expect(api.call("GET", "/user", bearer: withOctKid).status == 200)
        let kidless = JWT.sign(claims: claimSet, key: JWTKey(secret: JWTSettings.defaultSecret))
        #expect(api.call("GET", "/user", bearer: kidless).status == 200)
        // The oct key is never published.
        #expect(api.call("GET", "/.well-known/jwks.json").json["keys"]?.arrayValue?.count == 1)
    }

    @Test func tokensFromUnknownKeysAreRejectedWithTheRealError() throws {
        let api = try api("rsa.json")
        let session = api.signUp("unknown@example.com")
        var claimSet = claims(of: session["access_token"]?.stringValue ?? "")
        claimSet["exp"] = 1_767_229_200
        let stranger = RSAPrivateKey.generate(bits: 1024, random: SeededRandom(seed: 99))
        let forged = JWT.sign(claims: claimSet, key: JWTKey(kid: "not-ours", rsa: stranger))
        let response = api.call("GET", "/user", bearer: forged)
        #expect(response.status == 403)
        #expect(errorCode(response) == "bad_jwt")
        #expect(response.json["msg"]?.stringValue
            == "invalid JWT: unable to parse or verify signature, token is unverifiable: error while executing keyfunc: unrecognized JWT kid not-ours for algorithm RS256")
        // The right kid with the wrong key: the signature check fails as Go's crypto/rsa.
        let ours = try #require(try signingKeys("rsa.json").first)
        let wrongKey = JWT.sign(claims: claimSet, key: JWTKey(kid: ours.key.kid, rsa: stranger))
        #expect(api.call("GET", "/user", bearer: wrongKey).json["msg"]?.stringValue
            == "invalid JWT: unable to parse or verify signature, token signature is invalid: crypto/rsa: verification error")
        // An HS256 token naming the RSA key's kid: golang-jwt's key type error.
        let confused = JWT.sign(claims: claimSet, key: JWTKey(kid: ours.key.kid, secret: JWTSettings.defaultSecret))
        #expect(api.call("GET", "/user", bearer: confused).json["msg"]?.stringValue
            == "invalid JWT: unable to parse or verify signature, token signature is invalid: signing method HS256 is invalid")
    }

    @Test func validMethodsGateAlgorithmsBeforeKeys() throws {
        // With HS256 accepted too (as `supabase start` sets), a kid-less HS256 token still works
        // and one naming the RSA key's kid fails on the key's type.
        let api = try api("rsa.json") { $0.jwt.validMethods = ["HS256", "RS256", "ES256"] }
        let session = api.signUp("methods@example.com")
        var claimSet = claims(of: session["access_token"]?.stringValue ?? "")
        claimSet["exp"] = 1_767_229_200
        #expect(api.call("GET", "/user", bearer: JWT.sign(claims: claimSet, key: JWTKey(secret: JWTSettings.defaultSecret))).status == 200)
        let ours = try #require(try signingKeys("rsa.json").first)
        let confused = JWT.sign(claims: claimSet, key: JWTKey(kid: ours.key.kid, secret: JWTSettings.defaultSecret))
        #expect(api.call("GET", "/user", bearer: confused).json["msg"]?.stringValue
            == "invalid JWT: unable to parse or verify signature, token signature is invalid: key is of invalid type: HMAC verify expects []byte")
    }

    @Test func adminRoutesAcceptAnAsymmetricServiceRoleToken() throws {
        let api = try api("rsa.json")
        let key = try #require(try signingKeys("rsa.json").first)
        let serviceRole = APIKeys.derived(from: key.key).serviceRole
        #expect(Self.header(of: serviceRole)["kid"]?.stringValue == key.key.kid)
        let response = api.call("GET", "/admin/users", bearer: serviceRole)
        #expect(response.status == 200, "\(response.text)")
    }

    @Test func openIDConfigurationNamesTheAlgorithms() throws {
        let api = try api("ed25519.json") { $0.jwt.issuer = "http://127.0.0.1:54321/auth/v1/" }
        let response = api.call("GET", "/.well-known/openid-configuration")
        #expect(response.status == 200)
        #expect(response.json["issuer"] == "http://127.0.0.1:54321/auth/v1/")
        #expect(response.json["jwks_uri"] == "http://127.0.0.1:54321/auth/v1/.well-known/jwks.json")
        // GoTrue's fixed list, without the EdDSA key in use (jwks.go).
        #expect(response.json["id_token_signing_alg_values_supported"] == ["RS256", "HS256", "ES256"])
        #expect(response.text.hasPrefix(#"{"issuer":"#))
    }

    @Test func testTokensUseTheSigningKey() throws {
        let api = try api("ec.json")
        _ = api.signUp("minted@example.com")
        let key = api.project.configuration.apiKeys.serviceRole
        let minted = api.call("POST", "/emulator/v1/token", ["email": "minted@example.com"], bearer: key)
        #expect(minted.status == 200, "\(minted.text)")
        let token = try #require(minted.json["access_token"]?.stringValue)
        #expect(Self.header(of: token)["alg"] == "ES256")
        #expect(api.call("GET", "/user", bearer: token).status == 200)
    }
}

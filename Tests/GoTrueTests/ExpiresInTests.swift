import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
import Synchronization
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// A clock that moves one second forward every time it is read, so any two readings during a
/// request fall in different seconds: the case where `expires_at - now` taken after issuing
/// gave 3599 about once in 27,000 sign-ins on the wall clock.
private final class TickingClock: AuthClock, Sendable {
    private let current = Mutex<Int64>(1_767_225_600_000_000)  // 2026-01-01T00:00:00Z
    func now() -> Timestamp {
        Timestamp(microseconds: current.withLock { value in
            defer { value += 1_000_000 }
            return value
        })
    }
}

private func tickingAPI(_ configure: (inout Configuration) -> Void = { _ in }) throws -> GoTrueAPI {
    let clock = TickingClock()
    let configuration = testConfiguration { config in
        config.jwt.expirySeconds = 3600
        configure(&config)
    }
    return GoTrueAPI(emulating: Project(configuration: configuration, database: try TestStore.database(),
                                      environment: Environment(clock: clock)))
}

/// `expires_in` is the configured lifetime, equal to the token's `exp - iat`, on every path
/// that issues a session (reference §3.4, `AccessTokenResponse`).
@Suite struct ExpiresInTests {
    /// Checks one token response body (or redirect fragment values).
    private func expectLifetime(_ accessToken: String?, expiresIn: JSON?, expiresAt: JSON?, lifetime: Int64 = 3600,
                                sourceLocation: SourceLocation = #_sourceLocation) {
        guard let accessToken else {
            Issue.record("no access token", sourceLocation: sourceLocation)
            return
        }
        let minted = claims(of: accessToken)
        let exp = minted["exp"]?.int64Value ?? 0
        let iat = minted["iat"]?.int64Value ?? 0
        #expect(exp - iat == lifetime, sourceLocation: sourceLocation)
        #expect(expiresIn == .number(lifetime), sourceLocation: sourceLocation)
        #expect(expiresAt == .number(exp), sourceLocation: sourceLocation)
    }

    private func expectLifetime(_ body: JSON, lifetime: Int64 = 3600, sourceLocation: SourceLocation = #_sourceLocation) {
        expectLifetime(body["access_token"]?.stringValue, expiresIn: body["expires_in"], expiresAt: body["expires_at"],
                       lifetime: lifetime, sourceLocation: sourceLocation)
    }

    private func expectLifetime(fragmentOf location: String?, sourceLocation: SourceLocation = #_sourceLocation) {
        let items = RedirectURL.parseQuery(RedirectURL(location ?? "").fragment)
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        expectLifetime(value("access_token"), expiresIn: value("expires_in").flatMap { Int64($0) }.map { .number($0) },
                       expiresAt: value("expires_at").flatMap { Int64($0) }.map { .number($0) },
                       sourceLocation: sourceLocation)
    }

    @Test func signUpPasswordRefreshAndAnonymous() throws {
        let api = try tickingAPI { $0.external.anonymousUsersEnabled = true }
        let signup = api.call("POST", "/signup", ["email": "tick@example.com", "password": "password1"])
        #expect(signup.status == 200)
        expectLifetime(signup.json)

        let password = api.call("POST", "/token?grant_type=password", ["email": "tick@example.com", "password": "password1"])
        #expect(password.status == 200)
        expectLifetime(password.json)

        let refresh = api.call("POST", "/token?grant_type=refresh_token", ["refresh_token": password.json["refresh_token"]!])
        #expect(refresh.status == 200)
        expectLifetime(refresh.json)

        let anonymous = api.call("POST", "/signup", .object([:]))
        #expect(anonymous.status == 200)
        expectLifetime(anonymous.json)
    }

    @Test func configuredLifetimeIsUsed() throws {
        let api = try tickingAPI { $0.jwt.expirySeconds = 120 }
        let signup = api.call("POST", "/signup", ["email": "short@example.com", "password": "password1"])
        expectLifetime(signup.json, lifetime: 120)
    }

    @Test func verifyBodyAndRedirectFragment() throws {
        let api = try tickingAPI()
        #expect(api.call("POST", "/otp", ["email": "otp@example.com"]).status == 200)
        let code = try #require(try api.latestMessage(to: "otp@example.com")?.otp)
        let verified = api.verify(["type": "email", "email": "otp@example.com", "token": .string(code)])
        #expect(verified.status == 200)
        expectLifetime(verified.json)

        #expect(api.call("POST", "/otp", ["email": "link@example.com"]).status == 200)
        let hash = try #require(try api.latestMessage(to: "link@example.com")?.tokenHash)
        let redirect = api.call("GET", "/verify?token=\(hash)&type=magiclink&redirect_to=http://127.0.0.1:3000")
        #expect(redirect.status == 303)
        expectLifetime(fragmentOf: redirect.headers["Location"])
    }

    @Test func oauthImplicitCallbackAndPKCEAndIDToken() throws {
        let api = try tickingAPI { config in
            enableGoogle(&config)
            config.identityProviders.autoApprove = true
        }
        let start = api.call("GET", "/authorize?provider=google&redirect_to=http://127.0.0.1:3000/cb&login_hint=flow@example.com")
        let page = api.follow(start.headers["Location"]!)
        let callback = api.follow(page.headers["Location"]!)
        #expect(callback.status == 302)
        expectLifetime(fragmentOf: callback.headers["Location"])

        let verifier = "verifier-0123456789-0123456789-0123456789-abc"
        let challenge = Base64URL.encode(SHA256.hash(data: Array(verifier.utf8)))
        let pkceStart = api.call("GET", "/authorize?provider=google&redirect_to=http://127.0.0.1:3000/cb&login_hint=pkce@example.com&code_challenge=\(challenge)&code_challenge_method=s256")
        let pkcePage = api.follow(pkceStart.headers["Location"]!)
        let pkceCallback = api.follow(pkcePage.headers["Location"]!)
        let code = try #require(RedirectURL(pkceCallback.headers["Location"] ?? "").query.first { $0.name == "code" }?.value)
        let session = api.call("POST", "/token?grant_type=pkce", ["auth_code": .string(code), "code_verifier": .string(verifier)])
        #expect(session.status == 200)
        expectLifetime(session.json)

        let idToken = api.mint("google", ["email": "idt@example.com", "aud": "google-client"])
        let grant = api.idTokenGrant(["provider": "google", "id_token": .string(idToken)])
        #expect(grant.status == 200, "\(grant.text)")
        expectLifetime(grant.json)
    }

    @Test func mfaVerify() throws {
        let api = try tickingAPI { $0.mfa.totp = MFASettings.Toggles(enroll: true, verify: true) }
        let session = api.signUp("mfa@example.com")
        let bearer = try #require(session["access_token"]?.stringValue)
        let enrolled = api.call("POST", "/factors", ["factor_type": "totp"], bearer: bearer)
        let factor = try #require(enrolled.json["id"]?.stringValue)
        let secret = try #require(enrolled.json["totp"]?["secret"]?.stringValue)
        let challenge = try #require(api.call("POST", "/factors/\(factor)/challenge", .object([:]), bearer: bearer).json["id"]?.stringValue)
        let code = OneTimePassword.totp(secret: try Base32.decode(secret), unixSeconds: api.project.environment.now().unixSeconds)
        let verified = api.call("POST", "/factors/\(factor)/verify", ["challenge_id": .string(challenge), "code": .string(code)],
                                bearer: bearer)
        #expect(verified.status == 200, "\(verified.text)")
        expectLifetime(verified.json)
    }
}

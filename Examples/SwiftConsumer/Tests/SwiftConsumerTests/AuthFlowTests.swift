import AuthEmulatorTesting
import Foundation
import Testing

/// The flows an app's sign-in screen depends on, each test against an emulator of its own seeded
/// with `Fixtures/users.json` (ada@example.com, confirmed, password `correct-horse`).
@Suite(.authEmulator(seed: "Fixtures/users.json"))
struct AuthFlowTests {
    let api: AuthAPI

    init() throws {
        api = AuthAPI(try #require(Emulator.current))
    }

    @Test func signUpKeepsTheMetadata() async throws {
        let reply = try await api.signUp(email: "new@example.com", password: "password1", firstName: "Grace")
        #expect(reply.status == 200, "\(reply.text)")
        // Confirmations are off by default, as with `supabase start`: the sign-up signs in.
        let session = try reply.decode(AuthAPI.Session.self)
        #expect(session.user.email == "new@example.com")
        #expect(session.user.userMetadata?.firstName == "Grace")
    }

    @Test func aTakenAddressIsUserAlreadyExists() async throws {
        let reply = try await api.signUp(email: "ada@example.com", password: "password1")
        #expect(reply.status == 422)
        #expect(reply.error == AuthAPI.APIError(code: "user_already_exists", message: "User already registered"))
        #expect(reply.header("x-sb-error-code") == "user_already_exists")
    }

    @Test func aWrongPasswordIsInvalidCredentials() async throws {
        let reply = try await api.signIn(email: "ada@example.com", password: "wrong-password")
        #expect(reply.status == 400)
        #expect(reply.error == AuthAPI.APIError(code: "invalid_credentials", message: "Invalid login credentials"))
    }

    @Test func aMagicLinkCodeFromTheOutboxSignsIn() async throws {
        let sent = try await api.send("POST", "/otp", json: ["email": "ada@example.com", "create_user": false])
        #expect(sent.status == 200, "\(sent.text)")
        let mail = try #require(try await api.latestMail(to: "ada@example.com", type: "magiclink"))
        #expect(mail.actionLink?.contains("type=magiclink") == true)
        let code = try #require(mail.otp)
        let verified = try await api.send("POST", "/verify", json: ["type": "magiclink", "email": "ada@example.com", "token": code])
        #expect(verified.status == 200, "\(verified.text)")
        #expect(try verified.decode(AuthAPI.Session.self).user.email == "ada@example.com")
        // One use only.
        let again = try await api.send("POST", "/verify", json: ["type": "magiclink", "email": "ada@example.com", "token": code])
        #expect(again.error?.code == "otp_expired")
    }

    @Test func aRefreshRotatesTheRefreshToken() async throws {
        let first = try await api.signIn(email: "ada@example.com", password: "correct-horse").decode(AuthAPI.Session.self)
        let reply = try await api.refresh(first.refreshToken)
        #expect(reply.status == 200, "\(reply.text)")
        let second = try reply.decode(AuthAPI.Session.self)
        #expect(second.refreshToken != first.refreshToken)
        #expect(try await api.send("GET", "/user", bearer: second.accessToken).status == 200)
    }

    @Test func aScriptedRateLimitIs429ThenPasses() async throws {
        try await api.activate(scenario: """
            {"name": "sign-in-rate-limited",
             "rules": [{"match": {"op": "token.password"}, "when": {"times": 1},
                        "then": {"error": "over_request_rate_limit", "retry_after": 30}}]}
            """)
        let limited = try await api.signIn(email: "ada@example.com", password: "correct-horse")
        #expect(limited.status == 429)
        #expect(limited.error?.code == "over_request_rate_limit")
        #expect(limited.header("Retry-After") == "30")
        #expect(try await api.signIn(email: "ada@example.com", password: "correct-horse").status == 200)
    }

    @Test func aScripted503KeepsTheSession() async throws {
        let session = try await api.signIn(email: "ada@example.com", password: "correct-horse").decode(AuthAPI.Session.self)
        try await api.activate(scenario: """
            {"name": "refresh-503",
             "rules": [{"match": {"op": "token.refresh_token"}, "when": {"times": 1},
                        "then": {"status": 503, "headers": {"Content-Type": "text/plain"},
                                 "body": "upstream connect error", "retry_after": 1}}]}
            """)
        let failed = try await api.refresh(session.refreshToken)
        #expect(failed.status == 503)
        #expect(failed.text == "upstream connect error")
        #expect(failed.header("Retry-After") == "1")
        // The fault answered in GoTrue's place: the refresh token was not spent.
        #expect(try await api.refresh(session.refreshToken).status == 200)
    }
}

/// A test's own settings: with confirmations on, a sign-up only sends the confirmation email.
@Test(.authEmulator { $0.configuration.mailer.autoconfirm = false })
func aConfirmationEmailConfirmsTheSignUp() async throws {
    let api = AuthAPI(try #require(Emulator.current))
    let reply = try await api.signUp(email: "lin@example.com", password: "password1")
    #expect(reply.status == 200)
    #expect(try reply.decode(AuthAPI.User.self).emailConfirmedAt == nil)
    let mail = try #require(try await api.latestMail(to: "lin@example.com", type: "signup"))
    let verified = try await api.send("POST", "/verify", json: ["type": "signup", "token_hash": try #require(mail.tokenHash)])
    #expect(verified.status == 200, "\(verified.text)")
    #expect(try verified.decode(AuthAPI.Session.self).user.emailConfirmedAt != nil)
}

/// `--defaults gotrue`: a bare GoTrue container's settings, where sign-ups must be confirmed.
@Test(.authEmulator(defaults: .gotrue))
func theGoTrueProfileAsksForConfirmation() async throws {
    let api = AuthAPI(try #require(Emulator.current))
    let reply = try await api.signUp(email: "max@example.com", password: "password1")
    #expect(reply.status == 200)
    #expect(try reply.decode(AuthAPI.User.self).emailConfirmedAt == nil)
}

import AuthEmulatorTesting
import Foundation
import XCTest

/// The same flows for a suite still on XCTest: every test method gets a fresh emulator, seeded
/// from the same fixture.
final class AuthFlowXCTests: AuthEmulatorTestCase {
    override var authEmulatorSetup: AuthEmulatorSetup {
        AuthEmulatorSetup(seed: "Fixtures/users.json")
    }

    private var api: AuthAPI { AuthAPI(emulator) }

    func testTheTaskLocalIsTheSameEmulator() throws {
        XCTAssertTrue(try XCTUnwrap(Emulator.current) === emulator)
        XCTAssertTrue(emulator.url.hasPrefix("http://127.0.0.1:"))
    }

    /// XCTest runs an async method in a task it creates inside `invokeTest`: the value is inherited.
    func testTheTaskLocalReachesAnAsyncMethod() async throws {
        XCTAssertTrue(try XCTUnwrap(Emulator.current) === emulator)
    }

    func testSignUpKeepsTheMetadata() async throws {
        let reply = try await api.signUp(email: "new@example.com", password: "password1", firstName: "Grace")
        XCTAssertEqual(reply.status, 200, reply.text)
        XCTAssertEqual(try reply.decode(AuthAPI.Session.self).user.userMetadata?.firstName, "Grace")
    }

    func testATakenAddressIsUserAlreadyExists() async throws {
        let reply = try await api.signUp(email: "ada@example.com", password: "password1")
        XCTAssertEqual(reply.status, 422)
        XCTAssertEqual(reply.error?.code, "user_already_exists")
    }

    func testAWrongPasswordIsInvalidCredentials() async throws {
        let reply = try await api.signIn(email: "ada@example.com", password: "wrong-password")
        XCTAssertEqual(reply.status, 400)
        XCTAssertEqual(reply.error?.code, "invalid_credentials")
    }

    func testAMagicLinkCodeFromTheOutboxSignsIn() async throws {
        _ = try await api.send("POST", "/otp", json: ["email": "ada@example.com", "create_user": false])
        let mail = try await api.latestMail(to: "ada@example.com", type: "magiclink")
        let code = try XCTUnwrap(mail?.otp)
        let verified = try await api.send("POST", "/verify", json: ["type": "magiclink", "email": "ada@example.com", "token": code])
        XCTAssertEqual(verified.status, 200, verified.text)
    }

    func testARefreshRotatesTheRefreshToken() async throws {
        let first = try await api.signIn(email: "ada@example.com", password: "correct-horse").decode(AuthAPI.Session.self)
        let second = try await api.refresh(first.refreshToken).decode(AuthAPI.Session.self)
        XCTAssertNotEqual(second.refreshToken, first.refreshToken)
    }

    func testAScriptedRateLimitIs429() async throws {
        try await api.activate(scenario: """
            {"name": "sign-in-rate-limited",
             "rules": [{"match": {"op": "token.password"}, "when": {"times": 1},
                        "then": {"error": "over_request_rate_limit", "retry_after": 30}}]}
            """)
        let limited = try await api.signIn(email: "ada@example.com", password: "correct-horse")
        XCTAssertEqual(limited.status, 429)
        XCTAssertEqual(limited.error?.code, "over_request_rate_limit")
    }

    func testAScripted503() async throws {
        let session = try await api.signIn(email: "ada@example.com", password: "correct-horse").decode(AuthAPI.Session.self)
        try await api.activate(scenario: """
            {"name": "refresh-503",
             "rules": [{"match": {"op": "token.refresh_token"}, "when": {"times": 1},
                        "then": {"status": 503, "body": "upstream connect error", "retry_after": 1}}]}
            """)
        let failed = try await api.refresh(session.refreshToken)
        XCTAssertEqual(failed.status, 503)
        let retried = try await api.refresh(session.refreshToken)
        XCTAssertEqual(retried.status, 200)
    }
}

/// A test class that keeps its own base class starts an emulator where it needs one.
final class StartAuthEmulatorXCTests: XCTestCase {
    func testAnEmulatorOfItsOwnWithConfirmationsOn() async throws {
        let emulator = try startAuthEmulator { $0.configuration.mailer.autoconfirm = false }
        let api = AuthAPI(emulator)
        let reply = try await api.signUp(email: "lin@example.com", password: "password1")
        XCTAssertEqual(reply.status, 200)
        XCTAssertNil(try reply.decode(AuthAPI.User.self).emailConfirmedAt)
        let mail = try await api.latestMail(to: "lin@example.com", type: "signup")
        XCTAssertNotNil(mail?.tokenHash)
    }

    func testNoTaskLocalOutsideTheHelpers() {
        XCTAssertNil(Emulator.current)
    }
}

import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthPlatform
import AuthStore
import Dispatch
import Synchronization
import Testing
@testable import EmulatorTools
@testable import GoTrue

// Expected behaviour: the real server's internal/hooks (v0hooks payloads, hookshttp dispatch,
// hookserrors) and the call sites in token.go, signup.go, mail.go, phone.go, mfa.go.

/// A hook endpoint in the test: records every request and answers with `respond`.
final class FakeHookServer: HookTransport, Sendable {
    struct Request: Sendable {
        var url: String
        var headers: [(String, String)]
        var body: [UInt8]
        var json: JSONObject { (try? JSON(parsing: body))?.objectValue ?? [:] }
        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    }

    private let requests = Mutex<[Request]>([])
    private let responder: @Sendable (Request) -> HookReply

    init(_ responder: @escaping @Sendable (Request) -> HookReply) { self.responder = responder }

    static func json(_ value: JSON, status: Int = 200) -> HookReply {
        .response(status: status, headers: [("Content-Type", "application/json")], body: value.serializedBytes())
    }

    func post(_ url: String, headers: [(String, String)], body: [UInt8], timeout: Double) -> HookReply {
        let request = Request(url: url, headers: headers, body: body)
        requests.withLock { $0.append(request) }
        return responder(request)
    }

    var received: [Request] { requests.withLock { $0 } }

    /// Refuses (403, `message`) the user whose email is `email`; accepts every other call.
    static func refusing(_ email: String, _ message: String) -> FakeHookServer {
        FakeHookServer { request in
            if request.json["user"]?["email"] == .string(email) {
                return FakeHookServer.json(["error": ["http_code": 403, "message": .string(message)]])
            }
            return .response(status: 204, headers: [], body: [])
        }
    }
}

extension Configuration {
    /// A built-in provider turned on with one client id (and a secret, which `/authorize` needs).
    mutating func enableProvider(_ name: String, clientID: String, secret: String = "") {
        var settings = OAuthProviderSettings()
        settings.enabled = true
        settings.clientIDs = [clientID]
        settings.secret = secret
        external.providers[name] = settings
    }
}

/// `v1,whsec_` + base64 of 32 bytes "0123...".
private let secret = "v1,whsec_" + Base64.encode(Array("0123456789abcdef0123456789abcdef".utf8))

func hookAPI(_ server: FakeHookServer, _ hook: WritableKeyPath<HookSettings, HookSettings.Point>, clock: ManualClock = ManualClock(),
             configure: (inout Configuration) -> Void = { _ in }) throws -> GoTrueAPI {
    var project = try testProject(clock: clock) { config in
        config.hooks[keyPath: hook].enabled = true
        config.hooks[keyPath: hook].uri = "http://127.0.0.1:9/hook"
        config.hooks[keyPath: hook].secrets = [secret]
        configure(&config)
    }
    project.hookTransport = server
    project.hookBackoff = 0.01
    return GoTrueAPI(emulating: project)
}

@Suite struct CustomAccessTokenHookTests {
    /// `Session.IsRecovery` reads the session's stored AMR claims: a hook that writes `otp` into
    /// the token's `amr` does not spare a password sign-in the current password.
    @Test func aRewrittenAmrMakesNoRecoverySession() throws {
        let server = FakeHookServer { request in
            var claims = request.json["claims"]?.objectValue ?? [:]
            claims["amr"] = [["method": "otp", "timestamp": 1]]
            return FakeHookServer.json(["claims": .object(claims)])
        }
        let api = try hookAPI(server, \.customAccessToken) { $0.security.updatePasswordRequireCurrentPassword = true }
        let token = try #require(api.signUp("amr@example.com")["access_token"]?.stringValue)
        #expect(claims(of: token)["amr"]?[0]?["method"] == "otp")
        let refused = api.call("PUT", "/user", ["password": "another-password"], bearer: token)
        #expect(errorCode(refused) == "current_password_required")
    }

    @Test func claimsAddedByTheHookAreSignedAndTheRequestIsSigned() throws {
        let server = FakeHookServer { request in
            var claims = request.json["claims"]?.objectValue ?? [:]
            claims["user_role"] = "admin"
            return FakeHookServer.json(["claims": .object(claims)])
        }
        let api = try hookAPI(server, \.customAccessToken)
        let session = api.signUp("claims@example.com")
        let token = try #require(session["access_token"]?.stringValue)
        #expect(claims(of: token)["user_role"] == "admin")
        #expect(claims(of: token)["email"] == "claims@example.com")

        let call = try #require(server.received.first)
        #expect(call.json["metadata"]?["name"] == "customize-access-token")
        #expect(call.json["authentication_method"] == "password")
        #expect(call.json["user_id"] == session["user"]?["id"])
        #expect(call.json["claims"]?["aal"] == "aal1")
        #expect(call.header("Content-Type") == "application/json")
        // Standard Webhooks: v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>.
        let id = try #require(call.header("webhook-id"))
        let timestamp = try #require(call.header("webhook-timestamp"))
        let key = Array("0123456789abcdef0123456789abcdef".utf8)
        let mac = HMAC<SHA256>.authenticationCode(for: Array("\(id).\(timestamp).".utf8) + call.body, using: SymmetricKey(data: key))
        #expect(call.header("webhook-signature") == "v1," + Base64.encode(mac))

        // Refreshes go through the hook too, as `token_refresh`.
        let refreshed = api.refresh(session["refresh_token"]?.stringValue ?? "")
        #expect(claims(of: refreshed.json["access_token"]?.stringValue ?? "")["user_role"] == "admin")
        #expect(server.received.last?.json["authentication_method"] == "token_refresh")
    }

    @Test func badAnswersFailAsTheRealServer() throws {
        let missing = try hookAPI(FakeHookServer { _ in FakeHookServer.json(["other": 1]) }, \.customAccessToken)
        let noClaims = missing.call("POST", "/signup", ["email": "a@example.com", "password": "password1"])
        #expect(noClaims.status == 500)
        #expect(noClaims.json["msg"] == "output claims field is missing")
        // Nothing was stored: the sign-up's transaction rolled back.
        #expect(try missing.storedUser(email: "a@example.com") == nil)

        let schema = try hookAPI(FakeHookServer { request in
            var claims = request.json["claims"]?.objectValue ?? [:]
            claims["exp"] = "soon"
            claims["role"] = nil
            return FakeHookServer.json(["claims": .object(claims)])
        }, \.customAccessToken)
        let invalid = schema.call("POST", "/signup", ["email": "b@example.com", "password": "password1"])
        #expect(invalid.status == 500)
        #expect(invalid.json["msg"]?.stringValue
            == "output claims do not conform to the expected schema: \n- (root): role is required\n- exp: Invalid type. Expected: integer, given: string\n")
    }
}

/// anonymous.go answers any failure of its transaction, a custom access token hook's refusal
/// among them, with its own 500; nothing is stored.
@Suite struct AnonymousSignInHookFailureTests {
    @Test func aRefusalInTheTransactionIsTheAnonymousSignInsFiveHundred() throws {
        let server = FakeHookServer { _ in FakeHookServer.json(["error": ["http_code": 403, "message": "nope"]]) }
        let api = try hookAPI(server, \.customAccessToken) { $0.external.anonymousUsersEnabled = true }
        let refused = api.call("POST", "/signup", .object(JSONObject()))
        #expect(refused.status == 500)
        #expect(refused.json["error_code"] == "unexpected_failure")
        #expect(refused.json["msg"] == "Database error creating anonymous user")
        #expect(api.admin("GET", "/admin/users").json["users"]?.arrayValue?.isEmpty == true)
        // A password sign-up has no such wrapper: the hook's own answer.
        let signUp = api.call("POST", "/signup", ["email": "e@example.com", "password": "password1"])
        #expect(signUp.status == 403)
        #expect(signUp.json["msg"] == "nope")
    }
}

@Suite struct HookDispatchTests {
    private func signUpStatus(_ reply: @escaping @Sendable (FakeHookServer.Request) -> HookReply) throws -> (HTTPResponse, FakeHookServer) {
        let server = FakeHookServer(reply)
        let api = try hookAPI(server, \.customAccessToken)
        return (api.call("POST", "/signup", ["email": "d@example.com", "password": "password1"]), server)
    }

    @Test func failuresAndTheirErrors() throws {
        var (response, server) = try signUpStatus { _ in .timedOut }
        #expect(response.status == 422)
        #expect(errorCode(response) == "hook_timeout")
        #expect(response.json["msg"] == "Failed to reach hook within maximum time of 5.000000 seconds")

        (response, server) = try signUpStatus { _ in .failed("connection refused") }
        #expect(response.status == 422)
        #expect(errorCode(response) == "hook_timeout_after_retry")
        #expect(response.json["msg"] == "Failed to reach hook after maximum retries")
        #expect(server.received.count == 3)

        (response, _) = try signUpStatus { _ in .response(status: 200, headers: [], body: Array("{}".utf8)) }
        #expect(errorCode(response) == "hook_payload_invalid_content_type")
        #expect(response.json["msg"] == "Invalid Content-Type: Missing Content-Type header")
        (response, _) = try signUpStatus { _ in .response(status: 200, headers: [("content-type", "text/html")], body: []) }
        #expect(response.json["msg"] == "Invalid JSON response. Received content-type: text/html")
        (response, _) = try signUpStatus { _ in .response(status: 500, headers: [], body: []) }
        #expect(response.status == 500)
        #expect(response.json["msg"] == "Unexpected status code returned from hook: 500")
        (response, _) = try signUpStatus { _ in .response(status: 401, headers: [], body: []) }
        #expect(response.json["msg"] == "Hook requires authorization token")
        (response, _) = try signUpStatus { _ in .response(status: 503, headers: [], body: []) }
        #expect(response.json["msg"] == "Service currently unavailable due to hook")
        (response, _) = try signUpStatus { _ in
            .response(status: 200, headers: [("Content-Type", "application/json")],
                      body: [UInt8](repeating: 0x20, count: Hooks.responseLimit + 1))
        }
        #expect(errorCode(response) == "hook_payload_over_size_limit")

        // The hook's own error passes through with its status.
        (response, _) = try signUpStatus { _ in FakeHookServer.json(["error": ["http_code": 429, "message": "slow down"]]) }
        #expect(response.status == 429)
        #expect(response.json["msg"] == "slow down")
        // Read as encoding/json reads it: keys in any case; a value of the wrong type makes the
        // whole error object unreadable, so the answer is judged as output (no claims here).
        (response, _) = try signUpStatus { _ in FakeHookServer.json(["Error": ["HTTP_CODE": 403, "Message": "nope"]]) }
        #expect(response.status == 403 && response.json["msg"] == "nope")
        // A 204, and `claims: null`, reach the schema check with nil: "given: null".
        for answer in [HookReply.response(status: 204, headers: [], body: []), FakeHookServer.json(["claims": .null])] {
            (response, _) = try signUpStatus { _ in answer }
            #expect(response.status == 500)
            #expect(response.json["msg"] == "output claims do not conform to the expected schema: \n- (root): Invalid type. Expected: object, given: null\n")
        }
        // A `null` body is UnmarshalJSON's missing field.
        (response, _) = try signUpStatus { _ in .response(status: 200, headers: [("Content-Type", "application/json")], body: Array("null".utf8)) }
        #expect(response.json["msg"] == "output claims field is missing")
        for wrong: JSON in [["http_code": "400", "message": "nope"], ["http_code": 403.5, "message": "nope"], ["message": 5]] {
            (response, _) = try signUpStatus { _ in FakeHookServer.json(["error": wrong]) }
            #expect(response.status == 500, "\(wrong)")
            #expect(response.json["msg"] == "output claims field is missing", "\(wrong)")
        }
    }

    @Test func retryAfterIsRetried() throws {
        let calls = Mutex(0)
        let (response, server) = try signUpStatus { request in
            let n = calls.withLock { $0 += 1; return $0 }
            if n == 1 { return .response(status: 429, headers: [("Retry-After", "1")], body: []) }
            return FakeHookServer.json(["claims": request.json["claims"] ?? [:]])
        }
        #expect(response.status == 200)
        #expect(server.received.count == 2)
        // Each attempt is a new message.
        #expect(server.received[0].header("webhook-id") != server.received[1].header("webhook-id"))
    }
}

@Suite struct UserCreationHookTests {
    @Test func beforeUserCreatedCanRefuseASignUp() throws {
        let server = FakeHookServer { request in
            let email = request.json["user"]?["email"]?.stringValue ?? ""
            if email.hasSuffix("@blocked.example") {
                return FakeHookServer.json(["error": ["http_code": 403, "message": "Sign-ups from this domain are not allowed"]])
            }
            // `null` decodes into an empty answer, as json.Unmarshal leaves the output struct.
            if email.hasPrefix("null@") { return FakeHookServer.json(.null) }
            return .response(status: 204, headers: [], body: [])
        }
        let api = try hookAPI(server, \.beforeUserCreated) { $0.external.anonymousUsersEnabled = true }
        let refused = api.call("POST", "/signup", ["email": "eve@blocked.example", "password": "password1"])
        #expect(refused.status == 403)
        #expect(refused.json["msg"] == "Sign-ups from this domain are not allowed")
        #expect(try api.storedUser(email: "eve@blocked.example") == nil)
        #expect(server.received.first?.json["metadata"]?["name"] == "before-user-created")

        #expect(api.call("POST", "/signup", ["email": "null@fine.example", "password": "password1"]).status == 200)
        let allowed = api.call("POST", "/signup", ["email": "ok@fine.example", "password": "password1"])
        #expect(allowed.status == 200)
        // The user shown to the hook is the one created, as `ToUserModel` made it before the
        // transaction: no role yet, Go's zero time, no identities, the provider in app_metadata.
        let shown = try #require(server.received.last?.json["user"])
        #expect(shown["id"] == allowed.json["user"]?["id"])
        #expect(shown["role"] == "")
        #expect(shown["created_at"] == "0001-01-01T00:00:00Z" && shown["updated_at"] == "0001-01-01T00:00:00Z")
        #expect(shown["identities"] == .array([]))
        #expect(shown["app_metadata"] == ["provider": "email", "providers": ["email"]])
        #expect(allowed.json["user"]?["role"] == "authenticated")
        // An existing address creates no user: no call.
        let before = server.received.count
        _ = api.call("POST", "/signup", ["email": "ok@fine.example", "password": "password1"])
        #expect(server.received.count == before)
        // Anonymous sign-ups too.
        #expect(api.call("POST", "/signup", .object([:])).status == 200)
        #expect(server.received.last?.json["user"]?["is_anonymous"] == true)
    }
}

@Suite struct SignupAfterUserCreatedHookTests {
    /// signup.go reaches the after-user-created hook only on its pending path: a sign-up that
    /// signs in at once calls nothing; each sign-up answered with a confirmation pending calls
    /// it, a repeat for the same unconfirmed user too.
    @Test func onlyAPendingSignUpCallsIt() throws {
        let server = FakeHookServer { _ in .response(status: 204, headers: [], body: []) }
        let confirmed = try hookAPI(server, \.afterUserCreated)
        #expect(confirmed.call("POST", "/signup", ["email": "now@example.com", "password": "password1"]).json["access_token"] != nil)
        #expect(server.received.isEmpty)

        let clock = ManualClock()
        var project = try testProject(clock: clock) { config in
            config.hooks.afterUserCreated.enabled = true
            config.hooks.afterUserCreated.uri = "http://127.0.0.1:9/hook"
            config.hooks.afterUserCreated.secrets = ["v1,whsec_" + Base64.encode(Array("0123456789abcdef0123456789abcdef".utf8))]
            config.mailer.autoconfirm = false
        }
        let pendingServer = FakeHookServer { _ in .response(status: 204, headers: [], body: []) }
        project.hookTransport = pendingServer
        let pending = GoTrueAPI(emulating: project)
        #expect(pending.call("POST", "/signup", ["email": "later@example.com", "password": "password1"]).status == 200)
        clock.advance(seconds: 61)
        #expect(pending.call("POST", "/signup", ["email": "later@example.com", "password": "password1"]).status == 200)
        #expect(pendingServer.received.count == 2)
        #expect(pendingServer.received.allSatisfy { $0.json["metadata"]?["name"] == "after-user-created" })
    }
}

@Suite struct GenerateLinkHookTests {
    /// mail.go asks the before-user-created hook about a sign-up or invitation link's new user;
    /// a refusal stores nothing. An existing user's link asks nothing.
    @Test func aLinkForANewAddressAsksTheHook() throws {
        let server = FakeHookServer.refusing("refused@example.com", "refused by hook")
        let api = try hookAPI(server, \.beforeUserCreated) {
            // go-password's symbols, every one: the drawn symbol always satisfies the rule.
            $0.password.requiredCharacters = ["abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789",
                                              "~!@#$%^&*()_+`-={}|[]\\:\"<>?,./"]
        }
        for type in ["invite", "magiclink", "signup"] {
            var body: JSONObject = ["type": .string(type), "email": "refused@example.com"]
            if type == "signup" { body["password"] = "Refused-pass-1" }
            let refused = api.admin("POST", "/admin/generate_link", .object(body))
            #expect(refused.status == 403 && refused.json["msg"] == "refused by hook", "\(type): \(refused.text)")
        }
        #expect(try api.storedUser(email: "refused@example.com") == nil)
        // A new magic-link user's password has a symbol, as password.Generate(64, 10, 1, ...).
        let link = api.admin("POST", "/admin/generate_link", ["type": "magiclink", "email": "new@example.com"])
        #expect(link.status == 200, "\(link.text)")
        #expect(server.received.last?.json["user"]?["email"] == "new@example.com")
    }
}

/// invite.go calls after-user-created for every invitation (a repeated one too); mail.go for a
/// sign-up or invitation link that created its user.
@Suite struct AdminAfterUserCreatedHookTests {
    @Test func invitesAndCreatingLinksCallIt() throws {
        let server = FakeHookServer.refusing("refused@example.com", "Not this one")
        let api = try hookAPI(server, \.afterUserCreated)
        let invited = api.admin("POST", "/invite", ["email": "inv@example.com"])
        #expect(invited.status == 200)
        #expect(server.received.count == 1)
        #expect(server.received.last?.json["user"]?["id"] == invited.json["id"])
        #expect(api.admin("POST", "/invite", ["email": "inv@example.com"]).status == 200)
        #expect(server.received.count == 2)
        // A refusal is the answer; the invitation was committed.
        let refused = api.admin("POST", "/invite", ["email": "refused@example.com"])
        #expect(refused.status == 403 && refused.json["msg"] == "Not this one")
        #expect(try api.storedUser(email: "refused@example.com") != nil)
        let calls = server.received.count

        #expect(api.admin("POST", "/admin/generate_link", ["type": "signup", "email": "gl@example.com", "password": "Pass-word-1"]).status == 200)
        #expect(server.received.count == calls + 1)
        #expect(server.received.last?.json["user"]?["email"] == "gl@example.com")
        // An existing user's link creates nobody.
        #expect(api.admin("POST", "/admin/generate_link", ["type": "magiclink", "email": "gl@example.com"]).status == 200)
        #expect(server.received.count == calls + 1)
    }
}

@Suite struct ExternalUserCreationHookTests {
    @Test func idTokenAndOTPSignUpsAskTheHookToo() throws {
        let server = FakeHookServer { _ in FakeHookServer.json(["error": ["http_code": 403, "message": "No new accounts"]]) }
        let api = try hookAPI(server, \.beforeUserCreated) { config in enableGoogle(&config, secret: nil) }
        let social = api.call("POST", "/token?grant_type=id_token",
                              ["id_token": #"{"sub":"g-77","aud":"google-client","email":"new@example.com","email_verified":true}"#,
                               "provider": "google"])
        #expect(social.status == 403)
        #expect(social.json["msg"] == "No new accounts")
        let otp = api.call("POST", "/otp", ["email": "otp-new@example.com"])
        #expect(otp.status == 403)
        let users = try api.project.database.read { try $0.scalar(portable: "SELECT count(*) FROM users").int64Value }
        #expect(users == 0)
        #expect(server.received.count == 2)
    }

    /// token_oidc.go calls after-user-created once the grant has created an account (not for a
    /// returning identity); external.go for every sign-in through a provider's callback, a
    /// returning user's too, and a refusal there is the callback's error redirect.
    @Test func socialSignInsCallAfterUserCreated() throws {
        let server = FakeHookServer.refusing("refused@example.com", "Not this one")
        let api = try hookAPI(server, \.afterUserCreated) { config in
            config.enableProvider("google", clientID: "google-client", secret: "google-secret")
            config.identityProviders.autoApprove = true
        }
        func grant(_ sub: String, _ email: String) -> HTTPResponse {
            api.idTokenGrant(["provider": "google", "id_token": .string(api.mint("google", ["sub": .string(sub), "email": .string(email)]))])
        }
        let created = grant("g-1", "idt@example.com")
        #expect(created.status == 200)
        #expect(server.received.count == 1)
        #expect(server.received.last?.json["user"]?["id"] == created.json["user"]?["id"])
        #expect(grant("g-1", "idt@example.com").status == 200)
        #expect(server.received.count == 1)

        func callback(_ email: String) -> HTTPResponse {
            let start = api.call("GET", "/authorize?provider=google&redirect_to=http://127.0.0.1:3000/cb&login_hint=\(email)")
            return api.follow(api.follow(start.headers["Location"]!).headers["Location"]!)
        }
        #expect(callback("flow@example.com").headers["Location"]?.contains("#access_token=") == true)
        #expect(callback("flow@example.com").headers["Location"]?.contains("#access_token=") == true)
        #expect(server.received.count == 3)
        #expect(server.received.last?.json["user"]?["email"] == "flow@example.com")
        let refused = callback("refused@example.com")
        #expect(refused.headers["Location"]?.contains("error_description=Not+this+one") == true)
        #expect(try api.storedUser(email: "refused@example.com") != nil)
    }

    /// Web3 sign-ins (web3.go): before-user-created may refuse a new wallet; after-user-created
    /// sees the stored user, once.
    @Test func web3SignInsAskBothHooksForANewWallet() throws {
        let server = FakeHookServer { request in
            let claims = request.json["user"]?["user_metadata"]?["custom_claims"]
            if claims?["statement"]?.stringValue == "refuse me" {
                return FakeHookServer.json(["error": ["http_code": 403, "message": "No wallets today"]])
            }
            return .response(status: 204, headers: [], body: [])
        }
        var project = try testProject(clock: ManualClock()) { config in
            config.siteURL = "https://app.example.com"
            config.external.web3Ethereum.enabled = true
            for hook in [\HookSettings.beforeUserCreated, \HookSettings.afterUserCreated] {
                config.hooks[keyPath: hook].enabled = true
                config.hooks[keyPath: hook].uri = "http://127.0.0.1:9/hook"
                config.hooks[keyPath: hook].secrets = [secret]
            }
        }
        project.hookTransport = server
        let api = GoTrueAPI(emulating: project)
        let service = project.configuration.apiKeys.serviceRole
        func signIn(_ statement: String) -> HTTPResponse {
            let message = api.call("POST", "/emulator/v1/web3/message", ["chain": "ethereum", "label": "hooked", "statement": .string(statement)],
                                   bearer: service).json["message"] ?? .null
            let signature = api.call("POST", "/emulator/v1/web3/sign", ["chain": "ethereum", "label": "hooked", "message": message],
                                     bearer: service).json["signature"] ?? .null
            return api.call("POST", "/token?grant_type=web3", ["chain": "ethereum", "message": message, "signature": signature])
        }
        let refused = signIn("refuse me")
        #expect(refused.status == 403)
        #expect(refused.json["msg"] == "No wallets today")
        #expect(server.received.map { $0.json["metadata"]?["name"]?.stringValue } == ["before-user-created"])

        let created = signIn("hello")
        #expect(created.status == 200)
        #expect(server.received.map { $0.json["metadata"]?["name"]?.stringValue }
                == ["before-user-created", "before-user-created", "after-user-created"])
        #expect(server.received.last?.json["user"]?["id"] == created.json["user"]?["id"])
        // The same wallet again creates nobody: no call.
        #expect(signIn("hello again").status == 200)
        #expect(server.received.count == 3)
    }

    @Test func inviteAsksTheHookOnlyForANewAddress() throws {
        let server = FakeHookServer { request in
            if request.json["user"]?["email"]?.stringValue == "refused@example.com" {
                return FakeHookServer.json(["error": ["http_code": 403, "message": "No invitations there"]])
            }
            return .response(status: 204, headers: [], body: [])
        }
        let api = try hookAPI(server, \.beforeUserCreated) { _ in }
        let service = api.project.configuration.apiKeys.serviceRole
        let refused = api.call("POST", "/invite", ["email": "refused@example.com"], bearer: service)
        #expect(refused.status == 403)
        #expect(refused.json["msg"] == "No invitations there")
        #expect(try api.storedUser(email: "refused@example.com") == nil)

        let invited = api.call("POST", "/invite", ["email": "new@example.com", "data": ["team": "a"]], bearer: service)
        #expect(invited.status == 200)
        // The hook saw the user that was then stored.
        #expect(server.received.last?.json["user"]?["id"] == invited.json["id"])
        #expect(server.received.last?.json["user"]?["user_metadata"]?["team"] == "a")
        // Inviting the same address again creates nobody: no call.
        let calls = server.received.count
        #expect(api.call("POST", "/invite", ["email": "new@example.com"], bearer: service).status == 200)
        #expect(server.received.count == calls)
    }
}

@Suite struct SenderHookTests {
    @Test func sendEmailHookGetsTheCodeAndTheOutboxStillRecords() throws {
        let server = FakeHookServer { _ in .response(status: 204, headers: [], body: []) }
        let api = try hookAPI(server, \.sendEmail) { $0.mailer.autoconfirm = false }
        _ = api.call("POST", "/signup", ["email": "mail@example.com", "password": "password1"])
        let call = try #require(server.received.first)
        #expect(call.json["metadata"]?["name"] == "send-email")
        let message = try #require(try api.latestMessage(to: "mail@example.com"))
        #expect(call.json["email_data"]?["token"]?.stringValue == message.otp)
        #expect(call.json["email_data"]?["token_hash"]?.stringValue == message.tokenHash)
        #expect(call.json["email_data"]?["email_action_type"] == "signup")
        #expect(call.json["email_data"]?["site_url"] == "http://127.0.0.1:9999")
        #expect(call.json["user"]?["email"] == "mail@example.com")

        // A failing sender fails the request and stores nothing.
        let failing = try hookAPI(FakeHookServer { _ in FakeHookServer.json(["error": ["message": "mailer down"]]) }, \.sendEmail) {
            $0.mailer.autoconfirm = false
        }
        let refused = failing.call("POST", "/signup", ["email": "down@example.com", "password": "password1"])
        #expect(refused.status == 500)
        #expect(refused.json["msg"] == "mailer down")
        #expect(try failing.storedUser(email: "down@example.com") == nil)
    }

    @Test func sendSMSHookReplacesTheProvider() throws {
        let server = FakeHookServer { _ in FakeHookServer.json(.object([:])) }
        let clock = ManualClock()
        // A provider with missing credentials would fail; the hook replaces it.
        let api = try hookAPI(server, \.sendSMS, clock: clock) {
            $0.external.phoneEnabled = true
            $0.sms.autoconfirm = false
            $0.sms.provider = "twilio"
        }
        let response = api.call("POST", "/otp", ["phone": "15550007777"])
        #expect(response.status == 200)
        #expect(response.json["message_id"] == nil)  // `omitempty`: the hook path has no provider id
        let call = try #require(server.received.first)
        #expect(call.json["sms"]?["phone"] == "15550007777")
        #expect(call.json["sms"]?["otp"]?.stringValue == (try api.latestMessage(to: "15550007777"))?.otp)
        // The user goes as the handler loaded it (`tx.Eager()`): with its factors, which
        // `omitempty` leaves out while there are none.
        #expect(call.json["user"]?["factors"] == nil)
        let userID = try #require(try api.project.database.read { try $0.user(phone: "15550007777", aud: "authenticated") }?.id)
        try api.project.database.write { conn in
            var factor = FactorRecord(id: "00000000-0000-4000-8000-00000000f00d", userID: userID, factorType: "phone",
                                      status: "unverified", at: 1)
            factor.phone = "15550007777"
            try conn.insertFactor(factor)
        }
        clock.advance(seconds: 61)
        #expect(api.call("POST", "/otp", ["phone": "15550007777"]).status == 200)
        #expect(server.received.last?.json["user"]?["factors"]?[0]?["id"] == "00000000-0000-4000-8000-00000000f00d")
    }
}

@Suite struct VerificationAttemptHookTests {
    @Test func passwordAttemptsCanBeRejectedWithALogout() throws {
        let server = FakeHookServer { request in
            request.json["valid"] == false
                ? FakeHookServer.json(["decision": "reject", "message": "Locked out", "should_logout_user": true])
                : FakeHookServer.json(["decision": "continue"])
        }
        let api = try hookAPI(server, \.passwordVerificationAttempt)
        let session = api.signUp("lock@example.com")
        #expect(api.signIn("lock@example.com").status == 200)
        #expect(server.received.last?.json["valid"] == true)
        let refused = api.signIn("lock@example.com", "wrong-password")
        #expect(refused.status == 400)
        #expect(errorCode(refused) == "invalid_credentials")
        #expect(refused.json["msg"] == "Locked out")
        // should_logout_user ended every session.
        #expect(api.refresh(session["refresh_token"]?.stringValue ?? "").status == 400)
    }

    /// The answer fills `PasswordVerificationAttemptOutput` as `json.Unmarshal` fills it: keys
    /// in any case; a value of another type fails the whole answer (hookshttp's 500).
    @Test func answersAreDecodedAsGoDecodesThem() throws {
        let answer = Mutex<JSON>(["decision": "continue"])
        let server = FakeHookServer { _ in FakeHookServer.json(answer.withLock { $0 }) }
        let api = try hookAPI(server, \.passwordVerificationAttempt)
        _ = api.signUp("typed@example.com")
        answer.withLock { $0 = ["Decision": "reject", "MESSAGE": "upper"] }
        let upper = api.signIn("typed@example.com")
        #expect(upper.status == 400)
        #expect(upper.json["msg"] == "upper")
        for wrong: JSON in [["decision": "reject", "should_logout_user": "true"], ["decision": "reject", "message": 7], ["decision": 5]] {
            answer.withLock { $0 = wrong }
            let failed = api.signIn("typed@example.com")
            #expect(failed.status == 500, "\(wrong)")
            #expect(failed.json["msg"] == "Error unmarshaling JSON output.", "\(wrong)")
        }
        // null leaves a field empty: no decision, a sign-in.
        answer.withLock { $0 = ["decision": .null, "message": .null, "should_logout_user": .null] }
        #expect(api.signIn("typed@example.com").status == 200)
    }

    @Test func mfaAttemptsCanBeRejected() throws {
        let server = FakeHookServer { _ in FakeHookServer.json(["decision": "reject"]) }
        let api = try hookAPI(server, \.mfaVerificationAttempt) { $0.mfa.totp = MFASettings.Toggles(enroll: true, verify: true) }
        let token = api.signUp("mfa-hook@example.com")["access_token"]?.stringValue ?? ""
        let factor = api.call("POST", "/factors", ["factor_type": "totp"], bearer: token).json["id"]?.stringValue ?? ""
        let challenge = api.call("POST", "/factors/\(factor)/challenge", .object([:]), bearer: token).json["id"]?.stringValue ?? ""
        let refused = api.call("POST", "/factors/\(factor)/verify", ["challenge_id": .string(challenge), "code": "123456"], bearer: token)
        #expect(refused.status == 403)
        #expect(errorCode(refused) == "mfa_verification_rejected")
        #expect(refused.json["msg"] == "Further MFA verification attempts will be rejected.")
        #expect(server.received.first?.json["factor_type"] == "totp")
        // The user was signed out everywhere.
        #expect(api.call("GET", "/user", bearer: token).status == 403)
    }
}

@Suite struct HookConfigurationRuleTests {
    @Test func uriAndSecretRules() {
        var point = HookSettings.Point()
        point.enabled = true
        point.uri = "http://example.com/hook"
        #expect(point.problem() == "only localhost, 127.0.0.1, and ::1 are supported with http")
        point.uri = "http://host.docker.internal:8000/hook"
        #expect(point.problem() == nil)
        point.uri = "ftp://x"
        #expect(point.problem() == "only postgres hooks and HTTPS functions are supported at the moment")
        point.uri = "pg-functions://postgres/public/custom_access_token"
        #expect(point.problem() == nil)
        #expect(!point.callable)
        point.uri = "https://hooks.example.com/x"
        point.secrets = ["v1,whsec_short"]
        #expect(point.problem() == "invalid secret format")
        point.secrets = [secret]
        #expect(point.problem() == nil)
        #expect(point.callable)
    }
}

// Design §4: hooks are called while no SQLite writer is held (`WriteRounds`), so a slow hook
// delays only the requests that call it.
@Suite struct HookOutsideTheWriterTests {
    /// Counts calls in flight and holds each until `gate` is signalled (or a two-minute bound
    /// that only guards against a hang: the test's writes, each hashing a password in a debug
    /// build, may take long on a busy machine, and the calls must still be held meanwhile).
    final class HangingHook: Sendable {
        let inFlight = Mutex(0)
        let gate = DispatchSemaphore(value: 0)

        func answer(_ request: FakeHookServer.Request) -> HookReply {
            inFlight.withLock { $0 += 1 }
            _ = gate.wait(timeout: .now() + 120)
            inFlight.withLock { $0 -= 1 }
            var claims = request.json["claims"]?.objectValue ?? [:]
            claims["held"] = true
            return FakeHookServer.json(["claims": .object(claims)])
        }

        func waitForCalls(_ count: Int) -> Bool {
            waitUntil(seconds: 60) { inFlight.withLock({ $0 }) == count }
        }
    }

    @Test func hangingHookCallsLeaveOtherWritesAndReadsFree() throws {
        let hook = HangingHook()
        let hooked = Mutex(false)
        let api = try hookAPI(FakeHookServer { request in
            hooked.withLock { $0 } ? hook.answer(request) : FakeHookServer.json(["claims": request.json["claims"] ?? [:]])
        }, \.customAccessToken)
        let emails = (0..<6).map { "hang\($0)@example.com" }
        for email in emails { #expect(api.signUp(email)["access_token"] != nil) }
        hooked.withLock { $0 = true }

        let results = Mutex<[HTTPResponse]>([])
        // Threads of their own, as the server's workers and stand-ins are (the global dispatch
        // queue would start only a few at once).
        let threads = try emails.map { email in
            try Threads.spawn(name: "sign-in", stackSize: 1 << 20) {
                let response = api.call("POST", "/token?grant_type=password", ["email": .string(email), "password": "password1"])
                results.withLock { $0.append(response) }
            }
        }
        // All six sign-ins are inside the hook at once: none waits for another's call to end.
        try #require(hook.waitForCalls(6))
        // Meanwhile 25 writes and 25 reads go through (a held writer would block the writes
        // until the hooks return, and this test releases them only afterwards).
        for index in 0..<25 {
            let created = api.createUser(["email": .string("free\(index)@example.com"), "password": "password1"])
            let id = try #require(created["id"]?.stringValue)
            #expect(api.admin("GET", "/admin/users/\(id)").status == 200)
        }
        #expect(hook.inFlight.withLock { $0 } == 6)
        for _ in 0..<6 { hook.gate.signal() }
        for thread in threads { thread.join() }
        let responses = results.withLock { $0 }
        #expect(responses.count == 6)
        for response in responses {
            #expect(response.status == 200)
            #expect(claims(of: response.json["access_token"]?.stringValue ?? "")["held"] == true)
        }
    }

    @Test func aChangeMadeWhileTheHookRunsIsShownToItAgain() throws {
        let changeNext = Mutex(false)
        let database = Mutex<Database?>(nil)
        let server = FakeHookServer { request in
            if changeNext.withLock({ flag in defer { flag = false }; return flag }), let database = database.withLock({ $0 }) {
                // Another write lands between the rounds: the hook was shown stale claims.
                let id = request.json["user_id"]?.stringValue ?? ""
                _ = try? database.write { conn in
                    guard var user = try conn.user(id: id) else { return }
                    user.userMetadata = #"{"plan":"pro"}"#
                    try conn.updateUser(user)
                }
            }
            return FakeHookServer.json(["claims": request.json["claims"] ?? [:]])
        }
        let api = try hookAPI(server, \.customAccessToken)
        database.withLock { $0 = api.project.database }
        #expect(api.signUp("stale@example.com")["access_token"] != nil)
        let before = server.received.count
        changeNext.withLock { $0 = true }
        let response = api.call("POST", "/token?grant_type=password", ["email": "stale@example.com", "password": "password1"])
        #expect(response.status == 200)
        let calls = Array(server.received[before...])
        #expect(calls.count == 2)
        #expect(calls.first?.json["claims"]?["user_metadata"]?["plan"] == nil)
        #expect(calls.last?.json["claims"]?["user_metadata"]?["plan"] == "pro")
        #expect(claims(of: response.json["access_token"]?.stringValue ?? "")["user_metadata"]?["plan"] == "pro")
        // The session the token names is the one committed.
        let sessionID = claims(of: response.json["access_token"]?.stringValue ?? "")["session_id"]?.stringValue ?? ""
        #expect(try api.project.database.read { try $0.session(id: sessionID) } != nil)
    }

    /// GoTrue calls the send-email hook once, inside the transaction that commits, and never for
    /// a request it answers 429: ten requests at once for one address make one call, for the one
    /// 200, with the code stored. The first call holds until the other nine have had time to
    /// reach the hook too (at most 3 s), where each would have called it before the writer let
    /// it see the first one's commit.
    @Test func theEmailHookIsCalledOnceForTheRequestThatCommits() throws {
        let arrived = Mutex(0)
        let server = FakeHookServer { _ in
            if arrived.withLock({ count in count += 1; return count }) == 1 {
                _ = waitUntil(seconds: 3) { arrived.withLock { $0 } >= 10 }
            }
            return FakeHookServer.json([:])
        }
        let api = try hookAPI(server, \.sendEmail) { $0.mailer.autoconfirm = false }
        let results = Mutex<[HTTPResponse]>([])
        let threads = try (0..<10).map { _ in
            try Threads.spawn(name: "otp", stackSize: 1 << 20) {
                let response = api.call("POST", "/otp", ["email": "once@example.com"])
                results.withLock { $0.append(response) }
            }
        }
        for thread in threads { thread.join() }
        let statuses = results.withLock { $0.map(\.status) }
        #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
        #expect(statuses.filter { $0 == 429 }.count == 9, "\(statuses)")
        #expect(server.received.count == 1)
        let sent = try #require(server.received.first?.json["email_data"]?["token"]?.stringValue)
        let verified = api.call("POST", "/verify", ["type": "email", "email": "once@example.com", "token": .string(sent)])
        #expect(verified.status == 200, "\(verified.text)")
    }

    /// A user whose metadata changes at every hook call still signs in: past `maxCalls` the
    /// hook's last answer stands, the snapshot GoTrue's transaction would have shown it.
    @Test func aUserWhoseMetadataKeepsChangingStillSignsIn() throws {
        let database = Mutex<Database?>(nil)
        let server = FakeHookServer { request in
            if let database = database.withLock({ $0 }) {
                let id = request.json["user_id"]?.stringValue ?? ""
                _ = try? database.write { conn in
                    guard var user = try conn.user(id: id) else { return }
                    user.userMetadata = "{\"n\":\(Int.random(in: 0..<1_000_000_000))}"
                    try conn.updateUser(user)
                }
            }
            return FakeHookServer.json(["claims": request.json["claims"] ?? [:]])
        }
        let api = try hookAPI(server, \.customAccessToken)
        #expect(api.signUp("churn@example.com")["access_token"] != nil)
        database.withLock { $0 = api.project.database }
        let before = server.received.count
        let response = api.call("POST", "/token?grant_type=password", ["email": "churn@example.com", "password": "password1"])
        #expect(response.status == 200, "\(response.text)")
        #expect(server.received.count - before == WriteRounds.maxCalls)
        let sessionID = claims(of: response.json["access_token"]?.stringValue ?? "")["session_id"]?.stringValue ?? ""
        #expect(try api.project.database.read { try $0.session(id: sessionID) } != nil)
    }

    @Test func theCodeTheEmailHookSendsIsTheOneStored() throws {
        let server = FakeHookServer { _ in FakeHookServer.json([:]) }
        let api = try hookAPI(server, \.sendEmail) { $0.mailer.autoconfirm = false }
        #expect(api.call("POST", "/signup", ["email": "code@example.com", "password": "password1"]).status == 200)
        let sent = try #require(server.received.last?.json["email_data"]?["token"]?.stringValue)
        let verified = api.call("POST", "/verify", ["type": "signup", "email": "code@example.com", "token": .string(sent)])
        #expect(verified.status == 200)
        #expect(verified.json["access_token"] != nil)
    }
}

import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
import Synchronization
import Testing
@testable import EmulatorTools
@testable import GoTrue

// Expected behaviour: reference §5.8-5.13, §5.20, §6.2-6.3, §10 (internal/api/otp.go,
// magic_link.go, recover.go, resend.go, reauthenticate.go, invite.go, verify.go, mail.go, phone.go).

/// An API with email confirmations on (the flows that send mail).
func makeMailAPI(clock: ManualClock = ManualClock(), configure: (inout Configuration) -> Void = { _ in }) throws -> GoTrueAPI {
    try makeAPI(clock: clock) { config in
        config.mailer.autoconfirm = false
        configure(&config)
    }
}

extension GoTrueAPI {
    /// The newest captured message for `to`, read straight from the store.
    func latestMessage(to: String, type: String? = nil) throws -> OutboxRecord? {
        try project.database.read { try $0.outboxMessages(recipient: to, type: type, limit: 1) }.first
    }

    func messages(to: String? = nil) throws -> [OutboxRecord] {
        try project.database.read { try $0.outboxMessages(recipient: to) }
    }

    func storedUser(email: String) throws -> UserRecord? {
        try project.database.read { try $0.user(email: email, aud: "authenticated") }
    }

    var serviceRoleHeaders: HTTPHeaders { ["apikey": project.configuration.apiKeys.serviceRole] }

    func verify(_ body: JSONObject) -> HTTPResponse { call("POST", "/verify", .object(body)) }
}

@Suite struct SignupConfirmationTests {
    @Test func confirmationIsCapturedAndVerifiesWithCode() throws {
        let api = try makeMailAPI()
        let signup = api.call("POST", "/signup", ["email": "Ann@Example.com", "password": "password1"])
        #expect(signup.status == 200)
        #expect(signup.json["access_token"] == nil)
        #expect(signup.json["confirmation_sent_at"]?.stringValue != nil)

        let message = try #require(try api.latestMessage(to: "ann@example.com"))
        #expect(message.channel == "email")
        #expect(message.type == "signup")
        #expect(message.subject == "Confirm your email address")
        #expect(message.otp.count == 6 && message.otp.allSatisfy(\.isNumber))
        // §10.1: hex SHA-224 of the lowercased email and the code.
        #expect(message.tokenHash == Hex.encode(SHA224.hash(data: Array(("ann@example.com" + message.otp).utf8))))
        #expect(message.actionLink == "http://127.0.0.1:9999/auth/v1/verify?token=\(message.tokenHash)&type=signup&redirect_to=http://127.0.0.1:3000")
        #expect(message.bodyHTML.contains(message.otp))
        #expect(message.bodyHTML.contains("href=\"http://127.0.0.1:9999/auth/v1/verify?token=\(message.tokenHash)&amp;type=signup"))
        #expect(message.userID == signup.json["id"]?.stringValue)

        // Password sign-in is refused until confirmed.
        #expect(errorCode(api.signIn("ann@example.com")) == "email_not_confirmed")

        let verified = api.verify(["type": "signup", "email": "ann@example.com", "token": .string(message.otp)])
        #expect(verified.status == 200)
        let token = try #require(verified.json["access_token"]?.stringValue)
        #expect(claims(of: token)["amr"]?.arrayValue?.first?["method"] == "otp")
        #expect(verified.json["user"]?["email_confirmed_at"]?.stringValue != nil)
        #expect(verified.json["user"]?["user_metadata"]?["email_verified"] == true)
        #expect(verified.json["user"]?["identities"]?[0]?["identity_data"]?["email_verified"] == true)
        #expect(api.signIn("ann@example.com").status == 200)

        // One-time use.
        let again = api.verify(["type": "signup", "email": "ann@example.com", "token": .string(message.otp)])
        #expect(again.status == 403)
        #expect(again.json["msg"] == "Token has expired or is invalid")
        #expect(errorCode(again) == "otp_expired")
    }

    @Test func tokenHashAndTypeEmail() throws {
        let api = try makeMailAPI()
        _ = api.call("POST", "/signup", ["email": "b@example.com", "password": "password1"])
        let message = try #require(try api.latestMessage(to: "b@example.com"))
        let mixed = api.verify(["type": "email", "token_hash": .string(message.tokenHash), "email": "b@example.com"])
        #expect(mixed.json["msg"] == "Only the token_hash and type should be provided")
        let verified = api.verify(["type": "email", "token_hash": .string(message.tokenHash)])
        #expect(verified.status == 200)
        let reused = api.verify(["type": "email", "token_hash": .string(message.tokenHash)])
        #expect(reused.status == 403)
        #expect(reused.json["msg"] == "Email link is invalid or has expired")
    }

    @Test func expiredCodeIsRefused() throws {
        let clock = ManualClock()
        let api = try makeMailAPI(clock: clock) { $0.mailer.otpExpirySeconds = 600 }
        _ = api.call("POST", "/signup", ["email": "c@example.com", "password": "password1"])
        let message = try #require(try api.latestMessage(to: "c@example.com"))
        clock.advance(seconds: 601)
        let late = api.verify(["type": "signup", "email": "c@example.com", "token": .string(message.otp)])
        #expect(late.status == 403)
        #expect(errorCode(late) == "otp_expired")
        let lateLink = api.verify(["type": "signup", "token_hash": .string(message.tokenHash)])
        #expect(lateLink.json["msg"] == "Email link is invalid or has expired")
    }

    @Test func verifyValidation() throws {
        let api = try makeMailAPI()
        #expect(api.verify(["token": "1"]).json["msg"] == "Verify requires a verification type")
        #expect(api.verify(["type": "signup"]).json["msg"] == "Verify requires either a token or a token hash")
        #expect(api.verify(["type": "signup", "token": "1", "token_hash": "x"]).json["msg"] == "Verify requires either a token or a token hash")
        #expect(api.verify(["type": "signup", "token": "1"]).json["msg"]
            == "Only an email address or phone number should be provided on verify")
        let badEmail = api.verify(["type": "signup", "token": "1", "email": "nope"])
        #expect(badEmail.status == 422)
        #expect(badEmail.json["msg"] == "Invalid email format")
        #expect(api.verify(["type": "bogus", "token_hash": "x"]).json["msg"] == "Invalid email verification type")
        // A PKCE token with a login method that is no verification type: ParseAuthenticationMethod
        // accepts it, and the verification refuses the type, as a redirect.
        let method = api.call("GET", "/verify?token=pkce_abc&type=password&redirect_to=http://127.0.0.1:3000/cb")
        #expect(method.status == 303)
        #expect(method.headers["Location"]?.contains("error_code=validation_failed") == true, "\(method.headers["Location"] ?? method.text)")
        #expect(api.verify(["type": "signup", "token": "123456", "email": "nobody@example.com"]).status == 403)
    }

    @Test func frequencyLimitOnResend() throws {
        let clock = ManualClock()
        let api = try makeMailAPI(clock: clock) { $0.mailer.maxFrequencySeconds = 60 }
        _ = api.call("POST", "/signup", ["email": "f@example.com", "password": "password1"])
        clock.advance(seconds: 10.5)
        let early = api.call("POST", "/resend", ["type": "signup", "email": "f@example.com"])
        #expect(early.status == 429)
        #expect(errorCode(early) == "over_email_send_rate_limit")
        #expect(early.json["msg"] == "For security purposes, you can only request this after 49 seconds.")
        clock.advance(seconds: 50)
        #expect(api.call("POST", "/resend", ["type": "signup", "email": "f@example.com"]).status == 200)
        #expect(try api.messages(to: "f@example.com").count == 2)
    }

    @Test func globalEmailLimit() throws {
        let clock = ManualClock()
        let api = try makeMailAPI(clock: clock) { $0.mailer.rateLimitEmailSent = SendRate(events: 2) }
        #expect(api.call("POST", "/signup", ["email": "g1@example.com", "password": "password1"]).status == 200)
        #expect(api.call("POST", "/signup", ["email": "g2@example.com", "password": "password1"]).status == 200)
        let third = api.call("POST", "/signup", ["email": "g3@example.com", "password": "password1"])
        #expect(third.status == 429)
        #expect(third.json["msg"] == "email rate limit exceeded")
        // The refused sign-up rolled back: no user, no message.
        #expect(try api.storedUser(email: "g3@example.com") == nil)
        clock.advance(seconds: 3600)
        #expect(api.call("POST", "/signup", ["email": "g3@example.com", "password": "password1"]).status == 200)
    }

    @Test func zeroEmailLimitBlocksEvenWithAutoconfirm() throws {
        let api = try makeAPI { $0.mailer.rateLimitEmailSent = SendRate(events: 0) }
        _ = api.signUp("z@example.com")
        let recover = api.call("POST", "/recover", ["email": "z@example.com"])
        #expect(recover.status == 429)
        #expect(errorCode(recover) == "over_email_send_rate_limit")
    }

    @Test func mailerTestOTP() throws {
        let api = try makeMailAPI { $0.mailer.testOTP = ["fixed@example.com": "424242"] }
        _ = api.call("POST", "/signup", ["email": "Fixed@example.com", "password": "password1"])
        #expect(try api.latestMessage(to: "fixed@example.com")?.otp == "424242")
        #expect(api.verify(["type": "signup", "email": "fixed@example.com", "token": "424242"]).status == 200)
    }
}

@Suite struct MagicLinkTests {
    @Test func otpForExistingUserSignsIn() throws {
        let api = try makeAPI()
        _ = api.signUp("m@example.com")
        let sent = api.call("POST", "/otp", ["email": "m@example.com", "create_user": false])
        #expect(sent.status == 200)
        #expect(sent.text == "{}")
        let message = try #require(try api.latestMessage(to: "m@example.com"))
        #expect(message.type == "magiclink")
        #expect(message.subject == "Your sign-in link")
        let verified = api.verify(["type": "email", "email": "m@example.com", "token": .string(message.otp)])
        #expect(verified.status == 200)
        #expect(verified.json["user"]?["email"] == "m@example.com")
    }

    @Test func otpCreatesUserUnlessForbidden() throws {
        let api = try makeAPI()
        let refused = api.call("POST", "/otp", ["email": "new@example.com", "create_user": false])
        #expect(refused.status == 422)
        #expect(errorCode(refused) == "otp_disabled")
        #expect(refused.json["msg"] == "Signups not allowed for otp")

        // Autoconfirm on: the user is created confirmed, then gets a magic link.
        #expect(api.call("POST", "/otp", ["email": "new@example.com", "data": ["plan": "pro"]]).status == 200)
        let message = try #require(try api.latestMessage(to: "new@example.com"))
        #expect(message.type == "magiclink")
        let user = try #require(try api.storedUser(email: "new@example.com"))
        #expect(user.emailConfirmedAt != nil)
        #expect(Models.object(user.userMetadata)["plan"] == "pro")
    }

    @Test func magicLinkForUnconfirmedSendsConfirmation() throws {
        let api = try makeMailAPI()
        #expect(api.call("POST", "/magiclink", ["email": "u@example.com"]).status == 200)
        let message = try #require(try api.latestMessage(to: "u@example.com"))
        #expect(message.type == "signup")
        #expect(api.verify(["type": "email", "email": "u@example.com", "token": .string(message.otp)]).status == 200)
    }

    @Test func validation() throws {
        let api = try makeAPI { $0.external.phoneEnabled = true }
        #expect(api.call("POST", "/otp", ["email": "a@example.com", "phone": "15551234567"]).json["msg"]
            == "Only an email address or phone number should be provided")
        #expect(api.call("POST", "/otp", ["email": "a@example.com", "channel": "sms"]).json["msg"]
            == "Channel should only be specified with Phone OTP")
        #expect(api.call("POST", "/otp", [:]).json["msg"] == "One of email or phone must be set")
        let missing = api.call("POST", "/magiclink", [:])
        #expect(missing.status == 422)
        #expect(missing.json["msg"] == "Password recovery requires an email")
        let disabled = try makeAPI { $0.external.magicLinkEnabled = false }
        #expect(disabled.call("POST", "/magiclink", ["email": "a@example.com"]).json["msg"] == "Login with magic link is disabled")
    }

    @Test func linkFollowedByGetRedirectsWithSession() throws {
        let api = try makeAPI { $0.uriAllowList = ["http://localhost:4000/**"] }
        _ = api.signUp("r@example.com")
        _ = api.call("POST", "/magiclink?redirect_to=http://localhost:4000/welcome", ["email": "r@example.com"])
        let message = try #require(try api.latestMessage(to: "r@example.com"))
        #expect(message.redirectTo == "http://localhost:4000/welcome")
        #expect(message.actionLink.hasSuffix("&type=magiclink&redirect_to=http://localhost:4000/welcome"))
        let target = String(message.actionLink.dropFirst("http://127.0.0.1:9999".count))
        let followed = api.call("GET", target)
        #expect(followed.status == 303)
        let location = try #require(followed.headers["Location"])
        #expect(location.hasPrefix("http://localhost:4000/welcome#access_token="))
        #expect(location.contains("&refresh_token="))
        #expect(location.hasSuffix("&sb=&token_type=bearer&type=magiclink"))
        // The link is spent: the same GET now redirects with the error fragment (§4.3).
        let again = api.call("GET", target)
        #expect(again.status == 303)
        #expect(again.headers["Location"]
            == "http://localhost:4000/welcome#error=access_denied&error_code=otp_expired&error_description=Email+link+is+invalid+or+has+expired&sb=")
    }

    @Test func getVerifyValidationAndInvalidRedirect() throws {
        let api = try makeAPI()
        let noType = api.call("GET", "/verify?token=x")
        #expect(noType.status == 400)
        #expect(noType.json["msg"] == "Verify requires a verification type")
        #expect(api.call("GET", "/verify?type=signup").json["msg"] == "Verify requires a token or a token hash")
        // An invalid redirect_to falls back to SITE_URL silently.
        let bad = api.call("GET", "/verify?type=signup&token=nope&redirect_to=https://evil.example.com/")
        #expect(bad.headers["Location"]?.hasPrefix("http://127.0.0.1:3000#error=access_denied") == true)
        // getRedirectTo reads r.Form only when ParseForm succeeds: a pair url.ParseQuery refuses
        // (a `;`, a bad escape), anywhere in the query, leaves no redirect_to.
        let allowed = api.call("GET", "/verify?type=signup&token=nope&redirect_to=http://127.0.0.1:3000/a")
        #expect(allowed.headers["Location"]?.hasPrefix("http://127.0.0.1:3000/a#error=access_denied") == true)
        for query in ["redirect_to=http://127.0.0.1:3000/a;b", "redirect_to=http://127.0.0.1:3000/a&x=%zz"] {
            let dropped = api.call("GET", "/verify?type=signup&token=nope&" + query)
            #expect(dropped.headers["Location"]?.hasPrefix("http://127.0.0.1:3000#error=access_denied") == true, "\(query)")
        }
    }

    @Test func gatewayLinksUseTheGatewayPath() throws {
        let api = try makeAPI()
        _ = api.signUp("gw@example.com")
        _ = api.call("POST", "/auth/v1/recover", ["email": "gw@example.com"],
                     headers: ["apikey": api.project.configuration.apiKeys.anon])
        let message = try #require(try api.latestMessage(to: "gw@example.com"))
        #expect(message.actionLink.hasPrefix("http://127.0.0.1:9999/auth/v1/verify?token="))
    }
}

@Suite struct RecoveryTests {
    @Test func recoverThenUpdatePassword() throws {
        let api = try makeAPI()
        _ = api.signUp("p@example.com")
        #expect(api.call("POST", "/recover", ["email": "nobody@example.com"]).text == "{}")
        #expect(try api.messages(to: "nobody@example.com").isEmpty)
        #expect(api.call("POST", "/recover", ["email": "p@example.com"]).text == "{}")
        let message = try #require(try api.latestMessage(to: "p@example.com"))
        #expect(message.type == "recovery")
        #expect(message.subject == "Reset your password")
        let session = api.verify(["type": "recovery", "email": "p@example.com", "token": .string(message.otp)])
        let token = try #require(session.json["access_token"]?.stringValue)
        let updated = api.call("PUT", "/user", ["password": "brand-new-1"], bearer: token)
        #expect(updated.status == 200)
        #expect(api.signIn("p@example.com", "brand-new-1").status == 200)
        #expect(api.call("POST", "/recover", [:]).json["msg"] == "Password recovery requires an email")
    }

    @Test func recoveryAndMagicLinkShareTheFrequency() throws {
        let api = try makeAPI { $0.mailer.maxFrequencySeconds = 60 }
        _ = api.signUp("s@example.com")
        #expect(api.call("POST", "/recover", ["email": "s@example.com"]).status == 200)
        let second = api.call("POST", "/magiclink", ["email": "s@example.com"])
        #expect(second.status == 429)
        #expect(second.json["msg"] == "For security purposes, you can only request this after 60 seconds.")
    }
}

@Suite struct ResendTests {
    @Test func validation() throws {
        let api = try makeAPI()
        #expect(api.call("POST", "/resend", ["type": "x", "email": "a@example.com"]).json["msg"]
            == "Missing one of these types: signup, email_change, sms, phone_change")
        #expect(api.call("POST", "/resend", ["type": "signup"]).json["msg"] == "Type provided requires an email address")
        #expect(api.call("POST", "/resend", ["type": "sms"]).json["msg"] == "Type provided requires a phone number")
        #expect(api.call("POST", "/resend", ["type": "email_change"]).json["msg"] == "Missing email address or phone number")
        #expect(api.call("POST", "/resend", ["type": "email_change", "email": "a@example.com", "phone": "1555"]).json["msg"]
            == "Only an email address or phone number should be provided.")
        // Unknown user, or nothing pending: `{}` and nothing sent.
        #expect(api.call("POST", "/resend", ["type": "signup", "email": "nobody@example.com"]).text == "{}")
        _ = api.signUp("done@example.com")
        #expect(api.call("POST", "/resend", ["type": "signup", "email": "done@example.com"]).text == "{}")
        #expect(try api.messages().isEmpty)
    }
}

@Suite struct ReauthenticationTests {
    @Test func nonceAllowsPasswordChange() throws {
        let api = try makeAPI { $0.security.updatePasswordRequireReauthentication = true }
        let clock = ManualClock()
        _ = clock
        let session = api.signUp("re@example.com")
        let token = try #require(session["access_token"]?.stringValue)
        #expect(api.call("GET", "/reauthenticate", bearer: token).text == "{}")
        let message = try #require(try api.latestMessage(to: "re@example.com"))
        #expect(message.type == "reauthentication")
        #expect(message.subject == "\(message.otp) is your verification code")
        #expect(message.actionLink.isEmpty)
        let bad = api.call("PUT", "/user", ["password": "another-1", "nonce": "000000"], bearer: token)
        // A fresh session needs no nonce, but a given one is still not checked; the update passes.
        #expect(bad.status == 200)
        let anonymous = try makeAPI { $0.external.anonymousUsersEnabled = true }
        let anon = try #require(anonymous.call("POST", "/signup", [:]).json["access_token"]?.stringValue)
        #expect(anonymous.call("GET", "/reauthenticate", bearer: anon).json["msg"]
            == "Reauthentication requires the user to have an email or a phone number")
    }

    @Test func oldSessionNeedsTheNonce() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock) {
            $0.security.updatePasswordRequireReauthentication = true
            $0.jwt.expirySeconds = 200_000
            $0.mailer.otpExpirySeconds = 86_400
        }
        let token = try #require(api.signUp("old@example.com")["access_token"]?.stringValue)
        clock.advance(seconds: 86_401)
        let needed = api.call("PUT", "/user", ["password": "another-1"], bearer: token)
        #expect(errorCode(needed) == "reauthentication_needed")
        #expect(api.call("GET", "/reauthenticate", bearer: token).status == 200)
        let nonce = try #require(try api.latestMessage(to: "old@example.com")?.otp)
        #expect(errorCode(api.call("PUT", "/user", ["password": "another-1", "nonce": "999999x"], bearer: token))
            == "reauthentication_not_valid")
        #expect(api.call("PUT", "/user", ["password": "another-1", "nonce": .string(nonce)], bearer: token).status == 200)
    }

    @Test func unconfirmedEmailRefused() throws {
        let api = try makeAPI { $0.external.anonymousUsersEnabled = true; $0.mailer.autoconfirm = false }
        let anon = try #require(api.call("POST", "/signup", [:]).json["access_token"]?.stringValue)
        _ = api.call("PUT", "/user", ["email": "later@example.com"], bearer: anon)
        // The address is only pending: the user still has none, so no reauthentication.
        #expect(api.call("GET", "/reauthenticate", bearer: anon).status == 400)
    }
}

@Suite struct InviteTests {
    // InviteParams and GenerateLinkParams are decoded whole before the address is validated, so
    // a mistyped `data` is bad_json even beside an invalid address.
    @Test func mistypedFieldsAreBadJSONBeforeTheAddressIsChecked() throws {
        let api = try makeAPI()
        let service = api.project.configuration.apiKeys.serviceRole
        let invite = api.call("POST", "/invite", ["email": "not-an-address", "data": "x"], bearer: service)
        #expect(invite.status == 400)
        #expect(invite.json["msg"] == "Could not parse request body as JSON: json: cannot unmarshal string into Go struct field InviteParams.data of type map[string]interface {}")
        let link = api.call("POST", "/admin/generate_link", ["type": "magiclink", "email": "not-an-address", "redirect_to": 5],
                            bearer: service)
        #expect(link.status == 400)
        #expect(link.json["msg"] == "Could not parse request body as JSON: json: cannot unmarshal number into Go struct field GenerateLinkParams.redirect_to of type string")
        let users = try api.project.database.read { try $0.scalar(portable: "SELECT count(*) FROM users") }
        #expect(users == 0)
    }

    @Test func inviteAndAccept() throws {
        let api = try makeAPI()
        let service = api.project.configuration.apiKeys.serviceRole
        #expect(api.call("POST", "/invite", ["email": "i@example.com"]).status == 401)
        #expect(errorCode(api.call("POST", "/invite", ["email": "i@example.com"], bearer: api.project.configuration.apiKeys.anon))
            == "not_admin")
        let invited = api.call("POST", "/invite", ["email": "I@example.com", "data": ["team": "a"]], bearer: service)
        #expect(invited.status == 200)
        #expect(invited.json["invited_at"]?.stringValue != nil)
        #expect(invited.json["identities"]?[0]?["provider"] == "email")
        let message = try #require(try api.latestMessage(to: "i@example.com"))
        #expect(message.type == "invite")
        #expect(message.subject == "You've been invited")
        let link = String(message.actionLink.dropFirst("http://127.0.0.1:9999".count))
        let accepted = api.call("GET", link)
        #expect(accepted.status == 303)
        #expect(accepted.headers["Location"]?.contains("&type=invite") == true)
        let user = try #require(try api.storedUser(email: "i@example.com"))
        #expect(user.emailConfirmedAt != nil)
        #expect(!(user.encryptedPassword ?? "").isEmpty)
        // The temporary password went through `UpdatePassword`: no pending token, no sent time.
        #expect(user.confirmationSentAt == nil && user.confirmationToken == nil && user.recoverySentAt == nil)
        let again = api.call("POST", "/invite", ["email": "i@example.com"], bearer: service)
        #expect(again.status == 422)
        #expect(errorCode(again) == "email_exists")
    }
}

@Suite struct EmailChangeTests {
    @Test func secureChangeNeedsBothConfirmations() throws {
        let api = try makeAPI { $0.mailer.autoconfirm = false }
        _ = api.call("POST", "/signup", ["email": "old@example.com", "password": "password1"])
        let confirm = try #require(try api.latestMessage(to: "old@example.com"))
        let token = try #require(api.verify(["type": "signup", "email": "old@example.com", "token": .string(confirm.otp)])
            .json["access_token"]?.stringValue)

        let changed = api.call("PUT", "/user", ["email": "new@example.com"], bearer: token)
        #expect(changed.status == 200)
        #expect(changed.json["new_email"] == "new@example.com")
        let toNew = try #require(try api.latestMessage(to: "new@example.com"))
        let toOld = try #require(try api.latestMessage(to: "old@example.com", type: "email_change"))
        #expect(toNew.otp != toOld.otp)
        #expect(toNew.subject == "Confirm your new email address")

        let first = api.verify(["type": "email_change", "email": "new@example.com", "token": .string(toNew.otp)])
        #expect(first.status == 200)
        // A Go map[string]string: keys sorted.
        #expect(first.text == #"{"code":"200","msg":"Confirmation link accepted. Please proceed to confirm link sent to the other email"}"#)
        #expect(try api.storedUser(email: "old@example.com")?.emailChangeConfirmStatus == 1)

        let second = api.verify(["type": "email_change", "email": "old@example.com", "token": .string(toOld.otp)])
        #expect(second.status == 200)
        #expect(second.json["user"]?["email"] == "new@example.com")
        #expect(second.json["user"]?["new_email"] == nil)
        #expect(try api.storedUser(email: "old@example.com") == nil)
    }

    @Test func singleConfirmationWhenNotSecure() throws {
        let api = try makeAPI { $0.mailer.secureEmailChangeEnabled = false }
        let token = try #require(api.signUp("one@example.com")["access_token"]?.stringValue)
        _ = api.call("PUT", "/user", ["email": "two@example.com"], bearer: token)
        #expect(try api.messages(to: "one@example.com").isEmpty)
        let message = try #require(try api.latestMessage(to: "two@example.com"))
        let done = api.verify(["type": "email_change", "token_hash": .string(message.tokenHash)])
        #expect(done.json["user"]?["email"] == "two@example.com")
    }

    @Test func getHalfConfirmationRedirect() throws {
        let api = try makeAPI { $0.mailer.autoconfirm = false }
        _ = api.call("POST", "/signup", ["email": "h@example.com", "password": "password1"])
        let confirm = try #require(try api.latestMessage(to: "h@example.com"))
        let token = try #require(api.verify(["type": "signup", "token_hash": .string(confirm.tokenHash)]).json["access_token"]?.stringValue)
        _ = api.call("PUT", "/user", ["email": "h2@example.com"], bearer: token)
        let message = try #require(try api.latestMessage(to: "h2@example.com"))
        let response = api.call("GET", "/verify?type=email_change&token=\(message.tokenHash)")
        #expect(response.headers["Location"]
            == "http://127.0.0.1:3000#message=Confirmation+link+accepted.+Please+proceed+to+confirm+link+sent+to+the+other+email&sb=")
    }
}

@Suite struct PhoneFlowTests {
    private func phoneAPI(clock: ManualClock = ManualClock(), _ configure: (inout Configuration) -> Void = { _ in }) throws -> GoTrueAPI {
        try makeAPI(clock: clock) {
            $0.external.phoneEnabled = true
            $0.sms.autoconfirm = false
            configure(&$0)
        }
    }

    @Test func smsOTPSignInWithCapturedCode() throws {
        let api = try phoneAPI()
        let sent = api.call("POST", "/otp", ["phone": "+1 555 123 4567"])
        #expect(sent.status == 200)
        let message = try #require(try api.latestMessage(to: "15551234567"))
        #expect(message.channel == "sms")
        #expect(message.type == "sms")
        #expect(message.bodyText == "Your code is \(message.otp)")
        let verified = api.verify(["type": "sms", "phone": "15551234567", "token": .string(message.otp)])
        #expect(verified.status == 200)
        #expect(verified.json["user"]?["phone_confirmed_at"]?.stringValue != nil)
        // Confirmed now: a second /otp answers with the captured message's id.
        let clock = ManualClock()
        _ = clock
    }

    @Test func fixedTestCodeSendsNothing() throws {
        let clock = ManualClock()
        let api = try phoneAPI(clock: clock) { $0.sms.testOTP = ["15550001111": "123456"] }
        #expect(api.call("POST", "/otp", ["phone": "15550001111"]).status == 200)
        #expect(try api.messages().isEmpty)
        #expect(api.verify(["type": "sms", "phone": "15550001111", "token": "123456"]).status == 200)
        clock.advance(seconds: 10)
        let again = api.call("POST", "/otp", ["phone": "15550001111"])
        #expect(again.text == #"{"message_id":"test-otp"}"#)
        #expect(errorCode(api.verify(["type": "sms", "phone": "15550001111", "token": "654321"])) == "otp_expired")
    }

    @Test func phoneDisabledAndFrequency() throws {
        let off = try makeAPI()
        let refused = off.call("POST", "/otp", ["phone": "15551234567"])
        #expect(refused.json["msg"] == "Unsupported phone provider")
        #expect(errorCode(refused) == "phone_provider_disabled")
        let api = try phoneAPI()
        _ = api.call("POST", "/otp", ["phone": "15551234567"])
        let again = api.call("POST", "/resend", ["type": "sms", "phone": "15551234567"])
        #expect(again.status == 429)
        #expect(errorCode(again) == "over_sms_send_rate_limit")
    }

    @Test func globalSMSLimit() throws {
        let api = try phoneAPI { $0.sms.rateLimitSMSSent = SendRate(events: 1) }
        #expect(api.call("POST", "/otp", ["phone": "15551230001"]).status == 200)
        let second = api.call("POST", "/otp", ["phone": "15551230002"])
        #expect(second.status == 429)
        #expect(second.json["msg"] == "SMS rate limit exceeded")
    }

    @Test func phoneChange() throws {
        let api = try makeAPI { $0.external.phoneEnabled = true; $0.sms.autoconfirm = false }
        let token = try #require(api.signUp("ph@example.com")["access_token"]?.stringValue)
        let updated = api.call("PUT", "/user", ["phone": "15559876543"], bearer: token)
        #expect(updated.json["new_phone"] == "15559876543")
        let message = try #require(try api.latestMessage(to: "15559876543"))
        #expect(message.type == "phone_change")
        let verified = api.verify(["type": "phone_change", "phone": "15559876543", "token": .string(message.otp)])
        #expect(verified.status == 200)
        #expect(verified.json["user"]?["phone"] == "15559876543")
        let providers = verified.json["user"]?["app_metadata"]?["providers"]?.arrayValue?.compactMap(\.stringValue)
        #expect(providers == ["email", "phone"])
    }
}

@Suite struct PKCEFlowTests {
    // RFC 7636 Appendix B: verifier and its S256 challenge.
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

    @Test func signupConfirmationExchangesCode() throws {
        // The RFC 7636 Appendix B known answer, through the same check the grant uses.
        #expect(FlowStates.verify(challenge: Self.challenge, method: "S256", verifier: Self.verifier) == nil)
        #expect(FlowStates.verify(challenge: Self.challenge, method: "plain", verifier: Self.verifier) != nil)
        #expect(FlowStates.verify(challenge: "x", method: "md5", verifier: "x") == "code challenge method not supported")
        let api = try makeMailAPI()
        _ = api.call("POST", "/signup", ["email": "k@example.com", "password": "password1",
                                         "code_challenge": .string(Self.challenge), "code_challenge_method": "s256"])
        let message = try #require(try api.latestMessage(to: "k@example.com"))
        #expect(message.tokenHash.hasPrefix("pkce_"))
        let link = String(message.actionLink.dropFirst("http://127.0.0.1:9999".count))
        let redirect = api.call("GET", link)
        #expect(redirect.status == 303)
        let location = try #require(redirect.headers["Location"])
        #expect(location.hasPrefix("http://127.0.0.1:3000?code="))
        let code = String(location.dropFirst("http://127.0.0.1:3000?code=".count))
        // http.Redirect on a GET: an HTML body linking to the target, with the status text.
        #expect(redirect.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(redirect.text == "<a href=\"\(location)\">See Other</a>.\n\n")

        let wrong = api.call("POST", "/token?grant_type=pkce", ["auth_code": .string(code), "code_verifier": "nope"])
        #expect(wrong.status == 400)
        #expect(errorCode(wrong) == "bad_code_verifier")
        #expect(wrong.json["msg"] == "code challenge does not match previously saved code verifier")
        let session = api.call("POST", "/token?grant_type=pkce", ["auth_code": .string(code), "code_verifier": .string(Self.verifier)])
        #expect(session.status == 200, "\(session.text)")
        let access = try #require(session.json["access_token"]?.stringValue)
        #expect(claims(of: access)["amr"]?.arrayValue?.first?["method"] == "email/signup")
        let reused = api.call("POST", "/token?grant_type=pkce", ["auth_code": .string(code), "code_verifier": .string(Self.verifier)])
        #expect(reused.status == 404)
        #expect(reused.json["msg"] == "invalid flow state, no valid flow state found")
    }

    @Test func grantValidationAndExpiry() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        #expect(api.call("POST", "/token?grant_type=pkce", ["auth_code": "x"]).json["msg"]
            == "invalid request: both auth code and code verifier should be non-empty")
        _ = api.signUp("e@example.com")
        _ = api.call("POST", "/recover", ["email": "e@example.com", "code_challenge": .string(Self.challenge),
                                          "code_challenge_method": "S256"])
        let message = try #require(try api.latestMessage(to: "e@example.com"))
        let location = api.call("GET", String(message.actionLink.dropFirst("http://127.0.0.1:9999".count))).headers["Location"] ?? ""
        let code = String(location.split(separator: "=").last ?? "")
        clock.advance(seconds: 301)
        let expired = api.call("POST", "/token?grant_type=pkce", ["auth_code": .string(code), "code_verifier": .string(Self.verifier)])
        #expect(expired.status == 422)
        #expect(errorCode(expired) == "flow_state_expired")
    }

    /// token.go loads the flow's user before it checks the verifier: a user deleted meanwhile is
    /// a generic 500 whatever the verifier.
    @Test func aDeletedUsersCodeIsAFiveHundredWhateverTheVerifier() throws {
        let api = try makeAPI()
        let id = try #require(api.signUp("gone@example.com")["user"]?["id"]?.stringValue)
        _ = api.call("POST", "/recover", ["email": "gone@example.com", "code_challenge": .string(Self.challenge),
                                          "code_challenge_method": "S256"])
        let message = try #require(try api.latestMessage(to: "gone@example.com"))
        let location = api.call("GET", String(message.actionLink.dropFirst("http://127.0.0.1:9999".count))).headers["Location"] ?? ""
        let code = String(location.split(separator: "=").last ?? "")
        #expect(api.admin("DELETE", "/admin/users/\(id)").status == 200)
        for verifier in ["nope", Self.verifier] {
            let answer = api.call("POST", "/token?grant_type=pkce", ["auth_code": .string(code), "code_verifier": .string(verifier)])
            #expect(answer.status == 500)
            #expect(answer.json["msg"] == "Unexpected failure, please check server logs for more information")
        }
    }

    /// verify.go sets `u.Fragment = hq.Encode()` and answers `u.String()`, which escapes the
    /// fragment again (`encodeFragment`: `%` becomes `%25`, `(`, `)` and `:` stay); the PKCE
    /// query copy is escaped once.
    @Test func errorRedirectFragmentIsEscapedTwice() {
        let error = AuthError(403, .otpExpired, "Denied: not allowed (test) 100%")
        #expect(VerifyEndpoints.errorRedirect(error, "http://localhost:3000/cb", pkce: true)
            == "http://localhost:3000/cb?error=access_denied&error_code=otp_expired&error_description=Denied%3A+not+allowed+%28test%29+100%25"
            + "#error=access_denied&error_code=otp_expired&error_description=Denied%253A+not+allowed+%2528test%2529+100%2525&sb=")
    }

    @Test func pkceErrorRedirectCarriesQueryToo() throws {
        let api = try makeAPI()
        let response = api.call("GET", "/verify?type=magiclink&token=pkce_missing")
        #expect(response.headers["Location"]
            == "http://127.0.0.1:3000?error=access_denied&error_code=otp_expired&error_description=Email+link+is+invalid+or+has+expired#error=access_denied&error_code=otp_expired&error_description=Email+link+is+invalid+or+has+expired&sb=")
    }

    @Test func magicLinkPKCEWithOtpEndpoint() throws {
        let api = try makeAPI()
        _ = api.signUp("ml@example.com")
        _ = api.call("POST", "/otp", ["email": "ml@example.com", "code_challenge": .string(Self.verifier),
                                      "code_challenge_method": "plain"])
        #expect(try Self.pkceMethod(api, latestLinkTo: "ml@example.com") == "magiclink")
    }

    /// Follows the latest link mailed to `email`, exchanges its code with `verifier` and answers
    /// the session's sign-in method (`amr[0].method`), nil when the exchange fails.
    static func pkceMethod(_ api: GoTrueAPI, latestLinkTo email: String) throws -> String? {
        let message = try #require(try api.latestMessage(to: email))
        let location = api.call("GET", String(message.actionLink.dropFirst("http://127.0.0.1:9999".count))).headers["Location"] ?? ""
        let code = String(location.split(separator: "=").last ?? "")
        let session = api.call("POST", "/token?grant_type=pkce", ["auth_code": .string(code), "code_verifier": .string(verifier)])
        guard session.status == 200, let access = session.json["access_token"]?.stringValue else { return nil }
        return claims(of: access)["amr"]?.arrayValue?.first?["method"]?.stringValue
    }

    /// `/recover` and `/magiclink` share their steps for a known user; the flow state is named
    /// after the one asked for, and each records `user_recovery_requested`.
    @Test func recoveryPKCEFlowIsNamedRecovery() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock)
        _ = api.signUp("rc@example.com")
        _ = api.call("POST", "/recover", ["email": "rc@example.com", "code_challenge": .string(Self.verifier),
                                          "code_challenge_method": "plain"])
        #expect(try Self.pkceMethod(api, latestLinkTo: "rc@example.com") == "recovery")
        clock.advance(seconds: 61)  // past the recovery slot's send frequency, which both share
        #expect(api.call("POST", "/magiclink", ["email": "rc@example.com"]).status == 200)
        let actions = api.admin("GET", "/admin/audit").json.arrayValue?.compactMap { $0["payload"]?["action"]?.stringValue } ?? []
        #expect(actions.filter { $0 == "user_recovery_requested" }.count == 2)
    }
}

@Suite struct OutboxRouteTests {
    @Test func listLatestAndClear() throws {
        let api = try makeMailAPI()
        _ = api.call("POST", "/signup", ["email": "o1@example.com", "password": "password1"])
        _ = api.call("POST", "/signup", ["email": "o2@example.com", "password": "password1"])
        #expect(api.call("GET", "/emulator/v1/outbox").status == 401)
        let list = api.call("GET", "/emulator/v1/outbox", headers: api.serviceRoleHeaders)
        #expect(list.status == 200)
        #expect(list.json.arrayValue?.count == 2)
        #expect(list.json[0]?["to"] == "o2@example.com")  // newest first
        let filtered = api.call("GET", "/emulator/v1/outbox?to=O1@example.com&type=signup&limit=5", headers: api.serviceRoleHeaders)
        #expect(filtered.json.arrayValue?.count == 1)
        let latest = api.call("GET", "/emulator/v1/outbox/latest?to=o1@example.com", headers: api.serviceRoleHeaders)
        #expect(latest.json["channel"] == "email")
        #expect(latest.json["type"] == "signup")
        #expect(latest.json["otp"]?.stringValue?.count == 6)
        #expect(latest.json["sent_at"] == "2026-01-01T00:00:00Z")
        let keys = latest.json.objectValue?.keys.map { $0 } ?? []
        #expect(keys == ["id", "channel", "to", "type", "subject", "body_html", "body_text", "otp", "token_hash",
                         "action_link", "links", "redirect_to", "user_id", "sent_at"])
        #expect(api.call("GET", "/emulator/v1/outbox?limit=x", headers: api.serviceRoleHeaders).status == 400)
        let cleared = api.call("DELETE", "/emulator/v1/outbox", headers: api.serviceRoleHeaders)
        #expect(cleared.json["deleted"] == 2)
        #expect(api.call("GET", "/emulator/v1/outbox/latest", headers: api.serviceRoleHeaders).status == 404)
    }

    @Test func observerSeesCommittedMessagesOnly() throws {
        let api = try makeMailAPI { $0.mailer.rateLimitEmailSent = SendRate(events: 1) }
        let seen = Mutex<[String]>([])
        api.project.outbox.onMessage { message in seen.withLock { $0.append(Outbox.summary(message)) } }
        _ = api.call("POST", "/signup", ["email": "w1@example.com", "password": "password1"])
        _ = api.call("POST", "/signup", ["email": "w2@example.com", "password": "password1"])  // refused, rolled back
        let lines = seen.withLock { $0 }
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("email to w1@example.com: signup code ") == true)
        #expect(lines.first?.contains(" link http://127.0.0.1:9999/auth/v1/verify?token=") == true)
    }
}

@Suite struct SendRateTests {
    @Test func parsing() {
        let seconds: (String) -> Double? = { $0 == "1m" ? 60 : $0 == "1h" ? 3600 : nil }
        #expect(SendRate.parse("30", parseDuration: seconds) == SendRate(events: 30))
        #expect(SendRate.parse("10/1m", parseDuration: seconds) == SendRate(events: 10, seconds: 60, kind: .burst))
        #expect(SendRate.parse("10/x", parseDuration: seconds) == nil)
        #expect(SendRate.parse("-1/1m", parseDuration: seconds) == nil)
        #expect(SendRate.parse("a", parseDuration: seconds) == nil)
    }

    @Test func burstRefillsOnePerPeriod() {
        var limiter = SendLimiter(rate: SendRate(events: 2, seconds: 60, kind: .burst), start: 0)
        let results = [0, 0, 1_000_000, 60_000_000, 61_000_000].map { limiter.allow(at: $0) }
        #expect(results == [true, true, false, true, false])
    }

    @Test func intervalWindowsCountFromStart() {
        var limiter = SendLimiter(rate: SendRate(events: 1), start: 0)
        let results = [10, 3_599_999_999, 3_600_000_000].map { limiter.allow(at: $0) }
        #expect(results == [true, false, true])
    }
}

@Suite struct MailTemplateTests {
    @Test func smsTemplateAndEscaping() throws {
        #expect(try MailTemplates.sms("Your code is {{ .Code }}", code: "123456") == "Your code is 123456")
        // The real data is a struct with Code alone: another field fails the send.
        #expect(throws: AuthError.self) { try MailTemplates.sms("{{.Code}} / {{ .Other }}", code: "1") }
        #expect(throws: AuthError.self) { try MailTemplates.sms("{{ .Code", code: "1") }
    }

    @Test func redirectEncoding() {
        #expect(Mailer.encodeRedirect("http://x/y") == "http://x/y")
        #expect(Mailer.encodeRedirect("http://x/y?a=b") == "http%3A%2F%2Fx%2Fy%3Fa%3Db")
    }

    @Test func randomPasswordHasEveryRequiredSet() throws {
        let sets = ["abc", "XYZ", "0"]
        let password = Mailer.randomPassword(Environment(), requiredCharacters: sets, length: 33)
        #expect(password.count == 33)
        for set in sets { #expect(password.contains(where: { set.contains($0) })) }
    }
}

/// `/magiclink` reads its body with a `json.Decoder` (magic_link.go), not `retrieveRequestParams`:
/// its own message prefix, `EOF` / `unexpected EOF`, and nothing read past the first value.
@Suite struct MagicLinkBodyTests {
    @Test(arguments: [
        ("", "Could not read verification params: EOF"),
        ("  \n", "Could not read verification params: EOF"),
        (#"{"email":"#, "Could not read verification params: unexpected EOF"),
        (#"{"email": 1}"#, "Could not read verification params: json: cannot unmarshal number into Go struct field MagicLinkParams.email of type string"),
        ("[1]", "Could not read verification params: json: cannot unmarshal array into Go value of type api.MagicLinkParams"),
        ("x", "Could not read verification params: invalid character 'x' looking for beginning of value"),
    ])
    func badBodies(_ body: String, _ message: String) throws {
        let api = try makeAPI()
        let response = api.call("POST", "/magiclink", raw: body)
        #expect(response.status == 400)
        #expect(errorCode(response) == "bad_json")
        #expect(response.json["msg"]?.stringValue == message)
    }

    @Test func onlyTheFirstValueIsRead() throws {
        let api = try makeAPI()
        let response = api.call("POST", "/magiclink", raw: #"{"email": "first@example.com"} {"ignored": true"#)
        #expect(response.status == 200, "\(response.text)")
    }
}

@Suite struct InvitedSignUpTests {
    /// `Signup`: an invited user who signs up before accepting gets a confirmation email, and
    /// the answer leaves out their metadata and identities (`HasBeenInvited`).
    @Test func invitedUsersFieldsAreBlankedInTheAnswer() throws {
        let clock = ManualClock()
        let api = try makeAPI(clock: clock) { $0.mailer.autoconfirm = false }
        let service = api.project.configuration.apiKeys.serviceRole
        let invited = api.call("POST", "/invite", ["email": "guest@example.com", "data": ["team": "a"]], bearer: service)
        #expect(invited.status == 200)
        clock.advance(seconds: 61)  // past the per-user email frequency limit
        let signup = api.call("POST", "/signup", ["email": "guest@example.com", "password": "password1"])
        #expect(signup.status == 200, "\(signup.text)")
        #expect(signup.json["user_metadata"] == [:])
        #expect(signup.json["identities"] == [])
        #expect(signup.json["invited_at"] != nil)
        // What is stored is unchanged.
        let stored = try #require(try api.project.database.read { try $0.user(email: "guest@example.com", aud: "authenticated") })
        #expect(stored.userMetadata.contains("\"team\""))
    }
}

@Suite struct AuthorizedAddressTests {
    /// `GOTRUE_EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES`: mail only to listed addresses (labels
    /// ignored, case-insensitive); anything else fails the request, which writes nothing.
    @Test func onlyAuthorizedAddressesReceiveMail() throws {
        let api = try makeAPI { config in
            config.mailer.autoconfirm = false
            config.external.emailAuthorizedAddresses = ["Alice@Example.com"]
        }
        #expect(api.call("POST", "/signup", ["email": "alice+test@example.com", "password": "password1"]).status == 200)
        let refused = api.call("POST", "/signup", ["email": "bob@example.com", "password": "password1"])
        #expect(refused.status == 400)
        #expect(errorCode(refused) == "email_address_not_authorized")
        #expect(refused.json["msg"] == #"Email address "bob@example.com" cannot be used as it is not authorized"#)
        #expect(try api.project.database.read { try $0.user(email: "bob@example.com", aud: "authenticated") } == nil)
        #expect(try api.project.database.read { try $0.outboxMessages() }.count == 1)
    }
}

import AuthHTTP
import AuthJSON
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// SMS with a named provider (`GOTRUE_SMS_PROVIDER`): the real server's `GetSmsProvider`
/// validation before each send, the rollback of what the request wrote, and the capture override.
@Suite struct SMSProviderTests {
    func api(provider: String, settings: [String: String] = [:], capture: Bool = false,
             testOTP: [String: String] = [:], clock: ManualClock = ManualClock()) throws -> GoTrueAPI {
        try makeAPI(clock: clock) { config in
            config.external.phoneEnabled = true
            config.sms.autoconfirm = false
            config.sms.provider = provider
            config.sms.providerSettings = settings
            config.sms.delivery = capture ? .capture : .auto
            config.sms.testOTP = testOTP
        }
    }

    func signUp(_ api: GoTrueAPI, _ phone: String) -> HTTPResponse {
        api.call("POST", "/signup", ["phone": .string(phone), "password": "password1"])
    }

    func counts(_ api: GoTrueAPI) throws -> (users: Int, messages: Int) {
        try api.project.database.read { conn in
            (Int(try conn.scalar(portable: "SELECT count(*) FROM users").int64Value ?? -1), try conn.outboxMessages().count)
        }
    }

    @Test(arguments: [
        ("twilio", [:], "missing Twilio account SID"),
        ("twilio", ["twilio.account_sid": "AC1", "twilio.auth_token": "t"], "missing Twilio message service SID or Twilio phone number"),
        ("vonage", ["vonage.api_key": "k", "vonage.api_secret": "s"], "missing Vonage 'from' parameter"),
        ("carrier-pigeon", [:], "sms Provider carrier-pigeon could not be found"),
    ] as [(String, [String: String], String)])
    func missingSettingsFailTheSendAndRollBack(_ provider: String, _ settings: [String: String], _ reason: String) throws {
        let api = try api(provider: provider, settings: settings)
        let response = signUp(api, "+15550100001")
        #expect(response.status == 500)
        #expect(errorCode(response) == "unexpected_failure")
        #expect(response.json["msg"] == "Unable to get SMS provider")
        #expect(response.json["error_id"]?.stringValue?.isEmpty == false)
        // The user the request created is gone with the failed send, and nothing was captured.
        let after = try counts(api)
        #expect(after.users == 0 && after.messages == 0)
        _ = reason  // logged server-side only, as the real server logs its internal error
    }

    @Test func completeSettingsCapture() throws {
        let api = try api(provider: "twilio", settings: [
            "twilio.account_sid": "AC1", "twilio.auth_token": "t", "twilio.message_service_sid": "MG1",
        ])
        #expect(signUp(api, "+15550100002").status == 200)
        #expect(try counts(api).messages == 1)
    }

    @Test func captureOverridesAndTestOTPsAlwaysWork() throws {
        let forced = try api(provider: "twilio", capture: true)
        #expect(signUp(forced, "+15550100003").status == 200)
        #expect(try counts(forced).messages == 1)
        // A fixed test code sends nothing, so the provider is never built.
        let fixed = try api(provider: "twilio", testOTP: ["15550100004": "123456"])
        let response = signUp(fixed, "+15550100004")
        #expect(response.status == 200)
        let verified = fixed.call("POST", "/verify", ["type": "sms", "phone": "+15550100004", "token": "123456"])
        #expect(verified.status == 200)
    }

    /// phone.go hands the provider the request's channel on sign-up, `/otp` and `PUT /user`, and
    /// SMS on `/resend` and `/reauthenticate`: the outbox records the channel each went out on.
    @Test func outboxRecordsTheChannel() throws {
        let clock = ManualClock()
        let api = try api(provider: "twilio", settings: [
            "twilio.account_sid": "AC1", "twilio.auth_token": "t", "twilio.message_service_sid": "MG1",
        ], clock: clock)
        let channel = { (phone: String, type: String) throws -> [String] in
            try api.project.database.read { conn in try conn.outboxMessages(recipient: phone, type: type).map(\.channel) }
        }
        let signedUp = api.call("POST", "/signup", ["phone": "+15550100011", "password": "password1", "channel": "whatsapp"])
        #expect(signedUp.status == 200)
        #expect(try channel("15550100011", "sms") == ["whatsapp"])
        #expect(api.call("POST", "/otp", ["phone": "+15550100012", "channel": "whatsapp"]).status == 200)
        #expect(try channel("15550100012", "sms") == ["whatsapp"])
        clock.advance(seconds: 61)
        #expect(api.call("POST", "/resend", ["type": "sms", "phone": "+15550100012"]).status == 200)
        #expect(try channel("15550100012", "sms") == ["sms", "whatsapp"])

        // A phone change on WhatsApp, then its resend on SMS.
        let token = try confirmedPhoneSession(api, "+15550100013")
        #expect(api.call("PUT", "/user", ["phone": "+15550100014", "channel": "whatsapp"], bearer: token).status == 200)
        #expect(try channel("15550100014", "phone_change") == ["whatsapp"])
        clock.advance(seconds: 61)
        #expect(api.call("POST", "/resend", ["type": "phone_change", "phone": "+15550100013"], bearer: token).status == 200)
        #expect(try channel("15550100014", "phone_change") == ["sms", "whatsapp"])
    }

    /// A user with a confirmed phone, signed in: sign-up, then `/verify` with the captured code.
    func confirmedPhoneSession(_ api: GoTrueAPI, _ phone: String) throws -> String {
        #expect(signUp(api, phone).status == 200)
        let digits = String(phone.dropFirst())
        let otp = try api.project.database.read { conn in try conn.outboxMessages(recipient: digits, type: "sms").first?.otp } ?? ""
        let verified = api.call("POST", "/verify", ["type": "sms", "phone": .string(phone), "token": .string(otp)])
        #expect(verified.status == 200)
        return verified.json["access_token"]?.stringValue ?? ""
    }

    @Test func noProviderCaptures() throws {
        let api = try api(provider: "")
        #expect(signUp(api, "+15550100005").status == 200)
        #expect(try counts(api).messages == 1)
    }
}

/// `GOTRUE_SMS_TEST_OTP_VALID_UNTIL`: fixed test codes stop applying at that instant (on the
/// project's clock, so a test can move past it).
@Suite struct TestOTPValidityTests {
    @Test func fixedCodesExpire() throws {
        let clock = ManualClock()  // 2026-01-01T00:00:00Z
        let api = try makeAPI(clock: clock) { config in
            config.external.phoneEnabled = true
            config.sms.autoconfirm = false
            config.sms.testOTP = ["15550100010": "123456", "15550100011": "123456"]
            config.sms.testOTPValidUntil = Timestamp(rfc3339: "2026-01-01T01:00:00Z")
        }
        let before = api.call("POST", "/signup", ["phone": "+15550100010", "password": "password1"])
        #expect(before.status == 200)
        #expect(try api.project.database.read { try $0.outboxMessages() }.isEmpty)  // a test code sends nothing
        #expect(api.call("POST", "/verify", ["type": "sms", "phone": "+15550100010", "token": "123456"]).status == 200)

        clock.advance(seconds: 3600)
        // At the instant and after, a real code is made and captured, and the fixed one fails.
        #expect(api.call("POST", "/signup", ["phone": "+15550100011", "password": "password1"]).status == 200)
        #expect(try api.project.database.read { try $0.outboxMessages() }.count == 1)
        let stale = api.call("POST", "/verify", ["type": "sms", "phone": "+15550100011", "token": "123456"])
        #expect(stale.status == 403)
        #expect(errorCode(stale) == "otp_expired")
    }
}

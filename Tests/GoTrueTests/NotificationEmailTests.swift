import AuthHTTP
import AuthJSON
import AuthStore
import Testing
@testable import EmulatorTools
@testable import GoTrue

// Account-change notices: `GOTRUE_MAILER_NOTIFICATIONS_*_ENABLED`, sent by user.go (password),
// verify.go (email, phone, phone identity), identity.go (link, unlink) through `sendEmail`.

private func noticeAPI(_ kinds: Set<MailNotification> = Set(MailNotification.allCases), clock: ManualClock = ManualClock(),
                       configure: (inout Configuration) -> Void = { _ in }) throws -> GoTrueAPI {
    try makeAPI(clock: clock) { config in
        config.mailer.notifications = kinds
        enableGoogle(&config, secret: nil)
        config.external.phoneEnabled = true
        configure(&config)
    }
}

private extension GoTrueAPI {
    func notices(to recipient: String? = nil) throws -> [OutboxRecord] {
        try messages(to: recipient).filter { $0.type.hasSuffix("_notification") }
    }

    func bearer(_ email: String) -> String {
        signUp(email)["access_token"]?.stringValue ?? ""
    }
}

@Suite struct NotificationEmailTests {
    @Test func offByDefault() throws {
        let api = try noticeAPI([])
        let token = api.bearer("quiet@example.com")
        #expect(api.call("PUT", "/user", ["password": "another-password"], bearer: token).status == 200)
        #expect(try api.notices().isEmpty)
    }

    @Test func passwordChanged() throws {
        let api = try noticeAPI([.passwordChanged])
        let token = api.bearer("pw@example.com")
        // Metadata alone is no password change.
        #expect(api.call("PUT", "/user", ["data": ["a": 1]], bearer: token).status == 200)
        #expect(try api.notices().isEmpty)
        #expect(api.call("PUT", "/user", ["password": "another-password"], bearer: token).status == 200)
        let notice = try #require(try api.notices(to: "pw@example.com").first)
        #expect(notice.type == "password_changed_notification")
        #expect(notice.subject == "Your password was changed")
        #expect(notice.otp.isEmpty && notice.actionLink.isEmpty)
        #expect(notice.bodyText.contains("pw@example.com"))
    }

    @Test func emailChangedGoesToTheOldAddress() throws {
        let api = try noticeAPI([.emailChanged])
        let token = api.bearer("before@example.com")
        #expect(api.call("PUT", "/user", ["email": "after@example.com"], bearer: token).status == 200)
        // With confirmations off (the CLI's default) one of the two links completes the change.
        let message = try #require(try api.latestMessage(to: "after@example.com", type: "email_change"))
        #expect(api.verify(["type": "email_change", "email": "after@example.com", "token": .string(message.otp)]).status == 200)
        let notices = try api.notices()
        #expect(notices.map(\.recipient) == ["before@example.com"])
        #expect(notices.first?.type == "email_changed_notification")
        #expect(notices.first?.bodyText.contains("from before@example.com to after@example.com") == true)
    }

    @Test func phoneChangedAndPhoneIdentityLinked() throws {
        let clock = ManualClock()
        let api = try noticeAPI([.phoneChanged, .identityLinked], clock: clock) { $0.sms.autoconfirm = false }
        let token = api.bearer("ph@example.com")
        // The first phone: a new phone identity (identity_linked), no "changed" notice (no old number).
        #expect(api.call("PUT", "/user", ["phone": "15550001111"], bearer: token).status == 200)
        var sms = try #require(try api.latestMessage(to: "15550001111"))
        #expect(api.verify(["type": "phone_change", "phone": "15550001111", "token": .string(sms.otp)]).status == 200)
        #expect(try api.notices().map(\.type) == ["identity_linked_notification"])
        #expect(try api.notices().first?.bodyText.contains("phone") == true)

        // A second number (after the SMS send frequency): the identity exists, so only phone_changed.
        clock.advance(seconds: 10)
        let again = api.signIn("ph@example.com").json["access_token"]?.stringValue ?? ""
        #expect(api.call("PUT", "/user", ["phone": "15550002222"], bearer: again).status == 200)
        sms = try #require(try api.latestMessage(to: "15550002222"))
        #expect(api.verify(["type": "phone_change", "phone": "15550002222", "token": .string(sms.otp)]).status == 200)
        let last = try #require(try api.notices().first)
        #expect(last.type == "phone_changed_notification")
        #expect(last.recipient == "ph@example.com")
        #expect(last.bodyText.contains("from 15550001111 to 15550002222"))
    }

    /// With SMS autoconfirm `PUT /user` runs `smsVerify` itself (user.go): the same notices,
    /// audit entries (`smsVerify`'s `user_modified`, then `UserUpdate`'s) and identity as a
    /// confirmation, but no `app_metadata.providers` update, which only `/verify` makes.
    @Test func anAutoconfirmedPhoneChangeIsVerifiedInPlace() throws {
        let api = try noticeAPI([.phoneChanged, .identityLinked]) { $0.sms.autoconfirm = true }
        let token = api.bearer("auto@example.com")
        let first = api.call("PUT", "/user", ["phone": "15550001111"], bearer: token)
        #expect(first.status == 200)
        #expect(first.json["phone"] == "15550001111")
        #expect(first.json["app_metadata"]?["providers"] == ["email"])
        #expect(first.json["identities"]?.arrayValue?.map { $0["provider"] } == ["email", "phone"])
        #expect(try api.notices().map(\.type) == ["identity_linked_notification"])
        let second = api.call("PUT", "/user", ["phone": "15550002222"], bearer: token)
        #expect(second.status == 200)
        #expect(try api.notices().first?.type == "phone_changed_notification")
        #expect(try api.notices().first?.bodyText.contains("from 15550001111 to 15550002222") == true)
        let audit = api.auditEntries().prefix(2).map { $0["payload"] }
        #expect(audit.map { $0?["action"] } == ["user_modified", "user_modified"])
        // The older of the two is smsVerify's, written before the number changed.
        #expect(audit.map { $0?["actor_username"] } == ["15550002222", "15550001111"])
        let stored = try #require(try api.storedUser(email: "auto@example.com"))
        #expect(Models.object(stored.appMetadata)["providers"] == ["email"])
    }

    /// An anonymous user's email under mailer autoconfirm: `emailChangeVerify` in place; the
    /// user keeps its empty `app_metadata`.
    @Test func anAnonymousUsersAutoconfirmedEmail() throws {
        let api = try noticeAPI { $0.external.anonymousUsersEnabled = true }
        let anonymous = api.call("POST", "/signup", .object(JSONObject())).json
        let token = anonymous["access_token"]?.stringValue ?? ""
        let updated = api.call("PUT", "/user", ["email": "was-anon@example.com"], bearer: token)
        #expect(updated.status == 200)
        #expect(updated.json["is_anonymous"] == false)
        #expect(updated.json["email"] == "was-anon@example.com")
        #expect(updated.json["app_metadata"] == .object(JSONObject()))
        let audit = api.auditEntries().prefix(2).map { $0["payload"] }
        #expect(audit.map { $0?["action"] } == ["user_modified", "user_modified"])
        #expect(audit.map { $0?["actor_username"] } == ["was-anon@example.com", ""])
    }

    @Test func identityLinkedAndUnlinked() throws {
        let api = try noticeAPI([.identityLinked, .identityUnlinked]) { $0.security.manualLinkingEnabled = true }
        let token = api.bearer("links@example.com")
        let linked = api.call("POST", "/token?grant_type=id_token",
                              ["id_token": #"{"sub":"g-9","aud":"google-client","email":"other@example.com"}"#,
                               "provider": "google", "link_identity": true], bearer: token)
        #expect(linked.status == 200)
        let notice = try #require(try api.notices(to: "links@example.com").first)
        #expect(notice.type == "identity_linked_notification")
        #expect(notice.subject == "A new sign-in method was linked to your account")
        #expect(notice.bodyText.contains("google"))

        let fresh = linked.json["access_token"]?.stringValue ?? ""
        // The grant's answer lists the identities loaded before the link; GET /user has the new one.
        let identities = api.call("GET", "/user", bearer: fresh).json["identities"]?.arrayValue ?? []
        let google = try #require(identities.first { $0["provider"] == "google" }?["identity_id"]?.stringValue)
        #expect(api.call("DELETE", "/user/identities/\(google)", bearer: fresh).status == 200)
        let unlinked = try #require(try api.notices(to: "links@example.com").first)
        #expect(unlinked.type == "identity_unlinked_notification")
        #expect(unlinked.subject == "A sign-in method was removed from your account")
    }

    @Test func subjectsFromTheConfigurationFillTheirFields() throws {
        let api = try noticeAPI([.passwordChanged]) { config in
            config.mailer.subjects["password_changed_notification"] = "Password of {{ .Email }} changed"
            config.mailer.subjects["confirmation"] = "Welcome {{.Email}}, code {{ .Token }} {{ .Unknown }}"
            config.mailer.autoconfirm = false
        }
        _ = api.call("POST", "/signup", ["email": "subj@example.com", "password": "password1"])
        let confirm = try #require(try api.latestMessage(to: "subj@example.com", type: "signup"))
        // html/template renders a key the data lacks as nothing, as the real server's subject.
        #expect(confirm.subject == "Welcome subj@example.com, code \(confirm.otp) ")
        let token = api.verify(["type": "signup", "email": "subj@example.com", "token": .string(confirm.otp)])
            .json["access_token"]?.stringValue ?? ""
        #expect(api.call("PUT", "/user", ["password": "another-password"], bearer: token).status == 200)
        #expect(try api.notices().first?.subject == "Password of subj@example.com changed")
    }

    @Test func aRefusedNoticeNeverFailsTheChange() throws {
        // A send limit of 0 refuses every email; an unlisted address is refused too.
        for configure in [{ (c: inout Configuration) in c.mailer.rateLimitEmailSent = SendRate(events: 0) },
                          { (c: inout Configuration) in c.external.emailAuthorizedAddresses = ["someone-else@example.com"] }] {
            let api = try noticeAPI([.passwordChanged], configure: configure)
            // With confirmations off the sign-up itself sends nothing, so it passes either gate.
            let token = api.bearer("limited@example.com")
            #expect(!token.isEmpty)
            let changed = api.call("PUT", "/user", ["password": "another-password"], bearer: token)
            #expect(changed.status == 200)
            #expect(try api.notices().isEmpty)
        }
    }
}

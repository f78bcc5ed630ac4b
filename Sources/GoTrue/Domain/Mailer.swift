import AuthCrypto
import AuthJSON
import AuthStore
import GoFormats

/// Everything the real server would send by email or SMS, captured into the outbox instead
/// (`sendConfirmation`, `sendInvite`, `sendPasswordRecovery`, `sendMagicLink`,
/// `sendReauthenticationOtp`, `sendEmailChange` in mail.go and `sendPhoneConfirmation` in
/// phone.go). Each send runs inside the caller's write transaction: it checks the per-user
/// frequency (reference §6.3) and the global send limit (§6.2), stores the token on the user row
/// and in `one_time_tokens`, and queues the captured message on the write's round
/// (`WriteRound.send`), which hands it to the outbox observer once the transaction has committed.
struct Mailer {
    let api: Core
    let context: RequestContext
    let config: Configuration
    /// `utilities.GetReferrer`: where links send the user after verification.
    let referrer: String

    init(api: Core, context: RequestContext) {
        self.api = api
        self.context = context
        self.config = api.snapshot.configuration
        self.referrer = Mailer.referrer(context, config)
    }

    var project: Project { api.project }

    /// `GetReferrer` (reference §1.5): the `redirect_to` header, else the `redirect_to` form
    /// value, when valid; else a valid `Referer`; else `SITE_URL`. Invalid values fall back
    /// silently. `getRedirectTo` reads the form value only when `ParseForm` succeeds: a pair Go's
    /// `url.ParseQuery` refuses anywhere in the query or a form body (a `;` in it, a bad `%`
    /// escape) leaves no `redirect_to` at all.
    static func referrer(_ context: RequestContext, _ config: Configuration) -> String {
        var requested = context.request.headers["redirect_to"] ?? ""
        if requested.isEmpty && !context.request.formParseFails { requested = context.request.formValue("redirect_to") }
        return RedirectPolicy(configuration: config).resolve(requested, context.request.headers["Referer"])
    }

    // MARK: links

    /// The action link of an email, of `generate_link` and of the outbox, built one way for all
    /// three as the real server builds it: `externalURL.ResolveReference(getPath(path, ...))`.
    func actionLink(path: String, token: String, type: String) -> String {
        Mailer.actionLink(externalURL: config.externalURL, path: path, token: token, type: type, redirectTo: referrer)
    }

    /// `getPath` then `ResolveReference` (RFC 3986 §5.2): the URL path setting with the query
    /// `token=<escaped>&type=<escaped>&redirect_to=<encodeRedirectURL>` (replacing any query it
    /// had), resolved against the external URL: an absolute URL (the CLI's
    /// `http://127.0.0.1:54321/auth/v1/verify`) is used as it is, an absolute path replaces the
    /// external URL's path, a relative one is merged with it.
    static func actionLink(externalURL: String, path: String, token: String, type: String, redirectTo: String) -> String {
        var reference = Substring(path)
        var fragment = ""
        if let hash = reference.firstIndex(of: "#") {
            fragment = String(reference[hash...])
            reference = reference[..<hash]
        }
        if let question = reference.firstIndex(of: "?") { reference = reference[..<question] }
        let query = "token=" + GoURL.queryEscape(token) + "&type=" + GoURL.queryEscape(type)
            + "&redirect_to=" + Mailer.encodeRedirect(redirectTo)
        return resolve(String(reference), against: externalURL) + "?" + query + fragment
    }

    /// `URL.ResolveReference` for a reference without query or fragment.
    static func resolve(_ reference: String, against base: String) -> String {
        if let colon = reference.firstIndex(of: ":"), reference[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }),
           !reference[..<colon].isEmpty, reference[..<colon].first!.isLetter {
            return reference  // absolute URL
        }
        var external = Substring(base)
        if let cut = external.firstIndex(where: { $0 == "?" || $0 == "#" }) { external = external[..<cut] }
        var origin = external
        var basePath: Substring = ""
        if let scheme = external.firstRange(of: "://") {
            let rest = external[scheme.upperBound...]
            let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
            origin = external[..<authorityEnd]
            basePath = external[authorityEnd...]
        }
        if reference.hasPrefix("//") { return String(external[..<(external.firstRange(of: "://")?.lowerBound ?? external.startIndex)]) + ":" + reference }
        if reference.hasPrefix("/") { return String(origin) + reference }
        if reference.isEmpty { return String(external) }
        // Merge (RFC 3986 §5.2.3): the base path up to its last "/", then the reference.
        let directory = basePath.lastIndex(of: "/").map { basePath[...$0] } ?? "/"
        return String(origin) + directory + reference
    }

    /// `encodeRedirectURL`: a redirect still holding `&`, `=` or `#` was not escaped by the
    /// caller and is query-escaped; any other is used as it is.
    static func encodeRedirect(_ url: String) -> String {
        url.contains(where: { $0 == "&" || $0 == "=" || $0 == "#" }) ? GoURL.queryEscape(url) : url
    }

    // MARK: codes

    /// A fresh email OTP, or the fixed one configured for the address (emulator-only).
    func emailOTP(for address: String) -> String {
        config.mailer.testOTP[address.lowercased()] ?? OneTimeTokens(project: project).otp(length: config.mailer.otpLength)
    }

    static func flowPrefix(_ pkce: Bool) -> String { pkce ? "pkce_" : "" }

    /// The global email limiter (`sendEmail`): a limit of 0 refuses every email; otherwise the
    /// limiter applies only while confirmations are on (autoconfirm off), as the real server.
    private func checkEmailSendLimit() throws(AuthError) {
        let rate = config.mailer.rateLimitEmailSent
        let refused = rate.events == 0
            || (!config.mailer.autoconfirm && !project.outbox.allowEmail(rate, now: project.environment.now()))
        if refused { throw AuthError(429, .overEmailSendRateLimit, "email rate limit exceeded") }
    }

    /// `checkEmailAddressAuthorization` (`GOTRUE_EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES`): with a
    /// list set, mail goes only to listed addresses, compared case-insensitively with any
    /// `+label` removed; checked in `sendEmail` before the send limit.
    private func checkAuthorized(_ address: String) throws(AuthError) {
        let authorized = config.external.emailAuthorizedAddresses
        guard !authorized.isEmpty, !address.isEmpty else { return }
        var normalized = address
        // emailLabelPattern `[+][^@]+@` → "@".
        if let plus = normalized.firstIndex(of: "+"), let at = normalized[plus...].firstIndex(of: "@"),
           normalized.index(after: plus) < at {
            normalized.replaceSubrange(plus..<at, with: "")
        }
        if authorized.contains(where: { $0.lowercased() == normalized.lowercased() }) { return }
        throw AuthError(400, .emailAddressNotAuthorized, "Email address \(GoStrconv.quote(address)) cannot be used as it is not authorized")
    }

    func capture(_ conn: Connection, channel: String, to recipient: String, type: String, subject: String,
                         html: String, text: String, otp: String, tokenHash: String, link: String, userID: String,
                         round: inout WriteRound) throws -> OutboxRecord {
        var record = OutboxRecord(id: project.environment.uuid(), channel: channel, recipient: recipient.lowercased(),
                                  type: type, sentAt: project.environment.now().microseconds)
        record.subject = subject
        record.bodyHTML = html
        record.bodyText = text
        record.otp = otp
        record.tokenHash = tokenHash
        record.actionLink = link
        record.redirectTo = channel == "email" && !link.isEmpty ? referrer : ""
        record.userID = userID
        try conn.insertOutboxMessage(record)
        round.send(record)
        return record
    }

    // Not inlined: Swift 6.3.1's optimizer crashes its ownership verifier when this body is
    // inlined into `sendRecovery` (release builds only).
    @inline(never)
    private func captureEmail(_ conn: Connection, user: UserRecord, to address: String, action: MailTemplates.Action,
                              otp: String, tokenHash: String, path: String?, round: inout WriteRound) throws {
        let link = path.map { actionLink(path: $0, token: tokenHash, type: action.linkType) } ?? ""
        // The fields templatemailer gives each template (InviteMail, ConfirmationMail, ...).
        var data: JSONObject = ["SiteURL": .string(config.siteURL), "Email": .string(user.email ?? ""),
                                "Token": .string(otp), "Data": MailTemplates.metadata(user)]
        if action != .reauthentication {
            data["ConfirmationURL"] = .string(link)
            data["TokenHash"] = .string(tokenHash)
            data["RedirectTo"] = .string(referrer)
        }
        if action == .emailChange {
            data["NewEmail"] = .string(user.emailChange ?? "")
            data["SendingTo"] = .string(address)
        }
        let message = try MailTemplates.render(action.templateID, data: data, mailer: config.mailer, failure: action.failure)
        _ = try capture(conn, channel: "email", to: address, type: action.linkType, subject: message.subject,
                        html: message.html, text: message.text, otp: otp, tokenHash: tokenHash, link: link,
                        userID: user.id, round: &round)
        // The email change hands both addresses' codes to the hook in one call (sendEmailChange).
        if action != .emailChange {
            try sendEmailHook(conn, user: user, data: ["token": .string(otp), "token_hash": .string(tokenHash),
                                                      "email_action_type": .string(action.linkType)])
        }
    }

    /// The send-email hook (`sendEmail` with `GOTRUE_HOOK_SEND_EMAIL_ENABLED`): the hook is the
    /// sender, given the user and `email_data`; the outbox still records the message it was
    /// handed. A failing hook fails the request and rolls its transaction back, as there.
    func sendEmailHook(_ conn: Connection, user: UserRecord, data: JSONObject) throws {
        let hooks = Hooks(api: api, request: context.request)
        guard hooks.enabled(.sendEmail) else { return }
        var emailData: JSONObject = [:]
        for key in ["token", "token_hash", "redirect_to", "email_action_type", "site_url", "token_new", "token_hash_new",
                    "old_email", "old_phone", "provider", "factor_type"] {
            emailData[key] = data[key] ?? .string("")
        }
        if data["redirect_to"] == nil { emailData["redirect_to"] = .string(referrer) }
        // `SiteURL: externalURL.String()`: the API's external URL, not SITE_URL.
        if data["site_url"] == nil { emailData["site_url"] = .string(config.externalURL) }
        // The user as `findUser` loaded it: identities and factors (`factors` left out when none).
        let userJSON = Models.user(user, identities: try conn.identities(userID: user.id), factors: try conn.factors(userID: user.id))
        try hooks.invoke(.sendEmail, ["user": userJSON, "email_data": .object(emailData)])
    }

    // MARK: email sends

    /// `sendConfirmation`: the sign-up confirmation (link type `signup`).
    func sendConfirmation(_ conn: Connection, user: inout UserRecord, pkce: Bool, round: inout WriteRound) throws {
        try sendEmailCode(conn, user: &user, action: .signup, path: config.mailer.urlPaths.confirmation, pkce: pkce,
                          token: \.confirmationToken, sentAt: \.confirmationSentAt, tokenType: "confirmation_token",
                          at: project.environment.now(), round: &round)
    }

    /// `sendInvite`: no per-user frequency check, only the global limit.
    func sendInvite(_ conn: Connection, user: inout UserRecord, round: inout WriteRound) throws {
        let now = project.environment.now()
        user.invitedAt = now.microseconds
        try sendEmailCode(conn, user: &user, action: .invite, path: config.mailer.urlPaths.invite, pkce: false,
                          token: \.confirmationToken, sentAt: \.confirmationSentAt, tokenType: "confirmation_token",
                          throttled: false, at: now, round: &round)
    }

    /// `sendPasswordRecovery` and `sendMagicLink`: both use the recovery token slot and share
    /// `recovery_sent_at` for the frequency limit.
    func sendRecovery(_ conn: Connection, user: inout UserRecord, magicLink: Bool, pkce: Bool,
                      round: inout WriteRound) throws {
        try sendEmailCode(conn, user: &user, action: magicLink ? .magicLink : .recovery, path: config.mailer.urlPaths.recovery,
                          pkce: pkce, token: \.recoveryToken, sentAt: \.recoverySentAt, tokenType: "recovery_token",
                          at: project.environment.now(), round: &round)
    }

    /// `sendReauthenticationOtp`: a code only, no link.
    func sendReauthentication(_ conn: Connection, user: inout UserRecord, round: inout WriteRound) throws {
        try sendEmailCode(conn, user: &user, action: .reauthentication, path: nil, pkce: false,
                          token: \.reauthenticationToken, sentAt: \.reauthenticationSentAt,
                          tokenType: "reauthentication_token", at: project.environment.now(), round: &round)
    }

    /// The sequence every single-address email follows (the real `sendEmail` callers): the
    /// per-user frequency check, a code and its token hash, the global send limit, the captured
    /// message, then the token on the user row and in `one_time_tokens`. A throw anywhere rolls
    /// the caller's transaction back, so a refused send stores nothing.
    private func sendEmailCode(_ conn: Connection, user: inout UserRecord, action: MailTemplates.Action, path: String?,
                               pkce: Bool, token slot: WritableKeyPath<UserRecord, String?>,
                               sentAt: WritableKeyPath<UserRecord, Int64?>, tokenType: String, throttled: Bool = true,
                               at now: Timestamp, round: inout WriteRound) throws {
        if throttled {
            try FrequencyLimit.check(sentAt: user[keyPath: sentAt], frequencySeconds: config.mailer.maxFrequencySeconds,
                                     now: now, code: .overEmailSendRateLimit)
        }
        let email = user.email ?? ""
        let otp = emailOTP(for: email)
        let token = Mailer.flowPrefix(pkce) + OneTimeTokens.tokenHash(email, otp)
        try checkAuthorized(email)
        try checkEmailSendLimit()
        try captureEmail(conn, user: user, to: email, action: action, otp: otp, tokenHash: token, path: path, round: &round)
        try OneTimeTokens(project: project).store(conn, user: &user, token: token, slot: slot, sentAt: sentAt,
                                                  type: tokenType, relatesTo: email, at: now)
    }

    /// `sendEmailChange`: a message to the new address and, with secure email change, one to the
    /// current address; each carries its own code and token.
    func sendEmailChange(_ conn: Connection, user: inout UserRecord, to newEmail: String, pkce: Bool,
                         round: inout WriteRound) throws {
        let now = project.environment.now()
        try FrequencyLimit.check(sentAt: user.emailChangeSentAt, frequencySeconds: config.mailer.maxFrequencySeconds,
                                 now: now, code: .overEmailSendRateLimit)
        let otpNew = emailOTP(for: newEmail)
        user.emailChange = newEmail
        user.emailChangeTokenNew = Mailer.flowPrefix(pkce) + OneTimeTokens.tokenHash(newEmail, otpNew)
        var otpCurrent = ""
        let current = user.email ?? ""
        if config.mailer.secureEmailChangeEnabled && !current.isEmpty {
            otpCurrent = emailOTP(for: current)
            user.emailChangeTokenCurrent = Mailer.flowPrefix(pkce) + OneTimeTokens.tokenHash(current, otpCurrent)
        }
        user.emailChangeConfirmStatus = 0
        // The new address must be authorized, and with secure email change the current one too.
        try checkAuthorized(newEmail)
        if config.mailer.secureEmailChangeEnabled && !current.isEmpty { try checkAuthorized(current) }
        try checkEmailSendLimit()
        let path = config.mailer.urlPaths.emailChange
        try captureEmail(conn, user: user, to: newEmail, action: .emailChange, otp: otpNew,
                         tokenHash: user.emailChangeTokenNew ?? "", path: path, round: &round)
        if !otpCurrent.isEmpty {
            try captureEmail(conn, user: user, to: current, action: .emailChange, otp: otpCurrent,
                             tokenHash: user.emailChangeTokenCurrent ?? "", path: path, round: &round)
        }
        // The hook's `email_data` as the real server fills it, crossed hashes included (its
        // BUG(cstockton) note): with secure change `token` is the current address's code and
        // `token_new` the new one's; without, `token` is the new address's code.
        try sendEmailHook(conn, user: user, data: [
            "token": .string(otpCurrent.isEmpty ? otpNew : otpCurrent),
            "token_new": .string(otpCurrent.isEmpty ? "" : otpNew),
            "token_hash": .string(user.emailChangeTokenNew ?? ""),
            "token_hash_new": .string(otpCurrent.isEmpty ? "" : user.emailChangeTokenCurrent ?? ""),
            "email_action_type": "email_change",
        ])
        user.emailChangeSentAt = now.microseconds
        user.updatedAt = now.microseconds
        try conn.updateUser(user)
        try OneTimeTokens(project: project).recordEmailChange(conn, user: user, current: current, new: newEmail,
                                                              at: now.microseconds)
    }

    // MARK: notifications

    /// The account-change notices (`sendPasswordChangedNotification` and its siblings in
    /// mail.go): when the kind is enabled and there is a recipient, a message goes through the
    /// same gate as every email (authorized addresses, the global send limit); a refused or
    /// failed send is logged and never fails the change that caused it, as the real server.
    /// `values` are the template's fields (`OldEmail`, `Provider`, `FactorType`, ...).
    /// `authorizing` is the address the authorized-addresses gate checks when it is not the
    /// recipient: `sendEmail` checks `recipientEmail` or else the user's current address, so the
    /// email-changed notice, sent to the old address, is checked against the new one.
    func notify(_ conn: Connection, _ kind: MailNotification, user: UserRecord, to recipient: String,
                authorizing: String? = nil, values: [String: String] = [:], round: inout WriteRound) {
        guard config.mailer.notifications.contains(kind), !recipient.isEmpty else { return }
        var data: JSONObject = ["SiteURL": .string(config.siteURL), "Email": .string(user.email ?? ""),
                                "Data": MailTemplates.metadata(user)]
        if kind == .phoneChanged { data["Phone"] = .string(user.phone ?? "") }
        for (field, value) in values.sorted(by: { $0.key < $1.key }) { data[field] = .string(value) }
        do {
            let message = try MailTemplates.render(kind.templateID, data: data, mailer: config.mailer,
                                                   failure: "Error sending \(kind.rawValue.spacedWords) notification email")
            try checkAuthorized(authorizing ?? recipient)
            try checkEmailSendLimit()
            _ = try capture(conn, channel: "email", to: recipient, type: kind.templateID, subject: message.subject,
                            html: message.html, text: message.text, otp: "", tokenHash: "", link: "", userID: user.id,
                            round: &round)
            var data: JSONObject = ["email_action_type": .string(kind.templateID)]
            if let old = values["OldEmail"] { data["old_email"] = .string(old) }
            if let old = values["OldPhone"] { data["old_phone"] = .string(old) }
            if let provider = values["Provider"] { data["provider"] = .string(provider) }
            if let type = values["FactorType"] { data["factor_type"] = .string(type) }
            try sendEmailHook(conn, user: user, data: data)
        } catch {
            if !WriteRounds.deferring { logError("mailer: unable to send \(kind.templateID) email: \(error)") }
        }
    }

    // MARK: helpers for the flows

    /// `crypto.GeneratePassword`: a throwaway password for accounts created by an OTP or magic
    /// link, with one character of every required set so it passes the strength policy.
    static func randomPassword(_ environment: Environment, requiredCharacters: [String], length: Int) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        func pick(_ set: [Character]) -> Character {
            // 64 is a multiple of nothing useful here; reject bytes above the largest multiple.
            let limit = 256 - 256 % set.count
            while true {
                for byte in environment.randomBytes(8) where Int(byte) < limit { return set[Int(byte) % set.count] }
            }
        }
        var characters: [Character] = requiredCharacters.compactMap { set in set.isEmpty ? nil : pick(Array(set)) }
        while characters.count < length { characters.append(pick(alphabet)) }
        return String(characters)
    }
}

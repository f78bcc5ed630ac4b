import AuthJSON
import AuthStore
import AuthTemplate
import Synchronization

/// Email and SMS text as the real server makes it: every subject and body is a Go template
/// executed with the fields its templatemailer gives that mail, through Go's html/template
/// (`internal/mailer/templatemailer`), and SMS through text/template with the code
/// (`generateSMSFromTemplate`). Custom bodies (`MailerSettings.templates`) and subjects
/// (`MailerSettings.subjects`) replace the built-in ones per template id.
package enum MailTemplates {
    enum Action {
        case signup, invite, magicLink, recovery, emailChange, reauthentication

        /// The `type` a link carries and the outbox records.
        var linkType: String {
            switch self {
            case .signup: return "signup"
            case .invite: return "invite"
            case .magicLink: return "magiclink"
            case .recovery: return "recovery"
            case .emailChange: return "email_change"
            case .reauthentication: return "reauthentication"
            }
        }

        /// The template id of `GOTRUE_MAILER_SUBJECTS_*` / `GOTRUE_MAILER_TEMPLATES_*`.
        var templateID: String {
            switch self {
            case .signup: return "confirmation"
            case .magicLink: return "magic_link"
            default: return linkType
            }
        }

        /// The 500 a failed send answers with (mail.go).
        var failure: String {
            switch self {
            case .signup: return "Error sending confirmation email"
            case .invite: return "Error sending invite email"
            case .magicLink: return "Error sending magic link email"
            case .recovery: return "Error sending recovery email"
            case .emailChange: return "Error sending email change email"
            case .reauthentication: return "Error sending reauthentication email"
            }
        }
    }

    struct Message {
        var subject: String
        var html: String
        var text: String
    }

    /// The real server's default subjects (`defaultTemplateSubjects`), so a test asserting on a
    /// subject passes against both.
    static let defaultSubjects: [String: String] = [
        "invite": "You've been invited",
        "confirmation": "Confirm your email address",
        "recovery": "Reset your password",
        "magic_link": "Your sign-in link",
        "email_change": "Confirm your new email address",
        "reauthentication": "{{ .Token }} is your verification code",
        "password_changed_notification": "Your password was changed",
        "email_changed_notification": "Your email address was changed",
        "phone_changed_notification": "Your phone number was changed",
        "identity_linked_notification": "A new sign-in method was linked to your account",
        "identity_unlinked_notification": "A sign-in method was removed from your account",
        "mfa_factor_enrolled_notification": "A new verification method was added to your account",
        "mfa_factor_unenrolled_notification": "A verification method was removed from your account",
    ]

    /// The emulator's built-in bodies: a heading, one sentence, the link, and the code as well,
    /// so a reader (or a test) can use either.
    static let defaultBodies: [String: String] = [
        "confirmation": body("Confirm your email address", "Follow this link to confirm your email address and finish signing up.",
                             link: "Confirm email address"),
        "invite": body("You've been invited", "You have been invited to create an account. Follow this link to accept the invitation.",
                       link: "Accept the invitation"),
        "magic_link": body("Your sign-in link", "Follow this link to sign in. It can be used once and expires soon.", link: "Sign in"),
        "recovery": body("Reset your password", "Someone asked to reset the password of this account. Follow this link to choose a new one.",
                         link: "Reset password", footer: "If you did not ask for this, ignore this email."),
        "email_change": body("Confirm your new email address",
                             "Follow this link to confirm the change of email address from {{ .Email }} to {{ .NewEmail }}.",
                             link: "Confirm email address change", footer: "If you did not ask for this change, ignore this email."),
        "reauthentication": "<h2>Your verification code</h2>\n\n<p>Enter this code to confirm it is you. It expires soon.</p>\n<p>{{ .Token }}</p>\n",
        "password_changed_notification": notice("Your password was changed", "The password of the account {{ .Email }} was changed."),
        "email_changed_notification": notice("Your email address was changed",
                                             "The email address of this account was changed from {{ .OldEmail }} to {{ .Email }}."),
        "phone_changed_notification": notice("Your phone number was changed",
                                             "The phone number of the account {{ .Email }} was changed from {{ .OldPhone }} to {{ .Phone }}."),
        "identity_linked_notification": notice("A new sign-in method was linked",
                                               "Your {{ .Provider }} account can now be used to sign in as {{ .Email }}."),
        "identity_unlinked_notification": notice("A sign-in method was removed",
                                                 "Your {{ .Provider }} account can no longer be used to sign in as {{ .Email }}."),
        "mfa_factor_enrolled_notification": notice("A new verification method was added",
                                                   "The verification method {{ .FactorType }} was added to the account {{ .Email }}."),
        "mfa_factor_unenrolled_notification": notice("A verification method was removed",
                                                     "The verification method {{ .FactorType }} was removed from the account {{ .Email }}."),
    ]

    private static func body(_ heading: String, _ sentence: String, link: String, footer: String? = nil) -> String {
        var text = "<h2>\(heading)</h2>\n\n<p>\(sentence)</p>\n<p><a href=\"{{ .ConfirmationURL }}\">\(link)</a></p>\n"
        text += "<p>Or enter this code: {{ .Token }}</p>\n"
        if let footer { text += "<p>\(footer)</p>\n" }
        return text
    }

    private static func notice(_ heading: String, _ sentence: String) -> String {
        "<h2>\(heading)</h2>\n\n<p>\(sentence)</p>\n<p>If you did not make this change, contact support at once.</p>\n"
    }

    /// The built-in templates, parsed once.
    static let builtIn: [String: (subject: GoTemplate, body: GoTemplate)] = {
        var parsed: [String: (GoTemplate, GoTemplate)] = [:]
        for (id, subject) in defaultSubjects {
            // The texts above are fixed: a parse failure is a bug caught by the tests.
            guard let s = try? GoTemplate(parsing: subject, name: ""), let b = try? GoTemplate(parsing: defaultBodies[id] ?? "", name: "") else {
                continue
            }
            parsed[id] = (s, b)
        }
        return parsed
    }()

    /// templatemailer's `mail`: the subject (custom or default) and body (custom or default)
    /// parsed as `loadEntry` does; if either fails to parse, the defaults of both, as
    /// `loadEntryDefault` (the real server logs the error and keeps sending); then both executed
    /// with `data`. An execution error fails the send with `failure`, a 500.
    static func render(_ id: String, data: JSONObject, mailer: MailerSettings, failure: String) throws(AuthError) -> Message {
        guard let defaults = builtIn[id] else { throw AuthError(500, .unexpectedFailure, failure) }
        var subject = defaults.subject
        var body = defaults.body
        do {
            if let custom = mailer.subjects[id] { subject = try parsed(custom, name: "Subject") }
            if let custom = mailer.templates[id] { body = try parsed(custom.text, name: custom.name) }
        } catch {
            logError("mailer: template type \"\(id)\": \(error); sending the default template")
            subject = defaults.subject
            body = defaults.body
        }
        do {
            let html = try body.execute(.object(data))
            return Message(subject: try subject.execute(.object(data)), html: html, text: plainText(html))
        } catch {
            logError("mailer: template type \"\(id)\": \(error)")
            throw AuthError(500, .unexpectedFailure, failure)
        }
    }

    /// A custom template's text parsed once and kept, so each send only executes it: release
    /// builds leave the template engine unoptimized (Package.swift), where parsing a typical
    /// custom body takes about 300 µs and executing it a fraction of that (bench/template). Parsing
    /// is a pure function of the text, name and escaping, so what is kept is shared by every
    /// project and changes nothing a send returns; a text that fails to parse is not kept, so
    /// each send logs its error as before. At most `parsedLimit` texts are kept (the control API
    /// can change templates at any time); past that the cache starts again empty.
    static func parsed(_ text: String, name: String, escaping: GoTemplate.Escaping = .html) throws(TemplateError) -> GoTemplate {
        let key = ParsedKey(text: text, name: name, escaping: escaping)
        if let kept = parsedTemplates.withLock({ $0[key] }) { return kept }
        let template = try GoTemplate(parsing: text, name: name, escaping: escaping)
        parsedTemplates.withLock { kept in
            if kept.count >= parsedLimit { kept.removeAll() }
            kept[key] = template
        }
        return template
    }

    static let parsedLimit = 256
    static var parsedCount: Int { parsedTemplates.withLock { $0.count } }
    /// Hashed when made, before the lock is taken: hashing a template's text is work in its
    /// length, and every send of every project goes through the one lock.
    private struct ParsedKey: Hashable {
        let text: String
        let name: String
        let escaping: GoTemplate.Escaping
        let hashed: Int

        init(text: String, name: String, escaping: GoTemplate.Escaping) {
            self.text = text
            self.name = name
            self.escaping = escaping
            var hasher = Hasher()
            hasher.combine(text)
            hasher.combine(name)
            hasher.combine(escaping)
            hashed = hasher.finalize()
        }

        static func == (a: ParsedKey, b: ParsedKey) -> Bool {
            a.hashed == b.hashed && a.escaping == b.escaping && a.name == b.name && a.text == b.text
        }

        func hash(into hasher: inout Hasher) { hasher.combine(hashed) }
    }
    private static let parsedTemplates = Mutex<[ParsedKey: GoTemplate]>([:])

    /// `user.UserMetaData`, the `Data` field: the metadata object. GoTrue holds a nil map for a
    /// user without metadata, which a template reads as an empty one (`.Data.x` is no value).
    static func metadata(_ user: UserRecord) -> JSON {
        guard let parsed = try? JSON(parsing: user.userMetadata), parsed.objectValue != nil else { return .object([:]) }
        return parsed
    }

    /// `generateSMSFromTemplate`: text/template with the code as `.Code`. A template that does
    /// not execute fails the send as "error generating sms template". The real data is a struct
    /// with the one field, so any other field is an error there; with a map it would print
    /// `<no value>`, which is taken as that error.
    static func sms(_ template: String, code: String) throws(AuthError) -> String {
        do {
            let text = try parsed(template, name: "", escaping: .text).execute(["Code": .string(code)])
            if text.contains("<no value>") && !template.contains("<no value>") {
                logError("sms: the template names a field other than .Code")
                throw AuthError(500, .unexpectedFailure, "error generating sms template")
            }
            return text
        } catch let error as AuthError {
            throw error
        } catch {
            logError("sms: \(error)")
            throw AuthError(500, .unexpectedFailure, "error generating sms template")
        }
    }

    /// A plain-text reading of an HTML body for the outbox: block elements end lines, a link
    /// reads `label: URL`, other tags go, character references are decoded.
    static func plainText(_ html: String) -> String {
        var lines: [String] = []
        var line = ""
        var link: String?
        var label = ""
        func flush() {
            let trimmed = line.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            if !trimmed.isEmpty || lines.last?.isEmpty == false { lines.append(trimmed) }
            line = ""
        }
        // Read by the same tokenizer as the outbox's links: a comment, a script or a tag's
        // attributes are not text, and a link's URL keeps its case.
        for token in HTMLTokens.tokens(html) {
            switch token {
            case .text(let text):
                if link != nil { label += text.replacingNewlines } else { line += text.replacingNewlines }
            case .startTag(let name, _):
                if name == "a" {
                    link = HTMLTokens.link(token) ?? ""
                    label = ""
                } else if plainTextBreaks.contains(name) {
                    flush()
                }
            case .endTag(let name):
                if name == "a" {
                    let target = link ?? ""
                    let words = label.split(separator: " ").joined(separator: " ")
                    line += target.isEmpty || words == target ? words : (words.isEmpty ? target : words + ": " + target)
                    link = nil
                } else if plainTextBreaks.contains(name) {
                    flush()
                }
            }
        }
        flush()
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The elements that start or end a line of the plain-text reading.
    static let plainTextBreaks: Set<String> = ["p", "br", "div", "li", "tr", "h1", "h2", "h3", "h4", "table"]
}

private extension String {
    var replacingNewlines: String { String(map { $0 == "\n" || $0 == "\r" || $0 == "\t" ? " " : $0 }) }
}

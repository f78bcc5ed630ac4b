import AuthHTTP
import AuthJSON
import AuthStore
import GoFormats

/// `POST /verify` and `GET /verify` (reference §10.3-10.5, verify.go): a code or a link's token
/// exchanged for a session (or, from a PKCE link, for an auth code).
struct VerifyEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("GET", "/verify", operation: "verify", guards: [.limit(.verify)]) { g, context in try g.get(context) },
            Endpoint("POST", "/verify", operation: "verify", guards: [.limit(.verify)]) { g, context in try g.post(context) },
        ]
    }

    var project: Project { api.project }

    struct Params {
        var type = ""
        var token = ""
        var tokenHash = ""
        var email = ""
        var phone = ""
        var redirectTo = ""
    }

    static let singleConfirmationAccepted =
        "Confirmation link accepted. Please proceed to confirm link sent to the other email"

    // MARK: POST

    func post(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let body = try RequestBody(context.request, as: "VerifyParams")
        var params = Params()
        params.type = try body.string("type") ?? ""
        params.token = try body.string("token") ?? ""
        params.tokenHash = try body.string("token_hash") ?? ""
        params.email = try body.string("email") ?? ""
        params.phone = try body.string("phone") ?? ""
        params.redirectTo = try body.string("redirect_to") ?? ""

        // VerifyParams.Validate for POST.
        if params.type.isEmpty { throw AuthError(400, .validationFailed, "Verify requires a verification type") }
        if params.token.isEmpty == params.tokenHash.isEmpty {
            throw AuthError(400, .validationFailed, "Verify requires either a token or a token hash")
        }
        if !params.token.isEmpty {
            if !params.phone.isEmpty && params.email.isEmpty {
                params.phone = try Validation.phone(params.phone)
                params.tokenHash = OneTimeTokens.tokenHash(params.phone, params.token)
            } else if !params.email.isEmpty && params.phone.isEmpty {
                do {
                    params.email = try Validation.email(params.email)
                } catch {
                    throw AuthError(422, .validationFailed, "Invalid email format")
                }
                params.tokenHash = OneTimeTokens.tokenHash(params.email, params.token)
            } else {
                throw AuthError(400, .validationFailed, "Only an email address or phone number should be provided on verify")
            }
        } else if !params.email.isEmpty || !params.phone.isEmpty || !params.redirectTo.isEmpty {
            throw AuthError(400, .validationFailed, "Only the token_hash and type should be provided")
        }

        let aud = api.requestAudience(context)
        enum Outcome {
            case session(Tokens.Issued, JSON)
            case halfConfirmed
        }
        let requested = params
        let outcome: Outcome = try api.write { conn, round in
            var params = requested
            var user = params.token.isEmpty
                ? try verifyTokenHash(conn, &params)
                : try verifyUserAndToken(conn, &params, aud: aud)
            // emailChangeVerify loads the identities (`tx.Load(user, "Identities")`) after the
            // email identity's raw data update and before `ConfirmEmailChange` saves it again:
            // the answer shows the new data with the `updated_at` it had before the request.
            let updatedBefore = params.type == "email_change"
                ? Dictionary(try conn.identities(userID: user.id).map { ($0.id, $0.updatedAt) }, uniquingKeysWith: { first, _ in first })
                : [:]
            guard try applyVerification(conn, context, params, &user, smsAllowed: true, round: &round) else { return .halfConfirmed }
            let issued = try Tokens(api: api).issueSession(conn, user: &user, method: "otp", request: context.request)
            let identities = try conn.identities(userID: user.id).map { identity in
                var shown = identity
                if let before = updatedBefore[identity.id] { shown.updatedAt = before }
                return shown
            }
            return .session(issued, Models.user(user, identities: identities, factors: try conn.factors(userID: user.id)))
        }
        switch outcome {
        case .halfConfirmed:
            // `code` is the string "200" here: a map[string]string in the real server, so its
            // keys come out sorted.
            return .json(["code": "200", "msg": .string(VerifyEndpoints.singleConfirmationAccepted)])
        case .session(let issued, let user):
            return .json(.object(issued.response(user: user)), headers: issued.headers)
        }
    }

    // MARK: GET

    func get(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        var params = Params()
        params.token = context.request.queryValue("token") ?? ""
        params.type = context.request.queryValue("type") ?? ""
        params.redirectTo = Mailer.referrer(context, api.snapshot.configuration)
        if params.type.isEmpty { throw AuthError(400, .validationFailed, "Verify requires a verification type") }
        if params.token.isEmpty { throw AuthError(400, .validationFailed, "Verify requires a token or a token hash") }
        params.tokenHash = params.token

        let pkce = params.token.hasPrefix("pkce_")
        var authenticationMethod = ""
        if pkce {
            guard let method = FlowStates.authenticationMethod(forVerifyType: params.type) else {
                // ParseAuthenticationMethod's plain error: an internal error, not a redirect.
                logError("verify: unsupported authentication method \"\(params.type)\"")
                throw AuthError.unexpected
            }
            authenticationMethod = method
        }

        enum Outcome {
            /// With the verification type as the token's row named it (`magiclink`, `signup`).
            case session(Tokens.Issued, type: String)
            case authCode(String)
            case halfConfirmed
        }
        let outcome: Outcome
        let requested = params
        do {
            outcome = try api.write { [authenticationMethod] conn, round in
                var params = requested
                var user = try verifyTokenHash(conn, &params)
                guard try applyVerification(conn, context, params, &user, smsAllowed: false, round: &round) else { return .halfConfirmed }
                if pkce {
                    return .authCode(try FlowStates.issueAuthCode(conn, project: project, userID: user.id,
                                                                  authenticationMethod: authenticationMethod))
                }
                return .session(try Tokens(api: api).issueSession(conn, user: &user, method: "otp", request: context.request),
                                type: params.type)
            }
        } catch {
            // verifyGet turns only HTTP errors into error redirects. Any other failure (a database
            // error outside the wrapped steps, an app trigger's exception in Postgres mode) is
            // dropped after the rollback: the browser goes to `redirect_to` with no session, or
            // with an empty `code` for PKCE (`prepPKCERedirectURL(rurl, "")`).
            if error.isUnnamedStoreFailure || error.kind == .unexpected {
                logError("verify: \(error.internalError ?? error.message)")
                if !pkce { return VerifyEndpoints.redirect(to: params.redirectTo) }
                var url = RedirectURL(params.redirectTo)
                url.set("code", "")
                url.rawQuery = GoURL.encode(url.query)
                return VerifyEndpoints.redirect(to: url.string)
            }
            return VerifyEndpoints.redirect(to: VerifyEndpoints.errorRedirect(error, params.redirectTo, pkce: pkce))
        }

        switch outcome {
        case .halfConfirmed:
            var url = RedirectURL(params.redirectTo)
            if pkce { url.set("message", VerifyEndpoints.singleConfirmationAccepted) }
            url.rawQuery = GoURL.encode(url.query)
            // `prepRedirectURL`: `u.Fragment = hq.Encode()`, escaped again by `u.String()`.
            url.fragment = GoURL.escapeFragment(GoURL.encode([QueryItem(name: "message", value: VerifyEndpoints.singleConfirmationAccepted),
                                                              QueryItem(name: "sb", value: "")]))
            return VerifyEndpoints.redirect(to: url.string)
        case .authCode(let code):
            var url = RedirectURL(params.redirectTo)
            url.set("code", code)
            url.rawQuery = GoURL.encode(url.query)
            return VerifyEndpoints.redirect(to: url.string)
        case .session(let issued, let type):
            // `AccessTokenResponse.AsRedirectURL`: appended to the redirect as it is.
            let fragment = issued.redirectFragment(trailing: [QueryItem(name: "type", value: type)])
            return VerifyEndpoints.redirect(to: params.redirectTo + "#" + fragment, headers: issued.headers)
        }
    }

    /// `http.Redirect` with 303 See Other.
    static func redirect(to location: String, headers: HTTPHeaders = [:]) -> HTTPResponse {
        var headers = headers
        headers["Location"] = location
        return HTTPResponse(status: 303, headers: headers)
    }

    /// `prepErrorRedirectURL` (reference §4.3): the error in the fragment, and in the query too
    /// for PKCE links. Statuses without an OAuth name carry no `error` key.
    static func errorRedirect(_ error: AuthError, _ redirectTo: String, pkce: Bool) -> String {
        var url = RedirectURL(redirectTo)
        var fragment: [QueryItem] = []
        if let name = AuthError.oauthErrorNames[error.status] {
            fragment.append(QueryItem(name: "error", value: name))
            url.set("error", name)
        }
        let code = error.code?.rawValue ?? ""
        fragment.append(QueryItem(name: "error_code", value: code))
        fragment.append(QueryItem(name: "error_description", value: error.message))
        fragment.append(QueryItem(name: "sb", value: ""))
        url.set("error_code", code)
        url.set("error_description", error.message)
        if pkce { url.rawQuery = GoURL.encode(url.query) }
        // `u.Fragment = hq.Encode()`, escaped again by `u.String()`: the browser gets
        // `error_description=...%253A...`, which clients decode once.
        url.fragment = GoURL.escapeFragment(GoURL.encode(fragment))
        return url.string
    }

    // MARK: token checks

    /// `isOtpValid`: the stored token (with or without the `pkce_` prefix) within its lifetime.
    private func isOTPValid(_ actual: String, expected: String?, sentAt: Int64?, lifetimeSeconds: Int) -> Bool {
        guard let expected, !expected.isEmpty, let sentAt else { return false }
        return !isExpired(sentAt, lifetimeSeconds) && (actual == expected || "pkce_" + actual == expected)
    }

    private func isExpired(_ sentAt: Int64?, _ lifetimeSeconds: Int) -> Bool {
        guard let sentAt else { return true }
        return project.environment.now().microseconds > sentAt + Int64(lifetimeSeconds) * 1_000_000
    }

    /// `verifyTokenHash`: the link path. The token hash names the user through its
    /// `one_time_tokens` row; `email` resolves to `signup` or `magiclink` by the slot it is in.
    private func verifyTokenHash(_ conn: Connection, _ params: inout Params) throws -> UserRecord {
        let types: [String]
        switch params.type {
        case "email": types = ["confirmation_token", "recovery_token"]
        case "signup", "invite": types = ["confirmation_token"]
        case "recovery", "magiclink": types = ["recovery_token"]
        case "email_change": types = ["email_change_token_current", "email_change_token_new"]
        default: throw AuthError(400, .validationFailed, "Invalid email verification type")
        }
        let invalid = AuthError(403, .otpExpired, "Email link is invalid or has expired")
        guard let userID = try conn.oneTimeTokenOwner(tokenHash: params.tokenHash, types: types),
              let user = try conn.user(id: userID)
        else { throw invalid }
        if api.isBanned(user) { throw AuthError(403, .userBanned, "User is banned") }
        let lifetime = api.snapshot.configuration.mailer.otpExpirySeconds
        let expired: Bool
        switch params.type {
        case "email":
            var sentAt = user.confirmationSentAt
            params.type = "signup"
            if user.recoveryToken == params.tokenHash {
                sentAt = user.recoverySentAt
                params.type = "magiclink"
            }
            expired = isExpired(sentAt, lifetime)
        case "signup", "invite": expired = isExpired(user.confirmationSentAt, lifetime)
        case "recovery", "magiclink": expired = isExpired(user.recoverySentAt, lifetime)
        default: expired = isExpired(user.emailChangeSentAt, lifetime)
        }
        if expired { throw invalid }
        return user
    }

    /// `verifyUserAndToken`: the code path (`token` with `email` or `phone`).
    private func verifyUserAndToken(_ conn: Connection, _ params: inout Params, aud: String) throws -> UserRecord {
        let config = api.snapshot.configuration
        let invalid = AuthError(403, .otpExpired, "Token has expired or is invalid")
        let found: UserRecord?
        switch params.type {
        case "phone_change": found = try conn.user(phoneChange: params.phone, aud: aud)
        case "sms": found = try conn.user(phone: params.phone, aud: aud)
        case "email_change": found = try userForEmailChange(conn, email: params.email, tokenHash: params.tokenHash, aud: aud)
        default: found = try conn.user(email: params.email, aud: aud)
        }
        guard let user = found else { throw invalid }
        if api.isBanned(user) { throw AuthError(403, .userBanned, "User is banned") }

        let hash = params.tokenHash
        let mailLifetime = config.mailer.otpExpirySeconds
        let valid: Bool
        switch params.type {
        case "email":
            if isOTPValid(hash, expected: user.confirmationToken, sentAt: user.confirmationSentAt, lifetimeSeconds: mailLifetime) {
                valid = true
                params.type = "signup"
            } else if isOTPValid(hash, expected: user.recoveryToken, sentAt: user.recoverySentAt, lifetimeSeconds: mailLifetime) {
                valid = true
                params.type = "magiclink"
            } else {
                valid = false
            }
        case "signup", "invite":
            valid = isOTPValid(hash, expected: user.confirmationToken, sentAt: user.confirmationSentAt, lifetimeSeconds: mailLifetime)
        case "recovery", "magiclink":
            valid = isOTPValid(hash, expected: user.recoveryToken, sentAt: user.recoverySentAt, lifetimeSeconds: mailLifetime)
        case "email_change":
            valid = isOTPValid(hash, expected: user.emailChangeTokenCurrent, sentAt: user.emailChangeSentAt, lifetimeSeconds: mailLifetime)
                || isOTPValid(hash, expected: user.emailChangeTokenNew, sentAt: user.emailChangeSentAt, lifetimeSeconds: mailLifetime)
        case "phone_change", "sms":
            // A fixed test code is accepted without its stored hash or expiry.
            if let fixed = config.sms.testOTP(for: params.phone, now: project.environment.now()), fixed == params.token { return user }
            let change = params.type == "phone_change"
            valid = isOTPValid(hash, expected: change ? user.phoneChangeToken : user.confirmationToken,
                               sentAt: change ? user.phoneChangeSentAt : user.confirmationSentAt,
                               lifetimeSeconds: config.sms.otpExpirySeconds)
        default:
            valid = false
        }
        guard valid else { throw invalid }
        return user
    }

    /// `FindUserForEmailChange`: by the current address's token first (secure change), then the
    /// new one's, each with or without the `pkce_` prefix.
    private func userForEmailChange(_ conn: Connection, email: String, tokenHash: String, aud: String) throws -> UserRecord? {
        let secure = api.snapshot.configuration.mailer.secureEmailChangeEnabled
        for (type, enabled) in [("email_change_token_current", secure), ("email_change_token_new", true)] where enabled {
            let owner = try conn.oneTimeTokenOwner(tokenHash: tokenHash, types: [type])
                ?? conn.oneTimeTokenOwner(tokenHash: "pkce_" + tokenHash, types: [type])
            guard let owner, let user = try conn.user(id: owner) else { continue }
            let address = type == "email_change_token_current" ? user.email : user.emailChange
            if user.aud != aud && (address ?? "").lowercased() == email.lowercased() { continue }
            return user
        }
        return nil
    }
}

import AuthHTTP
import AuthJSON
import AuthStore

/// `POST /token` (reference §5.6, §7.5-7.7). The grant type comes from the query string.
package struct TokenEndpoints: EndpointGroup {
    let api: Core

    package init(api: Core) { self.api = api }

    package static var endpoints: [Endpoint<Self>] {
        // No guard: which limiter applies (`Token` or `Web3`, or none for an unknown grant)
        // depends on the grant, so api.go applies it in the handler, as `token` does here.
        [Endpoint("POST", "/token", operation: TokenEndpoints.operation) { g, context in try g.token(context) }]
    }

    /// The route's operation; requests resolve to `token.<grant_type>`.
    static let operation = "token"

    /// The grant types the real server knows, in its order; each is an operation name
    /// `token.<grant>`.
    static let grants = ["password", "refresh_token", "id_token", "pkce", "web3"]

    static let limitedGrants: Set<String> = Set(grants)

    private var project: Project { api.project }
    private var config: Configuration { api.snapshot.configuration }

    func token(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        // api.Token: `r.FormValue("grant_type")`, a form body's before the query's; the limiter
        // runs once the grant is known (an unknown grant is a 400, never limited); web3 has its
        // own bucket, every other grant shares `Token`.
        let grant = context.request.formValue("grant_type")
        if TokenEndpoints.limitedGrants.contains(grant) { try api.rateLimit(grant == "web3" ? .web3 : .token, context) }
        var context = context
        // `ParseForm` consumed a form body: the grant's JSON parameters read an empty one.
        if context.request.hasFormBody { context.request.body = [] }
        switch grant {
        case "password": return try password(context)
        case "refresh_token": return try refresh(context)
        case "pkce": return try pkce(context)
        case "id_token": return try idToken(context)
        case "web3": return try web3(context)
        default: throw AuthError(400, .invalidCredentials, "unsupported_grant_type")
        }
    }

    // MARK: password grant (`ResourceOwnerPasswordGrant`)

    private func password(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let body = try RequestBody(context.request, as: "PasswordGrantParams")
        let email = try body.string("email") ?? ""
        var phone = try body.string("phone") ?? ""
        let password = try body.string("password") ?? ""
        let aud = api.requestAudience(context)
        if !email.isEmpty && !phone.isEmpty {
            throw AuthError(400, .validationFailed, "Only an email address or phone number should be provided on login.")
        }
        let provider: String
        if !email.isEmpty {
            provider = "email"
            guard config.external.emailEnabled else { throw AuthError(422, .emailProviderDisabled, "Email logins are disabled") }
        } else if !phone.isEmpty {
            provider = "phone"
            guard config.external.phoneEnabled else { throw AuthError(422, .phoneProviderDisabled, "Phone logins are disabled") }
            phone = Validation.formatPhone(phone)
        } else {
            throw AuthError(400, .validationFailed, "missing email or phone")
        }
        let invalid = AuthError(400, .invalidCredentials, "Invalid login credentials")
        // token.go: a lookup that fails other than "not found" (a row seeded by SQL with NULL
        // in a token column GoTrue cannot scan, auth#1940) is this 500.
        let found = try AuthError.whenDatabaseFails("Database error querying schema") {
            try project.database.read { conn in
                provider == "email" ? try conn.user(email: email, aud: aud) : try conn.user(phone: phone, aud: aud)
            }
        }
        guard let user = found, let hash = user.encryptedPassword, !hash.isEmpty else { throw invalid }
        if api.isBanned(user) { throw AuthError(400, .userBanned, "User is banned") }
        // Hashing outside any database lock.
        let valid = try Passwords.verify(password, against: hash)
        // The password-verification-attempt hook sees every attempt and may refuse it (and end
        // the user's sessions) whatever the password (token.go).
        if let decision = try Hooks(api: api, request: context.request).verificationAttempt(
            .passwordVerification, ["user_id": .string(user.id), "valid": .bool(valid)],
            defaultMessage: "Further password verification attempts will be rejected."), decision.rejected {
            if decision.logout { try api.write { conn in try conn.deleteSessions(userID: user.id) } }
            throw AuthError(400, .invalidCredentials, decision.message)
        }
        guard valid else { throw invalid }
        let weakness = try? Passwords(configuration: config, environment: project.environment).weakness(password)
        if provider == "email" && user.emailConfirmedAt == nil {
            throw AuthError(400, .emailNotConfirmed, "Email not confirmed")
        }
        if provider == "phone" && user.phoneConfirmedAt == nil {
            throw AuthError(400, .phoneNotConfirmed, "Phone not confirmed")
        }

        let (issued, userJSON) = try api.write { conn in
            // Re-read inside the transaction: another process may have changed the row.
            guard var current = try conn.user(id: user.id) else { throw invalid }
            try api.audit(conn, context, actor: current, action: .login,
                          traits: ["provider": .string(provider)])
            let issued = try Tokens(api: api).issueSession(conn, user: &current, method: "password", request: context.request)
            return (issued, Models.user(current, identities: try conn.identities(userID: current.id),
                                        factors: try conn.factors(userID: current.id)))
        }
        // The password grant always carries `weak_password`: null when the password passes the
        // current policy (a typed nil pointer in a Go interface is not omitted).
        var weakJSON: JSON = .null
        if let weakness, case .weakPassword(let reasons) = weakness.kind {
            weakJSON = ["message": .string(weakness.message), "reasons": .array(reasons.map { .string($0) })]
        }
        let response = issued.response(user: userJSON, extra: ["weak_password": weakJSON])
        return .json(.object(response), headers: issued.headers)
    }

    // MARK: refresh_token grant (`RefreshTokenGrant`)

    /// A presented refresh token that passed `RefreshTokenGrantParams.Validate`.
    enum PresentedRefreshToken {
        /// 12 characters of `[a-z0-9]`: a row of `refresh_tokens`.
        case legacy(String)
        /// The second format, parsed (its signature is checked once its session is read).
        case session(SessionRefreshToken)
    }

    /// `RefreshTokenGrantParams.Validate`: under 12 characters, 12 that are not `[a-z0-9]`, or a
    /// longer string that does not parse as the second format is refused before any lookup,
    /// whatever format the server issues.
    static func presentedRefreshToken(_ token: String) -> PresentedRefreshToken? {
        let bytes = token.utf8
        if bytes.count < 12 { return nil }
        if bytes.count == 12 {
            return bytes.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) } ? .legacy(token) : nil
        }
        return SessionRefreshToken.parse(token).map(PresentedRefreshToken.session)
    }

    private enum RefreshOutcome {
        case issued(RefreshIssue)
        /// Errors that still commit what was done (family revocation, a session ended for reuse,
        /// orphan token cleanup).
        case failed(AuthError)
    }

    /// What a successful rotation read and decided inside its transaction. The access token is
    /// signed and the user rendered only after the commit, from these values: the writer is
    /// serialized, so CPU spent inside the transaction caps every write of the server.
    private struct RefreshIssue {
        var refreshToken: String
        var sessionID: String
        var user: UserRecord
        var identities: [IdentityRecord]
        var factors: [FactorRecord]
        var aal: String
        /// `GOTRUE_SESSIONS_ALLOW_LOW_AAL`'s cap on the access token (microseconds).
        var lowAALDeadline: Int64?
        var amr: JSON
        /// The clock when the access token was minted (Unix seconds), as read in the transaction.
        var issuedAt: Int64
        /// The OAuth client and scopes of an OAuth server session (its tokens carry them).
        var oauthClientID: String?
        var scopes: String?
        /// The informational headers that depend on the path taken (§7.6).
        var headers = Tokens.RefreshTokenHeaders()
    }

    private func refresh(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let body = try RequestBody(context.request, as: "RefreshTokenGrantParams")
        let presented = try body.string("refresh_token") ?? ""
        let (issued, user) = try refreshGrant(context, presented: presented, clientID: nil)
        return .json(writer: issued.responseWriter(user: user), headers: issued.headers)
    }

    /// `RefreshTokenGrant`: the rotation shared by `/token?grant_type=refresh_token` and the OAuth
    /// server's token endpoint (`clientID`: the authenticated OAuth client, if any).
    func refreshGrant(_ context: RequestContext, presented: String, clientID: String?) throws(AuthError) -> (Tokens.Issued, Models.UserView) {
        guard let token = TokenEndpoints.presentedRefreshToken(presented) else {
            throw AuthError(400, .validationFailed, "Refresh token is not valid")
        }
        // One write transaction serializes concurrent refreshes of the same token (SQLite's
        // single writer, across processes too): the second sees the first's rotation. On
        // Postgres, another emulator process may hold the token's or the session's row: GoTrue's
        // row locks and retry loop (`RowLocks`) make the second wait for the first's rotation.
        let conflict = AuthError(409, .conflict, "Too many concurrent token refresh requests on the same session or refresh token")
        let outcome: RefreshOutcome = try RowLocks.write(api, exhausted: conflict) { conn in
            switch token {
            case .legacy(let presented): return try rotateLegacy(conn, context, presented: presented, clientID: clientID)
            case .session(let presented): return try rotateSession(conn, context, presented: presented, clientID: clientID)
            }
        }
        switch outcome {
        case .failed(let error):
            throw error
        case .issued(let done):
            let tokens = Tokens(api: api)
            let (access, expiresAt) = try tokens.accessToken(user: done.user, sessionID: done.sessionID, aal: done.aal,
                                                         amr: done.amr, issuedAt: done.issuedAt,
                                                         method: "token_refresh", request: context.request,
                                                         oauthClientID: done.oauthClientID, scopes: done.scopes,
                                                         lowAALDeadline: done.lowAALDeadline)
            var issued = Tokens.Issued(accessToken: access, expiresAt: expiresAt, refreshToken: done.refreshToken,
                                       sessionID: done.sessionID, userID: done.user.id, issuedAt: done.issuedAt)
            issued.refreshTokenHeaders = done.headers
            return (issued, Models.UserView(user: done.user, identities: done.identities, factors: done.factors))
        }
    }

    /// The checks both formats make once the session is known and the user found not banned, in
    /// GoTrue's order: session validity, the OAuth client, one session per user.
    private func admit(_ conn: Connection, user: UserRecord, session: SessionRecord, tokenUpdatedAt: Int64?,
                       clientID: String?, now: Timestamp) throws {
        let verifiedFactor = try hasVerifiedFactor(conn, user)
        if let problem = validityProblem(session, tokenUpdatedAt: tokenUpdatedAt, now: now, verifiedFactor: verifiedFactor) {
            throw problem
        }
        // An OAuth server session refreshes only through its own authenticated client, and
        // a client may refresh only its own sessions (tokens/service.go).
        if let owner = session.oauthClientID, !owner.isEmpty {
            guard let clientID else {
                throw AuthError.oauth("invalid_client", "Client authentication required for OAuth session")
            }
            if clientID != owner { throw AuthError.oauth("invalid_client", "Client does not match the session's OAuth client") }
        } else if clientID != nil {
            throw AuthError.oauth("invalid_client", "Client authentication not allowed for non-OAuth session")
        }
        if config.sessions.singlePerUser {
            let mine = lastRefreshed(session, tokenUpdatedAt: tokenUpdatedAt)
            // `FindAllSessionsForUser(tx, user.ID, true)`: the user's row is locked first.
            for other in try conn.sessions(userID: user.id, forUpdate: true) where other.id != session.id {
                if validityProblem(other, tokenUpdatedAt: nil, now: now, verifiedFactor: verifiedFactor) != nil { continue }
                if tag(other) != tag(session) { continue }
                if lastRefreshed(other, tokenUpdatedAt: nil) > mine {
                    throw AuthError(400, .sessionExpired, "Invalid Refresh Token: Session Expired (Revoked by Newer Login)")
                }
            }
        }
    }

    /// The 12-character format: the presented row is revoked and a child row issued, unless the
    /// client lost the last answer (its child comes back) or the reuse rules refuse it.
    private func rotateLegacy(_ conn: Connection, _ context: RequestContext, presented: String, clientID: String?) throws -> RefreshOutcome {
        let now = project.environment.now()
        // `findUserWithLegacyRefreshToken(tx, token, forUpdate: true)`: the token's row, then its
        // session's, are locked until the commit.
        guard let token = try conn.refreshToken(presented, forUpdate: true) else {
            throw AuthError(400, .refreshTokenNotFound, "Invalid Refresh Token: Refresh Token Not Found")
        }
        guard var user = try conn.user(id: token.userID) else {
            throw AuthError(400, .refreshTokenNotFound, "Invalid Refresh Token: Refresh Token Not Found")
        }
        if api.isBanned(user) { throw TokenEndpoints.naming(AuthError(400, .userBanned, "Invalid Refresh Token: User Banned"), user: user.id) }
        guard let sessionID = token.sessionID, let session = try conn.session(id: sessionID, forUpdate: true) else {
            try conn.deleteRefreshToken(id: token.id)
            return .failed(TokenEndpoints.naming(AuthError(400, .sessionNotFound, "Invalid Refresh Token: No Valid Session Found"),
                                                 user: user.id))
        }
        try TokenEndpoints.naming(user: user.id, session: session.id) {
            try admit(conn, user: user, session: session, tokenUpdatedAt: token.updatedAt, clientID: clientID, now: now)
        }

        var issuedToken: String?
        if token.revoked {
            if let active = try conn.activeRefreshToken(sessionID: session.id), active.parent == token.token {
                // The client lost the previous response: hand the same child out again.
                issuedToken = active.token
            } else {
                let reuseUntil = token.updatedAt + Int64(config.security.refreshTokenReuseInterval) * 1_000_000
                if now.microseconds > reuseUntil {
                    if config.security.refreshTokenRotationEnabled {
                        try conn.revokeRefreshTokens(sessionID: session.id, at: now.microseconds)
                    }
                    return .failed(TokenEndpoints.naming(AuthError(400, .refreshTokenAlreadyUsed, "Invalid Refresh Token: Already Used"),
                                                         user: user.id, session: session.id))
                }
            }
        }
        try api.audit(conn, context, actor: user, action: .tokenRefreshed)
        var headers = Tokens.RefreshTokenHeaders()
        if issuedToken == nil {
            // GrantRefreshTokenSwap: audit the revocation, revoke the presented token, issue its child.
            try api.audit(conn, context, actor: user, action: .tokenRevoked)
            let child = Tokens(api: api).newRefreshToken()
            // `UpdateOnly(token, "revoked")` stamps `updated_at` even on a token revoked
            // before (a reuse within the interval), so the reuse window runs from this swap.
            try conn.revokeRefreshToken(id: token.id, at: now.microseconds)
            let childID = try conn.insertRefreshToken(token: child, userID: user.id, sessionID: session.id, parent: token.token,
                                                      at: now.microseconds)
            // `createRefreshToken` ends with `UpdateLastSignInAt`: the column as it was, and pop's
            // `updated_at` stamp, which the answer's user shows too.
            user.updatedAt = now.microseconds
            try conn.updateUserLastSignIn(id: user.id, lastSignInAt: user.lastSignInAt, updatedAt: now.microseconds)
            issuedToken = child
            headers.notReused = true
            if shouldUpgrade(session.id) {
                // Version 2 with an upgrade share: this session moves to the second format. The
                // child just written is revoked and a signed token of the session issued instead.
                // A session without both key and counter is set up afresh (`SetupRefreshTokenData`);
                // one that has them moves its counter on.
                let key: (stored: String, bytes: [UInt8])
                let next: Int64
                if let state = SessionRefreshToken.state(of: session) {
                    (key, next) = ((state.stored, state.key), state.counter + 1)
                } else {
                    (key, next) = (SessionRefreshToken.newKey(project.environment), 0)
                }
                try conn.updateSessionRefreshTokenState(id: session.id, hmacKey: key.stored, counter: next)
                try conn.revokeRefreshToken(id: childID, at: now.microseconds)
                issuedToken = SessionRefreshToken(sessionID: session.id, counter: next).encoded(key: key.bytes)
                headers.counter = next
                headers.upgraded = true
            }
        }
        try conn.updateSessionRefresh(id: session.id, refreshedAt: now.microseconds, updatedAt: now.microseconds,
                                      userAgent: context.request.headers["User-Agent"], ip: api.clientIP(context))
        var issue = try issue(conn, user: user, session: session, refreshToken: issuedToken!)
        issue.headers = headers
        return .issued(issue)
    }

    /// `GOTRUE_SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE`: a share of sessions, not of requests,
    /// so a session chosen once stays chosen. GoTrue draws from Go's `math/rand` seeded with the
    /// session id's CRC-32; here the first four bytes of its SHA-256 decide, so the share is the
    /// same but not necessarily the same sessions.
    private func shouldUpgrade(_ sessionID: String) -> Bool {
        let share = config.security.refreshTokenUpgradePercentage
        guard config.security.refreshTokenAlgorithmVersion == 2, share > 0 else { return false }
        if share >= 100 { return true }
        return SessionRefreshToken.upgradeDraw(sessionID) < share
    }

    /// The second format (reference §7.6, `RefreshTokenGrant`'s `crypto.RefreshToken` branch):
    /// the session's counter says whether the token is its newest (rotate: counter + 1), one
    /// behind or within the reuse interval (answer the current token again), or older (the
    /// session ends when rotation is on).
    private func rotateSession(_ conn: Connection, _ context: RequestContext, presented: SessionRefreshToken,
                               clientID: String?) throws -> RefreshOutcome {
        let now = project.environment.now()
        let notFound = AuthError(400, .refreshTokenNotFound, "Invalid Refresh Token: Refresh Token Not Found")
        // `findUserWithRefreshToken(tx, token, forUpdate: true)`: the session's row is locked
        // until the commit. A session without the format's state, or a signature that its key
        // does not give, is a token that does not exist.
        guard let session = try conn.session(id: presented.sessionID, forUpdate: true), let state = SessionRefreshToken.state(of: session),
              presented.isSigned(with: state.key) else { throw notFound }
        guard let user = try conn.user(id: session.userID) else { throw notFound }
        if api.isBanned(user) { throw TokenEndpoints.naming(AuthError(400, .userBanned, "Invalid Refresh Token: User Banned"), user: user.id) }
        try TokenEndpoints.naming(user: user.id, session: session.id) {
            try admit(conn, user: user, session: session, tokenUpdatedAt: nil, clientID: clientID, now: now)
        }

        let current = state.counter
        let behind = current - presented.counter
        var counter = current
        var headers = Tokens.RefreshTokenHeaders()
        if behind < 0 {
            throw AuthError(400, .validationFailed, "Invalid Refresh Token: Not Issued By This Server")
        } else if behind == 0 {
            counter = current + 1
            headers.notReused = true
        } else {
            // The client did not store the last answer (one behind), or several tabs refreshed
            // at once (within the reuse interval of the session's last refresh).
            let notSaved = behind == 1
            let interval = Int64(config.security.refreshTokenReuseInterval) * 1_000_000
            let concurrent = abs(now.microseconds - lastRefreshed(session, tokenUpdatedAt: nil)) < interval
            var causes: [String] = []
            if concurrent { causes.append("concurrent-refresh") }
            if notSaved { causes.append("fail-to-save") }
            if config.security.refreshTokenAllowReuse { causes.append("always-allow") }
            if causes.isEmpty {
                var failure = HTTPHeaders()
                failure["sb-auth-user-id"] = user.id
                failure["sb-auth-session-id"] = session.id
                if config.security.refreshTokenRotationEnabled {
                    // The whole session goes, so no token of it, old or new, refreshes again.
                    try conn.deleteSession(id: session.id)
                    failure["sb-auth-refresh-token-rotated"] = "true"
                }
                return .failed(AuthError(400, .refreshTokenAlreadyUsed, "Invalid Refresh Token: Already Used", headers: failure))
            }
            headers.reuseCause = causes.joined(separator: ",")
        }
        try conn.updateSessionRefresh(id: session.id, counter: counter, refreshedAt: now.microseconds,
                                      userAgent: context.request.headers["User-Agent"], ip: api.clientIP(context))
        try api.audit(conn, context, actor: user, action: .tokenRefreshed)
        var issue = try issue(conn, user: user, session: session,
                              refreshToken: SessionRefreshToken(sessionID: session.id, counter: counter).encoded(key: state.key))
        headers.counter = counter
        issue.headers = headers
        return .issued(issue)
    }

    /// `RefreshTokenGrant` sets `sb-auth-user-id` once the user is found and
    /// `sb-auth-session-id` once the session is, on the response writer: the errors after
    /// those points carry them too.
    static func naming(_ error: AuthError, user: String, session: String? = nil) -> AuthError {
        var named = error
        named.headers["sb-auth-user-id"] = user
        if let session { named.headers["sb-auth-session-id"] = session }
        return named
    }

    static func naming<T>(user: String, session: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as AuthError {
            throw naming(error, user: user, session: session)
        }
    }

    /// What the access token and the response need, read inside the transaction.
    private func issue(_ conn: Connection, user: UserRecord, session: SessionRecord, refreshToken: String) throws -> RefreshIssue {
        let (aal, amr) = try Tokens(api: api).assurance(conn, sessionID: session.id)
        let issuedAt = project.environment.now().unixSeconds
        let factors = try conn.factors(userID: user.id)
        let lowAALDeadline = config.sessions.lowAALDeadline(createdAt: session.createdAt, aal: aal,
                                                            userHasVerifiedFactor: factors.contains { $0.status == "verified" })
        return RefreshIssue(refreshToken: refreshToken, sessionID: session.id, user: user,
                            identities: try conn.identities(userID: user.id),
                            factors: factors, aal: aal, lowAALDeadline: lowAALDeadline, amr: amr, issuedAt: issuedAt,
                            oauthClientID: session.oauthClientID, scopes: session.scopes)
    }

    /// `Session.LastRefreshedAt`: the last refresh, else the refresh token's time, else creation.
    private func lastRefreshed(_ s: SessionRecord, tokenUpdatedAt: Int64?) -> Int64 {
        s.refreshedAt ?? tokenUpdatedAt ?? s.createdAt
    }

    private func tag(_ s: SessionRecord) -> String {
        guard let tag = s.tag, config.sessions.tags.contains(tag) else { return "" }
        return tag
    }

    /// `Session.CheckValidity` for the timebox, `not_after` and inactivity rules (reference §7.7).
    private func validityProblem(_ s: SessionRecord, tokenUpdatedAt: Int64?, now: Timestamp, verifiedFactor: Bool) -> AuthError? {
        let expired = AuthError(400, .sessionExpired, "Invalid Refresh Token: Session Expired")
        if let notAfter = s.notAfter, now.microseconds > notAfter { return expired }
        if let timebox = config.sessions.timeboxSeconds, timebox > 0,
           now.microseconds > s.createdAt + Int64(timebox * 1_000_000) {
            return expired
        }
        if let timeout = config.sessions.inactivityTimeoutSeconds, timeout > 0,
           now.microseconds > lastRefreshed(s, tokenUpdatedAt: tokenUpdatedAt) + Int64(timeout * 1_000_000) {
            return AuthError(400, .sessionExpired, "Invalid Refresh Token: Session Expired (Inactivity)")
        }
        if let deadline = config.sessions.lowAALDeadline(createdAt: s.createdAt, aal: s.aal, userHasVerifiedFactor: verifiedFactor),
           now.microseconds > deadline {
            return AuthError(400, .sessionExpired, "Invalid Refresh Token: Session Expired (Low AAL: User Needs MFA Verification)")
        }
        return nil
    }

    /// `HighestPossibleAAL` is aal2: the user has a verified factor. Read only when
    /// `GOTRUE_SESSIONS_ALLOW_LOW_AAL` is set, the one rule that asks.
    private func hasVerifiedFactor(_ conn: Connection, _ user: UserRecord) throws -> Bool {
        guard config.sessions.allowLowAALSeconds != nil else { return false }
        return try conn.factors(userID: user.id).contains { $0.status == "verified" }
    }
}

import AuthHTTP
import AuthJSON
import AuthStore

/// `POST /token` (reference §5.6, §7.5-7.7). The grant type comes from the query string.
struct TokenEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [Endpoint("POST", "/token", operation: TokenEndpoints.operation) { g, context in try g.token(context) }]
    }

    /// The route's operation; requests resolve to `token.<grant_type>`.
    static let operation = "token"

    /// The grant types the real server knows (`web3` answers as disabled here), in its order;
    /// each is an operation name `token.<grant>`.
    static let grants = ["password", "refresh_token", "id_token", "pkce", "web3"]

    static let limitedGrants: Set<String> = Set(grants)

    private var project: Project { api.project }
    private var config: Configuration { api.config }

    func token(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        // api.Token: the limiter runs once the grant is known (an unknown grant is a 400, never
        // limited); web3 has its own bucket, every other grant shares `Token`.
        let grant = context.request.queryValue("grant_type") ?? ""
        if TokenEndpoints.limitedGrants.contains(grant) { try api.rateLimit(grant == "web3" ? .web3 : .token, context) }
        switch context.request.queryValue("grant_type") ?? "" {
        case "password": return try password(context)
        case "refresh_token": return try refresh(context)
        case "pkce": return try pkce(context)
        case "id_token": return try idToken(context)
        // `Web3Grant`: the emulator has no Solana or Ethereum sign-in, which the real server
        // also refuses while both are disabled (its default), before reading the body.
        case "web3": throw AuthError(422, .web3ProviderDisabled, "Web3 provider is disabled")
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
        let found = try api.read { conn in
            provider == "email" ? try conn.user(email: email, aud: aud) : try conn.user(phone: phone, aud: aud)
        }
        guard let user = found, let hash = user.encryptedPassword, !hash.isEmpty else { throw invalid }
        if api.isBanned(user) { throw AuthError(400, .userBanned, "User is banned") }
        // PBKDF2 outside any database lock.
        let valid = Passwords.verify(password, against: hash)
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
            try api.audit(conn, context, actor: current, action: "login", logType: "account",
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

    /// `RefreshTokenGrantParams.Validate`: legacy tokens are exactly 12 `[a-z0-9]`; longer tokens
    /// would be the v2 format, which this emulator does not issue.
    static func isWellFormedRefreshToken(_ token: String) -> Bool {
        let bytes = Array(token.utf8)
        return bytes.count == 12 && bytes.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) }
    }

    private enum RefreshOutcome {
        case issued(RefreshIssue)
        /// Errors that still commit what was done (family revocation, orphan token cleanup).
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
        var amr: JSON
        /// The clock when the access token was minted (Unix seconds), as read in the transaction.
        var issuedAt: Int64
        /// The OAuth client and scopes of an OAuth server session (its tokens carry them).
        var oauthClientID: String?
        var scopes: String?
    }

    private func refresh(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let body = try RequestBody(context.request, as: "RefreshTokenGrantParams")
        let presented = try body.string("refresh_token") ?? ""
        let (issued, user) = try refreshGrant(context, presented: presented, clientID: nil)
        return .json(.object(issued.response(user: user)), headers: issued.headers)
    }

    /// `RefreshTokenGrant`: the rotation shared by `/token?grant_type=refresh_token` and the OAuth
    /// server's token endpoint (`clientID`: the authenticated OAuth client, if any).
    func refreshGrant(_ context: RequestContext, presented: String, clientID: String?) throws(AuthError) -> (Tokens.Issued, JSON) {
        guard TokenEndpoints.isWellFormedRefreshToken(presented) else {
            throw AuthError(400, .validationFailed, "Refresh token is not valid")
        }
        let tokens = Tokens(api: api)
        // One write transaction serializes concurrent refreshes of the same token (SQLite's
        // single writer, across processes too): the second sees the first's rotation and gets
        // the same child back, as GoTrue's row lock + "lost response" rule give.
        let outcome: RefreshOutcome = try api.write { conn in
            let now = project.environment.now()
            guard let token = try conn.refreshToken(presented) else {
                throw AuthError(400, .refreshTokenNotFound, "Invalid Refresh Token: Refresh Token Not Found")
            }
            guard let user = try conn.user(id: token.userID) else {
                throw AuthError(400, .refreshTokenNotFound, "Invalid Refresh Token: Refresh Token Not Found")
            }
            if api.isBanned(user) { throw AuthError(400, .userBanned, "Invalid Refresh Token: User Banned") }
            guard let sessionID = token.sessionID, let session = try conn.session(id: sessionID) else {
                try conn.deleteRefreshToken(id: token.id)
                return .failed(AuthError(400, .sessionNotFound, "Invalid Refresh Token: No Valid Session Found"))
            }
            if let problem = validityProblem(session, tokenUpdatedAt: token.updatedAt, now: now) { throw problem }
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
                let mine = lastRefreshed(session, tokenUpdatedAt: token.updatedAt)
                for other in try conn.sessions(userID: user.id) where other.id != session.id {
                    if validityProblem(other, tokenUpdatedAt: nil, now: now) != nil { continue }
                    if tag(other) != tag(session) { continue }
                    if lastRefreshed(other, tokenUpdatedAt: nil) > mine {
                        throw AuthError(400, .sessionExpired, "Invalid Refresh Token: Session Expired (Revoked by Newer Login)")
                    }
                }
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
                        return .failed(AuthError(400, .refreshTokenAlreadyUsed, "Invalid Refresh Token: Already Used"))
                    }
                }
            }
            try api.audit(conn, context, actor: user, action: "token_refreshed", logType: "token")
            if issuedToken == nil {
                // GrantRefreshTokenSwap: revoke the presented token, issue its child.
                let child = tokens.newRefreshToken()
                if !token.revoked { try conn.revokeRefreshToken(id: token.id, at: now.microseconds) }
                try conn.insertRefreshToken(token: child, userID: user.id, sessionID: session.id, parent: token.token,
                                            at: now.microseconds)
                issuedToken = child
            }
            let (aal, amr) = try tokens.assurance(conn, sessionID: session.id)
            let issuedAt = project.environment.now().unixSeconds
            try conn.updateSessionRefresh(id: session.id, refreshedAt: now.microseconds, updatedAt: now.microseconds,
                                          userAgent: context.request.headers["User-Agent"],
                                          ip: context.request.remoteAddress)
            return .issued(RefreshIssue(refreshToken: issuedToken!, sessionID: session.id, user: user,
                                        identities: try conn.identities(userID: user.id),
                                        factors: try conn.factors(userID: user.id), aal: aal, amr: amr, issuedAt: issuedAt,
                                        oauthClientID: session.oauthClientID, scopes: session.scopes))
        }
        switch outcome {
        case .failed(let error):
            throw error
        case .issued(let done):
            let (access, expiresAt) = try tokens.accessToken(user: done.user, sessionID: done.sessionID, aal: done.aal,
                                                         amr: done.amr, issuedAt: done.issuedAt,
                                                         method: "token_refresh", request: context.request,
                                                         oauthClientID: done.oauthClientID, scopes: done.scopes)
            let issued = Tokens.Issued(accessToken: access, expiresAt: expiresAt, refreshToken: done.refreshToken,
                                       sessionID: done.sessionID, userID: done.user.id, issuedAt: done.issuedAt)
            return (issued, Models.user(done.user, identities: done.identities, factors: done.factors))
        }
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
    private func validityProblem(_ s: SessionRecord, tokenUpdatedAt: Int64?, now: Timestamp) -> AuthError? {
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
        return nil
    }
}

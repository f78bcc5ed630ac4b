import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore
import GoFormats

/// Access tokens, refresh tokens and sessions (reference §7, `internal/tokens/service.go`).
package struct Tokens {
    let api: Core
    var project: Project { api.project }
    var configuration: Configuration { api.snapshot.configuration }

    package init(api: Core) {
        self.api = api
    }

    /// A legacy-format refresh token: 12 characters of lowercase base32 (`a-z`, `2-7`).
    func newRefreshToken() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)
        // 32 symbols: the low five bits of a random byte are uniform.
        let bytes = project.environment.randomBytes(12)
        return String(decoding: bytes.map { alphabet[Int($0 & 31)] }, as: UTF8.self)
    }

    /// AAL and AMR of a session from its recorded authentication methods, most recent first.
    package func assurance(_ conn: Connection, sessionID: String) throws -> (aal: String, amr: JSON) {
        let claims = try conn.amrClaims(sessionID: sessionID)
        // The second factors, by comparison rather than a Set built (and hashed into) on every
        // refresh.
        let secondFactor = claims.contains { claim in
            switch claim.method {
            case "totp", "mfa/phone", "mfa/webauthn": return true
            default: return false
            }
        }
        let aal = secondFactor ? "aal2" : "aal1"
        let amr = JSON.array(claims.map { claim in
            ["method": .string(claim.method), "timestamp": .number(Timestamp(microseconds: claim.updatedAt).unixSeconds)]
        })
        return (aal, amr)
    }

    /// Mints an access token from values already read (`assurance` and the clock), so a caller
    /// can read them inside its write transaction and sign after the commit, keeping the
    /// claims building and the MAC out of the serialized writer.
    /// With the custom access token hook on, the hook sees these claims and its answer is what
    /// is signed (`GenerateAccessToken`), keys in Go's map order.
    /// `lowAALDeadline` (`SessionSettings.lowAALDeadline`, microseconds): a session below the
    /// user's highest level gets no token that outlives its allowance.
    func accessToken(user: UserRecord, sessionID: String, aal: String, amr: JSON, issuedAt: Int64, method: String,
                     request: HTTPRequest?, oauthClientID: String? = nil, scopes: String? = nil, lowAALDeadline: Int64? = nil)
        throws(AuthError) -> (token: String, expiresAt: Int64)
    {
        var expiresAt = issuedAt + Int64(configuration.jwt.expirySeconds)
        if let deadline = lowAALDeadline {
            expiresAt = min(expiresAt, Timestamp(microseconds: deadline).unixSeconds)
        }
        let claims = Claims(user: user, sessionID: sessionID, aal: aal, amr: amr, issuedAt: issuedAt, expiresAt: expiresAt,
                            issuer: configuration.jwt.issuer, oauthClientID: oauthClientID, scopes: scopes)
        if configuration.hooks.customAccessToken.callable {
            var tree = JSONTreeBuilder()
            claims.write(to: &tree)
            let custom = try Hooks(api: api, request: request).customizeAccessToken(userID: user.id, claims: tree.result!.objectValue!,
                                                                                    method: method)
            return (JWTSigner.sign(claims: custom.sortedRecursively(), key: configuration.jwt.signingKey), expiresAt)
        }
        // Without a hook to show them to, the claims go straight to bytes.
        var writer = JSONByteWriter(reservingCapacity: 1024)
        claims.write(to: &writer)
        return (JWTSigner.sign(payload: writer.bytes, key: configuration.jwt.signingKey), expiresAt)
    }

    /// `AccessTokenClaims`, in its field order.
    struct Claims {
        let user: UserRecord
        let sessionID: String
        let aal: String
        let amr: JSON
        let issuedAt: Int64
        let expiresAt: Int64
        let issuer: String
        let oauthClientID: String?
        let scopes: String?

        func write<Output: JSONOutput>(to o: inout Output) {
            o.beginObject(reservingCapacity: 16)
            if !issuer.isEmpty { o.member("iss", issuer) }
            o.member("sub", user.id)
            o.member("aud", user.aud)
            o.member("exp", .number(expiresAt))
            o.member("iat", .number(issuedAt))
            o.member("email", user.email ?? "")
            o.member("phone", user.phone ?? "")
            Models.metadata("app_metadata", user.appMetadata, &o)
            Models.metadata("user_metadata", user.userMetadata, &o)
            o.member("role", user.role)
            o.member("aal", aal)
            o.member("amr", amr)
            o.member("session_id", sessionID)
            o.member("is_anonymous", user.isAnonymous)
            // An OAuth server session's tokens name their client and scopes (`client_id`,
            // `scope`, both omitempty in the claims struct).
            if let oauthClientID, !oauthClientID.isEmpty { o.member("client_id", oauthClientID) }
            if let scopes, !scopes.isEmpty { o.member("scope", scopes) }
            o.endObject()
        }
    }

    /// `IssueRefreshToken`: a new session with its first refresh token and AMR entry, the user's
    /// `last_sign_in_at` updated. Runs inside the caller's write transaction.
    package func issueSession(_ conn: Connection, user: inout UserRecord, method: String, request: HTTPRequest,
                      oauthClientID: String? = nil, scopes: String? = nil) throws -> Issued {
        let now = project.environment.now().microseconds
        user.lastSignInAt = now
        user.updatedAt = now
        // Only these two columns: callers have written any other change of `user` already.
        try conn.updateUserLastSignIn(id: user.id, lastSignInAt: now, updatedAt: now)

        var session = SessionRecord(id: project.environment.uuid(), userID: user.id, at: now)
        session.userAgent = request.headers["User-Agent"]
        // `FillGrantParams`: `utilities.GetIPAddress`, forwarding headers included.
        session.ip = api.clientIP(request)
        session.oauthClientID = oauthClientID
        session.scopes = scopes
        let refreshToken: String
        var counter: Int64?
        if configuration.security.refreshTokenAlgorithmVersion == 2 {
            // `SetupRefreshTokenData`: the session's own key and counter 0; no token row.
            let key = SessionRefreshToken.newKey(project.environment)
            session.refreshTokenHMACKey = key.stored
            session.refreshTokenCounter = 0
            try conn.insertSession(session)
            refreshToken = SessionRefreshToken(sessionID: session.id, counter: 0).encoded(key: key.bytes)
            counter = 0
        } else {
            try conn.insertSession(session)
            refreshToken = newRefreshToken()
            try conn.insertRefreshToken(token: refreshToken, userID: user.id, sessionID: session.id, parent: nil, at: now)
        }
        try conn.addAMRClaim(id: project.environment.uuid(), sessionID: session.id, method: method, at: now)
        // `GenerateAccessToken`: one reading of the clock gives both `iat` and `exp`.
        let (aal, amr) = try assurance(conn, sessionID: session.id)
        let issuedAt = project.environment.now().unixSeconds
        // The factors are read only when `GOTRUE_SESSIONS_ALLOW_LOW_AAL` can cap the token.
        var lowAALDeadline: Int64?
        if configuration.sessions.allowLowAALSeconds != nil && aal != "aal2" {
            let verified = try conn.factors(userID: user.id).contains { $0.status == "verified" }
            lowAALDeadline = configuration.sessions.lowAALDeadline(createdAt: session.createdAt, aal: aal, userHasVerifiedFactor: verified)
        }
        let (token, expiresAt) = try accessToken(user: user, sessionID: session.id, aal: aal, amr: amr, issuedAt: issuedAt,
                                                 method: method, request: request, oauthClientID: oauthClientID, scopes: scopes,
                                                 lowAALDeadline: lowAALDeadline)
        var issued = Issued(accessToken: token, expiresAt: expiresAt, refreshToken: refreshToken, sessionID: session.id,
                            userID: user.id, issuedAt: issuedAt)
        issued.refreshTokenHeaders.counter = counter
        return issued
    }

    package struct Issued {
        package var accessToken: String
        package var expiresAt: Int64
        var refreshToken: String
        package var sessionID: String
        var userID: String
        /// The token's `iat`, read from the clock once with `exp`.
        package var issuedAt: Int64
        var refreshTokenHeaders = RefreshTokenHeaders()

        /// `expires_in`: the token's lifetime, `exp - iat`. The real server computes
        /// `expiresAt - now` after its transaction (`IssueRefreshToken`, `RefreshTokenGrant`,
        /// `updateMFASessionAndClaims`), which is this value unless a second boundary passes in
        /// between; taking it from the token itself makes it the configured `GOTRUE_JWT_EXP`
        /// every time, never 3599.
        var expiresIn: Int64 { expiresAt - issuedAt }

        /// `AccessTokenResponse` (reference §3.4) around the user's JSON.
        package func response(user: JSON, extra: JSONObject = [:]) -> JSONObject {
            var tree = JSONTreeBuilder()
            write(to: &tree, extra: extra) { $0.value(user) }
            return tree.result!.objectValue!
        }

        /// `response` as bytes, the user written in place: the refresh grant's answer, without
        /// building the tree.
        func responseWriter(user: Models.UserView) -> JSONByteWriter {
            var writer = JSONByteWriter(reservingCapacity: JSON.goJSONCapacity)
            write(to: &writer, extra: [:]) { user.write(to: &$0) }
            return writer
        }

        /// The one description of the response's members. `extra` holds what GoTrue's handlers
        /// add after `user` (`weak_password`, `provider_token`, `provider_refresh_token`), never
        /// one of the keys above.
        private func write<Output: JSONOutput>(to o: inout Output, extra: JSONObject, user: (inout Output) -> Void) {
            o.beginObject(reservingCapacity: 6 + extra.count)
            o.member("access_token", accessToken)
            o.member("token_type", "bearer")
            o.member("expires_in", .number(expiresIn))
            o.member("expires_at", .number(expiresAt))
            o.member("refresh_token", refreshToken)
            o.key("user")
            user(&o)
            for (key, value) in extra { o.member(key, value) }
            o.endObject()
        }

        /// `AccessTokenResponse.AsRedirectURL`: the session in a redirect's fragment, `sb` last
        /// but for `type` (which only the verify redirect adds). `leading` goes first: the
        /// provider's tokens of an implicit OAuth callback.
        func redirectFragment(leading: [QueryItem] = [], trailing: [QueryItem] = []) -> String {
            GoURL.encode(leading + [
                QueryItem(name: "access_token", value: accessToken),
                QueryItem(name: "token_type", value: "bearer"),
                QueryItem(name: "expires_in", value: String(expiresIn)),
                QueryItem(name: "expires_at", value: String(expiresAt)),
                QueryItem(name: "refresh_token", value: refreshToken),
                QueryItem(name: "sb", value: ""),
            ] + trailing)
        }

        /// The informational headers the real server adds on issuance (§7.6).
        package var headers: HTTPHeaders {
            var h = HTTPHeaders()
            h["sb-auth-user-id"] = userID
            h["sb-auth-session-id"] = sessionID
            let notes = refreshTokenHeaders
            if let counter = notes.counter { h["sb-auth-refresh-token-counter"] = String(counter) }
            if notes.counter == nil || notes.upgraded { h["sb-auth-refresh-token-prefix"] = String(refreshToken.prefix(5)) }
            if notes.notReused { h["sb-auth-refresh-token-reuse"] = "false" }
            if let cause = notes.reuseCause { h["sb-auth-refresh-token-reuse-cause"] = cause }
            return h
        }
    }

    /// What the informational headers say about the refresh token handed out (§7.6).
    struct RefreshTokenHeaders {
        /// The counter of a second-format token (`sb-auth-refresh-token-counter`), which
        /// replaces the 12-character format's prefix header.
        var counter: Int64?
        /// A new token was minted (`sb-auth-refresh-token-reuse: false`; GoTrue never sends true).
        var notReused = false
        /// Why an older token was answered with the current one (`-reuse-cause`).
        var reuseCause: String?
        /// A 12-character token just swapped for the second format: GoTrue sends the new
        /// token's prefix as well as its counter.
        var upgraded = false
    }
}

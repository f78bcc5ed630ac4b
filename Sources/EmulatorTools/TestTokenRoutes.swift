import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore
import GoTrue

/// `POST /emulator/v1/token`: mints an access token without a sign-in flow.
///
/// Body: `{"user_id": "<uuid>"}` or `{"email": "..."}`, optionally `"role"` (default: the user's
/// role), `"claims"` (merged over the standard claims, so any of them can be overridden) and
/// `"expires_in"` (seconds, default `GOTRUE_JWT_EXP`; zero or negative mints an already expired
/// token). The token belongs to a real new session (with a refresh token, recorded as a
/// `password` sign-in), so `/user`, refresh and logout accept it; the answer is the token
/// grant's `{access_token, token_type, expires_in, expires_at, refresh_token, user}`.
///
/// Without a user, a `role` alone mints a key-like token (`{"iss": "supabase-demo", "role",
/// "iat", "exp"}`, as the anon and service_role keys are made), answered as
/// `{access_token, token_type, expires_in, expires_at}`.
struct TestTokenEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [Endpoint("POST", GoTrueAPI.emulatorPrefix + "/token", operation: "emulator.token") { g, context in try g.mint(context) }]
    }

    private var project: Project { api.project }

    func mint(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let fields = try ControlFields(context.request, allowed: ["user_id", "email", "role", "claims", "expires_in"])
        let config = api.snapshot.configuration
        let expiresIn = try fields.expiresIn(default: Int64(config.jwt.expirySeconds))
        let extra = try fields.object("claims") ?? JSONObject()
        let role = try fields.nonEmptyString("role")
        let userID = try fields.nonEmptyString("user_id")
        let email = try fields.nonEmptyString("email")
        if userID != nil && email != nil { throw ControlRequest.invalid("give \"user_id\" or \"email\", not both") }
        let now = project.environment.now()

        guard userID != nil || email != nil else {
            guard let role else {
                throw ControlRequest.invalid("\"user_id\" or \"email\" is required (or a \"role\" alone for a key-like token)")
            }
            var claims = TestTokens.keyClaims(role: role, issuedAt: now, expiresIn: expiresIn)
            for (key, value) in extra { claims[key] = value }
            let token = JWTSigner.sign(claims: claims, key: config.jwt.signingKey)
            let expiresAt = claims["exp"]?.int64Value ?? now.unixSeconds + expiresIn
            return .json(["access_token": .string(token), "token_type": "bearer",
                          "expires_in": .number(expiresAt - now.unixSeconds), "expires_at": .number(expiresAt)])
        }

        var lookupID: String?
        if let userID {
            guard let id = AdminEndpoints.canonicalUUID(userID) else { throw ControlRequest.invalid("\"user_id\" must be a UUID") }
            lookupID = id
        }
        let aud = config.jwt.audience
        let (issued, userJSON, token, expiresAt) = try api.write { [lookupID] conn in
            let found: UserRecord?
            if let lookupID { found = try conn.user(id: lookupID) } else { found = try conn.user(email: email ?? "", aud: aud) }
            guard var user = found else { throw AuthError(404, .userNotFound, "User not found") }
            let tokens = Tokens(api: api)
            let issued = try tokens.issueSession(conn, user: &user, method: "password", request: context.request)
            let (aal, amr) = try tokens.assurance(conn, sessionID: issued.sessionID)
            var claims = TestTokens.userClaims(user: user, role: role ?? user.role, issuer: config.jwt.issuer,
                                               issuedAt: now, expiresIn: expiresIn)
            claims["aal"] = .string(aal)
            claims["amr"] = amr
            claims["session_id"] = .string(issued.sessionID)
            claims["is_anonymous"] = .bool(user.isAnonymous)
            for (key, value) in extra { claims[key] = value }
            let token = JWTSigner.sign(claims: claims, key: config.jwt.signingKey)
            let expiresAt = claims["exp"]?.int64Value ?? now.unixSeconds + expiresIn
            return (issued, Models.user(user, identities: try conn.identities(userID: user.id), factors: try conn.factors(userID: user.id)), token, expiresAt)
        }
        var minted = issued
        minted.accessToken = token
        minted.expiresAt = expiresAt
        minted.issuedAt = now.unixSeconds
        return .json(.object(minted.response(user: userJSON)), headers: minted.headers)
    }
}

/// Test tokens minted without a running server (`auth-emulator token`) or by the control route.
public enum TestTokens {
    /// The claims of an API key (`APIKeys.standard`): without an expiry the well-known keys'
    /// fixed `exp`, so `--role anon` reproduces the project's anon key.
    static func keyClaims(role: String, issuedAt: Timestamp, expiresIn: Int64?) -> JSONObject {
        var claims: JSONObject = ["iss": "supabase-demo", "role": .string(role)]
        if let expiresIn {
            claims["iat"] = .number(issuedAt.unixSeconds)
            claims["exp"] = .number(issuedAt.unixSeconds + expiresIn)
        } else {
            claims["exp"] = 1_983_812_996
        }
        return claims
    }

    /// A user's claims in the order `GenerateAccessToken` writes them (session claims are the
    /// caller's to add).
    static func userClaims(user: UserRecord, role: String, issuer: String, issuedAt: Timestamp, expiresIn: Int64) -> JSONObject {
        var claims = JSONObject()
        if !issuer.isEmpty { claims["iss"] = .string(issuer) }
        claims["sub"] = .string(user.id)
        claims["aud"] = .string(user.aud)
        claims["exp"] = .number(issuedAt.unixSeconds + expiresIn)
        claims["iat"] = .number(issuedAt.unixSeconds)
        claims["email"] = .string(user.email ?? "")
        claims["phone"] = .string(user.phone ?? "")
        claims["app_metadata"] = .object(Models.sortedObject(user.appMetadata))
        claims["user_metadata"] = .object(Models.sortedObject(user.userMetadata))
        claims["role"] = .string(role)
        return claims
    }

    /// An API-key-like token for `role` (`anon`, `service_role`, ...), signed with the
    /// configuration's key. `expiresIn` nil gives the well-known keys' fixed expiry.
    public static func keyToken(role: String, configuration: Configuration, now: Timestamp, expiresIn: Int64?) -> String {
        JWTSigner.sign(claims: keyClaims(role: role, issuedAt: now, expiresIn: expiresIn), key: configuration.jwt.roleTokenKey)
    }

    /// A user token without a session (no `session_id`): GoTrue accepts it on `/user` as long as
    /// the user `userID` exists, but it cannot be refreshed.
    public static func userToken(userID: String, email: String?, role: String, configuration: Configuration,
                                 now: Timestamp, expiresIn: Int64?) -> String {
        var user = UserRecord(id: userID, createdAt: now.microseconds)
        user.aud = configuration.jwt.audience
        user.email = email
        var claims = userClaims(user: user, role: role, issuer: configuration.jwt.issuer, issuedAt: now,
                                expiresIn: expiresIn ?? Int64(configuration.jwt.expirySeconds))
        claims["aal"] = "aal1"
        claims["amr"] = .array([])
        claims["is_anonymous"] = false
        return JWTSigner.sign(claims: claims, key: configuration.jwt.signingKey)
    }
}

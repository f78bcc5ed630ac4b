import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore

/// PKCE flow states (RFC 7636; reference §10.6, pkce.go and models/flow_state.go).
enum FlowStates {
    /// `AuthenticationMethod` names the flows store and the session's AMR entry carries.
    static let emailSignup = "email/signup"
    static let magicLink = "magiclink"
    static let recovery = "recovery"
    static let invite = "invite"
    static let emailChange = "email_change"
    static let oauth = "oauth"

    /// `ParseAuthenticationMethod`: anything ending in `signup` is an email sign-up; the other
    /// methods by name (a verification then refuses the ones that are no verification type).
    static func authenticationMethod(forVerifyType type: String) -> String? {
        if type.hasSuffix("signup") { return emailSignup }
        switch type {
        case "magiclink", "recovery", "invite", "email_change", "otp", "oauth", "password", "totp", "sso/saml", "token_refresh",
             "mfa/phone", "mfa/webauthn", "web3", "oauth_provider/authorization_code", "passkey":
            return type
        default: return nil
        }
    }

    /// `NewFlowState`: a flow state, with a fresh auth code (a v4 UUID) only when there is a code
    /// challenge (an implicit OAuth flow has none). The method is `s256` or `plain`,
    /// case-insensitively; anything else returns nil and each caller answers as GoTrue does there.
    static func make(project: Project, userID: String?, providerType: String, authenticationMethod: String,
                     codeChallengeMethod: String, codeChallenge: String) -> FlowStateRecord? {
        let method = codeChallengeMethod.lowercased()
        if !codeChallenge.isEmpty && method != "s256" && method != "plain" { return nil }
        return FlowStateRecord(id: project.environment.uuid(), userID: userID,
                               authCode: codeChallenge.isEmpty ? "" : project.environment.uuid(),
                               codeChallengeMethod: codeChallenge.isEmpty ? "" : method, codeChallenge: codeChallenge,
                               providerType: providerType, authenticationMethod: authenticationMethod,
                               at: project.environment.now().microseconds)
    }

    /// `generateFlowState` for the email flows: GoTrue fails an unknown method with an internal
    /// error there.
    @discardableResult
    static func create(_ conn: Connection, project: Project, userID: String, providerType: String,
                       authenticationMethod: String, codeChallengeMethod: String, codeChallenge: String) throws -> FlowStateRecord {
        guard let flow = make(project: project, userID: userID, providerType: providerType,
                              authenticationMethod: authenticationMethod, codeChallengeMethod: codeChallengeMethod,
                              codeChallenge: codeChallenge) else {
            logError("unsupported code_challenge method \"\(codeChallengeMethod)\"")
            throw AuthError.unexpected
        }
        try conn.insertFlowState(flow)
        return flow
    }

    /// `issueAuthCode`: the user's latest flow state for the method, stamped with the time its
    /// code went out.
    static func issueAuthCode(_ conn: Connection, project: Project, userID: String, authenticationMethod: String) throws -> String {
        // verify.go wraps issueAuthCode's 422 with `"... %s", terr`, and an HTTPError prints as
        // "<status>: <message>".
        guard let flow = try conn.latestFlowState(userID: userID, authenticationMethod: authenticationMethod) else {
            throw AuthError(400, .flowStateNotFound, "No associated flow state found. 422: No valid flow state found for user.")
        }
        guard !flow.codeChallenge.isEmpty else {
            throw AuthError(400, .flowStateNotFound,
                            "No associated flow state found. 422: Flow state does not have an auth code (not a PKCE flow).")
        }
        try conn.recordAuthCodeIssued(flowStateID: flow.id, at: project.environment.now().microseconds)
        return flow.authCode
    }

    /// `FlowState.IsExpired`: magic links count from the code's issue, everything else from the
    /// flow state's creation.
    static func isExpired(_ flow: FlowStateRecord, now: Timestamp, lifetimeSeconds: Double) -> Bool {
        let lifetime = Int64(max(lifetimeSeconds, 300) * 1_000_000)
        if let issued = flow.authCodeIssuedAt, flow.authenticationMethod == magicLink {
            return now.microseconds > issued + lifetime
        }
        return now.microseconds > flow.createdAt + lifetime
    }

    /// `security.VerifyPKCEChallenge`: `s256` compares BASE64URL(SHA-256(verifier)) with the
    /// challenge (RFC 7636 §4.6), `plain` the verifier itself; both in constant time.
    static func verify(challenge: String, method: String, verifier: String) -> String? {
        switch method.lowercased() {
        case "s256":
            let encoded = Base64URL.encode(SHA256.hash(data: Array(verifier.utf8)))
            return constantTimeEquals(Array(challenge.utf8), Array(encoded.utf8))
                ? nil : "code challenge does not match previously saved code verifier"
        case "plain":
            return constantTimeEquals(Array(challenge.utf8), Array(verifier.utf8))
                ? nil : "code challenge does not match previously saved code verifier"
        default:
            return "code challenge method not supported"
        }
    }
}

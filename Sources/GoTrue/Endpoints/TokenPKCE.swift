import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore

extension TokenEndpoints {
    /// `POST /token?grant_type=pkce` (`PKCE` in token.go).
    func pkce(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let project = api.project
        let body = try RequestBody(context.request, as: "PKCEGrantParams")
        let authCode = try body.string("auth_code") ?? ""
        let verifier = try body.string("code_verifier") ?? ""
        if authCode.isEmpty || verifier.isEmpty {
            throw AuthError(400, .validationFailed, "invalid request: both auth code and code verifier should be non-empty")
        }
        let found = try api.read { conn in try conn.flowState(authCode: authCode) }
        guard let flow = found, let userID = flow.userID else {
            throw AuthError(404, .flowStateNotFound, "invalid flow state, no valid flow state found")
        }
        if FlowStates.isExpired(flow, now: project.environment.now(), lifetimeSeconds: api.snapshot.configuration.external.flowStateExpirySeconds) {
            throw AuthError(422, .flowStateExpired, "invalid flow state, flow state has expired")
        }
        // `FindUserByID` before the verifier: a user deleted since the flow began is a plain Go
        // error (a generic 500) whatever the verifier (flow_state.user_id has no foreign key).
        guard try api.read({ conn in try conn.user(id: userID) }) != nil else {
            var failure = AuthError.unexpected
            failure.internalError = "user \(userID) of the flow state not found"
            throw failure
        }
        if let problem = FlowStates.verify(challenge: flow.codeChallenge, method: flow.codeChallengeMethod, verifier: verifier) {
            throw AuthError(400, .badCodeVerifier, problem)
        }
        let (issued, userJSON) = try api.write { conn in
            // The flow state is single use: a second exchange racing this one finds it gone. Its
            // row is locked (`FindFlowStateByIDForUpdate`'s SKIP LOCKED), so another emulator
            // process on the same Postgres cannot claim it meanwhile: one it holds reads as gone.
            guard try RowLocks.skippingHeld({ try conn.flowState(authCode: authCode, forUpdate: true) }) != nil else {
                throw AuthError(404, .flowStateNotFound, "invalid flow state, no valid flow state found")
            }
            guard var user = try conn.user(id: userID) else { throw AuthError(500, .unexpectedFailure, "Database error finding user") }
            try api.audit(conn, context, actor: user, action: .login,
                          traits: ["provider_type": .string(flow.providerType)])
            let issued = try Tokens(api: api).issueSession(conn, user: &user, method: flow.authenticationMethod,
                                                                   request: context.request)
            try conn.deleteFlowState(id: flow.id)
            return (issued, Models.user(user, identities: try conn.identities(userID: user.id), factors: try conn.factors(userID: user.id)))
        }
        // An OAuth flow hands the provider's tokens over with the session.
        var extra = JSONObject()
        if flow.authenticationMethod == FlowStates.oauth {
            extra["provider_token"] = .string(flow.providerAccessToken ?? "")
            if let refresh = flow.providerRefreshToken, !refresh.isEmpty { extra["provider_refresh_token"] = .string(refresh) }
        }
        if extra["provider_token"]?.stringValue?.isEmpty == true { extra["provider_token"] = nil }
        return .json(.object(issued.response(user: userJSON, extra: extra)), headers: issued.headers)
    }
}

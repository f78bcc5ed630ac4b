import AuthStore

/// Session-ending operations the real server performs as side effects of some errors, exposed so
/// the layers above (scripted failures) can reproduce a failure together with its consequence.
extension Project {
    /// What GoTrue does when a revoked refresh token comes back after the reuse interval
    /// (reference §7.6): every refresh token of that token's session is revoked, so the whole
    /// family is dead. Returns false when the token is unknown.
    @discardableResult
    public func revokeRefreshTokenFamily(of refreshToken: String) throws -> Bool {
        let now = environment.now().microseconds
        return try database.write { conn in
            guard let token = try conn.refreshToken(refreshToken), let sessionID = token.sessionID else { return false }
            try conn.revokeRefreshTokens(sessionID: sessionID, at: now)
            return true
        }
    }

    /// Ends a session, as an expired or revoked session ends (reference §7.7): the session row
    /// goes, and with it its refresh tokens, so the next refresh reports it missing. The session
    /// is the refresh token's, else the one named by a valid access token's `session_id` claim.
    /// Returns false when neither names a session.
    @discardableResult
    public func endSession(refreshToken: String?, accessToken: String?) throws -> Bool {
        var sessionID: String?
        if let accessToken, let claims = try? Core(project: self).verifiedClaims(accessToken),
           let id = claims["session_id"]?.stringValue, Validation.isUUID(id) {
            sessionID = id.lowercased()
        }
        return try database.write { conn in
            var target = sessionID
            if target == nil, let refreshToken, let token = try conn.refreshToken(refreshToken) {
                target = token.sessionID
            }
            guard let target, try conn.session(id: target) != nil else { return false }
            try conn.deleteSession(id: target)
            return true
        }
    }
}

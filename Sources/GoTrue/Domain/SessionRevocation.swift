import AuthStore
import GoFormats

/// Session-ending operations the real server performs as side effects of some errors, exposed so
/// the layers above (scripted failures) can reproduce a failure together with its consequence.
extension Project {
    /// What GoTrue does when a revoked refresh token comes back after the reuse interval
    /// (reference §7.6): every refresh token of that token's session is revoked, so the whole
    /// family is dead. A token of the second format has no rows to revoke: its session is
    /// deleted, as GoTrue does on reuse with rotation on. Returns false when the token is unknown.
    @discardableResult
    public func revokeRefreshTokenFamily(of refreshToken: String) throws -> Bool {
        let now = environment.now().microseconds
        return try writeRerunningConflicts { conn in
            if let sessionID = try signedSessionID(conn, refreshToken) {
                try conn.deleteSession(id: sessionID)
                return true
            }
            guard let token = try conn.refreshToken(refreshToken), let sessionID = token.sessionID else { return false }
            try conn.revokeRefreshTokens(sessionID: sessionID, at: now)
            return true
        }
    }

    /// The session a second-format refresh token names, if it exists and its key signed it.
    private func signedSessionID(_ conn: Connection, _ refreshToken: String) throws -> String? {
        guard refreshToken.utf8.count > 12, let token = SessionRefreshToken.parse(refreshToken),
              let session = try conn.session(id: token.sessionID), let state = SessionRefreshToken.state(of: session),
              token.isSigned(with: state.key) else { return nil }
        return session.id
    }

    /// Ends a session, as an expired or revoked session ends (reference §7.7): the session row
    /// goes, and with it its refresh tokens, so the next refresh reports it missing. The session
    /// is the refresh token's, else the one named by a valid access token's `session_id` claim.
    /// Returns false when neither names a session.
    @discardableResult
    public func endSession(refreshToken: String?, accessToken: String?) throws -> Bool {
        var sessionID: String?
        if let accessToken, let claims = try? Core(project: self).verifiedClaims(accessToken),
           let id = claims["session_id"]?.stringValue, UUIDText.isValid(id) {
            sessionID = id.lowercased()
        }
        return try writeRerunningConflicts { conn in
            var target = sessionID
            if target == nil, let refreshToken {
                target = try signedSessionID(conn, refreshToken) ?? conn.refreshToken(refreshToken)?.sessionID
            }
            guard let target, try conn.session(id: target) != nil else { return false }
            try conn.deleteSession(id: target)
            return true
        }
    }
}

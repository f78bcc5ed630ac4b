import GoFormats

/// A row of `flow_state` (GoTrue's `auth.flow_state`): one PKCE flow waiting for its code
/// exchange (RFC 7636). Timestamps are unix microseconds.
public struct FlowStateRecord: Sendable, Equatable {
    public var id: String
    public var userID: String?
    public var authCode: String
    /// `s256` or `plain`.
    public var codeChallengeMethod: String
    public var codeChallenge: String
    public var providerType: String
    public var providerAccessToken: String?
    public var providerRefreshToken: String?
    public var createdAt: Int64
    public var updatedAt: Int64
    /// GoTrue's `AuthenticationMethod` name: `email/signup`, `magiclink`, `recovery`, ...
    public var authenticationMethod: String
    public var authCodeIssuedAt: Int64?
    public var redirectTo: String?
    /// OAuth flows: the invite token being accepted, the user a manual link targets, and
    /// whether the provider may leave out the email.
    public var inviteToken: String?
    public var linkingTargetID: String?
    public var emailOptional = false

    /// `FlowState.IsPKCE`: an implicit OAuth flow has no code challenge.
    public var isPKCE: Bool { !codeChallenge.isEmpty }

    public init(id: String, userID: String?, authCode: String, codeChallengeMethod: String, codeChallenge: String,
                providerType: String, authenticationMethod: String, at time: Int64) {
        self.id = id
        self.userID = userID
        self.authCode = authCode
        self.codeChallengeMethod = codeChallengeMethod
        self.codeChallenge = codeChallenge
        self.providerType = providerType
        self.authenticationMethod = authenticationMethod
        self.createdAt = time
        self.updatedAt = time
    }

    init(row: Row) {
        id = row.string("id") ?? ""
        userID = row.string("user_id")
        authCode = row.string("auth_code") ?? ""
        codeChallengeMethod = row.string("code_challenge_method") ?? ""
        codeChallenge = row.string("code_challenge") ?? ""
        providerType = row.string("provider_type") ?? ""
        providerAccessToken = row.string("provider_access_token")
        providerRefreshToken = row.string("provider_refresh_token")
        createdAt = row.int64("created_at") ?? 0
        updatedAt = row.int64("updated_at") ?? 0
        authenticationMethod = row.string("authentication_method") ?? ""
        authCodeIssuedAt = row.int64("auth_code_issued_at")
        redirectTo = row.string("redirect_to")
        inviteToken = row.string("invite_token")
        linkingTargetID = row.string("linking_target_id")
        emailOptional = (row.int64("email_optional") ?? 0) != 0
    }
}

extension Connection {
    public func insertFlowState(_ f: FlowStateRecord) throws(StoreError) {
        if let postgres { return try postgres.store { try $0.insertFlowState(f) } }
        try execute(
            """
            INSERT INTO flow_state (id, user_id, auth_code, code_challenge_method, code_challenge, provider_type,
                                    provider_access_token, provider_refresh_token, created_at, updated_at,
                                    authentication_method, auth_code_issued_at, redirect_to, invite_token,
                                    linking_target_id, email_optional)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            .text(f.id), SQLValue(f.userID), .text(f.authCode), .text(f.codeChallengeMethod), .text(f.codeChallenge),
            .text(f.providerType), SQLValue(f.providerAccessToken), SQLValue(f.providerRefreshToken),
            .integer(f.createdAt), .integer(f.updatedAt), .text(f.authenticationMethod), SQLValue(f.authCodeIssuedAt),
            SQLValue(f.redirectTo), SQLValue(f.inviteToken), SQLValue(f.linkingTargetID), .integer(f.emailOptional ? 1 : 0)
        )
    }

    /// `forUpdate`: GoTrue's `FindFlowStateByIDForUpdate`, the row locked until the write's
    /// transaction ends; one another transaction holds throws `StoreError.isRowLocked`
    /// (Postgres mode; `RowLocks.swift`).
    public func flowState(id: String, forUpdate: Bool = false) throws(StoreError) -> FlowStateRecord? {
        if let postgres {
            guard UUIDText.isValid(id) else { return nil }
            if forUpdate { return try postgres.flowStateForUpdate("f.id = $1", .text(id)) }
            return try postgres.store { try $0.flowState(where: "f.id = $1", .text(id)) }
        }
        return try queryFirst("SELECT * FROM flow_state WHERE id = ?", .text(id)).map(FlowStateRecord.init(row:))
    }

    /// A PKCE OAuth flow claimed by the callback: its user, the provider's tokens and the time
    /// its auth code went out.
    public func claimFlowState(id: String, userID: String, providerAccessToken: String, providerRefreshToken: String,
                               at time: Int64) throws(StoreError) {
        if let postgres {
            return try postgres.store(ifUUID: id, else: ()) {
                try $0.claimFlowState(id: id, userID: userID, providerAccessToken: providerAccessToken,
                                      providerRefreshToken: providerRefreshToken, at: time)
            }
        }
        try execute(
            """
            UPDATE flow_state SET user_id = ?, provider_access_token = ?, provider_refresh_token = ?,
                                  auth_code_issued_at = ?, updated_at = ? WHERE id = ?
            """,
            .text(userID), .text(providerAccessToken), .text(providerRefreshToken), .integer(time), .integer(time), .text(id)
        )
    }

    /// `forUpdate`: locked as `flowState(id:forUpdate:)` locks it.
    public func flowState(authCode: String, forUpdate: Bool = false) throws(StoreError) -> FlowStateRecord? {
        if let postgres {
            // An implicit flow's NULL auth_code never matches, as GoTrue finds none by ''.
            if forUpdate { return try postgres.flowStateForUpdate("f.auth_code = $1", .text(authCode)) }
            return try postgres.store { try $0.flowState(where: "f.auth_code = $1", .text(authCode)) }
        }
        return try queryFirst("SELECT * FROM flow_state WHERE auth_code = ? LIMIT 1", .text(authCode)).map(FlowStateRecord.init(row:))
    }

    /// GoTrue's `FindFlowStateByUserID`: the user's latest flow state for the method.
    public func latestFlowState(userID: String, authenticationMethod: String) throws(StoreError) -> FlowStateRecord? {
        if let postgres {
            return try postgres.store(ifUUID: userID, else: nil) {
                try $0.flowState(where: "f.user_id = $1 AND f.authentication_method = $2", order: "ORDER BY f.created_at DESC, f.ctid DESC",
                                 .text(userID), .text(authenticationMethod))
            }
        }
        return try queryFirst(
            "SELECT * FROM flow_state WHERE user_id = ? AND authentication_method = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
            .text(userID), .text(authenticationMethod)
        ).map(FlowStateRecord.init(row:))
    }

    public func recordAuthCodeIssued(flowStateID: String, at time: Int64) throws(StoreError) {
        try execute("UPDATE flow_state SET auth_code_issued_at = ?, updated_at = ? WHERE id = ?",
                    [.integer(time), .integer(time), .text(flowStateID)],
                    postgres: "UPDATE auth.flow_state SET auth_code_issued_at = $1, updated_at = $1 WHERE id = $2",
                    [PostgresArguments.time(time), .text(flowStateID)], ifUUID: flowStateID)
    }

    public func deleteFlowState(id: String) throws(StoreError) {
        try execute("DELETE FROM flow_state WHERE id = ?", [.text(id)], postgres: "DELETE FROM auth.flow_state WHERE id = $1", ifUUID: id)
    }

    /// GoTrue's `FindOneTimeToken`: the owner of an outstanding token of one of `types` with
    /// this hash, or nil.
    public func oneTimeTokenOwner(tokenHash: String, types: [String]) throws(StoreError) -> String? {
        guard !types.isEmpty else { return nil }
        if let postgres { return try postgres.store { try $0.oneTimeTokenOwner(tokenHash: tokenHash, types: types) } }
        let placeholders = Array(repeating: "?", count: types.count).joined(separator: ", ")
        return try queryFirst(
            "SELECT user_id FROM one_time_tokens WHERE token_type IN (\(placeholders)) AND token_hash = ? LIMIT 1",
            types.map { SQLValue.text($0) } + [.text(tokenHash)]
        )?.string("user_id")
    }

    /// GoTrue's `FindUserByPhoneChangeAndAudience`.
    public func user(phoneChange: String, aud: String) throws(StoreError) -> UserRecord? {
        if let postgres {
            // GoTrue's users hold '' in phone_change when no change is pending (SQLite: NULL),
            // so '' names no user here either.
            guard !phoneChange.isEmpty else { return nil }
            return try postgres.store { try $0.firstUser("phone_change = $1 AND aud = $2 AND is_sso_user = false", [.text(phoneChange), .text(aud)]) }
        }
        let rows = try query("SELECT id FROM users WHERE phone_change = ? AND aud = ? AND is_sso_user = 0 LIMIT 1",
                             .text(phoneChange), .text(aud))
        guard let id = rows.first?.string("id") else { return nil }
        return try user(id: id)
    }
}

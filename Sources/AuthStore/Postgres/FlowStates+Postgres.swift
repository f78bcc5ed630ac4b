/// `auth.flow_state` in Postgres mode, as GoTrue's `models.FlowState` writes it: an implicit
/// OAuth flow (no code challenge) has NULL `auth_code`, `code_challenge` and
/// `code_challenge_method` (pointers in the model; the record uses ''), the method is the
/// `code_challenge_method` label (`s256`, `plain`), and the provider tokens are '' for none
/// (non-pointer Go strings). GoTrue's table has no `redirect_to`: the emulator keeps it beside
/// the row in `auth_emulator.flow_state_redirects` (deleted with it).
extension FlowStateRecord {
    /// A row of `postgresSelect`: '' provider tokens read back as nil, NULLs of an implicit
    /// flow as ''.
    init(postgresRow row: Row) {
        self.init(row: row)
        if providerAccessToken == "" { providerAccessToken = nil }
        if providerRefreshToken == "" { providerRefreshToken = nil }
    }

    static let postgresSelect = """
        SELECT f.id, f.user_id, f.auth_code, f.code_challenge_method, f.code_challenge, f.provider_type, f.provider_access_token,
        f.provider_refresh_token, f.created_at, f.updated_at, f.authentication_method, f.auth_code_issued_at, r.redirect_to,
        f.invite_token, f.linking_target_id, f.email_optional
        FROM auth.flow_state f LEFT JOIN auth_emulator.flow_state_redirects r ON r.flow_state_id = f.id
        """
}

extension PostgresConnection {
    private typealias A = PostgresArguments

    func insertFlowState(_ f: FlowStateRecord) throws(PostgresError) {
        try execute(
            """
            INSERT INTO auth.flow_state (id, user_id, auth_code, code_challenge_method, code_challenge, provider_type,
                                         provider_access_token, provider_refresh_token, created_at, updated_at,
                                         authentication_method, auth_code_issued_at, invite_token, linking_target_id, email_optional)
            VALUES ($1, $2, NULLIF($3, ''), NULLIF($4, '')::auth.code_challenge_method, NULLIF($5, ''), $6, $7, $8, $9, $10,
                    $11, $12, $13, $14, $15)
            """,
            .text(f.id), SQLValue(f.userID), .text(f.authCode), .text(f.codeChallengeMethod), .text(f.codeChallenge),
            .text(f.providerType), A.goString(f.providerAccessToken), A.goString(f.providerRefreshToken),
            A.time(f.createdAt), A.time(f.updatedAt), .text(f.authenticationMethod), A.time(f.authCodeIssuedAt),
            SQLValue(f.inviteToken), SQLValue(f.linkingTargetID), SQLValue(f.emailOptional)
        )
        if let redirectTo = f.redirectTo {
            try execute("INSERT INTO auth_emulator.flow_state_redirects (flow_state_id, redirect_to) VALUES ($1, $2)",
                        .text(f.id), .text(redirectTo))
        }
    }

    func claimFlowState(id: String, userID: String, providerAccessToken: String, providerRefreshToken: String,
                        at time: Int64) throws(PostgresError) {
        try execute(
            """
            UPDATE auth.flow_state SET user_id = $1, provider_access_token = $2, provider_refresh_token = $3,
                                       auth_code_issued_at = $4, updated_at = $4 WHERE id = $5
            """,
            .text(userID), .text(providerAccessToken), .text(providerRefreshToken), A.time(time), .text(id)
        )
    }

    func flowState(where condition: String, order: String = "", _ arguments: SQLValue...) throws(PostgresError) -> FlowStateRecord? {
        try queryFirst("\(FlowStateRecord.postgresSelect) WHERE \(condition) \(order) LIMIT 1", arguments)
            .map(FlowStateRecord.init(postgresRow:))
    }

    /// The flow state's row locked (`FOR UPDATE OF f`: the redirect beside it is on the nullable
    /// side of the join).
    func flowStateForUpdate(_ condition: String, _ argument: SQLValue) throws(StoreError) -> FlowStateRecord? {
        try firstForUpdate("\(FlowStateRecord.postgresSelect) WHERE \(condition) LIMIT 1", of: "f", table: "auth.flow_state", argument)
            .map(FlowStateRecord.init(postgresRow:))
    }

    /// `token_type` compares as text: a type the enum lacks matches nothing (a cast would fail).
    func oneTimeTokenOwner(tokenHash: String, types: [String]) throws(PostgresError) -> String? {
        try queryFirst("SELECT user_id FROM auth.one_time_tokens WHERE token_type::text = ANY($1::text[]) AND token_hash = $2 LIMIT 1",
                       .postgresTextArray(types), .text(tokenHash))?.string("user_id")
    }
}

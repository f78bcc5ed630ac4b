/// `one_time_tokens` (GoTrue's `auth.one_time_tokens`): the outstanding code or link token of
/// each kind, at most one per user and type, looked up by hash when a code is verified.
extension Connection {
    /// Stores the user's token of `type`, replacing any previous one of that type (GoTrue keeps
    /// one outstanding token per user and type). `relatesTo` is stored lowercased.
    public func replaceOneTimeToken(id: String, userID: String, type: String, tokenHash: String, relatesTo: String,
                                    at time: Int64) throws(StoreError) {
        if let postgres {
            return try postgres.store {
                try $0.replaceOneTimeToken(id: id, userID: userID, type: type, tokenHash: tokenHash, relatesTo: relatesTo, at: time)
            }
        }
        try deleteOneTimeToken(userID: userID, type: type)
        try execute(
            """
            INSERT INTO one_time_tokens (id, user_id, token_type, token_hash, relates_to, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            .text(id), .text(userID), .text(type), .text(tokenHash), .text(relatesTo.lowercased()),
            .integer(time), .integer(time)
        )
    }

    /// `ClearAllOneTimeTokensForUser`.
    /// Deletes the user's outstanding token of `type` (`ClearOneTimeToken` in the real store).
    public func deleteOneTimeToken(userID: String, type: String) throws(StoreError) {
        try execute("DELETE FROM one_time_tokens WHERE user_id = ? AND token_type = ?", [.text(userID), .text(type)],
                    postgres: "DELETE FROM auth.one_time_tokens WHERE user_id = $1 AND token_type = $2", ifUUID: userID)
    }

    public func deleteOneTimeTokens(userID: String) throws(StoreError) {
        try execute("DELETE FROM one_time_tokens WHERE user_id = ?", [.text(userID)],
                    postgres: "DELETE FROM auth.one_time_tokens WHERE user_id = $1", ifUUID: userID)
    }
}

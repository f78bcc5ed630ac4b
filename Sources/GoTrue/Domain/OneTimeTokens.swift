import AuthCrypto
import AuthStore

/// OTP generation and storage shared by every flow that sends a code (reference §10.1).
package struct OneTimeTokens {
    let project: Project

    /// `crypto.GenerateOtp`: `length` random decimal digits.
    func otp(length: Int) -> String {
        var digits: [UInt8] = []
        while digits.count < length {
            for byte in project.environment.randomBytes(length * 2) where byte < 250 && digits.count < length {
                digits.append(UInt8(ascii: "0") + byte % 10)  // 250 = 25 × 10: unbiased
            }
        }
        return String(decoding: digits, as: UTF8.self)
    }

    /// `crypto.GenerateTokenHash`: hex SHA-224 of the (lowercased email or phone) and the OTP.
    static func tokenHash(_ relatesTo: String, _ otp: String) -> String {
        Hex.encode(SHA224.hash(data: Array((relatesTo.lowercased() + otp).utf8)))
    }

    /// Records a one-time token of `type` for the user, replacing any previous one of that type.
    func record(_ conn: Connection, userID: String, type: String, tokenHash: String, relatesTo: String, at time: Int64) throws {
        try conn.replaceOneTimeToken(id: project.environment.uuid(), userID: userID, type: type, tokenHash: tokenHash,
                                     relatesTo: relatesTo, at: time)
    }

    /// The last step of every send (and of `/admin/generate_link`, which makes the same link
    /// without sending it): the token and its time on the user row, then in `one_time_tokens`.
    func store(_ conn: Connection, user: inout UserRecord, token: String,
               slot: WritableKeyPath<UserRecord, String?>, sentAt: WritableKeyPath<UserRecord, Int64?>,
               type: String, relatesTo: String, at now: Timestamp) throws {
        user[keyPath: slot] = token
        user[keyPath: sentAt] = now.microseconds
        // Every send saves with `tx.UpdateOnly(user, <token>, <sent_at>...)`, and pop's Update
        // also writes `updated_at` (storage's `getExcludedColumns` never excludes it): a
        // re-invite or a resent code moves the user's `updated_at`.
        user.updatedAt = now.microseconds
        try conn.updateUser(user)
        try record(conn, userID: user.id, type: type, tokenHash: token, relatesTo: relatesTo, at: now.microseconds)
    }

    /// An email change's tokens, each when the user row holds one: the current address's (secure
    /// email change only) relating to `current`, the new address's relating to `new`.
    func recordEmailChange(_ conn: Connection, user: UserRecord, current: String, new: String, at time: Int64) throws {
        if let token = user.emailChangeTokenCurrent, !token.isEmpty {
            try record(conn, userID: user.id, type: "email_change_token_current", tokenHash: token, relatesTo: current, at: time)
        }
        if let token = user.emailChangeTokenNew, !token.isEmpty {
            try record(conn, userID: user.id, type: "email_change_token_new", tokenHash: token, relatesTo: new, at: time)
        }
    }

    /// `ClearAllOneTimeTokensForUser`.
    package static func clearAll(_ conn: Connection, userID: String) throws {
        try conn.deleteOneTimeTokens(userID: userID)
    }
}

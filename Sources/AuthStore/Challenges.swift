import GoFormats

/// A row of `mfa_challenges` (GoTrue's `auth.mfa_challenges`): one challenge of a factor, with
/// the address it was made from and, for phone factors, the code that was sent.
public struct ChallengeRecord: Sendable, Equatable {
    public var id: String
    public var factorID: String
    public var createdAt: Int64
    public var verifiedAt: Int64?
    public var ipAddress: String
    public var otpCode: String?

    public init(id: String, factorID: String, ipAddress: String, otpCode: String? = nil, at time: Int64) {
        self.id = id
        self.factorID = factorID
        self.ipAddress = ipAddress
        self.otpCode = otpCode
        self.createdAt = time
    }

    init(row: Row) {
        id = row.string("id") ?? ""
        factorID = row.string("factor_id") ?? ""
        createdAt = row.int64("created_at") ?? 0
        verifiedAt = row.int64("verified_at")
        ipAddress = row.string("ip_address") ?? ""
        otpCode = row.string("otp_code")
    }

    static let select = "SELECT id, factor_id, created_at, verified_at, ip_address, otp_code FROM mfa_challenges"
}

extension Connection {
    public func insertChallenge(_ c: ChallengeRecord) throws(StoreError) {
        if let postgres { return try postgres.store { try $0.insertChallenge(c) } }
        try execute(
            "INSERT INTO mfa_challenges (id, factor_id, created_at, verified_at, ip_address, otp_code) VALUES (?, ?, ?, ?, ?, ?)",
            .text(c.id), .text(c.factorID), .integer(c.createdAt), SQLValue(c.verifiedAt), .text(c.ipAddress),
            SQLValue(c.otpCode)
        )
    }

    /// `Factor.FindChallengeByID`: the challenge only when it belongs to the factor.
    public func challenge(id: String, factorID: String) throws(StoreError) -> ChallengeRecord? {
        if let postgres {
            return try postgres.store(ifUUID: id, factorID, else: nil) {
                try $0.challenge(where: "id = $1 AND factor_id = $2", .text(id), .text(factorID))
            }
        }
        return try queryFirst("\(ChallengeRecord.select) WHERE id = ? AND factor_id = ?", .text(id), .text(factorID))
            .map(ChallengeRecord.init(row:))
    }

    /// `Challenge.Verify`.
    public func markChallengeVerified(id: String, at time: Int64) throws(StoreError) {
        try execute("UPDATE mfa_challenges SET verified_at = ? WHERE id = ?", [.integer(time), .text(id)],
                    postgres: "UPDATE auth.mfa_challenges SET verified_at = $1 WHERE id = $2", [PostgresArguments.time(time), .text(id)],
                    ifUUID: id)
    }

    public func deleteChallenge(id: String) throws(StoreError) {
        try execute("DELETE FROM mfa_challenges WHERE id = ?", [.text(id)], postgres: "DELETE FROM auth.mfa_challenges WHERE id = $1", ifUUID: id)
    }

    /// The factor's newest challenge (the test side-door reads a phone code from it).
    public func latestChallenge(factorID: String) throws(StoreError) -> ChallengeRecord? {
        if let postgres {
            return try postgres.store(ifUUID: factorID, else: nil) {
                try $0.challenge(where: "factor_id = $1", order: "ORDER BY created_at DESC, ctid DESC", .text(factorID))
            }
        }
        return try queryFirst("\(ChallengeRecord.select) WHERE factor_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
                              .text(factorID)).map(ChallengeRecord.init(row:))
    }
}

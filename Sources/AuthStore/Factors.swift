import GoFormats

/// A row of `mfa_factors` (GoTrue's `auth.mfa_factors`): one enrolled second factor.
public struct FactorRecord: Sendable, Equatable {
    public var id: String
    public var userID: String
    public var friendlyName: String?
    /// `totp`, `phone` or `webauthn`.
    public var factorType: String
    /// `unverified` or `verified`.
    public var status: String
    public var createdAt: Int64
    public var updatedAt: Int64
    public var secret: String?
    /// Digits only, for phone factors.
    public var phone: String?
    public var lastChallengedAt: Int64?
    public var webAuthnAAGUID: String?

    public init(id: String, userID: String, factorType: String, status: String, at time: Int64) {
        self.id = id
        self.userID = userID
        self.factorType = factorType
        self.status = status
        self.createdAt = time
        self.updatedAt = time
    }

    static let layout = RowLayout("""
        id, user_id, friendly_name, factor_type, status, created_at, updated_at, secret, phone,
        last_challenged_at, web_authn_aaguid
        """)

    init(row: Row) {
        var r = RowReader(row, Self.layout)
        id = r.string("id") ?? ""
        userID = r.string("user_id") ?? ""
        friendlyName = r.string("friendly_name")
        factorType = r.string("factor_type") ?? ""
        status = r.string("status") ?? ""
        createdAt = r.int64("created_at") ?? 0
        updatedAt = r.int64("updated_at") ?? 0
        secret = r.string("secret")
        phone = r.string("phone")
        lastChallengedAt = r.int64("last_challenged_at")
        webAuthnAAGUID = r.string("web_authn_aaguid")
        assert(r.isComplete, "FactorRecord: a column of the layout was not read")
    }

    static let select = "SELECT \(layout.list) FROM mfa_factors"
    /// Built once, as `IdentityRecord.byUser`.
    static let byUser = "\(select) WHERE user_id = ? ORDER BY created_at, rowid"

    /// The AMR method a verified factor of this type adds to a session (`amrMethodForFactorType`).
    public var amrMethod: String {
        switch factorType {
        case "phone": return "mfa/phone"
        case "webauthn": return "mfa/webauthn"
        default: return "totp"
        }
    }
}

extension Connection {
    public func insertFactor(_ f: FactorRecord) throws(StoreError) {
        if let postgres { return try postgres.store { try $0.insertFactor(f) } }
        try execute(
            """
            INSERT INTO mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, secret, phone,
            last_challenged_at, web_authn_aaguid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            .text(f.id), .text(f.userID), SQLValue(f.friendlyName), .text(f.factorType), .text(f.status),
            .integer(f.createdAt), .integer(f.updatedAt), SQLValue(f.secret), SQLValue(f.phone),
            SQLValue(f.lastChallengedAt), SQLValue(f.webAuthnAAGUID)
        )
    }

    public func updateFactor(_ f: FactorRecord) throws(StoreError) {
        if let postgres {
            return try postgres.store(ifUUID: f.id, else: ()) { try $0.updateFactor(f) }
        }
        try execute(
            """
            UPDATE mfa_factors SET friendly_name = ?, status = ?, updated_at = ?, secret = ?, phone = ?,
            last_challenged_at = ?, web_authn_aaguid = ? WHERE id = ?
            """,
            SQLValue(f.friendlyName), .text(f.status), .integer(f.updatedAt), SQLValue(f.secret), SQLValue(f.phone),
            SQLValue(f.lastChallengedAt), SQLValue(f.webAuthnAAGUID), .text(f.id)
        )
    }

    /// A user's factors, oldest first (GoTrue's eager load order).
    public func factors(userID: String) throws(StoreError) -> [FactorRecord] {
        if let postgres {
            return try postgres.store(ifUUID: userID, else: []) { try $0.factors(where: "user_id = $1", .text(userID)) }
        }
        return try query(FactorRecord.byUser, .text(userID)).map(FactorRecord.init(row:))
    }

    /// `FindOwnedFactorByID`: the factor only when it belongs to the user.
    public func factor(id: String, userID: String) throws(StoreError) -> FactorRecord? {
        if let postgres {
            return try postgres.store(ifUUID: id, userID, else: nil) {
                try $0.factors(where: "id = $1 AND user_id = $2", .text(id), .text(userID)).first
            }
        }
        return try queryFirst("\(FactorRecord.select) WHERE id = ? AND user_id = ?", .text(id), .text(userID)).map(FactorRecord.init(row:))
    }

    /// Deletes a factor; its challenges go with it (ON DELETE CASCADE).
    public func deleteFactor(id: String) throws(StoreError) {
        try execute("DELETE FROM mfa_factors WHERE id = ?", [.text(id)], postgres: "DELETE FROM auth.mfa_factors WHERE id = $1", ifUUID: id)
    }

    /// `DeleteFactorsByUserId`.
    public func deleteFactors(userID: String) throws(StoreError) {
        try execute("DELETE FROM mfa_factors WHERE user_id = ?", [.text(userID)],
                    postgres: "DELETE FROM auth.mfa_factors WHERE user_id = $1", ifUUID: userID)
    }

    /// `DeleteExpiredFactors`: unverified factors created before `cutoff` that were never
    /// challenged.
    public func deleteExpiredFactors(createdBefore cutoff: Int64) throws(StoreError) {
        if let postgres { return try postgres.store { try $0.deleteExpiredFactors(createdBefore: cutoff) } }
        try execute(
            """
            DELETE FROM mfa_factors WHERE status != 'verified' AND created_at < ?
            AND NOT EXISTS (SELECT 1 FROM mfa_challenges WHERE mfa_challenges.factor_id = mfa_factors.id)
            """,
            .integer(cutoff)
        )
    }

    /// `DeleteUnverifiedFactors`: the user's other unverified factors of a type, once one of
    /// that type is verified.
    public func deleteUnverifiedFactors(userID: String, factorType: String) throws(StoreError) {
        if let postgres {
            return try postgres.store(ifUUID: userID, else: ()) { try $0.deleteUnverifiedFactors(userID: userID, factorType: factorType) }
        }
        try execute("DELETE FROM mfa_factors WHERE user_id = ? AND status = 'unverified' AND factor_type = ?",
                    .text(userID), .text(factorType))
    }

    /// `Factor.WriteChallengeToDatabase`'s second half: `UpdateOnly(f, "last_challenged_at")`,
    /// which writes `updated_at` too (pop stamps it on every update), so a challenge moves both.
    public func markFactorChallenged(id: String, at time: Int64) throws(StoreError) {
        if let postgres {
            return try postgres.store(ifUUID: id, else: ()) { try $0.markFactorChallenged(id: id, at: time) }
        }
        try execute("UPDATE mfa_factors SET last_challenged_at = ?, updated_at = ? WHERE id = ?", .integer(time), .integer(time), .text(id))
    }

    /// `Factor.DowngradeSessionsToAAL1`: sessions that were raised by this factor lose its AMR
    /// claim and return to aal1.
    public func downgradeSessions(of factor: FactorRecord) throws(StoreError) {
        if let postgres {
            return try postgres.store(ifUUID: factor.id, factor.userID, else: ()) { try $0.downgradeSessions(of: factor) }
        }
        try execute(
            """
            DELETE FROM mfa_amr_claims WHERE authentication_method = ?
            AND session_id IN (SELECT id FROM sessions WHERE factor_id = ?)
            """,
            .text(factor.amrMethod), .text(factor.id)
        )
        try execute("UPDATE sessions SET aal = 'aal1', factor_id = NULL WHERE user_id = ? AND factor_id = ?",
                    .text(factor.userID), .text(factor.id))
    }
}

extension Connection {
    /// Any user's factor by id (the emulator's control routes).
    public func factor(id: String) throws(StoreError) -> FactorRecord? {
        if let postgres {
            return try postgres.store(ifUUID: id, else: nil) { try $0.factors(where: "id = $1", .text(id)).first }
        }
        return try queryFirst("\(FactorRecord.select) WHERE id = ?", .text(id)).map(FactorRecord.init(row:))
    }
}

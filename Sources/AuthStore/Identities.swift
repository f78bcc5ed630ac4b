import GoFormats

/// A row of `identities` (GoTrue's `auth.identities`): one sign-in method of a user.
public struct IdentityRecord: Sendable, Equatable {
    /// The row id, exposed by the API as `identity_id`.
    public var id: String
    /// The provider's subject (for `email`/`phone` identities, the user id).
    public var providerID: String
    public var userID: String
    public var identityData: String = "{}"
    public var provider: String
    public var lastSignInAt: Int64?
    public var createdAt: Int64
    public var updatedAt: Int64
    /// Generated: lowercased `identity_data.email`; read-only.
    public private(set) var email: String?

    public init(id: String, providerID: String, userID: String, identityData: String, provider: String, at time: Int64) {
        self.id = id
        self.providerID = providerID
        self.userID = userID
        self.identityData = identityData
        self.provider = provider
        self.lastSignInAt = time
        self.createdAt = time
        self.updatedAt = time
    }

    static let layout = RowLayout("id, provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at, email")

    init(row: Row) {
        var r = RowReader(row, Self.layout)
        id = r.string("id") ?? ""
        providerID = r.string("provider_id") ?? ""
        userID = r.string("user_id") ?? ""
        identityData = r.string("identity_data") ?? "{}"
        provider = r.string("provider") ?? ""
        lastSignInAt = r.int64("last_sign_in_at")
        createdAt = r.int64("created_at") ?? 0
        updatedAt = r.int64("updated_at") ?? 0
        email = r.string("email")
        assert(r.isComplete, "IdentityRecord: a column of the layout was not read")
    }

    static let select = "SELECT \(layout.list) FROM identities"
    /// Built once: the lookups of every authenticated request and token grant (an interpolated
    /// text per call cost an allocation and a fresh hash for the statement cache).
    static let byUser = "\(select) WHERE user_id = ? ORDER BY created_at, rowid"
}

extension Connection {
    public func insertIdentity(_ identity: IdentityRecord) throws(StoreError) {
        if let postgres { return try postgres.store { try $0.insertIdentity(identity) } }
        try execute(
            """
            INSERT INTO identities (id, provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            .text(identity.id), .text(identity.providerID), .text(identity.userID), .text(identity.identityData),
            .text(identity.provider), SQLValue(identity.lastSignInAt), .integer(identity.createdAt), .integer(identity.updatedAt)
        )
    }

    public func updateIdentity(_ identity: IdentityRecord) throws(StoreError) {
        if let postgres { return try postgres.store { try $0.updateIdentity(identity) } }
        try execute(
            "UPDATE identities SET identity_data = ?, last_sign_in_at = ?, updated_at = ? WHERE id = ?",
            .text(identity.identityData), SQLValue(identity.lastSignInAt), .integer(identity.updatedAt), .text(identity.id)
        )
    }

    /// A user's identities, oldest first (GoTrue loads them in insertion order).
    public func identities(userID: String) throws(StoreError) -> [IdentityRecord] {
        if let postgres {
            return try postgres.store(ifUUID: userID, else: []) { try $0.identities(where: "user_id = $1", .text(userID)) }
        }
        return try query(IdentityRecord.byUser, .text(userID))
            .map(IdentityRecord.init(row:))
    }

    public func identity(providerID: String, provider: String) throws(StoreError) -> IdentityRecord? {
        if let postgres {
            return try postgres.store {
                try $0.identities(where: "provider_id = $1 AND provider = $2", .text(providerID), .text(provider)).first
            }
        }
        return try queryFirst("\(IdentityRecord.select) WHERE provider_id = ? AND provider = ?", .text(providerID), .text(provider))
            .map(IdentityRecord.init(row:))
    }

    public func identity(id: String) throws(StoreError) -> IdentityRecord? {
        if let postgres {
            return try postgres.store(ifUUID: id, else: nil) { try $0.identities(where: "id = $1", .text(id)).first }
        }
        return try queryFirst("\(IdentityRecord.select) WHERE id = ?", .text(id)).map(IdentityRecord.init(row:))
    }

    public func deleteIdentity(id: String) throws(StoreError) {
        try execute("DELETE FROM identities WHERE id = ?", [.text(id)],
                    postgres: "DELETE FROM auth.identities WHERE id = $1", ifUUID: id)
    }

    /// Identities whose (lowercased) email is one of `emails`, oldest first: the "similar
    /// identities" of GoTrue's automatic account linking (`email = any (?)`).
    public func identities(emails: [String]) throws(StoreError) -> [IdentityRecord] {
        if let postgres {
            return try postgres.store {
                try $0.identities(where: "email = ANY($1::text[])", .postgresTextArray(emails.map { $0.lowercased() }))
            }
        }
        guard !emails.isEmpty else { return [] }
        let placeholders = Array(repeating: "?", count: emails.count).joined(separator: ", ")
        return try query("\(IdentityRecord.select) WHERE email IN (\(placeholders)) ORDER BY created_at, rowid",
                         emails.map { SQLValue.text($0.lowercased()) })
            .map(IdentityRecord.init(row:))
    }

    /// Ids of non-SSO users whose email is one of `emails`, in any audience (the "similar users"
    /// of automatic account linking).
    public func userIDs(emails: [String]) throws(StoreError) -> [String] {
        if let postgres { return try postgres.store { try $0.userIDs(emails: emails) } }
        guard !emails.isEmpty else { return [] }
        let placeholders = Array(repeating: "?", count: emails.count).joined(separator: ", ")
        return try query("SELECT id FROM users WHERE lower(email) IN (\(placeholders)) AND is_sso_user = 0 ORDER BY created_at, rowid",
                         emails.map { SQLValue.text($0.lowercased()) })
            .compactMap { $0.string("id") }
    }
}

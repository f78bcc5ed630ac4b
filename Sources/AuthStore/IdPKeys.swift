/// The signing key of the emulator's fake identity providers (one per project, shared by every
/// provider). Kept in the database so tokens minted before a restart still verify and several
/// processes opening the same file sign with the same key.
public struct IdPSigningKeyRecord: Sendable, Equatable {
    /// The JWS `kid` the key signs with and its JWKS entry carries.
    public var kid: String
    /// The private key as an RSA JWK (RFC 7518 §6.3.2), serialized JSON.
    public var privateJWK: String
    /// Unix microseconds (the project's clock).
    public var createdAt: Int64

    public init(kid: String, privateJWK: String, createdAt: Int64) {
        self.kid = kid
        self.privateJWK = privateJWK
        self.createdAt = createdAt
    }
}

/// An account that signed in through a provider before: what the fake provider's consent page
/// offers to pick again.
public struct IdPAccountRecord: Sendable, Equatable {
    /// The provider's subject (`identities.provider_id`).
    public var subject: String
    public var email: String?
    /// `identity_data.name`, else `identity_data.full_name`.
    public var name: String?

    public init(subject: String, email: String?, name: String?) {
        self.subject = subject
        self.email = email
        self.name = name
    }
}

extension Connection {
    /// The project's signing key id: the oldest row (there is normally just one, see
    /// `insertIdPSigningKeyIfNone`), or nil when none was made yet or a reset emptied the table.
    public func idpSigningKeyID() throws(StoreError) -> String? {
        if let postgres { return try postgres.store { try $0.idpSigningKey()?.kid } }
        return try scalar("SELECT kid FROM idp_signing_keys ORDER BY created_at, rowid LIMIT 1").stringValue
    }

    /// The oldest signing key row.
    public func idpSigningKey() throws(StoreError) -> IdPSigningKeyRecord? {
        if let postgres { return try postgres.store { try $0.idpSigningKey() } }
        return try queryFirst("SELECT kid, private_jwk, created_at FROM idp_signing_keys ORDER BY created_at, rowid LIMIT 1")
            .map(IdPSigningKeyRecord.init(row:))
    }

    /// Stores `record` unless a key exists already, and returns the key in force. Run inside
    /// `write`: its IMMEDIATE transaction serializes processes sharing the file, so when two
    /// of them generate a key at once, the first to commit wins and the other adopts its key.
    /// In Postgres mode an advisory lock held to the end of the transaction does the same.
    public func insertIdPSigningKeyIfNone(_ record: IdPSigningKeyRecord) throws(StoreError) -> IdPSigningKeyRecord {
        if let postgres { return try postgres.store { try $0.insertIdPSigningKeyIfNone(record) } }
        if let existing = try idpSigningKey() { return existing }
        try execute("INSERT INTO idp_signing_keys (kid, private_jwk, created_at) VALUES (?, ?, ?)",
                    .text(record.kid), .text(record.privateJWK), .integer(record.createdAt))
        return record
    }

    /// Accounts that used `provider` before, most recently signed in (or created) first.
    public func idpAccounts(provider: String, limit: Int = 20) throws(StoreError) -> [IdPAccountRecord] {
        if let postgres { return try postgres.store { try $0.idpAccounts(provider: provider, limit: limit) } }
        return try query(
            """
            SELECT provider_id,
                   json_extract(identity_data, '$.email') AS email,
                   coalesce(json_extract(identity_data, '$.name'), json_extract(identity_data, '$.full_name')) AS name
            FROM identities WHERE provider = ?
            ORDER BY coalesce(last_sign_in_at, created_at) DESC, rowid DESC
            LIMIT ?
            """,
            .text(provider), .integer(Int64(limit))
        ).map(IdPAccountRecord.init(row:))
    }

    /// The newest account of `provider` whose email is `email` (compared lowercased, through
    /// the generated `identities.email` column and its index).
    public func idpAccount(provider: String, email: String) throws(StoreError) -> IdPAccountRecord? {
        if let postgres { return try postgres.store { try $0.idpAccount(provider: provider, email: email) } }
        return try queryFirst(
            """
            SELECT provider_id,
                   json_extract(identity_data, '$.email') AS email,
                   coalesce(json_extract(identity_data, '$.name'), json_extract(identity_data, '$.full_name')) AS name
            FROM identities WHERE email = lower(?) AND provider = ?
            ORDER BY coalesce(last_sign_in_at, created_at) DESC, rowid DESC
            LIMIT 1
            """,
            .text(email), .text(provider)
        ).map(IdPAccountRecord.init(row:))
    }
}

extension IdPAccountRecord {
    init(row: Row) {
        subject = row.string("provider_id") ?? ""
        email = row.string("email")
        name = row.string("name")
    }
}

extension IdPSigningKeyRecord {
    init(row: Row) {
        kid = row.string("kid") ?? ""
        privateJWK = row.string("private_jwk") ?? "{}"
        createdAt = row.int64("created_at") ?? 0
    }
}

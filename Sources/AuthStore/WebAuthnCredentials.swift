import GoFormats

/// A row of `webauthn_credentials` (GoTrue's `auth.webauthn_credentials`, migration
/// 20260302000000_add_passkeys): one passkey of a user.
public struct WebAuthnCredentialRecord: Sendable, Equatable {
    public var id: String
    public var userID: String
    public var credentialID: [UInt8]
    /// The COSE_Key bytes from the attested credential data.
    public var publicKey: [UInt8]
    public var attestationType: String
    public var aaguid: String?
    public var signCount: Int64
    /// JSON array of transport names.
    public var transports: String
    public var backupEligible: Bool
    public var backedUp: Bool
    public var friendlyName: String
    /// Unix microseconds.
    public var createdAt: Int64
    public var updatedAt: Int64
    public var lastUsedAt: Int64?

    public init(id: String, userID: String, credentialID: [UInt8], publicKey: [UInt8], attestationType: String,
                aaguid: String?, signCount: Int64, transports: String, backupEligible: Bool, backedUp: Bool,
                friendlyName: String, at time: Int64) {
        self.id = id
        self.userID = userID
        self.credentialID = credentialID
        self.publicKey = publicKey
        self.attestationType = attestationType
        self.aaguid = aaguid
        self.signCount = signCount
        self.transports = transports
        self.backupEligible = backupEligible
        self.backedUp = backedUp
        self.friendlyName = friendlyName
        createdAt = time
        updatedAt = time
    }

    init(row: Row) {
        id = row.string("id") ?? ""
        userID = row.string("user_id") ?? ""
        credentialID = HexText.bytes(row.string("credential_id"))
        publicKey = HexText.bytes(row.string("public_key"))
        attestationType = row.string("attestation_type") ?? ""
        aaguid = row.string("aaguid")
        signCount = row.int64("sign_count") ?? 0
        transports = row.string("transports") ?? "[]"
        backupEligible = row.bool("backup_eligible") ?? false
        backedUp = row.bool("backed_up") ?? false
        friendlyName = row.string("friendly_name") ?? ""
        createdAt = row.int64("created_at") ?? 0
        updatedAt = row.int64("updated_at") ?? 0
        lastUsedAt = row.int64("last_used_at")
    }

    static let select = """
        SELECT id, user_id, credential_id, public_key, attestation_type, aaguid, sign_count, transports,
        backup_eligible, backed_up, friendly_name, created_at, updated_at, last_used_at FROM webauthn_credentials
        """
}

/// A row of `webauthn_challenges`: the state of one ceremony between its options and verify
/// calls (`user_id` is null for discoverable sign-in).
public struct WebAuthnChallengeRecord: Sendable, Equatable {
    public var id: String
    public var userID: String?
    /// `registration` or `authentication` (GoTrue's check also allows `signup`).
    public var challengeType: String
    /// go-webauthn's `SessionData` as JSON.
    public var sessionData: String
    public var createdAt: Int64
    public var expiresAt: Int64

    public init(id: String, userID: String?, challengeType: String, sessionData: String, createdAt: Int64, expiresAt: Int64) {
        self.id = id
        self.userID = userID
        self.challengeType = challengeType
        self.sessionData = sessionData
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    init(row: Row) {
        id = row.string("id") ?? ""
        userID = row.string("user_id")
        challengeType = row.string("challenge_type") ?? ""
        sessionData = row.string("session_data") ?? "{}"
        createdAt = row.int64("created_at") ?? 0
        expiresAt = row.int64("expires_at") ?? 0
    }
}

/// A credential of the emulator's software authenticator (no GoTrue counterpart): the private
/// half a browser's authenticator would keep, so tests can complete ceremonies headlessly.
public struct SoftwareAuthenticatorKeyRecord: Sendable, Equatable {
    public var credentialID: [UInt8]
    public var userID: String
    public var rpID: String
    /// The user handle given at registration (the user id's bytes for GoTrue).
    public var userHandle: [UInt8]
    /// The P-256 private scalar (32 bytes).
    public var privateKey: [UInt8]
    public var signCount: Int64
    /// A client-side discoverable (resident) credential, found without an allow list
    /// (WebAuthn §6.2.2); MFA factors' credentials are not.
    public var discoverable: Bool
    public var createdAt: Int64

    public init(credentialID: [UInt8], userID: String, rpID: String, userHandle: [UInt8], privateKey: [UInt8],
                signCount: Int64, discoverable: Bool, createdAt: Int64) {
        self.discoverable = discoverable
        self.credentialID = credentialID
        self.userID = userID
        self.rpID = rpID
        self.userHandle = userHandle
        self.privateKey = privateKey
        self.signCount = signCount
        self.createdAt = createdAt
    }

    init(row: Row) {
        credentialID = HexText.bytes(row.string("credential_id"))
        userID = row.string("user_id") ?? ""
        rpID = row.string("rp_id") ?? ""
        userHandle = HexText.bytes(row.string("user_handle"))
        privateKey = HexText.bytes(row.string("private_key"))
        signCount = row.int64("sign_count") ?? 0
        discoverable = row.bool("discoverable") ?? true
        createdAt = row.int64("created_at") ?? 0
    }
}

extension Connection {
    // MARK: webauthn_credentials

    public func webAuthnCredentials(userID: String) throws(StoreError) -> [WebAuthnCredentialRecord] {
        if let postgres {
            return try postgres.store(ifUUID: userID, else: []) { try $0.webAuthnCredentials(where: "user_id = $1", .text(userID)) }
        }
        return try query("\(WebAuthnCredentialRecord.select) WHERE user_id = ? ORDER BY created_at, rowid", .text(userID))
            .map(WebAuthnCredentialRecord.init(row:))
    }

    public func countWebAuthnCredentials(userID: String) throws(StoreError) -> Int {
        if let postgres {
            return try postgres.store(ifUUID: userID, else: 0) {
                Int(try $0.scalar("SELECT count(*) FROM auth.webauthn_credentials WHERE user_id = $1", .text(userID)).int64Value ?? 0)
            }
        }
        return Int(try scalar("SELECT count(*) FROM webauthn_credentials WHERE user_id = ?", .text(userID)).int64Value ?? 0)
    }

    public func webAuthnCredential(id: String, userID: String) throws(StoreError) -> WebAuthnCredentialRecord? {
        if let postgres {
            return try postgres.store(ifUUID: id, userID, else: nil) {
                try $0.webAuthnCredentials(where: "id = $1 AND user_id = $2", .text(id), .text(userID)).first
            }
        }
        return try queryFirst("\(WebAuthnCredentialRecord.select) WHERE id = ? AND user_id = ?", .text(id), .text(userID))
            .map(WebAuthnCredentialRecord.init(row:))
    }

    public func webAuthnCredential(credentialID: [UInt8]) throws(StoreError) -> WebAuthnCredentialRecord? {
        if let postgres {
            return try postgres.store { try $0.webAuthnCredentials(where: "credential_id = $1", .blob(credentialID)).first }
        }
        return try queryFirst("\(WebAuthnCredentialRecord.select) WHERE credential_id = ?", .text(HexText.string(credentialID)))
            .map(WebAuthnCredentialRecord.init(row:))
    }

    /// Throws a unique violation when the credential id is registered already.
    public func insertWebAuthnCredential(_ c: WebAuthnCredentialRecord) throws(StoreError) {
        if let postgres { return try postgres.store { try $0.insertWebAuthnCredential(c) } }
        try execute(
            """
            INSERT INTO webauthn_credentials (id, user_id, credential_id, public_key, attestation_type, aaguid, sign_count,
            transports, backup_eligible, backed_up, friendly_name, created_at, updated_at, last_used_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            .text(c.id), .text(c.userID), .text(HexText.string(c.credentialID)), .text(HexText.string(c.publicKey)), .text(c.attestationType),
            SQLValue(c.aaguid), .integer(c.signCount), .text(c.transports), .integer(c.backupEligible ? 1 : 0),
            .integer(c.backedUp ? 1 : 0), .text(c.friendlyName), .integer(c.createdAt), .integer(c.updatedAt),
            SQLValue(c.lastUsedAt))
    }

    /// `UpdateLastUsedWithSignCount`.
    /// `UpdateLastUsedWithSignCount`: the count, the last use and `updated_at`; the backup state
    /// stays as registered.
    public func markWebAuthnCredentialUsed(id: String, signCount: Int64, at time: Int64) throws(StoreError) {
        if let postgres {
            return try postgres.store(ifUUID: id, else: ()) { try $0.markWebAuthnCredentialUsed(id: id, signCount: signCount, at: time) }
        }
        try execute("UPDATE webauthn_credentials SET sign_count = ?, last_used_at = ?, updated_at = ? WHERE id = ?",
                    .integer(signCount), .integer(time), .integer(time), .text(id))
    }

    public func renameWebAuthnCredential(id: String, friendlyName: String, at time: Int64) throws(StoreError) {
        try execute("UPDATE webauthn_credentials SET friendly_name = ?, updated_at = ? WHERE id = ?",
                    [.text(friendlyName), .integer(time), .text(id)],
                    postgres: "UPDATE auth.webauthn_credentials SET friendly_name = $1, updated_at = $2 WHERE id = $3",
                    [.text(friendlyName), PostgresArguments.time(time), .text(id)], ifUUID: id)
    }

    public func deleteWebAuthnCredential(id: String) throws(StoreError) {
        try execute("DELETE FROM webauthn_credentials WHERE id = ?", [.text(id)],
                    postgres: "DELETE FROM auth.webauthn_credentials WHERE id = $1", ifUUID: id)
    }

    /// `DeleteWebAuthnCredentialsByUserID`: a soft-deleted user's passkeys go (a hard delete
    /// cascades).
    public func deleteWebAuthnCredentials(userID: String) throws(StoreError) {
        try execute("DELETE FROM webauthn_credentials WHERE user_id = ?", [.text(userID)],
                    postgres: "DELETE FROM auth.webauthn_credentials WHERE user_id = $1", ifUUID: userID)
    }

    // MARK: webauthn_challenges

    public func insertWebAuthnChallenge(_ c: WebAuthnChallengeRecord) throws(StoreError) {
        if let postgres { return try postgres.store { try $0.insertWebAuthnChallenge(c) } }
        try execute(
            "INSERT INTO webauthn_challenges (id, user_id, challenge_type, session_data, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
            .text(c.id), SQLValue(c.userID), .text(c.challengeType), .text(c.sessionData), .integer(c.createdAt),
            .integer(c.expiresAt))
    }

    /// `ConsumeWebAuthnChallengeByID`: deletes and returns the challenge of that type, bound to
    /// `userID` (or to no user when nil), so it can be used once whatever the outcome.
    public func consumeWebAuthnChallenge(id: String, type: String, userID: String?) throws(StoreError) -> WebAuthnChallengeRecord? {
        if let postgres {
            guard UUIDText.isValid(id), userID.map({ UUIDText.isValid($0) }) ?? true else { return nil }
            return try postgres.store { try $0.consumeWebAuthnChallenge(id: id, type: type, userID: userID) }
        }
        let columns = "id, user_id, challenge_type, session_data, created_at, expires_at"
        if let userID {
            return try queryFirst("DELETE FROM webauthn_challenges WHERE id = ? AND challenge_type = ? AND user_id = ? RETURNING \(columns)",
                                  .text(id), .text(type), .text(userID)).map(WebAuthnChallengeRecord.init(row:))
        }
        return try queryFirst("DELETE FROM webauthn_challenges WHERE id = ? AND challenge_type = ? AND user_id IS NULL RETURNING \(columns)",
                              .text(id), .text(type)).map(WebAuthnChallengeRecord.init(row:))
    }

    /// Reads a challenge without consuming it (the software authenticator looks options up by id).
    public func webAuthnChallenge(id: String) throws(StoreError) -> WebAuthnChallengeRecord? {
        if let postgres {
            return try postgres.store(ifUUID: id, else: nil) {
                try $0.queryFirst("SELECT \(PostgresConnection.webAuthnChallengeColumns) FROM auth.webauthn_challenges WHERE id = $1", .text(id))
                    .map(WebAuthnChallengeRecord.init(row:))
            }
        }
        return try queryFirst("SELECT id, user_id, challenge_type, session_data, created_at, expires_at FROM webauthn_challenges WHERE id = ?",
                              .text(id)).map(WebAuthnChallengeRecord.init(row:))
    }

    // MARK: emulator_authenticator_keys

    public func insertSoftwareAuthenticatorKey(_ k: SoftwareAuthenticatorKeyRecord) throws(StoreError) {
        if let postgres { return try postgres.store { try $0.insertSoftwareAuthenticatorKey(k) } }
        try execute(
            """
            INSERT INTO emulator_authenticator_keys (credential_id, user_id, rp_id, user_handle, private_key, sign_count,
            discoverable, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            .text(HexText.string(k.credentialID)), .text(k.userID), .text(k.rpID), .text(HexText.string(k.userHandle)),
            .text(HexText.string(k.privateKey)),
            .integer(k.signCount), .integer(k.discoverable ? 1 : 0), .integer(k.createdAt))
    }

    public func softwareAuthenticatorKeys(userID: String? = nil, rpID: String) throws(StoreError) -> [SoftwareAuthenticatorKeyRecord] {
        if let postgres {
            guard userID.map({ UUIDText.isValid($0) }) ?? true else { return [] }
            return try postgres.store { try $0.softwareAuthenticatorKeys(userID: userID, rpID: rpID) }
        }
        let columns = "credential_id, user_id, rp_id, user_handle, private_key, sign_count, discoverable, created_at"
        if let userID {
            return try query("SELECT \(columns) FROM emulator_authenticator_keys WHERE user_id = ? AND rp_id = ? ORDER BY created_at, rowid",
                             .text(userID), .text(rpID)).map(SoftwareAuthenticatorKeyRecord.init(row:))
        }
        return try query("SELECT \(columns) FROM emulator_authenticator_keys WHERE rp_id = ? ORDER BY created_at, rowid",
                         .text(rpID)).map(SoftwareAuthenticatorKeyRecord.init(row:))
    }

    /// Advances the key's signature counter and returns the new value.
    public func bumpSoftwareAuthenticatorCounter(credentialID: [UInt8]) throws(StoreError) -> Int64 {
        if let postgres {
            return try postgres.store {
                try $0.scalar("UPDATE auth_emulator.authenticator_keys SET sign_count = sign_count + 1 WHERE credential_id = $1 RETURNING sign_count",
                              .text(HexText.string(credentialID))).int64Value ?? 0
            }
        }
        try execute("UPDATE emulator_authenticator_keys SET sign_count = sign_count + 1 WHERE credential_id = ?", .text(HexText.string(credentialID)))
        return try scalar("SELECT sign_count FROM emulator_authenticator_keys WHERE credential_id = ?", .text(HexText.string(credentialID))).int64Value ?? 0
    }
}

// MARK: WebAuthn MFA factors (mfa_factors.web_authn_credential, mfa_challenges.web_authn_session_data)

extension Connection {
    /// `Factor.SaveWebAuthnCredential`: the credential JSON and the AAGUID.
    public func saveFactorWebAuthnCredential(factorID: String, credential: String, aaguid: String?, at time: Int64) throws(StoreError) {
        if let postgres {
            return try postgres.store(ifUUID: factorID, else: ()) {
                try $0.saveFactorWebAuthnCredential(factorID: factorID, credential: credential, aaguid: aaguid, at: time)
            }
        }
        try execute("UPDATE mfa_factors SET web_authn_credential = ?, web_authn_aaguid = ?, updated_at = ? WHERE id = ?",
                    .text(credential), SQLValue(aaguid), .integer(time), .text(factorID))
    }

    /// `User.WebAuthnCredentials`: the credentials of the user's verified WebAuthn factors, as
    /// (factor id, credential JSON).
    public func verifiedWebAuthnFactorCredentials(userID: String) throws(StoreError) -> [(factorID: String, credential: String)] {
        if let postgres {
            return try postgres.store(ifUUID: userID, else: []) { try $0.verifiedWebAuthnFactorCredentials(userID: userID) }
        }
        return try query("""
            SELECT id, web_authn_credential FROM mfa_factors
            WHERE user_id = ? AND factor_type = 'webauthn' AND status = 'verified' AND web_authn_credential IS NOT NULL
            ORDER BY created_at, rowid
            """, .text(userID)).map { ($0.string("id") ?? "", $0.string("web_authn_credential") ?? "{}") }
    }

    public func setChallengeWebAuthnSessionData(challengeID: String, sessionData: String) throws(StoreError) {
        try execute("UPDATE mfa_challenges SET web_authn_session_data = ? WHERE id = ?", [.text(sessionData), .text(challengeID)],
                    postgres: "UPDATE auth.mfa_challenges SET web_authn_session_data = $1::jsonb WHERE id = $2", ifUUID: challengeID)
    }

    public func challengeWebAuthnSessionData(challengeID: String) throws(StoreError) -> String? {
        if let postgres {
            return try postgres.store(ifUUID: challengeID, else: nil) {
                try $0.scalar("SELECT web_authn_session_data::text FROM auth.mfa_challenges WHERE id = $1", .text(challengeID)).stringValue
            }
        }
        return try scalar("SELECT web_authn_session_data FROM mfa_challenges WHERE id = ?", .text(challengeID)).stringValue
    }
}

/// Byte strings are stored as lowercase hex text, so every row survives the emulator's JSON
/// export and import (which carries text, numbers and booleans) unchanged.
enum HexText {
    private static let digits = Array("0123456789abcdef".utf8)

    static func string(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 0x0F)]) }
        return String(decoding: out, as: UTF8.self)
    }

    static func bytes(_ text: String?) -> [UInt8] {
        guard let text else { return [] }
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return [] }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x61...0x66: c - 0x57
            case 0x41...0x46: c - 0x37
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var i = 0
        while i < utf8.count {
            guard let hi = value(utf8[i]), let lo = value(utf8[i + 1]) else { return [] }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }
}

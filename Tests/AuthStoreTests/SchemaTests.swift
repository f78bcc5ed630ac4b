import Testing
@testable import AuthStore

@Suite struct SchemaTests {
    @Test func uniqueViolationCarriesExtendedCodeAndNoBoundValue() throws {
        let db = try Database(path: ":memory:")
        let secret = "sb-secret-7f3a9c1e-refresh-token-value"
        try db.write { c in
            try c.insertUser(id: "u1")
            try c.insertUser(id: "u2")
            try c.execute("INSERT INTO sessions (id, user_id) VALUES ('s1', 'u1')")
            try c.execute("INSERT INTO refresh_tokens (token, user_id, session_id) VALUES (?, 'u1', 's1')", .text(secret))
        }
        do {
            try db.write { try $0.execute("INSERT INTO refresh_tokens (token, user_id, session_id) VALUES (?, 'u2', 's1')", .text(secret)) }
            Issue.record("duplicate token must fail")
        } catch let error as StoreError {
            #expect(error.isUniqueViolation)
            #expect(!error.isForeignKeyViolation)
            #expect(error.isConstraintViolation)
            #expect(error.code == 2067)  // SQLITE_CONSTRAINT_UNIQUE, https://sqlite.org/rescode.html#constraint_unique
            #expect(error.message.contains("refresh_tokens.token"))
            #expect(!error.description.contains(secret))
            #expect(!String(describing: error).contains(secret))
            #expect(!error.message.contains(secret))
        }
        // A duplicate primary key is reported as a unique violation too.
        do {
            try db.write { try $0.insertUser(id: "u1") }
            Issue.record("duplicate id must fail")
        } catch let error as StoreError {
            #expect(error.code == 1555)  // SQLITE_CONSTRAINT_PRIMARYKEY
            #expect(error.isUniqueViolation)
        }
    }

    @Test func foreignKeysAreEnforcedAndCascade() throws {
        let db = try Database(path: ":memory:")
        do {
            try db.write { try $0.execute("INSERT INTO sessions (id, user_id) VALUES ('s1', 'nobody')") }
            Issue.record("orphan session must fail")
        } catch let error as StoreError {
            #expect(error.isForeignKeyViolation)
            #expect(error.code == 787)  // SQLITE_CONSTRAINT_FOREIGNKEY
        }
        try db.write { c in
            try c.insertUser(id: "u1", email: "a@example.com")
            try c.insertUser(id: "u2", email: "b@example.com")
            for (session, user) in [("s1", "u1"), ("s2", "u1"), ("s3", "u2")] {
                try c.execute("INSERT INTO sessions (id, user_id, created_at) VALUES (?, ?, ?)", .text(session), .text(user), .integer(t0))
                try c.execute("INSERT INTO refresh_tokens (token, user_id, session_id) VALUES (?, ?, ?)", .text("rt-\(session)"), .text(user), .text(session))
                try c.execute("INSERT INTO mfa_amr_claims (id, session_id, authentication_method) VALUES (?, ?, 'password')", .text("amr-\(session)"), .text(session))
            }
            try c.execute("INSERT INTO identities (id, provider_id, user_id, identity_data, provider) VALUES ('i1', 'u1', 'u1', '{}', 'email')")
            try c.execute("INSERT INTO mfa_factors (id, user_id, factor_type, status) VALUES ('f1', 'u1', 'totp', 'verified')")
            try c.execute("INSERT INTO mfa_challenges (id, factor_id, created_at) VALUES ('c1', 'f1', ?)", .integer(t0))
            try c.execute("INSERT INTO one_time_tokens (id, user_id, token_type, token_hash, relates_to) VALUES ('o1', 'u1', 'recovery_token', 'h', 'a@example.com')")
        }
        try db.write { try $0.execute("DELETE FROM users WHERE id = ?", "u1") }
        try db.read { (c: Connection) throws in
            #expect(try c.query("SELECT id FROM sessions").compactMap { $0.string("id") } == ["s3"])
            #expect(try c.query("SELECT token FROM refresh_tokens").compactMap { $0.string("token") } == ["rt-s3"])
            #expect(try c.count("mfa_amr_claims") == 1)
            #expect(try c.count("identities") == 0)
            #expect(try c.count("mfa_factors") == 0)
            #expect(try c.count("mfa_challenges") == 0)
            #expect(try c.count("one_time_tokens") == 0)
        }
    }

    /// GoTrue's users_email_partial_key is on the email alone: one account per email across
    /// every audience (0014).
    @Test func emailUniqueAcrossAudiencesCaseInsensitively() throws {
        let db = try Database(path: ":memory:")
        try db.write { try $0.insertUser(id: "u1", email: "Alice@Example.com") }
        do {
            try db.write { try $0.insertUser(id: "u2", email: "alice@example.com") }
            Issue.record("same email, same aud must fail")
        } catch let error as StoreError {
            #expect(error.isUniqueViolation)
        }
        do {
            try db.write { try $0.insertUser(id: "u3", email: "alice@example.com", aud: "other-aud") }
            Issue.record("same email, another aud must fail")
        } catch let error as StoreError {
            #expect(error.isUniqueViolation)
            #expect(error.message.contains("users_email_partial_key"))
        }
        try db.write { c in
            try c.insertUser(id: "u3", email: "bob@example.com", aud: "other-aud")
            // Emails may be absent or empty on many users (phone-only, anonymous).
            try c.insertUser(id: "u4", email: nil)
            try c.insertUser(id: "u5", email: nil)
            try c.insertUser(id: "u6", email: "")
            try c.insertUser(id: "u7", email: "")
            // SSO accounts are exempt, as GoTrue's users_email_partial_key.
            try c.execute("INSERT INTO users (id, aud, email, is_sso_user, created_at, updated_at) VALUES ('u8', 'authenticated', 'alice@example.com', 1, 0, 0)")
        }
        #expect(try db.read { try $0.count("users") } == 7)
    }

    @Test func phoneUnique() throws {
        let db = try Database(path: ":memory:")
        try db.write { c in
            try c.insertUser(id: "u1", phone: "15551234567")
            try c.insertUser(id: "u2", phone: nil)
            try c.insertUser(id: "u3", phone: nil)
            try c.insertUser(id: "u4", phone: "")
            try c.insertUser(id: "u5", phone: "")
        }
        #expect(throws: StoreError.self) { try db.write { try $0.insertUser(id: "u6", phone: "15551234567") } }
    }

    @Test func confirmedAtIsTheEarlierConfirmation() throws {
        let db = try Database(path: ":memory:")
        let rows = try db.write { c -> [SQLValue] in
            try c.insertUser(id: "none")
            try c.insertUser(id: "email")
            try c.insertUser(id: "phone")
            try c.insertUser(id: "both")
            try c.execute("UPDATE users SET email_confirmed_at = 100 WHERE id = 'email'")
            try c.execute("UPDATE users SET phone_confirmed_at = 200 WHERE id = 'phone'")
            try c.execute("UPDATE users SET email_confirmed_at = 300, phone_confirmed_at = 250 WHERE id = 'both'")
            return try ["none", "email", "phone", "both"].map {
                try c.scalar("SELECT confirmed_at FROM users WHERE id = ?", .text($0))
            }
        }
        // GoTrue: confirmed_at = LEAST(email_confirmed_at, phone_confirmed_at), NULLs ignored.
        #expect(rows == [.null, .integer(100), .integer(200), .integer(250)])
        #expect(throws: StoreError.self) {
            try db.write { try $0.execute("UPDATE users SET confirmed_at = 1") }
        }
    }

    @Test func identityEmailIsGeneratedLowercased() throws {
        let db = try Database(path: ":memory:")
        try db.write { c in
            try c.insertUser(id: "u1")
            try c.execute(
                "INSERT INTO identities (id, provider_id, user_id, identity_data, provider) VALUES (?, ?, ?, ?, ?)",
                "i1", "u1", "u1", #"{"sub":"u1","email":"Mixed.Case@Example.COM"}"#, "email")
            try c.execute(
                "INSERT INTO identities (id, provider_id, user_id, identity_data, provider) VALUES (?, ?, ?, ?, ?)",
                "i2", "gh-42", "u1", #"{"sub":"gh-42"}"#, "github")
        }
        try db.read { (c: Connection) throws in
            #expect(try c.scalar("SELECT email FROM identities WHERE id = 'i1'") == .text("mixed.case@example.com"))
            #expect(try c.scalar("SELECT email FROM identities WHERE id = 'i2'") == .null)
            #expect(try c.scalar("SELECT id FROM identities WHERE email = ?", "mixed.case@example.com") == .text("i1"))
            // JSON is stored verbatim.
            #expect(try c.scalar("SELECT identity_data FROM identities WHERE id = 'i1'")
                        == .text(#"{"sub":"u1","email":"Mixed.Case@Example.COM"}"#))
        }
        // One identity per (provider_id, provider).
        do {
            try db.write { try $0.execute("INSERT INTO identities (id, provider_id, user_id, provider) VALUES ('i3', 'gh-42', 'u1', 'github')") }
            Issue.record("duplicate identity must fail")
        } catch let error as StoreError {
            #expect(error.isUniqueViolation)
        }
        #expect(throws: StoreError.self) {
            try db.write { try $0.execute("INSERT INTO identities (id, provider_id, user_id, identity_data, provider) VALUES ('i4', 'x', 'u1', 'not json', 'email')") }
        }
    }

    /// The claims come back in the order `ORDER BY updated_at DESC, rowid DESC` gives, NULL
    /// times and ties included, for random sets of claims.
    @Test func amrClaimsAreOrderedAsSQLiteWould() throws {
        let db = try Database(path: ":memory:")
        defer { db.close() }
        var generator = SystemRandomNumberGenerator()
        try db.write { conn in
            try conn.insertUser(id: "u1")
            for round in 0..<200 {
                let sessionID = "s\(round)"
                try conn.insertSession(SessionRecord(id: sessionID, userID: "u1", at: 1))
                let methods = ["password", "otp", "totp", "oauth", "magiclink", "anonymous"].shuffled(using: &generator)
                for (index, method) in methods.prefix(Int.random(in: 1...6, using: &generator)).enumerated() {
                    try conn.addAMRClaim(id: "\(sessionID)-\(index)", sessionID: sessionID, method: method,
                                         at: Int64.random(in: 1...3, using: &generator))
                    if Int.random(in: 0..<5, using: &generator) == 0 {
                        try conn.execute("UPDATE mfa_amr_claims SET updated_at = NULL WHERE id = ?", .text("\(sessionID)-\(index)"))
                    }
                }
                let expected = try conn.query(
                    "SELECT authentication_method FROM mfa_amr_claims WHERE session_id = ? ORDER BY updated_at DESC, rowid DESC",
                    .text(sessionID)
                ).map { $0.string("authentication_method") ?? "" }
                #expect(try conn.amrClaims(sessionID: sessionID).map(\.method) == expected)
            }
        }
    }

    @Test func strictTablesRejectWrongTypes() throws {
        let db = try Database(path: ":memory:")
        do {
            try db.write { try $0.execute("INSERT INTO users (id, created_at, updated_at) VALUES ('u1', 'yesterday', 0)") }
            Issue.record("text in an INTEGER column of a STRICT table must fail")
        } catch let error as StoreError {
            #expect(error.isConstraintViolation)  // SQLITE_CONSTRAINT_DATATYPE
        }
    }

    @Test func oneTimeTokenPerUserAndType() throws {
        let db = try Database(path: ":memory:")
        try db.write { c in
            try c.insertUser(id: "u1")
            try c.execute("INSERT INTO one_time_tokens (id, user_id, token_type, token_hash, relates_to) VALUES ('a', 'u1', 'confirmation_token', 'h1', 'x@example.com')")
            try c.execute("INSERT INTO one_time_tokens (id, user_id, token_type, token_hash, relates_to) VALUES ('b', 'u1', 'recovery_token', 'h2', 'x@example.com')")
        }
        #expect(throws: StoreError.self) {
            try db.write { try $0.execute("INSERT INTO one_time_tokens (id, user_id, token_type, token_hash, relates_to) VALUES ('c', 'u1', 'recovery_token', 'h3', 'x@example.com')") }
        }
        #expect(throws: StoreError.self) {
            try db.write { try $0.execute("INSERT INTO one_time_tokens (id, user_id, token_type, token_hash, relates_to) VALUES ('d', 'u1', 'phone_change_token', '', '1555')") }
        }
    }

    @Test func friendlyNameUniquePerUserWhenSet() throws {
        let db = try Database(path: ":memory:")
        try db.write { c in
            try c.insertUser(id: "u1")
            try c.insertUser(id: "u2")
            for (id, user, name) in [("f1", "u1", "phone"), ("f2", "u2", "phone"), ("f3", "u1", ""), ("f4", "u1", "")] {
                try c.execute("INSERT INTO mfa_factors (id, user_id, friendly_name, factor_type, status) VALUES (?, ?, ?, 'totp', 'unverified')",
                              .text(id), .text(user), .text(name))
            }
        }
        #expect(throws: StoreError.self) {
            try db.write { try $0.execute("INSERT INTO mfa_factors (id, user_id, friendly_name, factor_type, status) VALUES ('f5', 'u1', 'phone', 'totp', 'unverified')") }
        }
    }
}

/// The lookups the API makes must be index searches, not table scans: a scan per sign-in would
/// make the emulator slow once a test suite has created a few thousand users.
@Suite struct IndexUsageTests {
    static let lookups: [(sql: String, arguments: [SQLValue])] = [
        ("SELECT * FROM users WHERE aud = ? AND email = ?", ["authenticated", "a@example.com"]),
        ("SELECT * FROM users WHERE lower(email) = ? AND aud = ? AND is_sso_user = 0", ["a@example.com", "authenticated"]),
        ("SELECT * FROM users WHERE phone = ?", ["15551234567"]),
        ("SELECT * FROM users WHERE confirmation_token = ?", ["t"]),
        ("SELECT * FROM users WHERE recovery_token = ?", ["t"]),
        ("SELECT * FROM users WHERE email_change_token_new = ?", ["t"]),
        ("SELECT * FROM users WHERE email_change_token_current = ?", ["t"]),
        ("SELECT * FROM users WHERE reauthentication_token = ?", ["t"]),
        ("SELECT * FROM users ORDER BY created_at DESC LIMIT 50", []),
        ("SELECT * FROM identities WHERE user_id = ?", ["u"]),
        ("SELECT * FROM identities WHERE email = ?", ["a@example.com"]),
        ("SELECT * FROM identities WHERE provider_id = ? AND provider = ?", ["s", "google"]),
        ("SELECT * FROM sessions WHERE user_id = ? ORDER BY created_at", ["u"]),
        ("SELECT * FROM refresh_tokens WHERE token = ?", ["t"]),
        // No lookup by `parent` or by (user_id, revoked): migration 0003 dropped those indexes.
        ("SELECT * FROM refresh_tokens WHERE session_id = ? AND revoked = 0", ["s"]),
        ("SELECT * FROM one_time_tokens WHERE token_hash = ?", ["h"]),
        ("SELECT * FROM one_time_tokens WHERE relates_to = ?", ["a@example.com"]),
        ("SELECT * FROM one_time_tokens WHERE user_id = ? AND token_type = ?", ["u", "recovery_token"]),
        ("SELECT * FROM mfa_factors WHERE user_id = ?", ["u"]),
        ("SELECT * FROM mfa_challenges WHERE factor_id = ?", ["f"]),
        ("SELECT * FROM mfa_amr_claims WHERE session_id = ?", ["s"]),
        ("SELECT * FROM flow_state WHERE auth_code = ?", ["c"]),
        // Not the audit log by time: as GoTrue's table, it has no index on created_at (0011), so
        // its admin listing sorts rather than make every audited write update one.
    ]

    @Test(arguments: lookups.indices) func lookupUsesAnIndex(index: Int) throws {
        let (sql, arguments) = Self.lookups[index]
        let db = try Database(path: ":memory:")
        let plan = try db.read { try $0.query("EXPLAIN QUERY PLAN " + sql, arguments) }
            .compactMap { $0.string("detail") }
        #expect(!plan.isEmpty)
        // "SCAN t" is a full scan; "SCAN t USING INDEX" walks an index (ORDER BY … LIMIT).
        let fullScans = plan.filter { $0.hasPrefix("SCAN") && !$0.contains("INDEX") }
        #expect(fullScans.isEmpty, "\(sql): \(plan)")
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(sql): \(plan)")
    }
}

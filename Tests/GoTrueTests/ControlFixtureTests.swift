import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
import Testing
@testable import EmulatorTools
@testable import GoTrue

@Suite struct ControlFixtureTests {
    static let adaID = "11111111-2222-4333-8444-555555555555"
    /// "abcdefghijklmnopqrstuvwxyz" at cost 10: a test vector of jBCrypt's `TestBCrypt.java`
    /// (Damien Miller), also checked against libxcrypt's crypt(3).
    static let bcryptPassword = "abcdefghijklmnopqrstuvwxyz"
    static let bcryptHash = "$2a$10$fVH8e28OQRj9tqiDXs1e1uxpsjN0c7II7YPKXua2NAKYvM6iQk7dq"

    static let fixture: JSON = [
        "users": [
            ["id": .string(adaID), "email": "Ada@Example.com", "password": "correct-horse", "email_confirm": true,
             "user_metadata": ["first_name": "Ada"], "app_metadata": ["plan": "pro"]],
            ["email": "grace@example.com", "password_hash": .string(bcryptHash), "email_confirm": true,
             "identities": [["provider": "github", "id": 583231, "identity_data": ["user_name": "grace"]]]],
            ["phone": "+1 555 555 0100", "password": "phone-password", "phone_confirm": true, "role": "tester"],
        ],
    ]

    func table(_ api: GoTrueAPI, _ name: String) throws -> TableDump {
        try api.project.database.read { conn in try conn.dumpTable(name) }
    }

    @Test func seedsUsersThatSignIn() throws {
        let (api, _) = try makeControlAPI { $0.external.phoneEnabled = true }
        let response = api.control("POST", "/emulator/v1/seed", Self.fixture)
        #expect(response.status == 200)
        let users = try #require(response.json["users"]?.arrayValue)
        #expect(users.count == 3)
        #expect(users[0]["id"]?.stringValue == Self.adaID)
        #expect(users[0]["email"]?.stringValue == "ada@example.com")
        #expect(users[0]["user_metadata"]?["first_name"]?.stringValue == "Ada")
        #expect(users[0]["user_metadata"]?["email_verified"]?.boolValue == true)
        #expect(users[0]["app_metadata"]?["plan"]?.stringValue == "pro")
        #expect(users[0]["app_metadata"]?["provider"]?.stringValue == "email")
        #expect(users[0]["email_confirmed_at"]?.stringValue == "2026-01-01T00:00:00Z")
        #expect(users[1]["app_metadata"]?["providers"] == ["email", "github"])
        let identities = try #require(users[1]["identities"]?.arrayValue)
        #expect(identities.map { $0["provider"]?.stringValue } == ["email", "github"])
        #expect(identities[1]["id"]?.stringValue == "583231")
        #expect(identities[1]["identity_data"]?["user_name"]?.stringValue == "grace")
        #expect(identities[1]["identity_data"]?["sub"]?.stringValue == "583231")
        #expect(users[2]["phone"]?.stringValue == "15555550100")
        #expect(users[2]["role"]?.stringValue == "tester")

        let ada = api.signIn("ada@example.com", "correct-horse")
        #expect(ada.status == 200)
        #expect(claims(of: ada.json["access_token"]?.stringValue ?? "")["sub"]?.stringValue == Self.adaID)
        // The imported bcrypt hash verifies as the real server's would.
        #expect(api.signIn("grace@example.com", Self.bcryptPassword).status == 200)
        #expect(api.signIn("grace@example.com", "wrong").status == 400)
        let phone = api.call("POST", "/token?grant_type=password", ["phone": "15555550100", "password": "phone-password"])
        #expect(phone.status == 200)
        #expect(claims(of: phone.json["access_token"]?.stringValue ?? "")["role"]?.stringValue == "tester")
    }

    @Test func seedingTwiceLeavesTheSameState() throws {
        let base = ManualClock()
        let (api, _) = try makeControlAPI(base: base)
        #expect(api.control("POST", "/emulator/v1/seed", Self.fixture).status == 200)
        let users = try table(api, "users")
        let identities = try table(api, "identities")
        base.advance(seconds: 60)
        #expect(api.control("POST", "/emulator/v1/seed", Self.fixture).status == 200)
        #expect(try table(api, "users") == users)
        #expect(try table(api, "identities") == identities)
    }

    @Test func reseedingUpdatesByEmailAndReplacesMetadata() throws {
        let (api, _) = try makeControlAPI()
        let first = api.control("POST", "/emulator/v1/seed", ["users": [["email": "x@example.com", "password": "one-password",
                                                                          "user_metadata": ["a": 1]]]])
        let id = try #require(first.json["users"]?[0]?["id"]?.stringValue)
        let second = api.control("POST", "/emulator/v1/seed", ["users": [["email": "x@example.com", "password": "two-password",
                                                                           "user_metadata": ["b": 2], "email_confirm": true]]])
        #expect(second.json["users"]?[0]?["id"]?.stringValue == id)
        #expect(second.json["users"]?[0]?["user_metadata"] == ["b": 2, "email_verified": true])
        #expect(api.signIn("x@example.com", "one-password").status == 400)
        #expect(api.signIn("x@example.com", "two-password").status == 200)
    }

    @Test(arguments: [
        (#"{"users": [{"email": "ok@example.com"}, {"email": "not-an-email"}]}"#, "users[1].email"),
        (#"{"users": [{"email": "ok@example.com"}, {"id": "nope", "email": "b@example.com"}]}"#, "users[1].id"),
        (#"{"users": [{"email": "ok@example.com"}, {"phone": "0555"}]}"#, "users[1].phone"),
        (#"{"users": [{"email": "ok@example.com", "password": "x", "password_hash": "$2a$10$x"}]}"#, "users[0].password_hash"),
        (#"{"users": [{"email": "ok@example.com", "password_hash": "$argon2d$v=19$m=4096,t=3,p=1$c2FsdA$aGFzaA"}]}"#,
         "users[0].password_hash: not a supported hash (bcrypt $2a$/$2b$/$2y$, $argon2i$, $argon2id$, $fbscrypt$ or $pbkdf2-sha256$): "
            + "crypto: argon2 hash uses unsupported algorithm \"argon2d\" only argon2i and argon2id supported"),
        (#"{"users": [{"email": "ok@example.com", "password_hash": "plain"}]}"#, "users[0].password_hash"),
        (#"{"users": [{"email": "ok@example.com", "ban_duration": "forever"}]}"#, "users[0].ban_duration"),
        (#"{"users": [{"email": "ok@example.com", "user_metadata": []}]}"#, "users[0].user_metadata"),
        (#"{"users": [{"email": "ok@example.com", "email_confirm": "yes"}]}"#, "users[0].email_confirm"),
        (#"{"users": [{"email": "ok@example.com", "nickname": "x"}]}"#, "users[0].nickname"),
        (#"{"users": [{"password": "only-a-password"}]}"#, "users[0]: a user needs an email or a phone"),
        (#"{"users": [{"email": "ok@example.com"}, {"email": "OK@example.com"}]}"#, "users[1].email: the same email as users[0]"),
        (#"{"users": [{"email": "ok@example.com", "identities": [{"provider": "github"}]}]}"#, "users[0].identities[0].id"),
        (#"{"users": [{"email": "ok@example.com", "identities": [{"id": "1"}]}]}"#, "users[0].identities[0].provider"),
        (#"{"users": [{"email": "ok@example.com", "factors": [{"factor_type": "sms"}]}]}"#, "users[0].factors[0].factor_type"),
        (#"{"users": [{"email": "ok@example.com", "factors": [{"factor_type": "totp", "secret": "not base32!"}]}]}"#, "users[0].factors[0].secret"),
        (#"{"users": [{"email": "ok@example.com", "factors": [{"factor_type": "phone"}]}]}"#, "users[0].factors[0].phone: required"),
        (#"{"users": [{"email": "ok@example.com", "factors": [{"factor_type": "totp", "status": "maybe"}]}]}"#, "users[0].factors[0].status"),
        (#"{"users": [{"email": "ok@example.com", "factors": [{"factor_type": "totp", "friendly_name": "a"}, {"factor_type": "totp", "friendly_name": "a"}]}]}"#, "users[0].factors[1].friendly_name"),
        (#"{"users": [{"email": "ok@example.com", "factors": [{"factor_type": "totp", "seed": "x"}]}]}"#,
         "users[0].factors[0].seed: unknown field (expected one of: factor_type, friendly_name, id, phone, secret, status)"),
        (#"{"users": [{"email": "ok@example.com", "identities": [{"provider": "github", "id": "1", "uid": "x"}]}]}"#,
         "users[0].identities[0].uid: unknown field (expected one of: id, identity_data, identity_id, provider, provider_id)"),
        (#"{"users": [{"email": "ok@example.com", "factors": ["totp"]}]}"#, "users[0].factors[0]: must be an object"),
        (#"{"users": [{"email": "ok@example.com", "identities": [1]}]}"#, "users[0].identities[0]: must be an object"),
        (#"{"users": ["ok@example.com"]}"#, "users[0]: must be an object"),
        (#"{"users": [{"email": "ok@example.com", "factors": [{"factor_type": "totp", "friendly_name": 7}]}]}"#,
         "users[0].factors[0].friendly_name: must be a string"),
        (#"{"users": [{"email": 7}]}"#, "users[0].email: must be a string"),
        (#"{"users": {}}"#, "\"users\" must be an array"),
        (#"{"people": []}"#, "unknown top-level field"),
    ])
    func invalidFixturesNameTheEntryAndChangeNothing(body: String, expected: String) throws {
        let (api, _) = try makeControlAPI()
        let response = api.controlRaw("POST", "/emulator/v1/seed", body: body)
        #expect(response.status == 400)
        #expect(errorCode(response) == "validation_failed")
        let message = response.json["msg"]?.stringValue ?? ""
        #expect(message.hasPrefix("invalid fixture: "))
        #expect(message.contains(expected), "\(message)")
        #expect(try table(api, "users").rows.isEmpty)
        #expect(api.project.fixtures.lastApplied == nil)
    }

    /// New users skip the lookups a stored user needs (tokens, identities, factors to replace):
    /// what the response reports must still be exactly what was stored, and a second seed of
    /// the same document must find and keep every row.
    @Test func newUsersAreStoredAsReported() throws {
        let (api, _) = try makeControlAPI { $0.external.phoneEnabled = true }
        let fixture: JSON = ["users": [
            ["email": "one@example.com", "password": "password-one", "email_confirm": true],
            ["email": "two@example.com", "phone": "15555550101", "password": "password-two", "phone_confirm": true],
            ["email": "three@example.com", "identities": [["provider": "github", "id": "77"]],
             "factors": [["factor_type": "totp", "friendly_name": "phone app"]]],
        ]]
        let response = api.control("POST", "/emulator/v1/seed", fixture)
        #expect(response.status == 200)
        let users = try #require(response.json["users"]?.arrayValue)
        let stored = try table(api, "identities")
        let idColumn = try #require(stored.columns.firstIndex(of: "id"))
        let storedIDs = Set(stored.rows.compactMap { row -> String? in
            if case .text(let id) = row[idColumn] { return id }
            return nil
        })
        var reported: [String] = []
        for user in users {
            for identity in user["identities"]?.arrayValue ?? [] { reported.append(identity["identity_id"]?.stringValue ?? "") }
        }
        #expect(reported.count == 5)
        #expect(Set(reported) == storedIDs)
        #expect(users[1]["identities"]?.arrayValue?.map { $0["provider"]?.stringValue } == ["email", "phone"])
        #expect(users[2]["factors"]?.arrayValue?.count == 1)
        #expect(api.signIn("one@example.com", "password-one").status == 200)

        let usersTable = try table(api, "users")
        #expect(api.control("POST", "/emulator/v1/seed", fixture).status == 200)
        #expect(try table(api, "users") == usersTable)
        #expect(try table(api, "identities") == stored)
    }

    /// Into an empty database the seeder skips lookups for keys it has not inserted itself; a
    /// later entry that names an earlier one (here the same email, with the default audience
    /// spelled out) must still find it and update it, as it would in a non-empty database.
    @Test func aLaterEntryFindsAnEarlierOneInAFreshDatabase() throws {
        let (api, _) = try makeControlAPI()
        let response = api.control("POST", "/emulator/v1/seed", ["users": [
            ["email": "same@example.com", "password": "first-password"],
            ["email": "other@example.com"],
            ["email": "SAME@example.com", "aud": "authenticated", "password": "second-password", "email_confirm": true,
             "user_metadata": ["n": 2]],
        ]])
        #expect(response.status == 200)
        let users = try #require(response.json["users"]?.arrayValue)
        #expect(users[0]["id"] == users[2]["id"])
        #expect(try table(api, "users").rows.count == 2)
        #expect(try table(api, "identities").rows.count == 2)
        #expect(api.signIn("same@example.com", "second-password").status == 200)
        // And in a database that already holds users, the same document changes nothing more.
        let before = try table(api, "users")
        #expect(api.control("POST", "/emulator/v1/seed", ["users": [
            ["email": "same@example.com", "password": "second-password", "email_confirm": true, "user_metadata": ["n": 2]],
        ]]).status == 200)
        #expect(try table(api, "users").rows.count == before.rows.count)
    }

    /// A fixture of `FixturePasswords.overlapThreshold` chunks or more is written while its
    /// last passwords are still hashing: every user still gets the hash of its own password,
    /// a re-seed keeps them, and a conflict found late rolls everything back.
    @Test func largeFixturesAreWrittenWhileHashing() throws {
        let (api, _) = try makeControlAPI { $0.passwordHashIterations = 10 }
        let count = FixturePasswords.chunkSize * FixturePasswords.overlapThreshold + 37
        var users: [JSON] = []
        for i in 0..<count {
            var user: JSONObject = ["email": .string("bulk\(i)@example.com"), "email_confirm": true]
            // Every seventh entry has no password, so chunk slots and entry positions differ.
            if i % 7 != 3 { user["password"] = .string("password-\(i)") }
            users.append(.object(user))
        }
        let response = api.control("POST", "/emulator/v1/seed", ["users": .array(users)])
        #expect(response.status == 200)
        for i in [0, 1, 255, 256, 1024, count / 2, count - 2, count - 1] where i % 7 != 3 {
            #expect(api.signIn("bulk\(i)@example.com", "password-\(i)").status == 200, "user \(i)")
            #expect(api.signIn("bulk\(i)@example.com", "password-\(i + 1)").status == 400, "user \(i)")
        }
        let stored = try table(api, "users")
        let hashColumn = try #require(stored.columns.firstIndex(of: "encrypted_password"))
        #expect(stored.rows.filter { $0[hashColumn] != .null && $0[hashColumn] != .text("") }.count
            == (0..<count).filter { $0 % 7 != 3 }.count)
        // The remembered fixture holds the hashes, so reset?keep_seed needs no hashing.
        let remembered = try #require(api.project.fixtures.lastApplied)
        #expect(remembered.users.allSatisfy { $0.password == nil })
        #expect(remembered.users.filter { $0.passwordHash != nil }.count == (0..<count).filter { $0 % 7 != 3 }.count)

        // The same document again: every stored hash still verifies, nothing is rewritten.
        #expect(api.control("POST", "/emulator/v1/seed", ["users": .array(users)]).status == 200)
        #expect(try table(api, "users") == stored)

        // A conflict in the last entry: nothing of the new document stays.
        _ = api.signUp("taken@example.com")
        var conflicting = users.map { entry -> JSON in
            var object = entry.objectValue ?? [:]
            object["email"] = .string("new-" + (object["email"]?.stringValue ?? ""))
            return .object(object)
        }
        conflicting.append(["id": "22222222-2222-4222-8222-222222222222", "email": "taken@example.com", "password": "x-password"])
        let refused = api.control("POST", "/emulator/v1/seed", ["users": .array(conflicting)])
        #expect(refused.status == 400)
        #expect(try table(api, "users").rows.count == stored.rows.count + 1)
    }

    /// `hash(forEntry:)` waits for its own chunk: asked for the last entries first, straight
    /// after hashing started, every answer is still the hash of that entry's password.
    @Test func passwordHashesWaitForTheirChunk() {
        var configuration = Configuration()
        configuration.passwordHashIterations = 50
        let count = FixturePasswords.chunkSize * 10
        let entries = (0..<count).map { 2 * $0 + 1 }  // every other entry has a password
        let plaintexts = (0..<count).map { "password-\($0)" }
        let stored: [String?] = (0..<count).map { _ in nil }
        let passwords = FixturePasswords(entries: entries, count: 2 * count + 1, plaintexts: plaintexts, stored: stored,
                                         passwords: Passwords(configuration: configuration, environment: Environment()))
        defer { passwords.stop() }
        for (slot, entry) in entries.enumerated().reversed() {
            let hash = passwords.hash(forEntry: entry)
            #expect(hash.map { PasswordHasher.verify(password: plaintexts[slot], against: $0) } == true, "entry \(entry)")
            #expect(passwords.hash(forEntry: entry - 1) == nil)
        }
    }

    @Test func aConflictFoundInTheTransactionRollsEverythingBack() throws {
        let (api, _) = try makeControlAPI()
        _ = api.signUp("taken@example.com")
        let response = api.control("POST", "/emulator/v1/seed", ["users": [
            ["email": "new@example.com", "password": "password1"],
            ["id": "22222222-2222-4222-8222-222222222222", "email": "taken@example.com"],
        ]])
        #expect(response.status == 400)
        #expect(response.json["msg"]?.stringValue?.contains("users[1].email") == true)
        #expect(try table(api, "users").rows.count == 1)
    }

    // MARK: Reset

    @Test func resetDeletesEverythingOrReturnsToTheSeed() throws {
        let (api, clock) = try makeControlAPI()
        #expect(api.control("POST", "/emulator/v1/seed", Self.fixture).status == 200)
        let seededIDs = try table(api, "users").rows.map { $0[0] }
        _ = api.signUp("extra@example.com")
        _ = api.control("POST", "/emulator/v1/clock", ["advance_seconds": 100, "freeze": true])

        var response = api.control("POST", "/emulator/v1/reset?keep_seed=true")
        #expect(response.status == 200)
        #expect(response.json["users"]?.intValue == 3)
        #expect(response.json["kept_seed"]?.boolValue == true)
        #expect(try table(api, "users").rows.map { $0[0] } == seededIDs)
        #expect(try table(api, "sessions").rows.isEmpty)
        #expect(clock.reading.offsetMicroseconds == 0 && !clock.reading.frozen)
        #expect(api.signIn("ada@example.com", "correct-horse").status == 200)
        #expect(api.signIn("extra@example.com").status == 400)

        response = api.control("POST", "/emulator/v1/reset")
        #expect(response.json["users"]?.intValue == 0)
        let counts = try api.project.database.read { conn in
            try conn.dataTables().map { try conn.dumpTable($0).rows.count }
        }
        #expect(counts.allSatisfy { $0 == 0 })
        #expect(api.control("POST", "/emulator/v1/reset?keep_seed=maybe").status == 400)
    }

    // MARK: Export / import

    @Test func exportResetImportRoundTrips() throws {
        let (api, _) = try makeControlAPI()
        #expect(api.control("POST", "/emulator/v1/seed", Self.fixture).status == 200)
        let session = api.signIn("ada@example.com", "correct-horse").json
        let exported = api.control("GET", "/emulator/v1/export")
        #expect(exported.status == 200)
        #expect(exported.json["format"]?.stringValue == "supabase-auth-emulator.snapshot")
        let tables = try #require(exported.json["tables"]?.objectValue)
        #expect(tables["users"]?.arrayValue?.count == 3)
        #expect(tables["sessions"]?.arrayValue?.count == 1)
        #expect(tables["refresh_tokens"]?.arrayValue?.count == 1)
        #expect(tables["mfa_factors"] != nil && tables["identities"] != nil)
        // Generated columns are left out.
        #expect(tables["users"]?[0]?["confirmed_at"] == nil)

        _ = api.control("POST", "/emulator/v1/reset")
        #expect(api.signIn("ada@example.com", "correct-horse").status == 400)
        let imported = api.controlRaw("POST", "/emulator/v1/import", body: exported.text)
        #expect(imported.status == 200)
        #expect(imported.json["imported"]?["users"]?.intValue == 3)
        #expect(api.control("GET", "/emulator/v1/export").json["tables"] == exported.json["tables"])
        // The old session's tokens work again.
        let token = try #require(session["access_token"]?.stringValue)
        #expect(api.call("GET", "/user", bearer: token).status == 200)
        #expect(api.refresh(session["refresh_token"]?.stringValue ?? "").status == 200)
        #expect(api.signIn("grace@example.com", Self.bcryptPassword).status == 200)
    }

    @Test(arguments: [
        (#"{"tables": {"nope": []}}"#, "unknown table"),
        (#"{"tables": {"users": [{"id": "a", "bogus": 1}]}}"#, "tables.users"),
        (#"{"tables": {"users": [{"id": "a", "created_at": "yesterday", "updated_at": 1}]}}"#, "tables.users"),
        (#"{"tables": {"identities": [{"id": "i", "provider_id": "p", "user_id": "missing", "provider": "github"}]}}"#, "tables.identities"),
        (#"{"tables": {"users": [[1]]}}"#, "tables.users[0]"),
        (#"{"tables": {"users": [{"id": {"x": 1}}]}}"#, "tables.users[0].id"),
        (#"{"format": "other", "tables": {}}"#, "format"),
        (#"{"version": 2, "tables": {}}"#, "version"),
        (#"{}"#, "missing \"tables\""),
    ])
    func badSnapshotsAreRefusedAndChangeNothing(body: String, expected: String) throws {
        let (api, _) = try makeControlAPI()
        _ = api.signUp("keep@example.com")
        let response = api.controlRaw("POST", "/emulator/v1/import", body: body)
        #expect(response.status == 400)
        #expect(errorCode(response) == "validation_failed")
        #expect(response.json["msg"]?.stringValue?.contains(expected) == true, "\(response.text)")
        #expect(api.signIn("keep@example.com").status == 200)
    }
}

import Foundation
import Testing
@testable import AuthStore
import PostgresTestSupport

/// The admin listings, the fake identity providers' keys and accounts, and reset, export and
/// import: the same on both backends, plus what only Postgres mode has (an app's foreign keys
/// to `auth.users`, GoTrue's column types in a snapshot).
@Suite struct StoreBackendAdminTests {
    private func user(email: String? = nil, phone: String? = nil, at time: Int64 = t0, aud: String = "authenticated",
                      metadata: String = "{}") -> UserRecord {
        var user = UserRecord(id: newID(), createdAt: time)
        user.aud = aud
        user.role = "authenticated"
        user.email = email
        user.phone = phone
        user.userMetadata = metadata
        return user
    }

    @Test(arguments: StoreBackend.available) func adminListingFiltersSortsAndPagesAsGoTrue(backend: StoreBackend) throws {
        let db = try backend.open()
        let ada = user(email: "ada@example.com", at: t0)
        let grace = user(email: "grace@navy.mil", at: t0 + 1, metadata: #"{"full_name": "Grace HOPPER"}"#)
        // Two users created in one instant: the one inserted later counts as newer.
        let tie1 = user(email: "tie1@example.com", at: t0 + 2)
        let tie2 = user(phone: "15550002", at: t0 + 2)
        let other = user(email: "ada@other.example", at: t0 + 3, aud: "other")
        try db.write { (c: Connection) throws in
            for u in [ada, grace, tie1, tie2, other] { try c.insertUser(u) }
        }
        try db.read { (c: Connection) throws in
            let all = try c.users(aud: "authenticated", filter: "", ascending: false, paging: Paging(page: 1, perPage: 20))
            #expect(all.items.map(\.id) == [tie2.id, tie1.id, grace.id, ada.id] && all.total == 4)
            let up = try c.users(aud: "authenticated", filter: "", ascending: true, paging: Paging(page: 2, perPage: 3))
            #expect(up.items.map(\.id) == [tie2.id] && up.total == 4)
            // Pop's defaults: page 0 reads as 1, a size of 0 as 20; past the end is empty.
            #expect(try c.users(aud: "authenticated", filter: "", ascending: false, paging: Paging(page: 0, perPage: 0)).items.count == 4)
            let past = try c.users(aud: "authenticated", filter: "", ascending: false, paging: Paging(page: 9, perPage: 2))
            #expect(past.items.isEmpty && past.total == 4)
            // email LIKE (case-sensitive; `_` is LIKE's wildcard), full_name ILIKE.
            func ids(_ filter: String) throws -> [String] {
                try c.users(aud: "authenticated", filter: filter, ascending: true, paging: Paging(page: 1, perPage: 20)).items.map(\.id)
            }
            #expect(try ids("example") == [ada.id, tie1.id])
            #expect(try ids("EXAMPLE").isEmpty)
            #expect(try ids("a_a") == [ada.id])
            #expect(try ids("hopper") == [grace.id])
            #expect(try ids("1555").isEmpty)  // the phone is not searched
            #expect(try c.users(aud: "other", filter: "ada", ascending: true, paging: Paging(page: 1, perPage: 20)).items.map(\.id) == [other.id])
        }
    }

    @Test(arguments: StoreBackend.available) func theDashboardSearchLooksAtEveryField(backend: StoreBackend) throws {
        let db = try backend.open()
        let ada = user(email: "ada@example.com", at: t0, metadata: #"{"name": "Ada Lovelace"}"#)
        let grace = user(phone: "15550001", at: t0 + 1, metadata: #"{"full_name": "Grace Hopper"}"#)
        let alan = user(email: "alan@example.com", at: t0 + 2)
        try db.write { (c: Connection) throws in
            for u in [ada, grace, alan] { try c.insertUser(u) }
        }
        try db.read { (c: Connection) throws in
            func ids(_ text: String, perPage: Int = 20) throws -> [String] {
                try c.searchUsers(aud: "authenticated", text: text, paging: Paging(page: 1, perPage: perPage)).items.map(\.id)
            }
            #expect(try ids("EXAMPLE") == [alan.id, ada.id])
            #expect(try ids("lovelace") == [ada.id])
            #expect(try ids("hopper") == [grace.id])
            #expect(try ids("+1555") == [grace.id])
            #expect(try ids("+").isEmpty)  // a lone `+` is looked for as it is, not as an empty phone
            #expect(try ids(ada.id.uppercased()) == [ada.id])  // a whole id
            #expect(try ids(String(alan.id.prefix(13))) == [alan.id])
            #expect(try ids("%").isEmpty)  // literal, not a wildcard
            let page = try c.searchUsers(aud: "authenticated", text: "a", paging: Paging(page: 1, perPage: 1))
            #expect(page.items.map(\.id) == [alan.id] && page.total == 3)
            #expect(try c.searchUsers(aud: "other", text: "ada", paging: Paging(page: 1, perPage: 20)).total == 0)
        }
    }

    @Test(arguments: StoreBackend.available) func auditLogFiltersAndTheNewestEntry(backend: StoreBackend) throws {
        let db = try backend.open()
        #expect(try db.read { try $0.newestAuditLogEntry() } == nil)
        let ids = (0..<3).map { _ in newID() }
        try db.write { (c: Connection) throws in
            try c.insertAuditLogEntry(id: ids[0], payload: #"{"action":"login","actor_username":"ada@example.com"}"#, ipAddress: "127.0.0.1", at: t0)
            try c.insertAuditLogEntry(id: ids[1], payload: #"{"action":"user_signedup","traits":{"user_id":"U-42"}}"#, ipAddress: "", at: t0 + 1)
            try c.insertAuditLogEntry(id: ids[2], payload: #"{"action":"logout","actor_username":"bob@example.com"}"#, ipAddress: "", at: t0 + 1)
        }
        try db.read { (c: Connection) throws in
            let all = try c.auditLogEntries(columns: [], value: "", paging: Paging(page: 1, perPage: 2))
            #expect(all.items.map(\.id) == [ids[2], ids[1]] && all.total == 3)
            let first = try #require(try c.auditLogEntries(columns: [], value: "", paging: Paging(page: 2, perPage: 2)).items.first)
            #expect(first == AuditLogRecord(id: ids[0], payload: #"{"action":"login","actor_username":"ada@example.com"}"#,
                                            createdAt: t0, ipAddress: "127.0.0.1"))
            func found(_ columns: [String], _ value: String) throws -> [String] {
                try c.auditLogEntries(columns: columns, value: value, paging: Paging(page: 1, perPage: 20)).items.map(\.id)
            }
            #expect(try found(["action"], "LOG") == [ids[2], ids[0]])  // ILIKE
            #expect(try found(["actor_username", "action"], "ADA@") == [ids[0]])
            #expect(try found(["traits.user_id"], "u-4") == [ids[1]])  // a path into the payload
            #expect(try found(["action"], "").count == 3)  // no value: no filter
            #expect(try c.newestAuditLogEntry()?.id == ids[2])
        }
    }

    @Test(arguments: StoreBackend.available) func softDeletionRewritesAnIdentitysSubject(backend: StoreBackend) throws {
        let db = try backend.open()
        let ada = user(email: "ada@example.com")
        let identity = IdentityRecord(id: newID(), providerID: "gh-1", userID: ada.id, identityData: #"{"sub": "gh-1"}"#, provider: "github", at: t0)
        try db.write { (c: Connection) throws in
            try c.insertUser(ada)
            try c.insertIdentity(identity)
            try c.setIdentityProviderID(id: identity.id, providerID: "obfuscated", identityData: "{}", at: t0 + 5)
            try c.setIdentityProviderID(id: "not-a-uuid", providerID: "x", identityData: "{}", at: t0 + 5)
        }
        let stored = try #require(try db.read { try $0.identity(id: identity.id) })
        #expect(stored.providerID == "obfuscated" && stored.identityData == "{}" && stored.updatedAt == t0 + 5)
        #expect(try db.read { try $0.identity(providerID: "gh-1", provider: "github") } == nil)
    }

    @Test(arguments: StoreBackend.available) func identityProviderKeysAndRememberedAccounts(backend: StoreBackend) throws {
        let db = try backend.open()
        #expect(try db.read { try $0.idpSigningKeyID() } == nil)
        let key = IdPSigningKeyRecord(kid: "kid-1", privateJWK: #"{"kty":"RSA","n":"x","e":"AQAB"}"#, createdAt: t0)
        #expect(try db.write { try $0.insertIdPSigningKeyIfNone(key) } == key)
        let later = IdPSigningKeyRecord(kid: "kid-2", privateJWK: #"{"kty":"RSA"}"#, createdAt: t0 + 1)
        #expect(try db.write { try $0.insertIdPSigningKeyIfNone(later) } == key)  // the first stays in force
        #expect(try db.read { try $0.idpSigningKey() } == key)  // JWK text as written
        #expect(try db.read { try $0.idpSigningKeyID() } == "kid-1")

        let ada = user(email: "ada@example.com")
        let bob = user(email: "bob@example.com")
        var adaGoogle = IdentityRecord(id: newID(), providerID: "g-ada", userID: ada.id,
                                       identityData: #"{"email": "Ada@Example.com", "name": "Ada"}"#, provider: "google", at: t0)
        adaGoogle.lastSignInAt = t0 + 10
        let bobGoogle = IdentityRecord(id: newID(), providerID: "g-bob", userID: bob.id,
                                       identityData: #"{"email": "bob@example.com", "full_name": "Bob B"}"#, provider: "google", at: t0 + 5)
        let bobGitHub = IdentityRecord(id: newID(), providerID: "gh-bob", userID: bob.id, identityData: "{}", provider: "github", at: t0 + 20)
        try db.write { (c: Connection) throws in
            try c.insertUser(ada)
            try c.insertUser(bob)
            for identity in [adaGoogle, bobGoogle, bobGitHub] { try c.insertIdentity(identity) }
        }
        try db.read { (c: Connection) throws in
            #expect(try c.idpAccounts(provider: "google") == [
                IdPAccountRecord(subject: "g-ada", email: "Ada@Example.com", name: "Ada"),
                IdPAccountRecord(subject: "g-bob", email: "bob@example.com", name: "Bob B"),
            ])
            #expect(try c.idpAccounts(provider: "google", limit: 1).map(\.subject) == ["g-ada"])
            #expect(try c.idpAccounts(provider: "github") == [IdPAccountRecord(subject: "gh-bob", email: nil, name: nil)])
            #expect(try c.idpAccount(provider: "google", email: "ADA@example.com")?.subject == "g-ada")
            #expect(try c.idpAccount(provider: "github", email: "ada@example.com") == nil)
        }
    }

    @Test(arguments: StoreBackend.available) func resetExportAndImportRoundTrip(backend: StoreBackend) throws {
        let db = try backend.open()
        let ada = user(email: "ada@example.com", metadata: #"{"b": 1, "a": "x"}"#)
        let session = SessionRecord(id: newID(), userID: ada.id, at: t0)
        let key = IdPSigningKeyRecord(kid: "kid-1", privateJWK: #"{"kty":"RSA"}"#, createdAt: t0)
        let firstToken = try db.write { (c: Connection) throws in
            try c.insertUser(ada)
            try c.insertIdentity(IdentityRecord(id: newID(), providerID: ada.id, userID: ada.id, identityData: "{}", provider: "email", at: t0))
            try c.insertSession(session)
            _ = try c.insertIdPSigningKeyIfNone(key)
            try c.insertOutboxMessage(OutboxRecord(id: newID(), channel: "email", recipient: "ada@example.com", type: "signup", sentAt: t0))
            try c.insertAuditLogEntry(id: newID(), payload: #"{"action":"login"}"#, ipAddress: "", at: t0)
            _ = try c.insertProjectSigningKeyIfNone(algorithm: "ES256", privateJWK: #"{"kty":"EC"}"#, at: t0)
            return try c.insertRefreshToken(token: "token-one", userID: ada.id, sessionID: session.id, parent: nil, at: t0)
        }
        let stored = try db.read { try $0.user(id: ada.id) }
        let names = try db.read { try $0.dataTables() }
        for name in ["users", "identities", "sessions", "refresh_tokens", "audit_log_entries", "emulator_outbox"] + TableDump.secretTables.sorted() {
            #expect(names.contains(name), "\(name) is a data table")
        }
        #expect(!names.contains("schema_migrations") && !names.contains("project_signing_keys"))
        let position = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(position["users"]! < position["sessions"]! && position["sessions"]! < position["refresh_tokens"]!)
        #expect(try db.read { try $0.writableColumns(of: "users") }.contains("email"))
        #expect(try db.read { try $0.writableColumns(of: "users") }.contains("confirmed_at") == false)  // generated

        let dumps = try db.read { (c: Connection) throws in try names.map { try c.dumpTable($0) } }
        let users = try #require(dumps.first { $0.name == "users" })
        #expect(users.rows.count == 1)
        #expect(users.rows[0][users.columns.firstIndex(of: "created_at")!] == .integer(t0))  // microseconds on both
        #expect(users.rows[0][users.columns.firstIndex(of: "is_anonymous")!] == .integer(0))

        try db.write { try $0.deleteAllData() }
        try db.read { (c: Connection) throws in
            for name in names { #expect(try c.dumpTable(name).rows.isEmpty, "\(name) was emptied") }
            #expect(try c.projectSigningKey(algorithm: "ES256") == #"{"kty":"EC"}"#)  // configuration, kept
        }
        try db.write { (c: Connection) throws in
            for dump in dumps { try c.restoreTable(dump) }
        }
        #expect(try db.read { (c: Connection) throws in try names.map { try c.dumpTable($0) } } == dumps)
        try db.read { (c: Connection) throws in
            #expect(try c.user(id: ada.id) == stored)
            #expect(try c.idpSigningKey() == key)
            #expect(try c.refreshToken("token-one")?.id == firstToken)
        }
        // The next refresh token's id follows the restored ones.
        let next = try db.write { try $0.insertRefreshToken(token: "token-two", userID: ada.id, sessionID: session.id, parent: nil, at: t0 + 1) }
        #expect(next > firstToken)

        _ = try db.read { (c: Connection) throws in
            #expect(throws: StoreError.self) { try c.dumpTable("no_such_table") }
        }
        #expect(throws: StoreError.self) {
            try db.write { try $0.restoreTable(TableDump(name: "users", columns: ["no_such_column"], rows: [[.null]])) }
        }
        #expect(throws: StoreError.self) {
            try db.write { try $0.restoreTable(TableDump(name: "no_such_table", columns: [], rows: [])) }
        }
    }

    /// A reset that rolls back (a refused import) leaves the serial sequences with the rows it
    /// kept: the next refresh token's id still follows theirs instead of colliding with one.
    @Test(arguments: StoreBackend.available) func aRolledBackResetKeepsTheSequences(backend: StoreBackend) throws {
        struct Refused: Error {}
        let db = try backend.open()
        let ada = user(email: "ada@example.com")
        let session = SessionRecord(id: newID(), userID: ada.id, at: t0)
        let first = try db.write { (c: Connection) throws in
            try c.insertUser(ada)
            try c.insertSession(session)
            return try c.insertRefreshToken(token: "token-one", userID: ada.id, sessionID: session.id, parent: nil, at: t0)
        }
        #expect(throws: Refused.self) {
            try db.write { (c: Connection) throws in
                try c.deleteAllData()
                throw Refused()
            }
        }
        let next = try db.write { try $0.insertRefreshToken(token: "token-two", userID: ada.id, sessionID: session.id, parent: nil, at: t0 + 1) }
        #expect(next > first)
    }
}

/// What only Postgres mode has: the app's tables beside GoTrue's, GoTrue's `instance_id`, and
/// column types the SQLite schema does not use.
@Suite(.enabled(if: PostgresCluster.canRun,
                "skipped: needs PostgreSQL's server binaries (apt install postgresql; macOS: brew install postgresql@17); CI=true fails instead"))
struct PostgresAdminTests {
    private func open() throws -> Database { try StoreBackend.postgres.open() }

    private func appSQL(_ db: Database, _ sql: String) throws {
        try db.write { c in try c.postgres!.store { try $0.executeScript(sql) } }
    }

    private func insertUser(_ db: Database, email: String) throws -> UserRecord {
        var user = UserRecord(id: newID(), createdAt: t0)
        user.aud = "authenticated"
        user.role = "authenticated"
        user.email = email
        return try db.write { try $0.insertUser(user) }
    }

    @Test func resetDeletesAppRowsThroughOnDeleteCascade() throws {
        let db = try open()
        try appSQL(db, "CREATE TABLE public.profiles (id uuid PRIMARY KEY REFERENCES auth.users (id) ON DELETE CASCADE, name text)")
        let ada = try insertUser(db, email: "ada@example.com")
        try appSQL(db, "INSERT INTO public.profiles (id, name) VALUES ('\(ada.id)', 'Ada')")
        try db.write { try $0.deleteAllData() }
        #expect(try rows(db, "SELECT count(*) FROM auth.users") == [["0"]])
        #expect(try rows(db, "SELECT count(*) FROM public.profiles") == [["0"]])
        // The app's table itself stays (no TRUNCATE ... CASCADE, no DROP).
        #expect(try rows(db, "SELECT to_regclass('public.profiles') IS NOT NULL") == [["1"]])
    }

    @Test func anAppForeignKeyWithoutCascadeFailsTheResetAndNothingIsLost() throws {
        let db = try open()
        try appSQL(db, """
            CREATE TABLE public.profiles (id uuid PRIMARY KEY REFERENCES auth.users (id) ON DELETE CASCADE);
            CREATE TABLE public.notes (id serial PRIMARY KEY, author uuid CONSTRAINT notes_author_fkey REFERENCES auth.users (id), body text);
            """)
        let ada = try insertUser(db, email: "ada@example.com")
        try db.write { try $0.insertOutboxMessage(OutboxRecord(id: newID(), channel: "email", recipient: "ada@example.com", type: "signup", sentAt: t0)) }
        try appSQL(db, """
            INSERT INTO public.profiles (id) VALUES ('\(ada.id)');
            INSERT INTO public.notes (author, body) VALUES ('\(ada.id)', 'kept');
            """)
        let error = #expect(throws: StoreError.self) { try db.write { try $0.deleteAllData() } }
        let postgres = try #require(error?.postgres)
        #expect(postgres.sqlstate == "23503" && error?.isForeignKeyViolation == true)
        #expect(postgres.constraint == "notes_author_fkey")
        #expect(postgres.message.contains("foreign key constraint notes_author_fkey of table public.notes"))
        #expect(postgres.message.contains("auth.users") && postgres.message.contains("Nothing was deleted"))
        #expect(!postgres.message.contains(ada.id))  // no row values
        // The transaction rolled back: GoTrue's rows, the emulator's and the app's are all there.
        #expect(try db.read { try $0.user(id: ada.id) } != nil)
        #expect(try db.read { try $0.outboxMessages() }.count == 1)
        #expect(try rows(db, "SELECT (SELECT count(*) FROM public.notes) || '/' || (SELECT count(*) FROM public.profiles)") == [["1/1"]])
        // Once the app's rows are gone, the reset goes through.
        try appSQL(db, "DELETE FROM public.notes")
        try db.write { try $0.deleteAllData() }
        #expect(try db.read { try $0.user(id: ada.id) } == nil)
    }

    @Test func listingsKeepGoTruesInstanceFilterAndTheDashboardShowsEveryRow() throws {
        let db = try open()
        let ada = try insertUser(db, email: "ada@example.com")
        // A seed script that leaves instance_id NULL: GoTrue's admin listing does not show it.
        let seeded = newID()
        try appSQL(db, """
            INSERT INTO auth.users (id, aud, role, email, created_at, updated_at, raw_app_meta_data, raw_user_meta_data,
              confirmation_token, recovery_token, email_change_token_new, email_change)
            VALUES ('\(seeded)', 'authenticated', 'authenticated', 'seeded@example.com', now(), now(), '{}', '{}', '', '', '', '');
            INSERT INTO auth.audit_log_entries (id, payload, created_at) VALUES (gen_random_uuid(), '{"action":"x"}', now());
            """)
        try db.read { (c: Connection) throws in
            let listed = try c.users(aud: "authenticated", filter: "", ascending: true, paging: Paging(page: 1, perPage: 20))
            #expect(listed.items.map(\.id) == [ada.id] && listed.total == 1)
            #expect(try c.searchUsers(aud: "authenticated", text: "seeded", paging: Paging(page: 1, perPage: 20)).items.map(\.id) == [seeded])
            #expect(try c.auditLogEntries(columns: [], value: "", paging: Paging(page: 1, perPage: 20)).total == 0)
        }
    }

    @Test func aSnapshotCarriesByteaArraysAndTimestampsWithoutTimeZone() throws {
        let db = try open()
        let ada = try insertUser(db, email: "ada@example.com")
        var session = SessionRecord(id: newID(), userID: ada.id, at: t0)
        session.refreshedAt = t0 + 7  // timestamp without time zone
        try db.write { try $0.insertSession(session) }
        try appSQL(db, """
            INSERT INTO auth.webauthn_credentials (user_id, credential_id, public_key, created_at)
            VALUES ('\(ada.id)', '\\x00ff10', '\\xabcd', now());
            INSERT INTO auth.custom_oauth_providers (provider_type, identifier, name, client_id, client_secret, scopes,
              authorization_url, token_url, userinfo_url)
            VALUES ('oauth2', 'custom:acme', 'Acme', 'id', 'secret', '{openid,"a b"}',
              'https://acme.test/a', 'https://acme.test/t', 'https://acme.test/u');
            """)
        let tables = ["users", "sessions", "webauthn_credentials", "custom_oauth_providers"]
        let dumps = try db.read { (c: Connection) throws in try tables.map { try c.dumpTable($0) } }
        func value(_ dump: TableDump, _ column: String) -> SQLValue { dump.rows[0][dump.columns.firstIndex(of: column)!] }
        #expect(value(dumps[1], "refreshed_at") == .integer(t0 + 7))
        #expect(value(dumps[2], "credential_id") == .text("00ff10"))  // hex, as the SQLite schema stores it
        #expect(value(dumps[3], "scopes") == .text(#"["openid","a b"]"#))
        try db.write { (c: Connection) throws in
            try c.deleteAllData()
            for dump in dumps { try c.restoreTable(dump) }
        }
        #expect(try db.read { (c: Connection) throws in try tables.map { try c.dumpTable($0) } } == dumps)
        #expect(try rows(db, "SELECT encode(credential_id, 'hex'), array_length(scopes, 1)::text FROM auth.webauthn_credentials, auth.custom_oauth_providers")
                == [["00ff10", "2"]])
    }

    @Test func aSQLiteSnapshotImportsIntoPostgresMode() throws {
        let lite = try StoreBackend.sqlite.open()
        var ada = UserRecord(id: newID(), createdAt: t0)
        ada.aud = "authenticated"
        ada.role = "authenticated"
        ada.email = "ada@example.com"
        ada.userMetadata = #"{"name": "Ada"}"#
        var session = SessionRecord(id: newID(), userID: ada.id, at: t0)
        session.ip = ""  // SQLite keeps '' where Postgres' inet holds NULL
        var flow = FlowStateRecord(id: newID(), userID: ada.id, authCode: "code", codeChallengeMethod: "s256", codeChallenge: "challenge",
                                   providerType: "github", authenticationMethod: "oauth", at: t0)
        flow.redirectTo = "http://localhost:3000/welcome"
        let plain = FlowStateRecord(id: newID(), userID: nil, authCode: "code-2", codeChallengeMethod: "plain", codeChallenge: "c",
                                    providerType: "email", authenticationMethod: "magiclink", at: t0 + 1)
        try lite.write { (c: Connection) throws in
            try c.insertUser(ada)
            try c.insertIdentity(IdentityRecord(id: newID(), providerID: ada.id, userID: ada.id, identityData: "{}", provider: "email", at: t0))
            try c.insertSession(session)
            _ = try c.insertRefreshToken(token: "token-one", userID: ada.id, sessionID: session.id, parent: nil, at: t0)
            try c.insertFlowState(flow)
            try c.insertFlowState(plain)
            try c.insertAuditLogEntry(id: newID(), payload: #"{"action":"login"}"#, ipAddress: "", at: t0)
        }
        let dumps = try lite.read { (c: Connection) throws in try c.dataTables().map { try c.dumpTable($0) } }

        let db = try open()
        try db.write { (c: Connection) throws in
            try c.deleteAllData()
            let known = try c.dataTables()
            for name in known { if let dump = dumps.first(where: { $0.name == name }) { try c.restoreTable(dump) } }
        }
        try db.read { (c: Connection) throws in
            let stored = try #require(try c.user(id: ada.id))
            #expect(stored.email == "ada@example.com" && stored.userMetadata == #"{"name": "Ada"}"# && stored.createdAt == t0)
            // NULL instance_ids became GoTrue's nil uuid: the admin listing and audit log show the rows.
            #expect(try c.users(aud: "authenticated", filter: "", ascending: false, paging: Paging(page: 1, perPage: 20)).items.map(\.id) == [ada.id])
            #expect(try c.auditLogEntries(columns: [], value: "", paging: Paging(page: 1, perPage: 20)).total == 1)
            #expect(try c.session(id: session.id)?.ip == nil)
            #expect(try c.refreshToken("token-one")?.sessionID == session.id)
            // The flow's redirect went to the emulator's side table, and comes back in the export.
            let flows = try c.dumpTable("flow_state")
            let redirect = flows.columns.firstIndex(of: "redirect_to")!
            #expect(flows.rows.map { $0[redirect] } == [.text("http://localhost:3000/welcome"), .null])
        }
        #expect(try rows(db, "SELECT flow_state_id::text, redirect_to FROM auth_emulator.flow_state_redirects") == [[flow.id, "http://localhost:3000/welcome"]])
        #expect(try rows(db, "SELECT count(*) FROM auth.users WHERE instance_id = '00000000-0000-0000-0000-000000000000'") == [["1"]])
        #expect(!(try db.read { try $0.dataTables() }.contains("emulator_flow_state_redirects")))
    }
}

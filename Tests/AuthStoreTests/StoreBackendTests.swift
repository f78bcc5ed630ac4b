import Foundation
import Testing
@testable import AuthStore
import PostgresTestSupport

/// The store's backends: SQLite, and Postgres mode on the throw-away cluster when its server
/// binaries are there (always under CI=true, where their absence fails the run).
enum StoreBackend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    static let available: [StoreBackend] = PostgresCluster.canRun ? allCases : [.sqlite]

    var testDescription: String { rawValue }

    /// A new, empty database: `:memory:`, or a fresh database on the shared cluster with
    /// GoTrue's schema created (two readers, so reads leave the writer).
    func open() throws -> Database {
        switch self {
        case .sqlite: return try Database(path: ":memory:")
        case .postgres: return try Database(postgres: try Self.freshPostgresDatabase(), options: DatabaseOptions(readerCount: 2))
        }
    }

    static func freshPostgresDatabase() throws -> String {
        let cluster = try PostgresCluster.sharedCluster()
        return cluster.connectionString(database: try cluster.makeDatabase())
    }
}

/// A new lowercase uuid (Postgres prints uuids lowercase; SQLite keeps what it is given).
func newID() -> String { UUID().uuidString.lowercased() }

/// The behaviour of the ported store methods, the same on both backends.
@Suite struct StoreBackendTests {
    func user(email: String? = nil, phone: String? = nil, at time: Int64 = t0) -> UserRecord {
        var user = UserRecord(id: newID(), createdAt: time)
        user.aud = "authenticated"
        user.role = "authenticated"
        user.email = email
        user.phone = phone
        return user
    }

    @Test(arguments: StoreBackend.available) func usersAreFoundAsGoTrueFindsThem(backend: StoreBackend) throws {
        let db = try backend.open()
        var ada = user(email: "ada@example.com", phone: "15550001")
        ada.encryptedPassword = "$2a$04$abcdefghijklmnopqrstuu"
        ada.emailConfirmedAt = t0 + 5
        ada.userMetadata = #"{"name": "Ada"}"#
        ada.refreshConfirmedAt()  // what the generated column holds
        let stored = try db.write { try $0.insertUser(ada) }
        #expect(stored == ada)
        try db.read { (c: Connection) throws in
            #expect(try c.user(id: ada.id) == ada)
            #expect(try c.user(id: "not-a-uuid") == nil)
            #expect(try c.user(email: "ADA@example.com", aud: "authenticated")?.id == ada.id)
            #expect(try c.user(email: "ada@example.com", aud: "other") == nil)
            #expect(try c.user(phone: "15550001", aud: "authenticated")?.id == ada.id)
            #expect(try c.userExists(email: "Ada@Example.com", aud: "authenticated", excluding: nil))
            #expect(try !c.userExists(email: "ada@example.com", aud: "authenticated", excluding: ada.id))
            #expect(try c.userExists(phone: "15550001", aud: "authenticated", excluding: newID()))
            #expect(try c.hasUsers())
            #expect(try c.userIDs(emails: ["ADA@example.com", "nobody@example.com"]) == [ada.id])
            #expect(try c.user(id: ada.id)?.confirmedAt == t0 + 5)
        }
        var changed = ada
        changed.confirmationToken = "pkce_abc"
        changed.phoneConfirmedAt = t0 + 1
        changed.refreshConfirmedAt()
        try db.write { (c: Connection) throws in
            try c.updateUser(changed)
            try c.updateUserLastSignIn(id: ada.id, lastSignInAt: t0 + 9, updatedAt: t0 + 9)
        }
        changed.lastSignInAt = t0 + 9
        changed.updatedAt = t0 + 9
        try db.read { (c: Connection) throws in
            #expect(try c.user(id: ada.id) == changed)
            #expect(try c.user(confirmationToken: "pkce_abc")?.id == ada.id)
        }
        try db.write { try $0.deleteUser(id: ada.id) }
        #expect(try db.read { try $0.user(id: ada.id) } == nil)
    }

    @Test(arguments: StoreBackend.available) func identitiesAreAUsersOldestFirst(backend: StoreBackend) throws {
        let db = try backend.open()
        let ada = user(email: "ada@example.com")
        let first = IdentityRecord(id: newID(), providerID: ada.id, userID: ada.id,
                                   identityData: #"{"email": "Ada@Example.com", "sub": "x"}"#, provider: "email", at: t0)
        var second = IdentityRecord(id: newID(), providerID: "gh-1", userID: ada.id, identityData: "{}", provider: "github", at: t0)
        try db.write { (c: Connection) throws in
            try c.insertUser(ada)
            try c.insertIdentity(first)
            try c.insertIdentity(second)
        }
        second.identityData = #"{"login": "ada"}"#
        second.lastSignInAt = t0 + 3
        second.updatedAt = t0 + 3
        try db.write { try $0.updateIdentity(second) }
        try db.read { (c: Connection) throws in
            let found = try c.identities(userID: ada.id)
            #expect(found.map(\.id) == [first.id, second.id])
            #expect(found.first?.email == "ada@example.com")
            #expect(found.last?.lastSignInAt == t0 + 3)
            #expect(try c.identity(providerID: "gh-1", provider: "github")?.id == second.id)
            #expect(try c.identity(providerID: "gh-1", provider: "google") == nil)
            #expect(try c.identity(id: first.id)?.providerID == ada.id)
            #expect(try c.identities(emails: ["ADA@example.com"]).map(\.id) == [first.id])
        }
        try db.write { try $0.deleteIdentity(id: second.id) }
        #expect(try db.read { try $0.identities(userID: ada.id).count } == 1)
        try db.write { try $0.deleteUser(id: ada.id) }
        #expect(try db.read { try $0.identity(id: first.id) } == nil)  // ON DELETE CASCADE
    }

    @Test(arguments: StoreBackend.available) func sessionsAndTheirClaims(backend: StoreBackend) throws {
        let db = try backend.open()
        let ada = user(email: "ada@example.com")
        var session = SessionRecord(id: newID(), userID: ada.id, at: t0)
        session.userAgent = "tests"
        session.ip = "127.0.0.1"
        session.notAfter = t0 + 3_600_000_000
        var other = SessionRecord(id: newID(), userID: ada.id, at: t0 + 1)
        other.aal = "aal2"
        try db.write { (c: Connection) throws in
            try c.insertUser(ada)
            try c.insertSession(session)
            try c.insertSession(other)
            try c.addAMRClaim(id: newID(), sessionID: session.id, method: "password", at: t0)
            try c.addAMRClaim(id: newID(), sessionID: session.id, method: "otp", at: t0 + 2)
            try c.addAMRClaim(id: newID(), sessionID: session.id, method: "password", at: t0 + 4)  // refreshed, not added
        }
        try db.read { (c: Connection) throws in
            #expect(try c.session(id: session.id) == session)
            #expect(try c.sessions(userID: ada.id).map(\.id) == [session.id, other.id])
            #expect(try c.amrClaims(sessionID: session.id) == [
                AMRClaimRecord(method: "password", updatedAt: t0 + 4), AMRClaimRecord(method: "otp", updatedAt: t0 + 2),
            ])
        }
        try db.write { (c: Connection) throws in
            try c.updateSessionRefresh(id: session.id, refreshedAt: t0 + 7, updatedAt: t0 + 7, userAgent: "again", ip: "::1")
            try c.updateSessionRefreshTokenState(id: other.id, hmacKey: "a2V5", counter: 1)
            try c.updateSessionRefresh(id: other.id, counter: 2, refreshedAt: t0 + 8, userAgent: nil, ip: "")
        }
        try db.read { (c: Connection) throws in
            let refreshed = try #require(try c.session(id: session.id))
            #expect([refreshed.refreshedAt, refreshed.updatedAt] == [t0 + 7, t0 + 7])
            #expect(refreshed.userAgent == "again" && refreshed.ip == "::1")
            let second = try #require(try c.session(id: other.id))
            #expect(second.refreshTokenHMACKey == "a2V5" && second.refreshTokenCounter == 2 && second.refreshedAt == t0 + 8)
        }
        try db.write { try $0.deleteSessionsBelowAAL2(userID: ada.id) }
        #expect(try db.read { try $0.sessions(userID: ada.id).map(\.id) } == [other.id])
        try db.write { (c: Connection) throws in
            try c.insertSession(session)
            try c.deleteSessions(userID: ada.id, except: session.id)
        }
        #expect(try db.read { try $0.sessions(userID: ada.id).map(\.id) } == [session.id])
        try db.write { try $0.deleteSessions(userID: ada.id) }
        #expect(try db.read { try $0.sessions(userID: ada.id) }.isEmpty)
    }

    @Test(arguments: StoreBackend.available) func refreshTokensRotateAndRevoke(backend: StoreBackend) throws {
        let db = try backend.open()
        let ada = user(email: "ada@example.com")
        let session = SessionRecord(id: newID(), userID: ada.id, at: t0)
        let firstID = try db.write { (c: Connection) throws in
            try c.insertUser(ada)
            try c.insertSession(session)
            return try c.insertRefreshToken(token: "token-one", userID: ada.id, sessionID: session.id, parent: nil, at: t0)
        }
        // Rotation: the parent is revoked and a child names it.
        let secondID = try db.write { (c: Connection) throws in
            let parent = try #require(try c.refreshToken("token-one"))
            #expect(parent.id == firstID && !parent.revoked && parent.sessionID == session.id && parent.userID == ada.id)
            try c.revokeRefreshToken(id: parent.id, at: t0 + 1)
            return try c.insertRefreshToken(token: "token-two", userID: ada.id, sessionID: session.id, parent: "token-one", at: t0 + 1)
        }
        #expect(secondID > firstID)
        try db.read { (c: Connection) throws in
            let active = try #require(try c.activeRefreshToken(sessionID: session.id))
            #expect(active.id == secondID && active.parent == "token-one" && active.createdAt == t0 + 1)
            let revoked = try #require(try c.refreshToken("token-one"))
            #expect(revoked.revoked && revoked.updatedAt == t0 + 1)
            #expect(try c.refreshTokenFamily(sessionID: session.id) == RefreshTokenFamily(count: 2, revoked: 1, lastIssuedAt: t0 + 1))
        }
        // Reuse detection revokes the family.
        try db.write { try $0.revokeRefreshTokens(sessionID: session.id, at: t0 + 2) }
        try db.read { (c: Connection) throws in
            #expect(try c.activeRefreshToken(sessionID: session.id) == nil)
            #expect(try c.refreshTokenFamily(sessionID: session.id).revoked == 2)
        }
        try db.write { try $0.deleteRefreshToken(id: firstID) }
        #expect(try db.read { try $0.refreshToken("token-one") } == nil)
        try db.write { try $0.deleteSession(id: session.id) }
        #expect(try db.read { try $0.refreshToken("token-two") } == nil)  // ON DELETE CASCADE
    }

    @Test(arguments: StoreBackend.available) func writesRollBackNestAndReadsRefuseWrites(backend: StoreBackend) throws {
        let db = try backend.open()
        let ada = user(email: "ada@example.com")
        let bob = user(email: "bob@example.com")
        #expect(throws: ExpectedFailure.self) {
            try db.write { (c: Connection) throws in
                try c.insertUser(ada)
                throw ExpectedFailure()
            }
        }
        #expect(try db.read { try $0.user(id: ada.id) } == nil)
        // A nested write that fails undoes only itself, even after a failed statement (which
        // in Postgres aborts the whole transaction unless a savepoint catches it).
        try db.write { (c: Connection) throws in
            try c.insertUser(ada)
            let duplicate = user(email: "ada@example.com", phone: nil)
            var clash = duplicate
            clash.id = ada.id
            let error = #expect(throws: StoreError.self) { try db.write { try $0.insertUser(clash) } }
            #expect(error?.isUniqueViolation == true)
            try c.insertUser(bob)
        }
        try db.read { (c: Connection) throws in
            #expect(try c.user(id: ada.id) != nil && c.user(id: bob.id) != nil)
        }
        let refused = #expect(throws: StoreError.self) {
            try db.read { try $0.deleteUser(id: ada.id) }
        }
        #expect(refused?.primaryCode == 8)  // SQLITE_READONLY
        #expect(try db.read { try $0.user(id: ada.id) } != nil)
    }

    @Test(arguments: StoreBackend.available) func oneTimeTokensAndTheAuditLog(backend: StoreBackend) throws {
        let db = try backend.open()
        let ada = user(email: "ada@example.com")
        try db.write { (c: Connection) throws in
            try c.insertUser(ada)
            try c.replaceOneTimeToken(id: newID(), userID: ada.id, type: "confirmation_token", tokenHash: "h1", relatesTo: "Ada@Example.com", at: t0)
            try c.replaceOneTimeToken(id: newID(), userID: ada.id, type: "confirmation_token", tokenHash: "h2", relatesTo: "ada@example.com", at: t0 + 1)
            try c.replaceOneTimeToken(id: newID(), userID: ada.id, type: "recovery_token", tokenHash: "h3", relatesTo: "ada@example.com", at: t0 + 1)
            try c.insertAuditLogEntry(id: newID(), payload: #"{"action":"user_signedup"}"#, ipAddress: "127.0.0.1", at: t0)
        }
        let table = backend == .postgres ? "auth.one_time_tokens" : "one_time_tokens"
        #expect(try rows(db, "SELECT token_hash, relates_to FROM \(table) ORDER BY token_hash") == [["h2", "ada@example.com"], ["h3", "ada@example.com"]])
        try db.write { try $0.deleteOneTimeToken(userID: ada.id, type: "recovery_token") }
        #expect(try rows(db, "SELECT token_hash FROM \(table)") == [["h2"]])
        try db.write { try $0.deleteOneTimeTokens(userID: ada.id) }
        #expect(try rows(db, "SELECT token_hash FROM \(table)").isEmpty)
        let audit = backend == .postgres ? "auth.audit_log_entries" : "audit_log_entries"
        #expect(try rows(db, "SELECT payload, ip_address FROM \(audit)") == [[#"{"action":"user_signedup"}"#, "127.0.0.1"]])
    }
}

extension StoreBackendTests {
    @Test(arguments: StoreBackend.available) func capturedMessagesAndSigningKeys(backend: StoreBackend) throws {
        let db = try backend.open()
        let userID = newID()
        var first = OutboxRecord(id: newID(), channel: "email", recipient: "ada@example.com", type: "signup", sentAt: t0)
        first.otp = "123456"
        first.userID = userID
        var second = OutboxRecord(id: newID(), channel: "email", recipient: "ada@example.com", type: "recovery", sentAt: t0 + 1)
        second.tokenHash = "pkce_h"
        let sms = OutboxRecord(id: newID(), channel: "sms", recipient: "15550001", type: "sms", sentAt: t0 + 2)
        try db.write { (c: Connection) throws in
            for message in [first, second, sms] { try c.insertOutboxMessage(message) }
        }
        try db.read { (c: Connection) throws in
            #expect(try c.outboxMessages() == [sms, second, first])
            #expect(try c.outboxMessages(recipient: "ADA@example.com") == [second, first])
            #expect(try c.outboxMessages(recipient: "ada@example.com", type: "signup") == [first])
            #expect(try c.outboxMessages(limit: 1) == [sms])
        }
        #expect(try db.write { try $0.clearOutbox() } == 3)
        #expect(try db.read { try $0.outboxMessages() }.isEmpty)

        #expect(try db.read { try $0.projectSigningKey(algorithm: "ES256") } == nil)
        #expect(try db.write { try $0.insertProjectSigningKeyIfNone(algorithm: "ES256", privateJWK: #"{"kty":"EC"}"#, at: t0) } == #"{"kty":"EC"}"#)
        #expect(try db.write { try $0.insertProjectSigningKeyIfNone(algorithm: "ES256", privateJWK: #"{"kty":"other"}"#, at: t0) } == #"{"kty":"EC"}"#)
        #expect(try db.read { try $0.projectSigningKey(algorithm: "ES256") } == #"{"kty":"EC"}"#)
    }

    /// Writes naming a row by an id that is no uuid find no row on either backend: SQLite runs
    /// them and changes nothing, Postgres mode does not send them (a uuid column would refuse
    /// the text with 22P02). Each id a statement names is checked, not only the first.
    @Test(arguments: StoreBackend.available) func writesByAnIdThatIsNoUUIDChangeNothing(backend: StoreBackend) throws {
        let db = try backend.open()
        let ada = user(email: "ada@example.com")
        _ = try db.write { try $0.insertUser(ada) }
        let session = SessionRecord(id: newID(), userID: ada.id, at: t0)
        try db.write { try $0.insertSession(session) }
        let bad = "not-a-uuid"
        try db.write { (c: Connection) throws in
            try c.deleteUser(id: bad)
            try c.deleteIdentity(id: bad)
            try c.deleteSession(id: bad)
            try c.deleteSessionsBelowAAL2(userID: bad)
            try c.deleteFactor(id: bad)
            try c.deleteFactors(userID: bad)
            try c.markChallengeVerified(id: bad, at: t0)
            try c.deleteChallenge(id: bad)
            try c.recordAuthCodeIssued(flowStateID: bad, at: t0)
            try c.deleteFlowState(id: bad)
            try c.deleteOAuthAuthorization(id: bad)
            try c.revokeOAuthConsent(id: bad, at: t0)
            try c.deleteOAuthSessions(userID: ada.id, clientID: bad)
            try c.deleteOAuthSessions(userID: bad, clientID: newID())
            try c.renameWebAuthnCredential(id: bad, friendlyName: "key", at: t0)
            try c.deleteWebAuthnCredential(id: bad)
            try c.setChallengeWebAuthnSessionData(challengeID: bad, sessionData: "{}")
            try c.deleteOneTimeToken(userID: bad, type: "confirmation_token")
            try c.deleteOneTimeTokens(userID: bad)
            try c.revokeRefreshTokens(sessionID: bad, at: t0)
        }
        #expect(try db.read { try $0.user(id: ada.id) } == ada)
        #expect(try db.read { try $0.session(id: session.id) } == session)
    }
}

/// The rows of `sql` as text: through the store's connection for SQLite, the Postgres
/// connection in Postgres mode (whose generic statement methods run transaction control only).
func rows(_ db: Database, _ sql: String) throws -> [[String]] {
    try db.read { (c: Connection) throws in
        let result = try c.postgres.map { pg in try pg.store { try $0.query(sql) } } ?? c.query(sql)
        return result.map { row in
            row.columns.indices.map { index in
                switch row[position: index] {
                case .text(let text): return text
                case .integer(let number): return String(number)
                case .null: return "NULL"
                case let other: return "\(other)"
                }
            }
        }
    }
}

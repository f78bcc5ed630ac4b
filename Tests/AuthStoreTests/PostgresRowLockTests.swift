import Foundation
import Testing
@testable import AuthStore
import PostgresTestSupport

/// The `forUpdate` finders (`RowLocks.swift`): GoTrue's `SELECT ... FOR UPDATE SKIP LOCKED`,
/// seen from two emulator processes on one Postgres database (two `Database`s, each with its
/// own writer), and ignored by SQLite.
@Suite(.enabled(if: PostgresCluster.canRun,
                "skipped: needs PostgreSQL's server binaries (apt install postgresql; macOS: brew install postgresql@17); CI=true fails instead"))
struct PostgresRowLockTests {
    /// Rows of every kind a `forUpdate` finder reads, written through `db`.
    struct Rows {
        let user = newID()
        let session = newID()
        let token = "abcdefgh2345"
        let authCode = newID()
        let flowState = newID()
        let authorization = "authorization-\(newID())"

        init(_ db: Database) throws {
            try db.write { (c: Connection) throws in
                var user = UserRecord(id: self.user, createdAt: t0)
                user.aud = "authenticated"
                user.role = "authenticated"
                user.email = "ada@example.com"
                try c.insertUser(user)
                try c.insertSession(SessionRecord(id: session, userID: self.user, at: t0))
                try c.insertRefreshToken(token: token, userID: self.user, sessionID: session, parent: nil, at: t0)
                try c.insertFlowState(FlowStateRecord(id: flowState, userID: self.user, authCode: authCode, codeChallengeMethod: "s256",
                                                      codeChallenge: "challenge", providerType: "email",
                                                      authenticationMethod: "magiclink", at: t0))
                let client = newID()
                try c.insertOAuthClient(OAuthClientRecord(id: client, registrationType: "dynamic", clientType: "public",
                                                          tokenEndpointAuthMethod: "none", redirectURIs: ["https://app.example.com/cb"],
                                                          grantTypes: ["authorization_code"], at: t0))
                try c.insertOAuthAuthorization(OAuthAuthorizationRecord(id: newID(), authorizationID: authorization, clientID: client,
                                                                        redirectURI: "https://app.example.com/cb", scope: "email",
                                                                        at: t0, expiresAt: t0 + 600_000_000))
            }
        }

        /// Each finder with `forUpdate`, as a write calls it; true when it found its row.
        var lockingReads: [(String, (Connection) throws -> Bool)] {
            [
                ("refresh token", { try $0.refreshToken(token, forUpdate: true) != nil }),
                ("session", { try $0.session(id: session, forUpdate: true) != nil }),
                ("user (sessions of)", { try $0.sessions(userID: user, forUpdate: true).count == 1 }),
                ("flow state by id", { try $0.flowState(id: flowState, forUpdate: true) != nil }),
                ("flow state by code", { try $0.flowState(authCode: authCode, forUpdate: true) != nil }),
                ("authorization", { try $0.oauthAuthorization(authorizationID: authorization, forUpdate: true) != nil }),
            ]
        }
    }

    @Test func aRowAnotherProcessHoldsIsLockedNotMissingUntilItCommits() throws {
        let url = try StoreBackend.freshPostgresDatabase()
        let a = try Database(postgres: url)
        let b = try Database(postgres: url)
        let rows = try Rows(a)
        for (name, read) in rows.lockingReads {
            try a.write { (c: Connection) throws in
                #expect(try read(c), "\(name): process A locks its row")
                // Process B, meanwhile: the locking read is refused as held, never waited for...
                let error = #expect(throws: StoreError.self, "\(name)") { try b.write { _ = try read($0) } }
                #expect(error?.isRowLocked == true, "\(name): \(String(describing: error))")
                // ...while a plain read and writes of other rows go on.
                #expect(try b.read { try $0.session(id: rows.session) } != nil)
            }
            // Once A committed, B locks it in turn.
            #expect(try b.write { try read($0) }, "\(name): free again after A's commit")
        }
        // A missing row is nil (GoTrue's not found), not held.
        #expect(try b.write { try $0.refreshToken("zzzzzzzzzzzz", forUpdate: true) } == nil)
        #expect(try b.write { try $0.session(id: newID(), forUpdate: true) } == nil)
        #expect(try b.write { try $0.flowState(authCode: newID(), forUpdate: true) } == nil)
        #expect(try b.write { try $0.oauthAuthorization(code: newID(), forUpdate: true) } == nil)
    }

    @Test func aRollBackReleasesTheLock() throws {
        let url = try StoreBackend.freshPostgresDatabase()
        let a = try Database(postgres: url)
        let b = try Database(postgres: url)
        let rows = try Rows(a)
        struct Undo: Error {}
        #expect(throws: Undo.self) {
            try a.write { (c: Connection) throws in
                _ = try c.session(id: rows.session, forUpdate: true)
                throw Undo()
            }
        }
        #expect(try b.write { try $0.session(id: rows.session, forUpdate: true) } != nil)
    }
}

/// SQLite's writer is exclusive: no write meets a row another holds, and the flag changes nothing.
@Suite struct SQLiteRowLockTests {
    @Test func sqliteReadsTheRowsAsIfNoLockWasAsked() throws {
        let db = try Database(path: ":memory:")
        let rows = try PostgresRowLockTests.Rows(db)
        for (name, read) in rows.lockingReads {
            #expect(try db.write { try read($0) }, "\(name)")
        }
    }
}

import AuthJSON
import AuthStore
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// A fixture's `sql` step: how it is read, and its refusal where there is no app database. What
/// it does in Postgres mode runs against a real Postgres in Tests/python/test_fixture_sql.py.
@Suite struct FixtureSQLTests {
    static let user: JSON = ["email": "ada@example.com", "password": "correct-horse"]

    @Test func sqlIsAStringOrLinesJoinedByNewlines() throws {
        #expect(try Fixture(json: ["users": [Self.user], "sql": "select 1"]).sql == "select 1")
        #expect(try Fixture(json: ["users": [Self.user], "sql": ["insert into t", "values (1);"]]).sql == "insert into t\nvalues (1);")
        #expect(try Fixture(json: ["users": [Self.user], "sql": .null]).sql == nil)
        #expect(try Fixture(json: ["users": [Self.user], "sql": ""]).sql == nil)
        #expect(try Fixture(json: ["users": [Self.user]]).sql == nil)
    }

    @Test func aMalformedSQLStepNamesItself() {
        func message(_ document: JSON) -> String? {
            do {
                _ = try Fixture(json: document)
                return nil
            } catch {
                return error.message
            }
        }
        #expect(message(["users": [], "sql": 1]) == "invalid fixture: sql: must be a string or an array of strings")
        #expect(message(["users": [], "sql": ["select 1", true]]) == "invalid fixture: sql[1]: must be a string")
        #expect(message(["users": [], "seed": "x"]) == #"invalid fixture: unknown top-level field "seed" (expected "users" and, in Postgres mode, "sql")"#)
    }

    @Test(.enabled(if: !TestStore.isPostgres, "the refusal is SQLite mode's"))
    func sqliteModeRefusesTheStepAndSeedsNothing() throws {
        let (api, _) = try makeControlAPI()
        let response = api.control("POST", "/emulator/v1/seed", ["users": [Self.user], "sql": "insert into todos values (1)"])
        #expect(response.status == 400)
        #expect(errorCode(response) == "validation_failed")
        #expect(response.json["msg"]?.stringValue?.hasPrefix("invalid fixture: sql: runs only in Postgres mode (serve --db postgres://...)") == true)
        #expect(api.signIn("ada@example.com", "correct-horse").status == 400)
        #expect(api.project.fixtures.lastApplied == nil)
    }
}

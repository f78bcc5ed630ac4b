import AuthHTTP
import EmulatorTools
import GoTrue
import Testing
@testable import AuthScenarios

/// Operation names come from the route table, so scenario files and the journal can only name
/// operations some route resolves to.
@Suite struct OperationsTests {
    @Test func everyRouteOperationIsKnownAndNothingElse() throws {
        let harness = try Harness()
        var fromRoutes: Set<String> = []
        for route in harness.api.router.routes where !route.operation.hasPrefix("emulator.") {
            fromRoutes.insert(route.operation)
        }
        let names = Set(Operations.names)
        // `/token` is split by grant; every other route operation is a name as it is.
        #expect(fromRoutes.subtracting(["token"]).isSubset(of: names))
        #expect(names.subtracting(fromRoutes).allSatisfy { $0.hasPrefix("token.") })
        #expect(!names.contains { $0.hasPrefix("emulator.") })
    }

    @Test func namesResolveFromRealRequests() throws {
        let harness = try Harness()
        _ = harness.signUp("ops@example.com")
        _ = harness.call("DELETE", "/user/identities/00000000-0000-0000-0000-000000000000")
        _ = harness.call("POST", "/token?grant_type=web3", ["x": 1])
        let seen = Set(harness.journal.entries(JournalFilter()).compactMap(\.operation))
        #expect(seen == ["signup", "user.identities.delete", "token.web3"])
        #expect(seen.isSubset(of: Set(Operations.names)))
    }

    @Test func unroutedNamesAreRejected() {
        // A rule naming no route would never fire.
        #expect(!Operations.matchesAny("sso.providers.*"))
        #expect(Operations.matchesAny("factors.*"))
        #expect(Operations.matchesAny("jwks"))
        #expect(Operations.matchesAny("user.identities.*"))
    }
}

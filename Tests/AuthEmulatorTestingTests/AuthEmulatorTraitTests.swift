import AuthEmulatorTesting
import AuthTestSupport
import EmulatorTools
import GoTrue
import Synchronization
import Testing

/// One request over a fresh connection, answered in full (the request asks for `close`).
private func call(_ emulator: Emulator, _ method: String, _ target: String, body: String = "",
                  headers: [String] = []) throws -> WireResponse {
    let client = try TestClient(port: emulator.port)
    var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    if !body.isEmpty { head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
    for header in headers { head += header + "\r\n" }
    try client.send(head + "\r\n" + body)
    return try client.readResponse()
}

@Suite struct AuthEmulatorTraitTests {
    @Test(.authEmulator) func aTestWithTheTraitHasARunningEmulator() throws {
        let emulator = try #require(Emulator.current)
        #expect(emulator.host == "127.0.0.1")
        #expect(emulator.port > 0)
        #expect(emulator.options.databasePath == EmulatorOptions.inMemory)
        #expect(emulator.authURL == emulator.url + "/auth/v1")
        #expect(emulator.anonKey == emulator.project.configuration.apiKeys.anon)
        #expect(emulator.serviceRoleKey != emulator.anonKey)
        #expect(try call(emulator, "GET", "/health").status == 200)
    }

    @Test func aTestWithoutItHasNone() {
        #expect(Emulator.current == nil)
    }

    /// The same address signs up in every case: with a shared server all but one would get 422
    /// user_already_exists.
    @Test(.authEmulator, arguments: 0..<4) func eachCaseOfAParameterizedTestHasItsOwn(_ index: Int) throws {
        let emulator = try #require(Emulator.current)
        let signUp = try call(emulator, "POST", "/signup", body: #"{"email":"same@example.com","password":"password1"}"#)
        #expect(signUp.status == 200, "case \(index): \(signUp.text)")
    }

    @Test(.authEmulator(defaults: .gotrue) { $0.configuration.jwt.expirySeconds = 120 })
    func settingsComeFromTheProfileThenTheClosure() throws {
        let configuration = try #require(Emulator.current).project.configuration
        #expect(configuration.defaultsProfile == .gotrue)
        #expect(configuration.jwt.expirySeconds == 120)
        // Fast hashing unless a test asks otherwise.
        #expect(configuration.passwordHashIterations == Configuration.passwordIterationsRange.lowerBound)
    }

    @Test(.authEmulator(seed: "../Fixtures/seed.json")) func aFixtureBesideTheTestFileIsSeeded() throws {
        let emulator = try #require(Emulator.current)
        let signIn = try call(emulator, "POST", "/token?grant_type=password",
                              body: #"{"email":"ada@example.com","password":"correct-horse"}"#)
        #expect(signIn.status == 200, "\(signIn.text)")
    }

    @Test func theEmulatorStopsWhenTheTestEnds() async throws {
        let trait = AuthEmulatorTrait(AuthEmulatorSetup())
        let seen = Mutex<Emulator?>(nil)
        try await trait.provideScope(for: try #require(Test.current), testCase: Test.Case.current) {
            seen.withLock { $0 = Emulator.current }
        }
        let emulator = try #require(seen.withLock { $0 })
        #expect(throws: ClientError.self) { try TestClient(port: emulator.port) }
        #expect(Emulator.current == nil)
    }

    @Test func aFailingTestStillStopsItsEmulator() async throws {
        struct Failure: Error {}
        let trait = AuthEmulatorTrait(AuthEmulatorSetup())
        let seen = Mutex<Emulator?>(nil)
        await #expect(throws: Failure.self) {
            try await trait.provideScope(for: try #require(Test.current), testCase: Test.Case.current) {
                seen.withLock { $0 = Emulator.current }
                throw Failure()
            }
        }
        let emulator = try #require(seen.withLock { $0 })
        #expect(throws: ClientError.self) { try TestClient(port: emulator.port) }
    }

    @Test func aMissingFixtureFailsTheStartNamingTheFile() async throws {
        let trait = AuthEmulatorTrait(AuthEmulatorSetup(seed: "no-such-fixture.json"))
        let ran = Mutex(false)
        let error = await #expect(throws: EmulatorError.self) {
            try await trait.provideScope(for: try #require(Test.current), testCase: Test.Case.current) {
                ran.withLock { $0 = true }
            }
        }
        #expect(error?.description.contains("no-such-fixture.json") == true)
        #expect(!ran.withLock { $0 })
    }

    @Test func aRelativeFixtureIsFoundBesideTheFileThatNamesIt() {
        #expect(AuthEmulatorSetup(seed: "a/b.json", sourceFile: "/x/y/Tests.swift").seedPath == "/x/y/a/b.json")
        #expect(AuthEmulatorSetup(seed: "/abs/b.json", sourceFile: "/x/y/Tests.swift").seedPath == "/abs/b.json")
        #expect(AuthEmulatorSetup(sourceFile: "/x/y/Tests.swift").seedPath == nil)
    }
}

/// A suite's trait reaches each test and the tests of nested suites; a test's own replaces it.
@Suite(.authEmulator { $0.configuration.jwt.expirySeconds = 1111 })
struct SuiteTraitTests {
    @Test func aTestInheritsTheSuitesEmulator() throws {
        let emulator = try #require(Emulator.current)
        #expect(emulator.project.configuration.jwt.expirySeconds == 1111)
    }

    @Test(.authEmulator { $0.configuration.jwt.expirySeconds = 2222 }) func aTestsOwnTraitWins() throws {
        let emulator = try #require(Emulator.current)
        #expect(emulator.project.configuration.jwt.expirySeconds == 2222)
    }

    @Suite struct Nested {
        @Test func aNestedSuitesTestInheritsItToo() throws {
            let emulator = try #require(Emulator.current)
            #expect(emulator.project.configuration.jwt.expirySeconds == 1111)
        }
    }
}

/// How many times the suite below started its own setup.
private let outerSetups = Atomic<Int>(0)

/// When a test has its own trait, its suite's starts nothing for it: the suite's scope, which
/// runs first, would otherwise have counted.
@Suite(.authEmulator { _ in outerSetups.add(1, ordering: .relaxed) })
struct InnermostOnlyTests {
    @Test(.authEmulator) func onlyTheInnermostStarts() throws {
        _ = try #require(Emulator.current)
        #expect(outerSetups.load(ordering: .relaxed) == 0)
    }
}

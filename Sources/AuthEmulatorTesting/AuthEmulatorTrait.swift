#if canImport(Testing)
import EmulatorConfiguration
import EmulatorTools
import GoTrue
import Testing

/// Gives each test a fresh emulator of its own, reachable as `Emulator.current` while the test
/// runs and stopped when it ends.
///
/// ```swift
/// @Suite(.authEmulator(seed: "Fixtures/users.json") { $0.configuration.mailer.autoconfirm = false })
/// struct SignUpTests {
///     @Test func signsUp() async throws {
///         let emulator = try #require(Emulator.current)
///         // emulator.url, emulator.anonKey, emulator.serviceRoleKey
///     }
/// }
/// ```
///
/// On a suite it applies to every test inside, each test (and each argument of a parameterized
/// test) getting its own emulator, so tests that run in parallel never share users, outbox,
/// clock or scenarios. A test's own `.authEmulator(...)` replaces its suite's.
public struct AuthEmulatorTrait: TestTrait, SuiteTrait, TestScoping {
    public var setup: AuthEmulatorSetup

    public init(_ setup: AuthEmulatorSetup) {
        self.setup = setup
    }

    /// A suite hands the trait down to each of its tests rather than sharing one emulator among
    /// them: one start costs a few milliseconds, a shared one would make the tests' order matter.
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> AuthEmulatorTrait? {
        // Once per test case: a suite's own scope would start an emulator no test sees.
        guard testCase != nil, !test.isSuite else { return nil }
        // A suite's trait reaches its tests ahead of their own traits, so the last one is the
        // innermost: only that one starts a server.
        guard let innermost = test.traits.last(where: { $0 is AuthEmulatorTrait }) as? AuthEmulatorTrait,
              innermost.setup.identity === setup.identity else { return nil }
        return self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let emulator = try await setup.startOffPool()
        do {
            try await Emulator.$current.withValue(emulator) { try await function() }
        } catch {
            await emulator.stopOffPool()
            throw error
        }
        await emulator.stopOffPool()
    }
}

extension Trait where Self == AuthEmulatorTrait {
    /// A fresh emulator per test with `supabase start`'s settings (`Emulator.current`).
    public static var authEmulator: AuthEmulatorTrait { AuthEmulatorTrait(AuthEmulatorSetup()) }

    /// A fresh emulator per test: `defaults` as `serve --defaults`, then `configure` on the
    /// options; `seed`, a fixture file, relative to the file that writes the trait unless it
    /// starts with `/`.
    public static func authEmulator(
        defaults: DefaultsProfile = .cli,
        seed: String? = nil,
        sourceFile: String = #filePath,
        _ configure: @escaping @Sendable (inout EmulatorOptions) -> Void = { _ in }
    ) -> AuthEmulatorTrait {
        AuthEmulatorTrait(AuthEmulatorSetup(defaults: defaults, seed: seed, sourceFile: sourceFile, configure: configure))
    }

    /// A fresh emulator per test, started as `setup` says (shared with XCTest helpers).
    public static func authEmulator(_ setup: AuthEmulatorSetup) -> AuthEmulatorTrait {
        AuthEmulatorTrait(setup)
    }
}
#endif

#if canImport(XCTest)
import EmulatorConfiguration
import EmulatorTools
import GoTrue
import XCTest

/// An `XCTestCase` whose every test method gets a fresh emulator, started before `setUp` and
/// stopped after `tearDown` (and after the test's teardown blocks).
///
/// ```swift
/// final class SignInTests: AuthEmulatorTestCase {
///     override var authEmulatorSetup: AuthEmulatorSetup {
///         AuthEmulatorSetup(seed: "Fixtures/users.json") { $0.configuration.mailer.autoconfirm = false }
///     }
///     func testSignIn() async throws {
///         // emulator.url, emulator.anonKey, emulator.serviceRoleKey
///     }
/// }
/// ```
///
/// While a test method runs, `Emulator.current` is its emulator too, so helpers shared with Swift
/// Testing suites find it the same way.
open class AuthEmulatorTestCase: XCTestCase {
    /// How this class's emulators start. Override it to choose whose defaults, which settings
    /// and which fixture; a relative fixture path is taken from the overriding file's folder.
    open var authEmulatorSetup: AuthEmulatorSetup { AuthEmulatorSetup() }

    /// The running test's emulator, from before `setUp` until after `tearDown`.
    public var emulator: Emulator {
        guard let running else {
            preconditionFailure("AuthEmulatorTestCase.emulator is only available while a test method runs")
        }
        return running
    }

    private var running: Emulator?

    // Wrapping the whole invocation, not `setUp`, keeps the emulator running whatever a subclass
    // does with `setUp` and `tearDown`, and lets the task-local value cover an async test's task
    // (which XCTest creates inside this call, so it inherits the value).
    override open func invokeTest() {
        let emulator: Emulator
        do {
            emulator = try authEmulatorSetup.start()
        } catch {
            XCTFail("cannot start the auth emulator: \(error)")
            return
        }
        running = emulator
        defer {
            emulator.stop()
            running = nil
        }
        Emulator.$current.withValue(emulator) {
            super.invokeTest()
        }
    }
}

extension XCTestCase {
    /// Starts an emulator for the running test and stops it when the test ends (a teardown
    /// block), for test classes that cannot inherit from `AuthEmulatorTestCase`. The arguments
    /// are those of `AuthEmulatorSetup`.
    public func startAuthEmulator(
        defaults: DefaultsProfile = .cli,
        seed: String? = nil,
        sourceFile: String = #filePath,
        _ configure: @escaping @Sendable (inout EmulatorOptions) -> Void = { _ in }
    ) throws -> Emulator {
        try startAuthEmulator(AuthEmulatorSetup(defaults: defaults, seed: seed, sourceFile: sourceFile, configure: configure))
    }

    /// Starts an emulator of `setup` for the running test and stops it when the test ends.
    public func startAuthEmulator(_ setup: AuthEmulatorSetup) throws -> Emulator {
        let emulator = try setup.start()
        addTeardownBlock { emulator.stop() }
        return emulator
    }
}
#endif

@_exported import AuthEmulator
import AuthPlatform
import EmulatorConfiguration
import EmulatorTools
import GoTrue

/// How a test's emulator starts: whose defaults, which settings, which users. The Swift Testing
/// trait (`.authEmulator(...)`) and the XCTest helpers (`AuthEmulatorTestCase`,
/// `startAuthEmulator`) share it, so both kinds of test start the same server.
///
/// Every emulator listens on 127.0.0.1 on a port the system picks and keeps its users in memory,
/// so tests running in parallel never meet.
public struct AuthEmulatorSetup: Sendable {
    /// Whose defaults fill what `configure` leaves alone: `supabase start`'s (`.cli`) or a bare
    /// GoTrue container's (`.gotrue`), as `auth-emulator serve --defaults` chooses.
    public var defaults: DefaultsProfile
    /// A fixture file (`{"users": [...]}`, docs/fixtures.md) applied before the test runs, as
    /// `serve --seed` applies one. A relative path is taken from the folder of `sourceFile`.
    public var seed: String?
    /// The file a relative `seed` is found beside: by default the test file that wrote the
    /// setup, so the fixture is found whatever the current directory (Xcode runs tests from
    /// elsewhere than `swift test` does).
    public var sourceFile: String
    /// Changes to the options after the defaults are in place: any setting of `Configuration`,
    /// worker threads, scenarios active from the start, ...
    public var configure: @Sendable (inout EmulatorOptions) -> Void
    /// Tells this setup's copies from other setups, which closures cannot (the trait finds the
    /// innermost of a suite's and a test's by it).
    let identity = Identity()

    public init(
        defaults: DefaultsProfile = .cli,
        seed: String? = nil,
        sourceFile: String = #filePath,
        configure: @escaping @Sendable (inout EmulatorOptions) -> Void = { _ in }
    ) {
        self.defaults = defaults
        self.seed = seed
        self.sourceFile = sourceFile
        self.configure = configure
    }

    /// The options an emulator of this setup starts with.
    public func options() -> EmulatorOptions {
        var options = EmulatorOptions(defaults: defaults)
        options.port = 0
        options.databasePath = EmulatorOptions.inMemory
        // The least the emulator accepts: tests sign users up and in over and over, and the
        // default 100,000 iterations cost about 7 ms a hash in a release build and 0.3 s in the
        // debug build tests use; these hashes protect nothing. `configure` may raise it again.
        options.configuration.passwordHashIterations = Configuration.passwordIterationsRange.lowerBound
        // A test that ends with a request still open (a `hang` scenario, a client that never
        // read its answer) must not wait out the 10 s `serve` gives requests on SIGTERM.
        options.shutdownTimeoutSeconds = 1
        configure(&options)
        return options
    }

    /// The fixture file's path as it will be opened, or nil without one.
    public var seedPath: String? {
        guard let seed else { return nil }
        if seed.hasPrefix("/") { return seed }
        guard let slash = sourceFile.lastIndex(of: "/") else { return seed }
        return String(sourceFile[...slash]) + seed
    }

    /// Starts an emulator of this setup and applies its fixture; blocks the calling thread for
    /// the few milliseconds that takes. The caller stops it (`Emulator.stop()`).
    public func start() throws(EmulatorError) -> Emulator {
        let emulator = try Emulator.start(options())
        if let path = seedPath {
            do {
                try emulator.seed(file: path)
            } catch {
                emulator.stop()
                throw error
            }
        }
        return emulator
    }

    /// `start()` on a thread of its own, so a test's task never blocks a thread of the
    /// cooperative pool (two on a two-core machine) on sockets, SQLite or password hashing.
    func startOffPool() async throws(EmulatorError) -> Emulator {
        try await onThreadOfItsOwn("emulator-start") { () throws(EmulatorError) -> Emulator in try start() }.get()
    }
}

/// Runs `body` on a new thread and returns its result. Neither the cooperative pool nor
/// Dispatch's global queues: a fixture's passwords are hashed on the global queues, so a start
/// waiting there for them could hold the very threads they need (on Linux Dispatch adds a thread
/// only after about a second).
func onThreadOfItsOwn<Value: Sendable, Failure: Error>(
    _ name: String, _ body: @escaping @Sendable () throws(Failure) -> Value
) async -> Result<Value, Failure> {
    await withCheckedContinuation { continuation in
        do {
            try Threads.spawn(name: name, stackSize: 1 << 20) {
                continuation.resume(returning: Result(catching: body))
            }.detach()
        } catch {
            // No thread to be had (the process is at its limit): run here rather than fail.
            continuation.resume(returning: Result(catching: body))
        }
    }
}

/// A value of which every copy of one setup holds the same instance.
final class Identity: Sendable {}

extension Emulator {
    /// The emulator of the test running on this task: set by the `.authEmulator` trait for the
    /// test's whole run (`let emulator = try #require(Emulator.current)`), and by
    /// `AuthEmulatorTestCase` around each test method (its `setUp` and `tearDown` included).
    /// Tasks the test creates inherit it; nil elsewhere.
    @TaskLocal public static var current: Emulator?

    /// `stop()` on a thread of its own: a graceful stop waits for in-flight requests and joins
    /// the server's threads, which must not hold a thread of the cooperative pool.
    func stopOffPool() async {
        _ = await onThreadOfItsOwn("emulator-stop") { () throws(Never) in self.stop() }
    }
}

import GoTrue

/// How to run one emulator: where to listen, where the database lives, and the GoTrue
/// configuration. Built from defaults, then `GOTRUE_*` environment variables, then command-line
/// flags (highest precedence).
public struct EmulatorOptions: Sendable {
    public var host: String = "127.0.0.1"
    /// 0 picks an ephemeral port; `Emulator.port` tells which.
    public var port: Int = 9999
    /// A file path, or ":memory:" for a throwaway database.
    public var databasePath: String = EmulatorOptions.defaultDatabasePath
    public var configuration = Configuration()
    /// Worker threads for request handling (SQLite, password hashing); nil = the server default.
    public var workerThreads: Int?

    /// The default database: a file under the current directory, so each app project keeps its
    /// own users across restarts (override with `--db` or `AUTH_EMULATOR_DB`).
    public static let defaultDatabasePath = ".auth-emulator/auth.db"
    public static let inMemory = ":memory:"

    public init() {}

    /// Options for an in-process test server: ephemeral loopback port, in-memory database.
    public static func testing() -> EmulatorOptions {
        var options = EmulatorOptions()
        options.port = 0
        options.databasePath = inMemory
        return options
    }
}

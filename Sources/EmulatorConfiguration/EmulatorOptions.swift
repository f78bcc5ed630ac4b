import AuthJWT
import AuthScenarios
import GoTrue

/// How to run one emulator: where to listen, where the database lives, and the GoTrue
/// configuration. Built, lowest precedence first, from defaults equal to `supabase start`'s, the
/// `[auth]` section of a Supabase `config.toml` (`SupabaseConfigFile`), `GOTRUE_*` environment
/// variables (`EnvironmentConfiguration`), then command-line flags.
public struct EmulatorOptions: Sendable {
    public var host: String = "127.0.0.1"
    /// 0 picks an ephemeral port; `Emulator.port` tells which.
    public var port: Int = 9999
    /// A file path, ":memory:" for a throwaway database, or a Postgres connection string
    /// (`postgres://...`, `postgresql://...`, or libpq's `host=... dbname=...`): Postgres mode,
    /// GoTrue's `auth` schema in that database (docs/postgres.md).
    public var databasePath: String = EmulatorOptions.defaultDatabasePath
    /// Postgres mode on a bare server (`--db-bootstrap`): create the roles and schema a Supabase
    /// Postgres has before GoTrue first runs. Needs a superuser login.
    public var postgresBootstrap: Bool = false
    public var configuration = Configuration()
    /// Worker threads for request handling (SQLite, password hashing); nil = the server default.
    public var workerThreads: Int?
    /// Open client connections at most (`--max-connections`, `AUTH_EMULATOR_MAX_CONNECTIONS`);
    /// one more is answered 503 and closed. nil = the server default (10,000).
    public var maxConnections: Int?
    /// Seconds a request head may take from its first byte (`--header-timeout`; slowloris
    /// defence) and a body from the end of its head (`--body-timeout`); nil = the server's
    /// defaults, 10 and 30.
    public var headerTimeoutSeconds: Int?
    public var bodyTimeoutSeconds: Int?
    /// Seconds a response may wait for a peer that takes none of its bytes (`--write-timeout`);
    /// the connection is then reset. nil = the server's default, 30.
    public var writeTimeoutSeconds: Int?
    /// Failure scenarios active from the start (`serve --scenario FILE`).
    public var scenarios: [Scenario] = []
    /// Requests the journal keeps (`--journal-size`, `AUTH_EMULATOR_JOURNAL_SIZE`); 0 turns it off.
    public var journalCapacity: Int = Journal.defaultCapacity
    /// How long a graceful stop (SIGINT/SIGTERM) lets in-flight requests finish before the rest
    /// are answered 503 and closed (`--shutdown-timeout`, `AUTH_EMULATOR_SHUTDOWN_TIMEOUT`).
    public var shutdownTimeoutSeconds: Double = 10
    /// One line per request (`serve` sets it unless `--quiet`); nil logs nothing.
    public var accessLog: AccessLog?
    /// `serve --signing-key <alg>`: sign with a key of this algorithm, made on first start and
    /// kept in the database (so restarts on the same file keep tokens and API keys valid),
    /// instead of the configured keys.
    public var signingKeyAlgorithm: JWTAlgorithm?
    /// The web dashboard at `/emulator` (`--dashboard off`, `AUTH_EMULATOR_DASHBOARD=off`: 404).
    /// Beyond a loopback bind it asks for the service_role key.
    public var dashboard: Bool = true
    /// Beyond a loopback bind, keep the public demo JWT secret and keys (`--allow-demo-keys`)
    /// instead of replacing them with fresh random ones (`Exposure`).
    public var allowDemoKeys: Bool = false
    /// Where the dashboard's scenario catalogue is read from (relative to the current directory).
    public var scenarioCatalogue: String = "scenarios"
    /// `AUTH_EMULATOR_SQL_TRACE`: record every SQL statement and its arguments to this file, for
    /// `bench/cost.sh`'s SQLite floor and `bench/cost/backends.py`'s Postgres floor
    /// (`StatementTrace`). A benchmark instrument: the file holds the stored values, secrets
    /// included.
    public var statementTracePath: String?
    /// Projects besides the default one, made at start (`serve --project ref[=config.toml]`).
    public var projects: [ProjectSpec] = []
    /// A request for an unknown project (`/project/<ref>/...`, `<ref>.localhost`) makes it,
    /// with the server's settings (`--auto-create-projects`); off: 404.
    public var autoCreateProjects: Bool = false
    /// Auto-creation stops once the server has this many projects besides the default one
    /// (`--max-projects`); a request for another unknown ref is then refused as one for an
    /// unknown project is without auto-creation. Auto-creation needs no key, so without a cap
    /// any client that can reach the server could make projects (threads, databases) without end.
    public var maxProjects: Int = EmulatorOptions.defaultMaxProjects
    public static let defaultMaxProjects = 100
    /// Auto-created projects are kept on the database's folder like the others
    /// (`--persist-auto-created-projects`); off (the default), they live in memory and go with
    /// the process, so key-less requests leave no files behind.
    public var persistAutoCreatedProjects: Bool = false

    /// The default database: a file under the current directory, so each app project keeps its
    /// own users across restarts (override with `--db` or `AUTH_EMULATOR_DB`).
    public static let defaultDatabasePath = ".auth-emulator/auth.db"
    public static let inMemory = ":memory:"

    public init() {}

    /// Whether `databasePath` names a Postgres database rather than a SQLite file.
    public var usesPostgres: Bool { EmulatorOptions.isPostgresConnectionString(databasePath) }

    /// A URL with libpq's schemes, or libpq's keyword/value form (its first word a libpq
    /// connection keyword followed by `=`, https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING),
    /// which no SQLite path the emulator would be given starts with.
    public static func isPostgresConnectionString(_ value: String) -> Bool {
        if value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") { return true }
        guard let equals = value.firstIndex(of: "=") else { return false }
        let keyword = value[..<equals].drop(while: { $0 == " " })
        return postgresKeywords.contains(String(keyword.reversed().drop(while: { $0 == " " }).reversed()))
    }

    private static let postgresKeywords: Set<String> = [
        "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "service", "sslmode",
        "connect_timeout", "application_name", "options", "sslrootcert", "target_session_attrs",
    ]

    /// `databasePath` as the banner and logs show it: a connection string without its
    /// password (`postgres://app:***@db:5432/app`, `password=***`).
    public var databaseDisplayName: String { EmulatorOptions.displayName(ofDatabase: databasePath) }

    /// A database path or connection string as the banner, logs and the projects list show it.
    public static func displayName(ofDatabase path: String) -> String {
        isPostgresConnectionString(path) ? redactingPassword(path) : path
    }

    static func redactingPassword(_ conninfo: String) -> String {
        if let scheme = conninfo.firstRange(of: "://") {
            let rest = conninfo[scheme.upperBound...]
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
            var result = String(conninfo[..<scheme.upperBound])
            if let at = rest[..<authorityEnd].lastIndex(of: "@") {
                let userinfo = rest[..<at]
                if let colon = userinfo.firstIndex(of: ":") {
                    result += rest[..<colon] + ":***" + rest[at...]
                } else {
                    result += rest
                }
            } else {
                result += rest
            }
            // A password given as a query parameter (`?password=...`).
            return redactingKeyword(result, separators: "&")
        }
        return redactingKeyword(conninfo, separators: " ")
    }

    private static func redactingKeyword(_ text: String, separators: Character) -> String {
        guard let range = text.firstRange(of: "password=") else { return text }
        let end = text[range.upperBound...].firstIndex(of: separators) ?? text.endIndex
        return text[..<range.upperBound] + "***" + text[end...]
    }

    /// Options for an in-process test server: ephemeral loopback port, in-memory database.
    public static func testing() -> EmulatorOptions {
        var options = EmulatorOptions()
        options.port = 0
        options.databasePath = inMemory
        return options
    }

    /// Defaults, then the `[auth]` section of `configFile` (a Supabase `config.toml`) when given,
    /// then the environment, as `auth-emulator serve` does before applying its flags; then
    /// `validate()`. `warning` receives one line per thing worth telling the user (ignored
    /// variables, a setting of the file the emulator cannot honour).
    public static func resolve(
        configFile: String? = nil,
        environment: [String: String],
        base: EmulatorOptions = EmulatorOptions(),
        warning: (String) -> Void = { _ in }
    ) throws(EmulatorError) -> EmulatorOptions {
        var options = try layered(configFile: configFile, environment: environment, base: base, warning: warning)
        options.configuration.applyDefaults()
        try options.validate()
        return options
    }

    /// The file and environment layers without the final cross-setting check (the command line
    /// applies its flags first).
    package static func layered(
        configFile: String?, environment: [String: String], base: EmulatorOptions, warning: (String) -> Void,
        applied: ([String]) -> Void = { _ in }
    ) throws(EmulatorError) -> EmulatorOptions {
        var options = base
        // `AUTH_EMULATOR_DEFAULTS`: whose defaults fill what no layer sets (`serve --defaults`,
        // which the command line resolves before this, wins).
        if let name = environment[EnvironmentConfiguration.defaultsVariable], !name.isEmpty,
           options.configuration.settingSources.isEmpty {
            guard let profile = DefaultsProfile(rawValue: name) else {
                throw EmulatorError("\(EnvironmentConfiguration.defaultsVariable): '\(name)' is not cli or gotrue")
            }
            if options.configuration.defaultsProfile == .cli { options.configuration.adoptDefaults(profile) }
        }
        if let configFile {
            for line in try SupabaseConfigFile.apply(path: configFile, environment: environment, to: &options) {
                warning(line)
            }
        }
        let (used, ignored, suggestions) = try EnvironmentConfiguration.applyReporting(environment, to: &options)
        applied(used)
        if !ignored.isEmpty {
            let named = ignored.map { name in suggestions[name].map { "\(name) (did you mean \($0)?)" } ?? name }
            warning("ignoring environment variables the emulator does not use: \(named.joined(separator: ", "))")
        }
        return options
    }

    /// Checks that span several settings, as GoTrue does at startup (e.g. email auto-confirm
    /// together with unverified email sign-ins is refused).
    public func validate() throws(EmulatorError) {
        try ConfigurationCheck.check(configuration)
    }

    /// Options whose settings start from the defaults of `profile`.
    public init(defaults profile: DefaultsProfile) {
        configuration = Configuration(defaults: profile)
    }
}

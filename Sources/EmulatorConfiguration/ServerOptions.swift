import AuthHTTP
import AuthScenarios
import GoTrue

/// A row of the server's own options: the settings table's row type over `EmulatorOptions`
/// (where to listen, timeouts, caps, the journal, projects) rather than GoTrue's
/// `Configuration`. Each names its `serve` flag, its environment variable, its limits and its
/// help once; the flag parser, the environment reader, `serve --help` and the options table
/// of `docs/running.md` all go through it.
public typealias ServerOption = SettingRow<EmulatorOptions>

/// One line of `serve --help`, in the order the help lists them: a server option, or a flag of
/// the settings table placed among them (so related flags stay together).
public enum ServeFlag: Sendable {
    case server(ServerOption)
    case setting(Setting)

    public var flag: String? {
        switch self {
        case .server(let row): row.flag
        case .setting(let row): row.flag
        }
    }
}

extension EmulatorOptions {
    /// The server's options, in help order (those without a flag are environment-only).
    public static let settings: [ServerOption] = serveFlags.compactMap { if case .server(let row) = $0 { row } else { nil } }

    /// The row whose flag is `flag`.
    public static func option(flag: String) -> ServerOption? { settings.first { $0.flag == flag } }

    /// Every line of `serve --help` in order: the server's options and, among them, every flag
    /// of the settings table (`Configuration.settings`); a test checks none is left out.
    public static let serveFlags: [ServeFlag] = {
        var rows: [ServeFlag] = []
        func setting(_ key: String) { if let row = Configuration.setting(key) { rows.append(.setting(row)) } }
        rows += listenRows()
        for key in ["jwt_secret", "site_url", "external_url", "anon_key", "service_role_key", "publishable_key", "secret_key",
                    "mailer_autoconfirm", "sms_autoconfirm", "anonymous_users_enabled", "disable_signup", "phone_enabled",
                    "web3.solana.enabled", "web3.ethereum.enabled", "idp_auto_approve"] {
            setting(key)
        }
        rows.append(toggle("allow-demo-keys", \EmulatorOptions.allowDemoKeys, env: ["AUTH_EMULATOR_ALLOW_DEMO_KEYS"],
                           "Beyond loopback (--host 0.0.0.0, a LAN address), keep the public demo JWT secret and keys instead of fresh random ones."))
        setting("require_apikey")
        rows += logRows()
        setting("strict_id_tokens")
        setting("password_hash_iterations")
        rows += connectionRows()
        setting("rate_limits.preset")
        rows += lifecycleRows()
        setting("sms_delivery")
        rows += stateRows()
        rows += projectRows()
        rows += environmentOnlyRows()
        return rows
    }()

    // MARK: Helpers, one per kind

    typealias Field<T> = WritableKeyPath<EmulatorOptions, T> & Sendable

    /// Text; `emptyIsUnset`: an empty flag is refused and an empty variable counts as unset.
    static func text(
        _ flag: String?, _ path: Field<String>?, env: [String] = [], emptyIsUnset: Bool = true, placeholder: String,
        default value: String? = nil, _ help: String
    ) -> ServeFlag {
        row(flag, .text(emptyIsUnset: emptyIsUnset), env: env, default: value.map(SettingValue.string) ?? .null,
            placeholder: placeholder, help,
            read: { options in path.map { .string(options[keyPath: $0]) } ?? .null },
            write: { options, value in if let path { options[keyPath: path] = value.string } })
    }

    /// A whole number (`.seconds` for durations in whole seconds) within the row's range.
    static func whole(
        _ flag: String, _ kind: SettingKind, env: [String] = [], default value: Int? = nil, note: String? = nil,
        placeholder: String? = nil, _ help: String, write: @escaping @Sendable (inout EmulatorOptions, Int) -> Void
    ) -> ServeFlag {
        row(flag, kind, env: env, default: value.map(SettingValue.int) ?? .null, note: note, placeholder: placeholder, help,
            read: { _ in .null }, write: { write(&$0, $1.int) })
    }

    /// An on/off switch (`--x` / `--no-x`).
    static func toggle(_ flag: String?, _ path: Field<Bool>?, env: [String] = [], _ help: String) -> ServeFlag {
        row(flag, .bool, env: env, default: .bool(false), help,
            read: { options in path.map { .bool(options[keyPath: $0]) } ?? .null },
            write: { options, value in if let path { options[keyPath: path] = value.bool } })
    }

    /// One of a few names, read by the command line itself.
    static func choice(_ flag: String, _ names: [String], env: [String] = [], default value: String, _ help: String) -> ServeFlag {
        row(flag, .choice(names), env: env, default: .string(value), help, read: { _ in .null }, write: { _, _ in })
    }

    static func row(
        _ flag: String?, _ kind: SettingKind, env: [String], default value: SettingValue, note: String? = nil,
        placeholder: String? = nil, _ help: String, read: @escaping @Sendable (EmulatorOptions) -> SettingValue,
        write: @escaping @Sendable (inout EmulatorOptions, SettingValue) -> Void
    ) -> ServeFlag {
        let key = (flag ?? env.first ?? "").lowercased().replacingAll("-", with: "_")
        return .server(ServerOption(key, kind, env: env, flag: flag, runtime: false, gotrue: value, cli: value, note: note,
                                    placeholder: placeholder, help: help, read: read, write: write))
    }

    // MARK: Groups

    static func listenRows() -> [ServeFlag] {
        [
            text("config", nil, placeholder: "<path>",
                 "A Supabase CLI config.toml (e.g. supabase/config.toml); its [auth] section is applied. Other sections are ignored."),
            // Read before every other layer (`layered`): the profile decides what the layers start from.
            choice("defaults", DefaultsProfile.allCases.map(\.rawValue), env: [EnvironmentConfiguration.defaultsVariable], default: "cli",
                   "Whose defaults apply to what nothing sets, both listed by 'auth-emulator help settings': supabase start's (cli) or a bare GoTrue container's (gotrue: email confirmations and TOTP MFA on, ...)."),
            text("host", \EmulatorOptions.host, env: ["GOTRUE_API_HOST"], placeholder: "<host>", default: "127.0.0.1", "Address to listen on."),
            // envconfig reads GOTRUE_API_PORT first and falls back to the unprefixed alias PORT.
            whole("port", .integer(0...65535), env: ["GOTRUE_API_PORT", "PORT"], default: 9999, placeholder: "<port>",
                  "Port, 0 for an ephemeral one.") { $0.port = $1 },
            text("db", \EmulatorOptions.databasePath, env: [EnvironmentConfiguration.databaseVariable], placeholder: "<path>|:memory:|postgres://...",
                 default: EmulatorOptions.defaultDatabasePath,
                 "SQLite database file, created if missing; or a Postgres connection string: GoTrue's auth schema in that database, created or adopted (docs/postgres.md)."),
            toggle("db-bootstrap", \EmulatorOptions.postgresBootstrap, env: [EnvironmentConfiguration.databaseBootstrapVariable],
                   "Postgres mode on a bare Postgres: first create the roles and schema a Supabase Postgres has (needs a superuser login)."),
        ]
    }

    static func logRows() -> [ServeFlag] {
        [
            toggle("quiet", nil, "No access log (one line per request on stderr: method, path, status, error code, milliseconds; never the query)."),
            choice("log-format", AccessLog.Format.allCases.map(\.rawValue), default: "text", "The access log as text or json (one object per line)."),
            toggle("strict-hooks", nil,
                   "Refuse to start (exit 78) when a hook is enabled with a pg-functions:// URI, which needs Postgres; without it such a hook is off, with a warning."),
        ]
    }

    static func connectionRows() -> [ServeFlag] {
        [
            whole("workers", .integer(1...256), env: ["AUTH_EMULATOR_WORKERS"], note: "2 × cores, at least 4",
                  "Request worker threads; each, and each event loop, gets a SQLite reader connection.") { $0.workerThreads = $1 },
            // At least one; a million is far beyond any descriptor limit.
            whole("max-connections", .integer(1...1_000_000), env: [EnvironmentConfiguration.maxConnectionsVariable], default: 10_000,
                  "Open connections at most; one more is answered 503 and closed.") { $0.maxConnections = $1 },
            whole("header-timeout", .seconds(1...3600), env: ["AUTH_EMULATOR_HEADER_TIMEOUT"], default: 10,
                  "Seconds a request head may take from its first byte; a slower client is disconnected.") { $0.headerTimeoutSeconds = $1 },
            whole("body-timeout", .seconds(1...3600), env: ["AUTH_EMULATOR_BODY_TIMEOUT"], default: 30,
                  "Seconds a request body may take after its head.") { $0.bodyTimeoutSeconds = $1 },
            whole("write-timeout", .seconds(1...3600), env: ["AUTH_EMULATOR_WRITE_TIMEOUT"], default: 30,
                  "Seconds a response may wait for a client that reads none of it; the connection is then reset. A slow reader that keeps reading is never cut off.") {
                $0.writeTimeoutSeconds = $1
            },
            text("scenario", nil, placeholder: "<file>",
                 "Activate a failure scenario (JSON, see scenarios/README.md); repeatable. Invalid files stop the start with their errors."),
        ]
    }

    static func lifecycleRows() -> [ServeFlag] {
        [
            whole("shutdown-timeout", .seconds(0...3600), env: [EnvironmentConfiguration.shutdownTimeoutVariable], default: 10,
                  "On SIGINT/SIGTERM, seconds in-flight requests get to finish; requests still unanswered then get a 503.") {
                $0.shutdownTimeoutSeconds = Double($1)
            },
            whole("journal-size", .integer(0...1_000_000), env: [EnvironmentConfiguration.journalSizeVariable], default: Journal.defaultCapacity,
                  "Requests kept in the journal; 0 turns it off.") { $0.journalCapacity = $1 },
            text("seed", nil, placeholder: "<file>",
                 "Apply a fixture file (docs/fixtures.md) at start; POST /emulator/v1/reset?keep_seed=true returns to it. An invalid file stops the start with an error naming the entry."),
        ]
    }

    static func stateRows() -> [ServeFlag] {
        [
            text("signing-key", nil, placeholder: "<alg>",
                 "Sign with an rs256, es256 or eddsa key made on first start and kept in the database (restarts keep tokens valid); the anon and service_role keys are signed with it, as the CLI does."),
            text("export-on-exit", nil, placeholder: "<file>",
                 "On a clean stop (SIGINT/SIGTERM), write the state as a JSON snapshot (the GET /emulator/v1/export document) to <file>."),
            toggle("export-secrets", nil,
                   "Include the emulator's own private keys (fake identity providers, software authenticator) in that snapshot (as GET /emulator/v1/export?include_secrets=true)."),
            // The variable also takes a boolean (`EnvironmentConfiguration`).
            row("dashboard", .choice(["on", "off"]), env: [EnvironmentConfiguration.dashboardVariable], default: .string("on"),
                "The web dashboard at /emulator. Beyond a loopback --host it asks for the service_role key.",
                read: { .string($0.dashboard ? "on" : "off") }, write: { $0.dashboard = $1.string == "on" }),
            toggle("open", nil, "Open the dashboard in the default browser once listening."),
        ]
    }

    static func projectRows() -> [ServeFlag] {
        [
            // Checked by the command line (a ref, or ref=file), so an empty value is its error.
            text("project", nil, emptyIsUnset: false, placeholder: "<ref>[=<file>]",
                 "Serve another isolated project besides the default one, at /project/<ref>/... and http://<ref>.localhost:PORT, with the server's settings plus a config.toml's [auth] section; repeatable (docs/projects.md)."),
            toggle("auto-create-projects", \EmulatorOptions.autoCreateProjects, env: ["AUTH_EMULATOR_AUTO_CREATE_PROJECTS"],
                   "A request for an unknown project makes it, in memory, with no key needed; off, it gets a 404."),
            whole("max-projects", .integer(0...10_000), env: ["AUTH_EMULATOR_MAX_PROJECTS"], default: EmulatorOptions.defaultMaxProjects,
                  "Auto-creation stops once there are <n> projects besides the default one; later unknown refs get the 404.") { $0.maxProjects = $1 },
            toggle("persist-auto-created-projects", \EmulatorOptions.persistAutoCreatedProjects, env: ["AUTH_EMULATOR_PERSIST_AUTO_CREATED_PROJECTS"],
                   "Keep auto-created projects on the database's folder, reopened at the next start; off, they live in memory and go at exit."),
        ]
    }

    /// Variables with no flag: instruments and test switches.
    static func environmentOnlyRows() -> [ServeFlag] {
        [
            row(nil, .text(emptyIsUnset: true), env: [EnvironmentConfiguration.statementTraceVariable], default: .null,
                "Benchmark instrument (bench/cost.sh): trace every SQL statement and its arguments to this file.",
                read: { $0.statementTracePath.map(SettingValue.string) ?? .null }, write: { $0.statementTracePath = $1.string }),
            // AuthHTTP and GoTrue read these themselves, for every server of the process; they are
            // checked here so a value that is not a boolean stops the start rather than silently
            // meaning the default.
            toggle(nil, nil, env: [EnvironmentConfiguration.portableIOVariable],
                   "On Linux, serve through the calls macOS uses (poll, a pipe, accept), to test those code paths."),
            // Read by the Postgres client loader itself, in Postgres mode only.
            row(nil, .text(emptyIsUnset: true), env: [EnvironmentConfiguration.libpqVariable], default: .null,
                "Postgres mode: the libpq library file to load, instead of the platform's usual places.",
                read: { _ in .null }, write: { _, _ in }),
            toggle(nil, nil, env: [EnvironmentConfiguration.writesTwiceVariable],
                   "Test switch: every write runs twice, the first round rolled back (docs/tests.md)."),
        ]
    }
}

import AuthCrypto
import AuthJSON
import AuthJWT
import AuthPlatform
import AuthScenarios
import EmulatorTools
import GoTrue
import Synchronization

/// The `auth-emulator` command line, in the shape of swift-argument-parser (subcommands, `--help`
/// everywhere, exit code 64 for usage errors, as sysexits' EX_USAGE), written by hand because the
/// package has no dependencies.
public enum CLI {
    public static let exitUsage: Int32 = 64
    /// sysexits' EX_CONFIG: a setting (flag value aside) is unknown or malformed.
    public static let exitConfiguration: Int32 = 78
    public static let exitFailure: Int32 = 1

    /// Bad command-line syntax: exit 64.
    struct UsageError: Error { let message: String }
    /// A bad setting in the config file or the environment: exit 78.
    struct ConfigurationError: Error { let message: String }

    /// Where commands write: the process's standard output and error, or a buffer in tests.
    struct Console: Sendable {
        var output: @Sendable (String) -> Void
        var error: @Sendable (String) -> Void
        /// Whether `error` reaches a terminal, where progress is redrawn in place.
        var errorIsTerminal = false

        static let standard = Console(
            output: { Swift.print($0, terminator: "") },
            error: { Platform.writeStandardError($0) },
            errorIsTerminal: Platform.standardErrorIsTerminal()
        )
    }

    /// What a command runs with: the environment (passed in, so tests are hermetic) and where
    /// to write.
    struct Context: Sendable {
        let environment: [String: String]
        let console: Console
        let notes = StartupNotes()
        func print(_ line: String) { console.output(line + "\n") }

        /// A `warning:` line on stderr, once per distinct message: the config file, the
        /// environment, the flags and the server's start all report through here, and a problem
        /// two of them notice is still one line.
        func warn(_ message: String) {
            if notes.firstTime(message) { console.error("warning: \(message)\n") }
        }
    }

    /// What the start-up learnt on its way that the banner reports: the environment variables
    /// read, and the warnings already given.
    final class StartupNotes: Sendable {
        private let warned = Mutex<Set<String>>([])
        private let variables = Mutex<[String]>([])

        func firstTime(_ warning: String) -> Bool { warned.withLock { $0.insert(warning).inserted } }
        var appliedVariables: [String] {
            get { variables.withLock { $0 } }
            set { variables.withLock { $0 = newValue } }
        }
    }

    struct Command: Sendable {
        let name: String
        let abstract: String
        let usage: String
        let help: String
        let run: @Sendable ([String], Context) throws -> Int32
    }

    /// `serve` options that take a value, and the on/off switches (`--x` / `--no-x`).
    /// The settings table's flags (`Configuration.settings`) plus the server's own options.
    static let serveValueOptions: Set<String> = Set(settingFlags.filter { !$0.switch }.map(\.name)).union([
        "config", "defaults", "host", "port", "db", "workers", "scenario", "journal-size",
        "seed", "export-on-exit", "signing-key", "log-format", "dashboard", "shutdown-timeout",
        "max-connections", "header-timeout", "body-timeout", "write-timeout", "project", "max-projects",
    ])
    static let serveSwitches: Set<String> = Set(settingFlags.filter(\.switch).map(\.name)).union([
        "strict-hooks", "quiet", "open", "allow-demo-keys", "export-secrets", "auto-create-projects",
        "persist-auto-created-projects",
    ])
    static let settingFlags: [(name: String, switch: Bool, setting: Setting)] = Configuration.settings.compactMap { setting in
        guard let flag = setting.flag else { return nil }
        if case .bool = setting.kind { return (flag, true, setting) }
        return (flag, false, setting)
    }
    static let keysValueOptions: Set<String> = [
        "config", "jwt-secret", "anon-key", "service-role-key", "publishable-key", "secret-key", "generate",
    ]
    static let tokenValueOptions: Set<String> = ["config", "jwt-secret", "role", "user-id", "email", "expires-in"]

    static let commands: [Command] = [
        Command(
            name: "serve",
            abstract: "Run the emulator (GoTrue routes at / and /auth/v1).",
            usage: "auth-emulator serve [--config <config.toml>] [--host <host>] [--port <port>] [--db <path>|:memory:] [<more options>]",
            help: """
                OPTIONS:
                  --config <path>            A Supabase CLI config.toml (e.g. supabase/config.toml); its [auth]
                                             section is applied. Other sections are ignored.
                  --defaults <cli|gotrue>    Whose defaults apply to what nothing sets: supabase start's
                                             (cli, the default) or a bare GoTrue container's (gotrue: email
                                             confirmations and TOTP MFA on, ...; env AUTH_EMULATOR_DEFAULTS).
                                             'auth-emulator help settings' lists both columns.
                  --host <host>              Address to listen on (default 127.0.0.1; env GOTRUE_API_HOST).
                  --port <port>              Port, 0 for an ephemeral one (default 9999; env GOTRUE_API_PORT, PORT).
                  --db <path>|:memory:       SQLite database file, created if missing
                                             (default \(EmulatorOptions.defaultDatabasePath); env AUTH_EMULATOR_DB).
                  --jwt-secret <secret>      HS256 secret (env GOTRUE_JWT_SECRET; default: the supabase start secret).
                                             The anon and service_role keys are re-derived from it unless given.
                  --site-url <url>           Default redirect target (env GOTRUE_SITE_URL).
                  --external-url <url>       Public base URL used in links (env API_EXTERNAL_URL).
                  --anon-key <key>           The anon API key (env AUTH_EMULATOR_ANON_KEY).
                  --service-role-key <key>   The service_role API key (env AUTH_EMULATOR_SERVICE_ROLE_KEY).
                  --publishable-key <key>    An sb_publishable_... key accepted as anon (env AUTH_EMULATOR_PUBLISHABLE_KEY).
                  --secret-key <key>         An sb_secret_... key accepted as service_role (env AUTH_EMULATOR_SECRET_KEY).
                  --[no-]autoconfirm         Email sign-ups are confirmed at once (default on;
                                             env GOTRUE_MAILER_AUTOCONFIRM).
                  --[no-]sms-autoconfirm     Phone sign-ups are confirmed at once (default on; env GOTRUE_SMS_AUTOCONFIRM).
                  --[no-]anonymous           Anonymous sign-ins (default off; env GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED).
                  --[no-]signup              New users may sign up (default on; env GOTRUE_DISABLE_SIGNUP, inverted:
                                             --no-signup is GOTRUE_DISABLE_SIGNUP=true).
                  --[no-]phone               Phone sign-up and sign-in (default off; env GOTRUE_EXTERNAL_PHONE_ENABLED).
                  --[no-]web3-solana         Sign in with Solana (default off; env GOTRUE_EXTERNAL_WEB3_SOLANA_ENABLED).
                  --[no-]web3-ethereum       Sign in with Ethereum (default off; env GOTRUE_EXTERNAL_WEB3_ETHEREUM_ENABLED).
                  --[no-]idp-auto-approve    The fake providers' sign-in page approves at once for the
                                             account named by login_hint=<email> (headless tests;
                                             env AUTH_EMULATOR_IDP_AUTO_APPROVE).
                  --[no-]allow-demo-keys     Beyond loopback (--host 0.0.0.0, a LAN address), keep the public demo
                                             JWT secret and keys instead of fresh random ones (default off).
                  --[no-]require-apikey      /auth/v1 refuses requests without a project API key, as the hosted
                                             gateway does (default off, as supabase start's gateway;
                                             env AUTH_EMULATOR_REQUIRE_APIKEY).
                  --[no-]quiet               No access log (one line per request on stderr: method, path,
                                             status, error code, milliseconds; never the query).
                  --log-format <format>      The access log as text (default) or json (one object per line).
                  --[no-]strict-hooks        Refuse to start (exit 78) when a hook is enabled with a
                                             pg-functions:// URI, which needs Postgres; without it such a
                                             hook is off, with a warning.
                  --[no-]strict-id-tokens    The id_token grant accepts only tokens the emulator's fake
                                             providers signed; off, real providers' tokens (signature
                                             unchecked offline) and plain JSON claims are accepted too
                                             (env AUTH_EMULATOR_STRICT_ID_TOKENS).
                  --password-iterations <n>  PBKDF2 iterations for new password hashes, \(Configuration.passwordIterationsRange.lowerBound)-\(Configuration.passwordIterationsRange.upperBound)
                                             (default \(Configuration().passwordHashIterations); env AUTH_EMULATOR_PASSWORD_ITERATIONS).
                  --workers <n>              Request worker threads.
                  --max-connections <n>      Open connections at most (default 10000); one more is answered
                                             503 and closed (env AUTH_EMULATOR_MAX_CONNECTIONS).
                  --header-timeout <s>       Seconds a request head may take from its first byte (default 10);
                                             a slower client is disconnected.
                  --body-timeout <s>         Seconds a request body may take after its head (default 30).
                  --write-timeout <s>        Seconds a response may wait for a client that reads none of it
                                             (default 30); the connection is then reset. A slow reader
                                             that keeps reading is never cut off.
                  --scenario <file>          Activate a failure scenario (JSON, see scenarios/README.md);
                                             repeatable. Invalid files stop the start with their errors.
                  --rate-limits <preset>     off (nothing limited), real (GoTrue's limits, keyed on the
                                             client address when no GOTRUE_RATE_LIMIT_HEADER value is
                                             sent) or tiny (\(RateLimitSettings.tinyEvents) requests per bucket and window).
                                             Default: as GoTrue, limits only with a key header
                                             (env AUTH_EMULATOR_RATE_LIMITS).
                  --shutdown-timeout <s>     On SIGINT/SIGTERM, seconds in-flight requests get to finish
                                             (default 10); requests still unanswered then get a 503
                                             (env AUTH_EMULATOR_SHUTDOWN_TIMEOUT).
                  --journal-size <n>         Requests kept in the journal (default \(Journal.defaultCapacity);
                                             0 turns it off; env AUTH_EMULATOR_JOURNAL_SIZE).
                  --seed <file>              Apply a fixture file (docs/fixtures.md) at start;
                                             POST /emulator/v1/reset?keep_seed=true returns to it. An
                                             invalid file stops the start with an error naming the entry.
                  --sms <auto|capture|provider>
                                             auto (default under --defaults cli): a named GOTRUE_SMS_PROVIDER is
                                             validated as the real server does before each send, and with none
                                             the SMS is captured; capture: every SMS goes to the outbox whatever
                                             the provider settings; provider (default under --defaults gotrue):
                                             as the real server, no provider fails the send with a 500
                                             (env AUTH_EMULATOR_SMS).
                  --signing-key <alg>        Sign with an rs256, es256 or eddsa key made on first start and kept
                                             in the database (restarts keep tokens valid); the anon and
                                             service_role keys are signed with it, as the CLI does.
                  --export-on-exit <file>    On a clean stop (SIGINT/SIGTERM), write the state as a JSON
                                             snapshot (the GET /emulator/v1/export document) to <file>.
                  --[no-]export-secrets      Include the emulator's own private keys (fake identity
                                             providers, software authenticator) in that snapshot
                                             (default off, as GET /emulator/v1/export?include_secrets=true).
                  --dashboard <on|off>       The web dashboard at /emulator (default on; env AUTH_EMULATOR_DASHBOARD).
                                             Beyond a loopback --host it asks for the service_role key.
                  --[no-]open                Open the dashboard in the default browser once listening (default off).
                  --project <ref>[=<file>]   Serve another isolated project besides the default one, at
                                             /project/<ref>/... and http://<ref>.localhost:PORT, with the
                                             server's settings plus a config.toml's [auth] section; repeatable
                                             (docs/projects.md).
                  --[no-]auto-create-projects
                                             A request for an unknown project makes it (default off: 404),
                                             in memory, with no key needed.
                  --max-projects <n>         Auto-creation stops once there are <n> projects besides the
                                             default one; later unknown refs get the 404 (default 100).
                  --[no-]persist-auto-created-projects
                                             Keep auto-created projects on the database's folder, reopened
                                             at the next start (default off: in memory, gone at exit).
                  -h, --help                 Show this help.

                Precedence, highest first: flags, GOTRUE_* environment variables (the real server's
                names and units), the --config file, the defaults of --defaults (`supabase start`'s unless
                told otherwise). 'auth-emulator help settings' lists every setting under all its names.
                Malformed flags exit 64; an unknown or malformed setting in the file or the
                environment exits 78 with an error naming it.

                The first line printed is `listening on http://HOST:PORT`; then the API keys, the dashboard, the
                defaults, the signing key, where settings came from (config file, variable names) and, last,
                the database path. Warnings go to stderr, each once. --seed shows progress on a terminal and
                one summary line otherwise. SIGINT or SIGTERM stops it cleanly (requests finish, database
                checkpointed and closed) and says so on stderr: `stopping: N requests finished, M cut off, ...`.
                """,
            run: serve
        ),
        Command(
            name: "keys",
            abstract: "Print the project's anon and service_role API keys.",
            usage: "auth-emulator keys [--config <config.toml>] [--jwt-secret <secret>] | keys --generate rs256|es256|eddsa",
            help: """
                OPTIONS:
                  --config <path>            A Supabase CLI config.toml whose [auth] section is applied
                                             (with signing_keys_path, the keys are signed with its first key).
                  --jwt-secret <secret>      HS256 secret (env GOTRUE_JWT_SECRET; default: the supabase start secret).
                  --generate <alg>           Print a new signing key array (rs256, es256 or eddsa) in the CLI's
                                             signing_keys.json format, for [auth] signing_keys_path.
                  --anon-key <key>, --service-role-key <key>, --publishable-key <key>, --secret-key <key>
                                             Keys given explicitly, as for serve.
                  -h, --help                 Show this help.

                Prints ANON_KEY=... and SERVICE_ROLE_KEY=... lines (shell-friendly), then
                PUBLISHABLE_KEY=... and SECRET_KEY=... when those are set.
                """,
            run: keys
        ),
        Command(
            name: "scenario",
            abstract: "Check failure scenario files (scenario validate FILE...).",
            usage: "auth-emulator scenario validate <file>...",
            help: """
                SUBCOMMANDS:
                  validate <file>...         Parse and check each scenario file without starting a server.
                                             Prints one line per valid file; each problem names the file,
                                             the rule index and the field. Exit 0 when all are valid, 1 when not.
                """,
            run: scenario
        ),
        Command(
            name: "token",
            abstract: "Print a signed test token (anon, service_role or a user's).",
            usage: "auth-emulator token --role anon|service_role|authenticated [--user-id <uuid>] [--email <email>] [--expires-in <seconds>] [--jwt-secret <secret>] [--config <config.toml>]",
            help: """
                OPTIONS:
                  --role <role>              anon or service_role: an API-key-like token ({"iss": "supabase-demo",
                                             "role"}); without --expires-in it is exactly the project's key.
                                             authenticated (or any other role with --user-id): a user token.
                  --user-id <uuid>           The user (the sub claim). Required for authenticated.
                  --email <email>            The email claim of a user token.
                  --expires-in <seconds>     Lifetime (default: GOTRUE_JWT_EXP, 3600, for user tokens).
                  --jwt-secret <secret>      HS256 secret (env GOTRUE_JWT_SECRET; default: the supabase start secret).
                  --config <path>            A Supabase CLI config.toml whose [auth] section is applied.

                Works without a running server, so a user token has no session (no session_id
                claim): /user accepts it while the user exists, but it cannot be refreshed or
                logged out. For a token backed by a real session, ask the running emulator:
                POST /emulator/v1/token {"user_id": "..."} with the service_role key.
                """,
            run: token
        ),
        Command(
            name: "version",
            abstract: "Print the emulator's version.",
            usage: "auth-emulator version",
            help: "",
            run: { arguments, context in
                if let extra = arguments.first { throw UsageError(message: "unexpected argument '\(extra)'") }
                context.print(BuildInfo.versionLine)
                return 0
            }
        ),
    ]

    static var overview: String {
        var text = """
            OVERVIEW: A GoTrue-compatible Supabase Auth server for local development and CI.

            USAGE: auth-emulator <subcommand> [options]

            SUBCOMMANDS:

            """
        for command in commands {
            text += "  " + command.name.padding(to: 10) + command.abstract + "\n"
        }
        text += """

              serve's options (--port, --db, --config, --seed, --scenario, ...) are listed by
              'auth-emulator help serve'. See 'auth-emulator help <subcommand>' for any other
              subcommand, 'auth-emulator help settings' for every setting.
            """
        return text
    }

    /// Runs the command line (arguments without the program name) with the process's
    /// environment; returns the exit status.
    public static func main(_ arguments: [String]) -> Int32 {
        run(arguments, environment: Platform.environment(), console: .standard)
    }

    /// `main`, then the process ends with its status: the executable's whole body, which thus
    /// needs no platform module of its own.
    public static func mainThenExit(_ arguments: [String]) -> Never {
        Platform.exitProcess(main(arguments))
    }

    /// The command line with an explicit environment and output, so tests are hermetic.
    static func run(_ arguments: [String], environment: [String: String], console: Console = .standard) -> Int32 {
        let context = Context(environment: environment, console: console)
        guard let first = arguments.first else {
            console.error(overview + "\n")
            return exitUsage
        }
        if first == "-h" || first == "--help" || first == "help" {
            if first == "help", arguments.count > 1, arguments[1] == "settings" {
                switch arguments.dropFirst(2).first {
                case nil: context.print(SettingsReference.text())
                case "--markdown": console.output(SettingsReference.markdown())
                case let other?: return usageError("unexpected argument '\(other)'", usage: "auth-emulator help settings [--markdown]", console: console)
                }
            } else if first == "help", arguments.count > 1 {
                guard let command = commands.first(where: { $0.name == arguments[1] }) else {
                    let hint = Spelling.hint(for: arguments[1], among: commands.map(\.name) + ["settings"])
                    return usageError("unknown subcommand '\(arguments[1])'\(hint)", usage: nil, console: console)
                }
                context.print(helpText(command))
            } else {
                context.print(overview)
            }
            return 0
        }
        if first == "--version" {
            context.print(BuildInfo.versionLine)
            return 0
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            return usageError(unknownSubcommand(first), usage: nil, console: console)
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("-h") || rest.contains("--help") {
            context.print(helpText(command))
            return 0
        }
        do {
            return try command.run(rest, context)
        } catch let error as UsageError {
            return usageError(error.message, usage: command.usage, console: console, help: "auth-emulator help \(command.name)")
        } catch let error as ConfigurationError {
            console.error("Error: \(error.message)\n")
            return exitConfiguration
        } catch {
            console.error("Error: \(error)\n")
            return exitFailure
        }
    }

    /// The message for a first argument that names no subcommand: a near miss is suggested,
    /// and a serve option given without `serve` (`auth-emulator --port 0`) is pointed there.
    static func unknownSubcommand(_ first: String) -> String {
        if first.hasPrefix("--") {
            var name = String(first.dropFirst(2))
            if let eq = name.firstIndex(of: "=") { name = String(name[..<eq]) }
            let bare = name.hasPrefix("no-") ? String(name.dropFirst(3)) : name
            if serveValueOptions.contains(name) || serveSwitches.contains(bare) {
                return "unknown subcommand '\(first)' (options go after a subcommand: did you mean 'auth-emulator serve \(first)'?)"
            }
        }
        return "unknown subcommand '\(first)'" + Spelling.hint(for: first, among: commands.map(\.name) + ["help"])
    }

    static func helpText(_ command: Command) -> String {
        var text = "OVERVIEW: \(command.abstract)\n\nUSAGE: \(command.usage)\n"
        if !command.help.isEmpty { text += "\n" + command.help }
        return text
    }

    static func usageError(_ message: String, usage: String?, console: Console, help: String = "auth-emulator --help") -> Int32 {
        var text = "Error: \(message)\n"
        if let usage { text += "Usage: \(usage)\n" }
        text += "See '\(help)'.\n"
        console.error(text)
        return exitUsage
    }

    struct Flags {
        var values: [String: String] = [:]
        var switches: [String: Bool] = [:]
        /// Every value of each option, in order, for the repeatable ones (`--scenario`).
        var lists: [String: [String]] = [:]
    }

    /// Parses `--name value` / `--name=value` options and `--switch` / `--no-switch` toggles;
    /// a repeated option keeps its last value.
    static func parseOptions(_ arguments: [String], values allowed: Set<String>, switches: Set<String> = []) throws -> Flags {
        var flags = Flags()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard argument.hasPrefix("--") else { throw UsageError(message: "unexpected argument '\(argument)'") }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let eq = name.firstIndex(of: "=") {
                value = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            let negated = name.hasPrefix("no-") ? String(name.dropFirst(3)) : nil
            if switches.contains(name) || negated.map(switches.contains) == true {
                guard value == nil else { throw UsageError(message: "'--\(name)' takes no value") }
                flags.switches[negated ?? name] = negated == nil
                index += 1
                continue
            }
            guard allowed.contains(name) else {
                throw UsageError(message: "unknown option '--\(name)'" + optionHint(name, values: allowed, switches: switches))
            }
            if value == nil {
                index += 1
                guard index < arguments.count else { throw UsageError(message: "missing value for '--\(name)'") }
                value = arguments[index]
            }
            flags.values[name] = value
            flags.lists[name, default: []].append(value ?? "")
            index += 1
        }
        return flags
    }

    /// " (did you mean '--x'?)" for a mistyped option: a `--no-` form is matched against the
    /// switches alone and keeps its `no-`.
    static func optionHint(_ name: String, values: Set<String>, switches: Set<String>) -> String {
        if name.hasPrefix("no-"), let match = Spelling.suggestion(for: String(name.dropFirst(3)), among: switches.sorted()) {
            return " (did you mean '--no-\(match)'?)"
        }
        guard let match = Spelling.suggestion(for: name, among: values.union(switches).sorted()) else { return "" }
        return " (did you mean '--\(match)'?)"
    }

    static func nonEmpty(_ flags: Flags, _ name: String) throws -> String? {
        guard let value = flags.values[name] else { return nil }
        guard !value.isEmpty else { throw UsageError(message: "--\(name) must not be empty") }
        return value
    }

    static func number(_ flags: Flags, _ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = flags.values[name] else { return nil }
        guard let n = Int(text), range.contains(n) else {
            throw UsageError(message: "--\(name) must be a number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return n
    }

    /// Defaults, then the config file, then the environment, then flags.
    static func options(from flags: Flags, context: Context) throws -> EmulatorOptions {
        let configFile = try nonEmpty(flags, "config")
        var base = EmulatorOptions()
        let profileName = flags.values["defaults"] ?? context.environment[EnvironmentConfiguration.defaultsVariable]
        if let profileName, !profileName.isEmpty {
            guard let profile = DefaultsProfile(rawValue: profileName) else {
                if flags.values["defaults"] != nil { throw UsageError(message: "--defaults must be cli or gotrue, not '\(profileName)'") }
                throw ConfigurationError(message: "\(EnvironmentConfiguration.defaultsVariable): '\(profileName)' is not cli or gotrue")
            }
            base.configuration.adoptDefaults(profile)
        }
        var options: EmulatorOptions
        do {
            // The profile is settled (the flag wins over the variable).
            var environment = context.environment
            environment[EnvironmentConfiguration.defaultsVariable] = nil
            options = try EmulatorOptions.layered(
                configFile: configFile, environment: environment, base: base,
                warning: { context.warn($0) },
                applied: { names in
                    // The profile variable was settled above; it counts when no flag overrode it.
                    let profile = flags.values["defaults"] == nil && context.environment[EnvironmentConfiguration.defaultsVariable]?.isEmpty == false
                    context.notes.appliedVariables = (names + (profile ? [EnvironmentConfiguration.defaultsVariable] : [])).sorted()
                }
            )
        } catch {
            throw ConfigurationError(message: error.description)
        }
        if let host = try nonEmpty(flags, "host") { options.host = host }
        if let port = try number(flags, "port", in: 0...65535) { options.port = port }
        if let db = try nonEmpty(flags, "db") { options.databasePath = db }
        if let workers = try number(flags, "workers", in: 1...256) { options.workerThreads = workers }
        if let cap = try number(flags, "max-connections", in: EnvironmentConfiguration.maxConnectionsRange) { options.maxConnections = cap }
        if let seconds = try number(flags, "header-timeout", in: 1...3600) { options.headerTimeoutSeconds = seconds }
        if let seconds = try number(flags, "body-timeout", in: 1...3600) { options.bodyTimeoutSeconds = seconds }
        if let seconds = try number(flags, "write-timeout", in: 1...3600) { options.writeTimeoutSeconds = seconds }
        if let size = try number(flags, "journal-size", in: 0...1_000_000) { options.journalCapacity = size }
        if let seconds = try number(flags, "shutdown-timeout", in: 0...3600) { options.shutdownTimeoutSeconds = Double(seconds) }
        if let mode = flags.values["dashboard"] {
            guard mode == "on" || mode == "off" else { throw UsageError(message: "--dashboard must be on or off, not '\(mode)'") }
            options.dashboard = mode == "on"
        }
        for path in flags.lists["scenario"] ?? [] {
            guard !path.isEmpty else { throw UsageError(message: "--scenario must not be empty") }
            do {
                options.scenarios.append(try loadScenario(path))
            } catch {
                throw ConfigurationError(message: "invalid scenario file:\n" + error.description)
            }
        }

        var config = options.configuration
        for (name, isSwitch, setting) in settingFlags {
            var value: SettingValue?
            if isSwitch {
                if let on = flags.switches[name] { value = .bool(setting.flagInverted ? !on : on) }
            } else if let text = flags.values[name] {
                if text.isEmpty, case .text(emptyIsUnset: true) = setting.kind { throw UsageError(message: "--\(name) must not be empty") }
                do {
                    value = try SettingSyntax.value(text: text, kind: setting.kind, name: "--" + name)
                } catch {
                    throw UsageError(message: "\(error.name) must be \(setting.kind.describe), not '\(text)'")
                }
            }
            guard let value else { continue }
            do {
                try setting.set(value, in: &config, from: .flag, name: "--" + name)
            } catch {
                throw UsageError(message: "\(error.name) must be \(setting.kind.describe), not '\(flags.values[name] ?? "")'")
            }
        }
        if let on = flags.switches["allow-demo-keys"] { options.allowDemoKeys = on }
        if let on = flags.switches["auto-create-projects"] { options.autoCreateProjects = on }
        if let cap = try number(flags, "max-projects", in: EmulatorOptions.maxProjectsRange) { options.maxProjects = cap }
        if let on = flags.switches["persist-auto-created-projects"] { options.persistAutoCreatedProjects = on }
        for value in flags.lists["project"] ?? [] {
            let parts = value.split(separator: "=", maxSplits: 1).map(String.init)
            let ref = parts.first ?? ""
            guard ProjectRegistry.isValidRef(ref), ref != ProjectRegistry.defaultRef else {
                throw UsageError(message: "--project must be <ref> or <ref>=<config.toml> with a ref of lowercase letters, digits and hyphens, not '\(value)'")
            }
            guard !options.projects.contains(where: { $0.ref == ref }) else { throw UsageError(message: "--project \(ref) is given twice") }
            var spec = ProjectSpec(ref: ref)
            if parts.count == 2 {
                do {
                    spec.configTOML = String(decoding: try Platform.readFile(parts[1]), as: UTF8.self)
                } catch {
                    throw ConfigurationError(message: error.description)
                }
            }
            options.projects.append(spec)
        }
        if let text = try nonEmpty(flags, "signing-key") {
            options.signingKeyAlgorithm = try signingAlgorithm(text, option: "signing-key")
        }
        config.applyDefaults()
        do {
            try Validation.check(config)
        } catch {
            throw ConfigurationError(message: error.description)
        }
        // Unsigned id_tokens are a convenience on the loopback interface only: anyone who can reach
        // a LAN address could sign in as any user with plain JSON claims. Off loopback, strict
        // id_tokens are the default unless a flag or the environment says otherwise.
        let strictChosen = flags.switches["strict-id-tokens"] != nil || context.environment[EnvironmentConfiguration.strictIDTokensVariable] != nil
        if !strictChosen && !Exposure.isLoopback(options.host) && !config.identityProviders.strictIDTokens {
            config.identityProviders.strictIDTokens = true
            context.warn("listening on \(options.host), not loopback: the id_token grant accepts only tokens the fake providers signed (--no-strict-id-tokens to accept plain claims)")
        }
        // GOTRUE_EXTERNAL_<P>_URL points a real provider at a self-hosted instance; the fake
        // providers answer for every provider at the emulator's own address.
        // The URL may come from the file rather than the variable: name the source it came from.
        for (name, settings) in config.external.providers.sorted(by: { $0.key < $1.key }) where !settings.url.isEmpty {
            let setting = config.settingSources["external.\(name).url"] == .file ? "[auth.external.\(name)] url" : "GOTRUE_EXTERNAL_\(name.uppercased())_URL"
            context.warn("\(setting) (\(settings.url)) is ignored: the emulator's fake \(name) provider answers at its own address")
        }
        // A Postgres function hook cannot run here: say so in one line, and behave as if it were off.
        for (name, path) in HookSettings.names where config.hooks[keyPath: path].enabled
            && config.hooks[keyPath: path].uri.lowercased().hasPrefix("pg-functions:") {
            let message = "hook \(name): \(config.hooks[keyPath: path].uri) is a Postgres function, which needs Postgres; the emulator calls only http:// and https:// hooks"
            if flags.switches["strict-hooks"] == true { throw ConfigurationError(message: message) }
            context.warn("\(message); the hook is off")
        }
        options.configuration = config
        return options
    }

    static func serve(_ arguments: [String], context: Context) throws -> Int32 {
        let flags = try parseOptions(arguments, values: serveValueOptions, switches: serveSwitches)
        var options = try options(from: flags, context: context)
        if options.databasePath != EmulatorOptions.inMemory, !options.databasePath.hasPrefix("/") {
            options.databasePath = Platform.currentDirectory() + "/" + options.databasePath
        }
        let seedFile = try nonEmpty(flags, "seed")
        let exportFile = try nonEmpty(flags, "export-on-exit")
        let format = try nonEmpty(flags, "log-format") ?? "text"
        guard let logFormat = AccessLog.Format(rawValue: format) else {
            throw UsageError(message: "--log-format must be text or json, not '\(format)'")
        }
        if flags.switches["quiet"] != true {
            let console = context.console
            options.accessLog = AccessLog(format: logFormat) { line in console.error(line) }
        }
        // The server listens only once a fixture is in: a CI job that waits for the first line
        // (or for /health) never starts against a half-seeded database.
        let emulator = try Emulator(options: options)
        if !emulator.replacedSecrets.isEmpty {
            context.warn("listening on \(options.host), beyond loopback, where the public demo secrets would open the admin API, the dashboard and /emulator/v1 to the network: this run uses a fresh random \(emulator.replacedSecrets.joined(separator: ", ")) (printed below; set GOTRUE_JWT_SECRET and the key flags to choose your own, or --allow-demo-keys to keep the demo ones)")
        }
        for warning in emulator.templateWarnings { context.warn(warning) }
        var seedProgress: SeedProgress?
        if let seedFile {
            let progress = SeedProgress()
            seedProgress = progress
            // Until the server listens, SIGINT or SIGTERM cancels the seed: its transaction rolls
            // back and the process ends, instead of seeding for minutes and then serving.
            let interrupts = Platform.onTerminationSignal { _ in progress.cancel() }
            do {
                try seed(emulator, file: seedFile, console: context.console, progress: progress)
            } catch {
                emulator.stop()
                if progress.isCancelled { return seedInterrupted(seedFile, console: context.console) }
                throw ConfigurationError(message: "invalid fixture file \(error)")
            }
            withExtendedLifetime(interrupts) {}
        }
        try emulator.start()
        if let address = emulator.linkAddress {
            context.console.error("note: listening on every interface; links in mails and redirects use \(address) (set --external-url to choose another address)\n")
        }
        if let exportFile {
            let path = exportFile.hasPrefix("/") ? exportFile : Platform.currentDirectory() + "/" + exportFile
            let includeSecrets = flags.switches["export-secrets"] == true
            emulator.onStop { stopped in
                do {
                    try stopped.exportSnapshot(to: path, includeSecrets: includeSecrets)
                } catch {
                    context.console.error("Error: \(error)\n")
                }
            }
        }
        let signals = emulator.stopOnTerminationSignals()
        // A signal that came as the seed ended, before the handler above took over.
        if seedProgress?.isCancelled == true {
            emulator.stop()
            return seedInterrupted(seedFile ?? "", console: context.console)
        }
        // The project's keys: a signing key made at start-up signs them.
        let keys = emulator.project.configuration.apiKeys
        // The first line is a contract: scripts wait for it to learn the real port.
        context.print("listening on \(emulator.url)")
        context.print("auth url:         \(emulator.url)\(GoTrueAPI.gatewayPrefix)")
        context.print("anon key:         \(keys.anon)")
        context.print("service_role key: \(keys.serviceRole)")
        if let publishable = keys.publishable { context.print("publishable key:  \(publishable)") }
        if let secret = keys.secret { context.print("secret key:       \(secret)") }
        if let dashboard = emulator.dashboardURL { context.print("dashboard:        \(dashboard)") }
        for warning in emulator.projectWarnings { context.warn(warning) }
        let others = emulator.projects.all.filter { !$0.isDefault }
        if !others.isEmpty {
            // Their keys: GET /emulator/v1/projects.
            context.print("projects:         \(others.map { $0.url(server: emulator.url) }.joined(separator: ", "))")
        }
        let profile = emulator.project.configuration.defaultsProfile
        context.print("defaults:         \(profile.rawValue) (\(profile == .cli ? "as supabase start" : "as a bare GoTrue container"))")
        context.print("signing key:      \(ConsoleText.signingKey(emulator.project.configuration.jwt))")
        context.print("settings from:    \(ConsoleText.settingsSources(configFile: flags.values["config"], variables: context.notes.appliedVariables))")
        // The database line ends the banner (scripts wait for it).
        context.print("database:         \(options.databasePath)")
        Platform.flushStandardOutput()
        if flags.switches["open"] == true, let dashboard = emulator.dashboardURL {
            // One line either way the opening fails: no opener program, or one that ran and
            // found no browser (xdg-open on a server exits 3).
            let console = context.console
            let message = "warning: could not open a browser (no \(Platform.browserOpener) or no browser it could start); the dashboard is at \(dashboard)\n"
            if !Platform.openInBrowser(dashboard, failed: { console.error(message) }) { console.error(message) }
        }
        // One line per captured email/SMS, so the code or link can be copied from the terminal.
        emulator.project.outbox.onMessage { message in
            context.print("outbox: " + Outbox.summary(message))
            Platform.flushStandardOutput()
        }
        emulator.waitUntilStopped()
        withExtendedLifetime(signals) {}
        if let report = emulator.stopReport { context.console.error(ConsoleText.stopSummary(report) + "\n") }
        return 0
    }

    /// `serve --seed`: applies the file while telling the console how it goes. On a terminal a
    /// line is redrawn in place about four times a second (count, rate, time left), by a thread
    /// of its own that polls the seed's counters, so a slow terminal never holds the seed up;
    /// into a file or a pipe nothing is written per row, only the summary line at the end.
    /// The one line a seed stopped by a signal ends with; the process exits 130, as a shell
    /// reports a command ended by Ctrl-C.
    static func seedInterrupted(_ file: String, console: Console) -> Int32 {
        console.error("stopped: interrupted while seeding \(file); nothing of it was kept, and the server never listened\n")
        return 130
    }

    static func seed(_ emulator: Emulator, file: String, console: Console, progress: SeedProgress) throws(EmulatorError) {
        let started = Platform.monotonicSeconds()
        let finished = Flag()
        var ticker: ThreadHandle?
        // On a terminal a line redrawn in place four times a second; into a file or a pipe (a CI
        // log) a line as the seed starts and one every ten seconds, so a long seed is seen to
        // progress before the server listens.
        let terminal = console.errorIsTerminal
        if !terminal { console.error("seeding \(file)...\n") }
        let every = terminal ? 0.25 : 10
        ticker = try? Threads.spawn(name: "seed-progress", stackSize: 128 * 1024) {
            // The rate follows the phase shown (reading the file, hashing, writing), measured
            // from the first reading of that phase: the file's parse does not dilute the
            // hashing rate, and the writer's first chunk, done before it was seen, does not
            // inflate the writing one.
            var phase = (number: 0, since: started, base: 0)
            var lastDrawn = started
            while !finished.isSet {
                Platform.sleep(milliseconds: 50)
                let now = Platform.monotonicSeconds()
                guard now - lastDrawn >= every, !finished.isSet else { continue }
                lastDrawn = now
                let state = ConsoleText.SeedState(total: progress.total, passwords: progress.passwords,
                                                  hashed: progress.hashed, written: progress.written)
                if phase.number < 2, state.written > 0 {
                    phase = (2, now, state.written)
                } else if phase.number < 1, state.total > 0 {
                    phase = (1, now, state.hashed)
                }
                let elapsed = now - phase.since
                let done = (phase.number == 2 ? state.written : state.hashed) - phase.base
                // Below half a second, or with nothing done yet, a rate would be noise.
                let rate = elapsed >= 0.5 && done > 0 ? Double(done) / elapsed : nil
                let line = ConsoleText.seedProgress(state, rate: rate, file: file)
                console.error(terminal ? ConsoleText.redraw(line) : line + "\n")
            }
        }
        // The ticker has drawn its last line before anything else is written.
        func stopTicker() {
            finished.set()
            ticker?.join()
            ticker = nil
        }
        do {
            try emulator.seed(file: file, progress: progress)
        } catch {
            stopTicker()
            if console.errorIsTerminal { console.error(ConsoleText.redraw("")) }
            throw error
        }
        stopTicker()
        let summary = ConsoleText.seedSummary(users: progress.total, seconds: Platform.monotonicSeconds() - started)
        console.error((console.errorIsTerminal ? ConsoleText.redraw(summary) : summary) + "\n")
    }

    /// A flag one thread raises and another polls.
    final class Flag: Sendable {
        private let raised = Atomic<Bool>(false)
        var isSet: Bool { raised.load(ordering: .relaxed) }
        func set() { raised.store(true, ordering: .relaxed) }
    }

    /// A scenario file, parsed and validated; problems name the file, rule and field.
    static func loadScenario(_ path: String) throws(ScenarioError) -> Scenario {
        let bytes: [UInt8]
        do {
            bytes = try Platform.readFile(path, limit: 1 << 20)
        } catch {
            throw ScenarioError(issues: [ScenarioIssue(file: path, rule: nil, field: "(file)", message: error.description)])
        }
        return try Scenario(json: bytes, source: path)
    }

    static func scenario(_ arguments: [String], context: Context) throws -> Int32 {
        guard let action = arguments.first else { throw UsageError(message: "missing subcommand (validate)") }
        guard action == "validate" else { throw UsageError(message: "unknown scenario subcommand '\(action)' (expected validate)") }
        let files = Array(arguments.dropFirst())
        guard !files.isEmpty else { throw UsageError(message: "validate needs at least one file") }
        if let option = files.first(where: { $0.hasPrefix("-") }) { throw UsageError(message: "unknown option '\(option)'") }
        var failed = false
        for file in files {
            do {
                let scenario = try loadScenario(file)
                context.print("\(file): ok (\(scenario.name), \(scenario.rules.count) rule\(scenario.rules.count == 1 ? "" : "s"))")
            } catch {
                failed = true
                context.console.error(error.description + "\n")
            }
        }
        return failed ? exitFailure : 0
    }

    static func token(_ arguments: [String], context: Context) throws -> Int32 {
        let flags = try parseOptions(arguments, values: tokenValueOptions)
        guard let role = try nonEmpty(flags, "role") else {
            throw UsageError(message: "--role is required (anon, service_role or authenticated)")
        }
        let configuration = try options(from: flags, context: context).configuration
        let expiresIn = try number(flags, "expires-in", in: 1...315_360_000).map(Int64.init)
        let email = try nonEmpty(flags, "email")
        let now = SystemClock().now()
        if let userID = try nonEmpty(flags, "user-id") {
            guard userID.utf8.count == 36, userID.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12],
                  userID.allSatisfy({ $0 == "-" || $0.isHexDigit }) else {
                throw UsageError(message: "--user-id must be a UUID, not '\(userID)'")
            }
            context.print(TestTokens.userToken(userID: userID.lowercased(), email: email, role: role,
                                               configuration: configuration, now: now, expiresIn: expiresIn))
            return 0
        }
        if role == "authenticated" || email != nil {
            throw UsageError(message: "a user token needs --user-id (the sub claim)")
        }
        context.print(TestTokens.keyToken(role: role, configuration: configuration, now: now, expiresIn: expiresIn))
        return 0
    }

    /// `rs256`, `es256` or `eddsa` (any case) as an algorithm for a new key.
    static func signingAlgorithm(_ text: String, option: String) throws -> JWTAlgorithm {
        switch text.lowercased() {
        case "rs256": return .rs256
        case "es256": return .es256
        case "eddsa", "ed25519": return .edDSA
        default: throw UsageError(message: "--\(option) must be rs256, es256 or eddsa, not '\(text)'")
        }
    }

    static func keys(_ arguments: [String], context: Context) throws -> Int32 {
        let flags = try parseOptions(arguments, values: keysValueOptions)
        if let text = try nonEmpty(flags, "generate") {
            let algorithm = try signingAlgorithm(text, option: "generate")
            let jwk = JWK(generating: algorithm, kid: Environment().uuid(), random: SystemRandom())
            // The CLI writes signing_keys.json with Go's encoder indented by two spaces.
            context.print(indentedJSON(.array([.object(jwk.privateJSON)])))
            return 0
        }
        let keys = try options(from: flags, context: context).configuration.apiKeys
        context.print("ANON_KEY=\(keys.anon)")
        context.print("SERVICE_ROLE_KEY=\(keys.serviceRole)")
        if let publishable = keys.publishable { context.print("PUBLISHABLE_KEY=\(publishable)") }
        if let secret = keys.secret { context.print("SECRET_KEY=\(secret)") }
        return 0
    }
}

/// JSON as Go's `json.Encoder` with `SetIndent("", "  ")` writes it: one member or element
/// per line, two spaces per level, `": "` after keys.
func indentedJSON(_ value: JSON, level: Int = 0) -> String {
    let pad = String(repeating: "  ", count: level + 1)
    let closing = String(repeating: "  ", count: level)
    switch value {
    case .array(let elements) where !elements.isEmpty:
        var lines: [String] = []
        for element in elements { lines.append(pad + indentedJSON(element, level: level + 1)) }
        return "[\n" + lines.joined(separator: ",\n") + "\n" + closing + "]"
    case .object(let object) where !object.isEmpty:
        var lines: [String] = []
        for (key, member) in object {
            let name: String = JSON.string(key).serialized()
            lines.append(pad + name + ": " + indentedJSON(member, level: level + 1))
        }
        return "{\n" + lines.joined(separator: ",\n") + "\n" + closing + "}"
    default:
        return value.serialized()
    }
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}

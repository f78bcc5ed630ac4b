import AuthCrypto
import AuthEmulator
import AuthJSON
import AuthJWT
import AuthPlatform
import AuthScenarios
import EmulatorConfiguration
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

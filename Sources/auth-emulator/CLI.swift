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

    /// `serve` options that take a value, and the on/off switches (`--x` / `--no-x`): every
    /// line of `serve --help` (`EmulatorOptions.serveFlags`: the server's options and the
    /// settings table's flags).
    static let serveValueOptions: Set<String> = Set(serveHelpRows.filter { !$0.isSwitch }.map(\.flag))
    static let serveSwitches: Set<String> = Set(serveHelpRows.filter(\.isSwitch).map(\.flag))
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
            help: "OPTIONS:\n" + serveOptionsHelp + "  -h, --help".padding(to: helpColumn) + "Show this help.\n\n" + """
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

import GoTrue

/// The `auth-emulator` command line, in the shape of swift-argument-parser (subcommands, `--help`
/// everywhere, exit code 64 for usage errors, as sysexits' EX_USAGE), written by hand because the
/// package has no dependencies.
public enum CLI {
    public static let exitUsage: Int32 = 64
    public static let exitFailure: Int32 = 1

    struct UsageError: Error { let message: String }

    struct Command: Sendable {
        let name: String
        let abstract: String
        let usage: String
        let help: String
        let run: @Sendable ([String]) throws -> Int32
    }

    static let commands: [Command] = [
        Command(
            name: "serve",
            abstract: "Run the emulator (GoTrue routes at / and /auth/v1).",
            usage: "auth-emulator serve [--host <host>] [--port <port>] [--db <path>|:memory:] [--jwt-secret <secret>] [--site-url <url>] [--external-url <url>] [--workers <n>]",
            help: """
                OPTIONS:
                  --host <host>          Address to listen on (default 127.0.0.1; env GOTRUE_API_HOST).
                  --port <port>          Port, 0 for an ephemeral one (default 9999; env PORT).
                  --db <path>|:memory:   SQLite database file, created if missing
                                         (default \(EmulatorOptions.defaultDatabasePath); env AUTH_EMULATOR_DB).
                  --jwt-secret <secret>  HS256 secret (env GOTRUE_JWT_SECRET; default: the supabase start secret).
                  --site-url <url>       GOTRUE_SITE_URL.
                  --external-url <url>   API_EXTERNAL_URL.
                  --workers <n>          Request worker threads.
                  -h, --help             Show this help.

                The first line printed is `listening on http://HOST:PORT`; then the API keys and the
                database path. SIGINT or SIGTERM stops it cleanly (requests finish, database closed).
                """,
            run: serve
        ),
        Command(
            name: "keys",
            abstract: "Print the project's anon and service_role API keys.",
            usage: "auth-emulator keys [--jwt-secret <secret>]",
            help: """
                OPTIONS:
                  --jwt-secret <secret>  HS256 secret (env GOTRUE_JWT_SECRET; default: the supabase start secret).
                  -h, --help             Show this help.

                Prints ANON_KEY=... and SERVICE_ROLE_KEY=... lines (shell-friendly).
                """,
            run: keys
        ),
        Command(
            name: "version",
            abstract: "Print the emulator's version.",
            usage: "auth-emulator version",
            help: "",
            run: { arguments in
                if let extra = arguments.first { throw UsageError(message: "unexpected argument '\(extra)'") }
                print(Configuration.emulatorVersion)
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
        text += "\n  See 'auth-emulator help <subcommand>' for detailed help."
        return text
    }

    /// Runs the command line (arguments without the program name); returns the exit status.
    public static func main(_ arguments: [String]) -> Int32 {
        guard let first = arguments.first else {
            Platform.writeStandardError(overview + "\n")
            return exitUsage
        }
        if first == "-h" || first == "--help" || first == "help" {
            if first == "help", arguments.count > 1 {
                guard let command = commands.first(where: { $0.name == arguments[1] }) else {
                    return usageError("unknown subcommand '\(arguments[1])'", usage: nil)
                }
                print(helpText(command))
            } else {
                print(overview)
            }
            return 0
        }
        if first == "--version" {
            print(Configuration.emulatorVersion)
            return 0
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            return usageError("unknown subcommand '\(first)'", usage: nil)
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("-h") || rest.contains("--help") {
            print(helpText(command))
            return 0
        }
        do {
            return try command.run(rest)
        } catch let error as UsageError {
            return usageError(error.message, usage: command.usage)
        } catch {
            Platform.writeStandardError("Error: \(error)\n")
            return exitFailure
        }
    }

    static func helpText(_ command: Command) -> String {
        var text = "OVERVIEW: \(command.abstract)\n\nUSAGE: \(command.usage)\n"
        if !command.help.isEmpty { text += "\n" + command.help }
        return text
    }

    static func usageError(_ message: String, usage: String?) -> Int32 {
        var text = "Error: \(message)\n"
        if let usage { text += "Usage: \(usage)\n" }
        text += "See 'auth-emulator --help'.\n"
        Platform.writeStandardError(text)
        return exitUsage
    }

    /// Parses `--name value` / `--name=value` options; every option here takes a value.
    static func parseOptions(_ arguments: [String], allowed: Set<String>) throws -> [String: String] {
        var result: [String: String] = [:]
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
            guard allowed.contains(name) else { throw UsageError(message: "unknown option '--\(name)'") }
            if value == nil {
                index += 1
                guard index < arguments.count else { throw UsageError(message: "missing value for '--\(name)'") }
                value = arguments[index]
            }
            result[name] = value
            index += 1
        }
        return result
    }

    /// Defaults, then the environment, then flags.
    static func options(from flags: [String: String]) throws -> EmulatorOptions {
        var options = EmulatorOptions()
        try EnvironmentConfiguration.apply(Platform.environment(), to: &options)
        if let host = flags["host"] {
            guard !host.isEmpty else { throw UsageError(message: "--host must not be empty") }
            options.host = host
        }
        if let port = flags["port"] {
            guard let n = Int(port), (0...65535).contains(n) else {
                throw UsageError(message: "--port must be a number from 0 to 65535, not '\(port)'")
            }
            options.port = n
        }
        if let db = flags["db"] {
            guard !db.isEmpty else { throw UsageError(message: "--db must not be empty") }
            options.databasePath = db
        }
        if let secret = flags["jwt-secret"] {
            guard !secret.isEmpty else { throw UsageError(message: "--jwt-secret must not be empty") }
            options.configuration.jwt.secret = secret
            options.configuration.apiKeys = APIKeys.standard(secret: secret)
        }
        if let site = flags["site-url"] { options.configuration.siteURL = site }
        if let external = flags["external-url"] { options.configuration.externalURL = external }
        if let workers = flags["workers"] {
            guard let n = Int(workers), (1...256).contains(n) else {
                throw UsageError(message: "--workers must be a number from 1 to 256, not '\(workers)'")
            }
            options.workerThreads = n
        }
        return options
    }

    static func serve(_ arguments: [String]) throws -> Int32 {
        let flags = try parseOptions(arguments, allowed: ["host", "port", "db", "jwt-secret", "site-url", "external-url", "workers"])
        var options = try options(from: flags)
        if options.databasePath != EmulatorOptions.inMemory, !options.databasePath.hasPrefix("/") {
            options.databasePath = Platform.currentDirectory() + "/" + options.databasePath
        }
        let emulator = try Emulator.start(options)
        let signals = emulator.stopOnTerminationSignals()
        let keys = options.configuration.apiKeys
        // The first line is a contract: scripts wait for it to learn the real port.
        print("listening on \(emulator.url)")
        print("auth url:         \(emulator.url)\(GoTrueAPI.gatewayPrefix)")
        print("anon key:         \(keys.anon)")
        print("service_role key: \(keys.serviceRole)")
        print("database:         \(options.databasePath)")
        Platform.flushStandardOutput()
        emulator.waitUntilStopped()
        withExtendedLifetime(signals) {}
        return 0
    }

    static func keys(_ arguments: [String]) throws -> Int32 {
        let flags = try parseOptions(arguments, allowed: ["jwt-secret"])
        let options = try options(from: flags)
        print("ANON_KEY=\(options.configuration.apiKeys.anon)")
        print("SERVICE_ROLE_KEY=\(options.configuration.apiKeys.serviceRole)")
        return 0
    }
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}

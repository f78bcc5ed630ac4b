@testable import AuthEmulator
@testable import EmulatorConfiguration
import EmulatorTools
import Foundation
import GoTrue
import Synchronization
import Testing
@testable import auth_emulator

/// Collects what a command writes, so tests can check messages.
final class CapturedConsole: Sendable {
    private let output = Mutex("")
    private let error = Mutex("")

    var console: CLI.Console {
        CLI.Console(
            output: { text in self.output.withLock { $0 += text } },
            error: { text in self.error.withLock { $0 += text } }
        )
    }

    var standardOutput: String { output.withLock { $0 } }
    var standardError: String { error.withLock { $0 } }
}

extension CLI.Console {
    static let silent = CLI.Console(output: { _ in }, error: { _ in })
}

func writeFile(_ path: String, _ text: String) throws {
    try text.write(toFile: path, atomically: true, encoding: .utf8)
}

func removeFile(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
}

@Suite struct CLITests {
    /// Runs the command line with an explicit environment (never the test process's own).
    func run(_ arguments: [String], environment: [String: String] = [:]) -> (status: Int32, output: String, error: String) {
        let captured = CapturedConsole()
        let status = CLI.run(arguments, environment: environment, console: captured.console)
        return (status, captured.standardOutput, captured.standardError)
    }

    @Test(arguments: [
        [], ["frobnicate"], ["serve", "--port"], ["serve", "--port", "x"], ["serve", "--port", "65536"],
        ["serve", "--bogus", "1"], ["serve", "positional"], ["serve", "--db", ""], ["keys", "--port", "1"],
        ["version", "extra"], ["help", "nope"], ["serve", "--workers", "0"], ["serve", "--max-connections", "0"], ["serve", "--header-timeout", "0"],
        ["serve", "--write-timeout", "0"],
        ["serve", "--autoconfirm=yes"], ["serve", "--no-port", "1"], ["serve", "--password-iterations", "5"],
        ["serve", "--password-iterations", "lots"], ["serve", "--config", ""], ["serve", "--config"],
        ["serve", "--anon-key", ""], ["keys", "--autoconfirm"], ["serve", "--no-bogus"],
    ])
    func usageErrorsExit64(arguments: [String]) {
        let result = run(arguments)
        #expect(result.status == CLI.exitUsage)
        #expect(result.error.hasPrefix("Error: ") || arguments.isEmpty)
    }

    @Test(arguments: [["--help"], ["-h"], ["help"], ["help", "serve"], ["serve", "--help"], ["keys", "-h"], ["version"], ["keys"], ["--version"]])
    func helpAndInfoSucceed(arguments: [String]) {
        #expect(run(arguments).status == 0)
    }

    @Test func serveHelpDocumentsEveryFlag() {
        let help = run(["serve", "--help"]).output
        for name in CLI.serveValueOptions { #expect(help.contains("--\(name) <"), "--\(name)") }
        for name in CLI.serveSwitches { #expect(help.contains("--[no-]\(name)"), "--[no-]\(name)") }
        #expect(help.contains("--workers <n>"))
        let keysHelp = run(["keys", "--help"]).output
        for name in CLI.keysValueOptions { #expect(keysHelp.contains("--\(name) <"), "keys --\(name)") }
    }

    /// A bad setting in the environment or the config file is EX_CONFIG (78) with a message that
    /// names the setting; `serve` stops before opening anything.
    @Test(arguments: [
        (["serve"], ["GOTRUE_JWT_EXP": "1h"], "Error: GOTRUE_JWT_EXP: "),
        (["serve", "--port", "0"], ["GOTRUE_MAILER_AUTOCONFIRM": "yes"], "Error: GOTRUE_MAILER_AUTOCONFIRM: "),
        (["keys"], ["GOTRUE_JWT_KEYS": #"[{"kty":"RSA","key_ops":["sign"]}]"#], "Error: GOTRUE_JWT_KEYS[0]: JWK member \"n\" is missing"),
        (["serve", "--config", "/nonexistent/config.toml"], [:], "Error: /nonexistent/config.toml: cannot read the file"),
        (["keys", "--config", "/nonexistent/config.toml"], [:], "Error: /nonexistent/config.toml: "),
        (["serve", "--autoconfirm"], ["GOTRUE_MAILER_AUTOCONFIRM": "false", "GOTRUE_MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS": "true"],
         "Error: GOTRUE_MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS: "),
    ])
    func configurationErrorsExit78(arguments: [String], environment: [String: String], message: String) throws {
        let result = run(arguments, environment: environment)
        #expect(result.status == CLI.exitConfiguration, "\(result.error)")
        #expect(result.error.hasPrefix(message), "\(result.error)")
        #expect(!result.output.contains("listening on"))
    }

    @Test func configFileErrorNamesKeyAndLine() throws {
        let path = "/tmp/auth-emulator-cli-\(Int.random(in: 0..<1_000_000)).toml"
        try writeFile(path, "[auth]\nsite_url = \"http://localhost:3000\"\nenable_sigup = true\n")
        defer { removeFile(path) }
        let result = run(["serve", "--config", path, "--port", "0"])
        #expect(result.status == CLI.exitConfiguration)
        #expect(result.error == "Error: \(path):3: auth.enable_sigup: unknown setting (not part of the Supabase CLI's [auth] section) (did you mean 'enable_signup'?)\n")
    }

    @Test func keysWithDefaults() {
        let result = run(["keys"])
        #expect(result.status == 0)
        // supabase start's opaque keys are the defaults too.
        #expect(result.output == "ANON_KEY=\(wellKnownAnonKey)\nSERVICE_ROLE_KEY=\(wellKnownServiceRoleKey)\n"
            + "PUBLISHABLE_KEY=\(APIKeys.localPublishable)\nSECRET_KEY=\(APIKeys.localSecret)\n")
        #expect(result.error.isEmpty)
    }

    @Test func keysFollowTheFileThenTheEnvironmentThenFlags() throws {
        let path = "/tmp/auth-emulator-keys-\(Int.random(in: 0..<1_000_000)).toml"
        try writeFile(path, "[auth]\njwt_secret = \"file-secret-of-at-least-32-characters-long\"\npublishable_key = \"sb_publishable_file\"\n")
        defer { removeFile(path) }
        let fileKeys = APIKeys.standard(secret: "file-secret-of-at-least-32-characters-long")

        let fromFile = run(["keys", "--config", path])
        #expect(fromFile.status == 0)
        #expect(fromFile.output == "ANON_KEY=\(fileKeys.anon)\nSERVICE_ROLE_KEY=\(fileKeys.serviceRole)\nPUBLISHABLE_KEY=sb_publishable_file\n"
            + "SECRET_KEY=\(APIKeys.localSecret)\n")

        let envSecret = "env-secret-of-at-least-32-characters-long!"
        let envKeys = APIKeys.standard(secret: envSecret)
        let fromEnv = run(["keys", "--config", path], environment: ["GOTRUE_JWT_SECRET": envSecret, "AUTH_EMULATOR_SECRET_KEY": "sb_secret_env"])
        #expect(fromEnv.output == "ANON_KEY=\(envKeys.anon)\nSERVICE_ROLE_KEY=\(envKeys.serviceRole)\nPUBLISHABLE_KEY=sb_publishable_file\nSECRET_KEY=sb_secret_env\n")

        let fromFlags = run(
            ["keys", "--config", path, "--jwt-secret", "flag-secret-of-at-least-32-characters-long", "--anon-key", "flag-anon"],
            environment: ["GOTRUE_JWT_SECRET": envSecret]
        )
        let flagKeys = APIKeys.standard(secret: "flag-secret-of-at-least-32-characters-long")
        #expect(fromFlags.output.hasPrefix("ANON_KEY=flag-anon\nSERVICE_ROLE_KEY=\(flagKeys.serviceRole)\n"))
    }

    @Test func ignoredVariablesGiveOneWarningLine() {
        let result = run(["keys"], environment: ["GOTRUE_DB_DRIVER": "postgres", "GOTRUE_SMTP_HOST": "inbucket", "PATH": "/bin"])
        #expect(result.status == 0)
        #expect(result.error == "warning: ignoring environment variables the emulator does not use: GOTRUE_DB_DRIVER, GOTRUE_SMTP_HOST\n")
    }

    /// A slip in a name the emulator reads is named; a real GoTrue variable it does not use is not
    /// mistaken for one (GOTRUE_SMTP_HOST stays unexplained above).
    @Test func aMistypedVariableGetsTheNearestName() {
        let result = run(["keys"], environment: ["GOTRUE_SITE_UR": "http://localhost:3000", "GOTRUE_MAILER_AUTOCONFRIM": "true",
                                                 "PATH": "/bin"])
        #expect(result.status == 0)
        #expect(result.error == "warning: ignoring environment variables the emulator does not use: "
            + "GOTRUE_MAILER_AUTOCONFRIM (did you mean GOTRUE_MAILER_AUTOCONFIRM?), GOTRUE_SITE_UR (did you mean GOTRUE_SITE_URL?)\n")
    }

    @Test func fixtureConfigLoadsThroughTheCommandLine() {
        let result = run(["keys", "--config", fixtureConfigPath])
        #expect(result.status == 0)
        #expect(result.error.isEmpty, "\(result.error)")
        #expect(result.output.hasPrefix("ANON_KEY=\(wellKnownAnonKey)\n"))
    }

    @Test func switchesAndValueFlagsApply() throws {
        let flags = try CLI.parseOptions(
            ["--no-autoconfirm", "--no-sms-autoconfirm", "--anonymous", "--no-signup", "--phone", "--password-iterations=2000",
             "--service-role-key", "svc", "--publishable-key=pub", "--secret-key", "sec", "--host", "0.0.0.0", "--port=0",
             "--db", ":memory:", "--site-url", "http://s", "--external-url", "http://e", "--workers", "3",
             "--max-connections", "50", "--header-timeout", "2", "--body-timeout=3",
             "--write-timeout", "4"],
            values: CLI.serveValueOptions, switches: CLI.serveSwitches
        )
        let options = try CLI.options(from: flags, context: CLI.Context(environment: [:], console: .silent))
        let config = options.configuration
        #expect(!config.mailer.autoconfirm)
        #expect(!config.sms.autoconfirm)
        #expect(config.external.anonymousUsersEnabled)
        #expect(config.disableSignup)
        #expect(config.external.phoneEnabled)
        #expect(config.passwordHashIterations == 2000)
        #expect(config.apiKeys.anon == wellKnownAnonKey)
        #expect(config.apiKeys.serviceRole == "svc")
        #expect(config.apiKeys.publishable == "pub")
        #expect(config.apiKeys.secret == "sec")
        #expect(options.host == "0.0.0.0" && options.port == 0 && options.databasePath == ":memory:" && options.workerThreads == 3)
        #expect(options.maxConnections == 50 && options.headerTimeoutSeconds == 2 && options.bodyTimeoutSeconds == 3)
        #expect(options.writeTimeoutSeconds == 4)
        #expect(config.siteURL == "http://s" && config.externalURL == "http://e")
    }

    @Test func maxConnectionsFromTheEnvironment() throws {
        var options = EmulatorOptions()
        let ignored = try EnvironmentConfiguration.apply(["AUTH_EMULATOR_MAX_CONNECTIONS": "20"], to: &options)
        #expect(ignored.isEmpty && options.maxConnections == 20)
        #expect(throws: EmulatorError.self) { try EnvironmentConfiguration.apply(["AUTH_EMULATOR_MAX_CONNECTIONS": "0"], to: &options) }
    }

    /// AuthHTTP reads the variable itself; the CLI knows it (no "ignoring" warning) and refuses
    /// a value that is not a boolean, where AuthHTTP would quietly take it as off.
    @Test func portableIOVariableIsKnownAndChecked() throws {
        var options = EmulatorOptions()
        for value in ["1", "true", "0", "false"] {
            #expect(try EnvironmentConfiguration.apply(["AUTH_EMULATOR_PORTABLE_IO": value], to: &options).isEmpty)
        }
        #expect(throws: EmulatorError.self) { try EnvironmentConfiguration.apply(["AUTH_EMULATOR_PORTABLE_IO": "yes"], to: &options) }
    }

    /// Cross-setting checks run after the flags: a flag can resolve what the environment set up.
    @Test func flagsCanSettleACrossSettingConflict() throws {
        let environment = ["GOTRUE_MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS": "true"]
        let context = CLI.Context(environment: environment, console: .silent)
        let fixed = try CLI.options(from: CLI.parseOptions(["--no-autoconfirm"], values: [], switches: CLI.serveSwitches), context: context)
        #expect(!fixed.configuration.mailer.autoconfirm && fixed.configuration.mailer.allowUnverifiedEmailSignIns)
        #expect(throws: CLI.ConfigurationError.self) { try CLI.options(from: CLI.Flags(), context: context) }
    }

    @Test func lastSwitchWins() throws {
        let flags = try CLI.parseOptions(["--signup", "--no-signup", "--no-phone", "--phone"], values: [], switches: CLI.serveSwitches)
        #expect(flags.switches == ["signup": false, "phone": true])
    }
}

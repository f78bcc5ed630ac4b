import AuthCrypto
@testable import AuthEmulator
import AuthHTTP
import AuthJWT
import AuthPlatform
import AuthScenarios
import AuthStore
@testable import EmulatorConfiguration
import EmulatorTools
import Foundation
import GoTrue
import Testing
@testable import auth_emulator

/// What `serve` and the other commands tell the person at the console: suggestions for
/// mistyped names, help, the banner's lines, seeding progress and the stop summary.
@Suite struct ConsoleTests {
    func run(_ arguments: [String], environment: [String: String] = [:]) -> (status: Int32, output: String, error: String) {
        let captured = CapturedConsole()
        let status = CLI.run(arguments, environment: environment, console: captured.console)
        return (status, captured.standardOutput, captured.standardError)
    }

    // MARK: - did you mean

    @Test func editDistanceCountsSlips() {
        #expect(Spelling.distance("port", "port") == 0)
        #expect(Spelling.distance("prot", "port") == 1)  // adjacent swap: one edit
        #expect(Spelling.distance("sigup", "signup") == 1)
        #expect(Spelling.distance("", "abc") == 3)
        #expect(Spelling.distance("kitten", "sitting") == 3)
    }

    @Test func suggestionsOnlyForNearMisses() {
        #expect(Spelling.suggestion(for: "prot", among: ["host", "port", "db"]) == "port")
        #expect(Spelling.suggestion(for: "frobnicate", among: ["host", "port", "db"]) == nil)
        // The beginning of a longer name is offered too.
        #expect(Spelling.suggestion(for: "shutdown", among: ["port", "shutdown-timeout"]) == "shutdown-timeout")
        #expect(Spelling.suggestion(for: "", among: ["port"]) == nil)
    }

    @Test(arguments: [
        (["serve", "--prot", "1"], "unknown option '--prot' (did you mean '--port'?)"),
        (["serve", "--no-sigup"], "unknown option '--no-sigup' (did you mean '--no-signup'?)"),
        (["serve", "--shutdown-timout", "3"], "(did you mean '--shutdown-timeout'?)"),
        (["keys", "--jwt-secert", "x"], "(did you mean '--jwt-secret'?)"),
        (["serv"], "unknown subcommand 'serv' (did you mean 'serve'?)"),
        (["tokne"], "(did you mean 'token'?)"),
        (["help", "setings"], "unknown subcommand 'setings' (did you mean 'settings'?)"),
        (["--port", "0"], "did you mean 'auth-emulator serve --port'?"),
    ])
    func usageErrorsSuggestTheNearestName(arguments: [String], message: String) {
        let result = run(arguments)
        #expect(result.status == CLI.exitUsage)
        #expect(result.error.contains(message), "\(result.error)")
    }

    @Test func farOffNamesGetNoSuggestion() {
        let result = run(["serve", "--frobnicate", "1"])
        #expect(result.status == CLI.exitUsage)
        #expect(result.error.contains("unknown option '--frobnicate'\n"))
        #expect(!run(["frobnicate"]).error.contains("did you mean"))
    }

    @Test func aServeUsageErrorPointsAtServesHelp() {
        #expect(run(["serve", "--prot", "1"]).error.hasSuffix("See 'auth-emulator help serve'.\n"))
    }

    @Test func unknownScenarioOperationSuggestsTheNearestName() {
        let json = #"{"name": "x", "rules": [{"match": {"op": "token.pasword"}, "then": {"status": 503}}]}"#
        #expect {
            try Scenario(json: Array(json.utf8), source: "x.json")
        } throws: { error in
            "\(error)".contains(#"unknown operation "token.pasword" (did you mean "token.password"?)"#)
        }
        // Nothing near: the pointer to the list of names, as before.
        let far = #"{"name": "x", "rules": [{"match": {"op": "quux"}, "then": {"status": 503}}]}"#
        #expect {
            try Scenario(json: Array(far.utf8), source: "x.json")
        } throws: { error in
            "\(error)".contains(#"unknown operation "quux" (see scenarios/README.md for the names)"#)
        }
    }

    @Test func scenarioValidateSuggestsTheOperation() throws {
        let path = NSTemporaryDirectory() + "console-\(UUID().uuidString).json"
        defer { removeFile(path) }
        try writeFile(path, #"{"name": "x", "rules": [{"match": {"op": "token.pasword"}, "then": {"status": 503}}]}"#)
        let result = run(["scenario", "validate", path])
        #expect(result.status == CLI.exitFailure)
        // One letter off a real name: without a suggestion there would be nothing to check.
        let near = try #require(Spelling.suggestion(for: "token.pasword", among: Operations.names))
        #expect(near == "token.password")
        #expect(result.error.contains("did you mean \"\(near)\"?"), "\(result.error)")
    }

    // MARK: - help

    @Test func overviewSaysWhereServesOptionsAre() {
        let overview = run(["--help"]).output
        #expect(overview.contains("'auth-emulator help serve'"))
        #expect(overview.contains("--port"))
    }

    /// A switch that means the opposite of its variable says which way round, in both helps.
    @Test func invertedFlagsSaySo() {
        let serveHelp = run(["serve", "--help"]).output
        let settingsHelp = run(["help", "settings"]).output
        let inverted = CLI.settingFlags.filter(\.setting.flagInverted)
        #expect(!inverted.isEmpty)
        for (flag, _, setting) in inverted {
            let note = "--no-\(flag) is \(setting.env[0])=true"
            #expect(serveHelp.contains(note), "\(flag)")
            #expect(settingsHelp.contains("flag --[no-]\(flag) (inverted: \(note))"), "\(flag)")
        }
    }

    // MARK: - the banner

    @Test func signingKeyLine() throws {
        var jwt = JWTSettings()
        #expect(ConsoleText.signingKey(jwt) == "HS256 (shared secret)")
        jwt.keyID = "local-1"
        #expect(ConsoleText.signingKey(jwt) == "HS256 kid local-1 (shared secret)")
        jwt.keys = [JWK(generating: .es256, kid: "1a2b3c", random: SystemRandom())]
        #expect(ConsoleText.signingKey(jwt) == "ES256 kid 1a2b3c")
        jwt.keys = [JWK(generating: .edDSA, kid: "ed-9", random: SystemRandom())]
        #expect(ConsoleText.signingKey(jwt) == "EdDSA kid ed-9")
        jwt.keys = [JWTSettings.cliDefaultKey]
        #expect(ConsoleText.signingKey(jwt) == "ES256 kid b81269f1-21d8-4f2e-b719-c2240a840d90 (the Supabase CLI's built-in key)")
    }

    @Test func settingsSourcesLine() {
        #expect(ConsoleText.settingsSources(configFile: nil, variables: [])
            == "flags and defaults only (no config file, no environment variables)")
        #expect(ConsoleText.settingsSources(configFile: "supabase/config.toml", variables: [])
            == "--config supabase/config.toml")
        #expect(ConsoleText.settingsSources(configFile: "c.toml", variables: ["GOTRUE_JWT_EXP", "GOTRUE_SITE_URL"])
            == "--config c.toml; env GOTRUE_JWT_EXP, GOTRUE_SITE_URL")
    }

    /// The banner names the variables that were read, never their values, and not the ones the
    /// emulator ignores (those have their own warning).
    @Test func appliedVariablesAreNamedWithoutValues() throws {
        let secret = "a-secret-that-must-never-be-printed-0123456789"
        let captured = CapturedConsole()
        let context = CLI.Context(environment: [
            "GOTRUE_JWT_EXP": "600", "GOTRUE_JWT_SECRET": secret, "GOTRUE_BOGUS": "1", "AUTH_EMULATOR_DEFAULTS": "gotrue",
            "HOME": "/root",
        ], console: captured.console)
        let flags = try CLI.parseOptions([], values: CLI.serveValueOptions, switches: CLI.serveSwitches)
        _ = try CLI.options(from: flags, context: context)
        #expect(context.notes.appliedVariables == ["AUTH_EMULATOR_DEFAULTS", "GOTRUE_JWT_EXP", "GOTRUE_JWT_SECRET"])
        let line = ConsoleText.settingsSources(configFile: nil, variables: context.notes.appliedVariables)
        #expect(!line.contains(secret) && !line.contains("600"))
        #expect(captured.standardError.contains("GOTRUE_BOGUS"))
    }

    @Test func theDefaultsFlagOutranksTheVariableInTheBanner() throws {
        let context = CLI.Context(environment: ["AUTH_EMULATOR_DEFAULTS": "gotrue"], console: .silent)
        let flags = try CLI.parseOptions(["--defaults", "cli"], values: CLI.serveValueOptions, switches: CLI.serveSwitches)
        _ = try CLI.options(from: flags, context: context)
        #expect(context.notes.appliedVariables.isEmpty)
    }

    @Test func eachWarningOnce() {
        let captured = CapturedConsole()
        let context = CLI.Context(environment: [:], console: captured.console)
        context.warn("something is ignored")
        context.warn("something else is ignored")
        context.warn("something is ignored")
        #expect(captured.standardError == "warning: something is ignored\nwarning: something else is ignored\n")
    }

    /// Web3 sign-in is served: enabling its chains is a setting like any other, with no warning.
    @Test func web3ChainsLoadWithoutAWarning() throws {
        var options = EmulatorOptions()
        let warnings = try SupabaseConfigFile.apply(
            "[auth.web3.solana]\nenabled = true\n[auth.web3.ethereum]\nenabled = true\n", file: "c.toml",
            environment: [:], to: &options)
        #expect(warnings.isEmpty)
        #expect(options.configuration.external.web3Solana.enabled && options.configuration.external.web3Ethereum.enabled)
    }

    /// A provider URL set in the file is named as the file's key, not as a variable nobody set.
    @Test func providerURLWarningNamesItsSource() throws {
        let path = NSTemporaryDirectory() + "console-\(UUID().uuidString).toml"
        defer { removeFile(path) }
        try writeFile(path, "[auth.external.github]\nenabled = true\nclient_id = \"x\"\nsecret = \"y\"\nurl = \"https://gh.example\"\n")
        let captured = CapturedConsole()
        let context = CLI.Context(environment: [:], console: captured.console)
        _ = try CLI.options(from: try CLI.parseOptions(["--config", path], values: CLI.serveValueOptions), context: context)
        #expect(captured.standardError == "warning: [auth.external.github] url (https://gh.example) is ignored: the emulator's fake github provider answers at its own address\n")

        let fromEnvironment = CapturedConsole()
        let envContext = CLI.Context(environment: ["GOTRUE_EXTERNAL_GITHUB_URL": "https://g2.example"], console: fromEnvironment.console)
        _ = try CLI.options(from: try CLI.parseOptions([], values: CLI.serveValueOptions), context: envContext)
        #expect(fromEnvironment.standardError.hasPrefix("warning: GOTRUE_EXTERNAL_GITHUB_URL (https://g2.example) is ignored"))
    }

    // MARK: - progress

    @Test func numbersAndDurations() {
        #expect(ConsoleText.count(0) == "0")
        #expect(ConsoleText.count(999) == "999")
        #expect(ConsoleText.count(1000) == "1,000")
        #expect(ConsoleText.count(1_234_567) == "1,234,567")
        #expect(ConsoleText.duration(0) == "0.0 s")
        #expect(ConsoleText.duration(11.34) == "11.3 s")
        #expect(ConsoleText.duration(59.9) == "59.9 s")
        #expect(ConsoleText.duration(125) == "2 min 5 s")
    }

    @Test func progressLine() {
        typealias State = ConsoleText.SeedState
        #expect(ConsoleText.seedProgress(State(), rate: nil, file: "users.json") == "seeding: reading users.json...")
        #expect(ConsoleText.seedProgress(State(total: 200_000, passwords: 200_000, hashed: 0), rate: nil, file: "f")
            == "seeding: hashing passwords 0 of 200,000 (0 %)")
        #expect(ConsoleText.seedProgress(State(total: 200_000, passwords: 200_000, hashed: 50_000), rate: 20_000, file: "f")
            == "seeding: hashing passwords 50,000 of 200,000 (25 %, 20,000/s, about 7.5 s left)")
        #expect(ConsoleText.seedProgress(State(total: 200_000, passwords: 200_000, hashed: 150_000, written: 120_000), rate: 40_000, file: "f")
            == "seeding: writing users 120,000 of 200,000 (60 %, 40,000/s, about 2.0 s left)")
        // Without passwords there is no hashing phase.
        #expect(ConsoleText.seedProgress(State(total: 10, written: 0), rate: nil, file: "f") == "seeding: writing users 0 of 10 (0 %)")
        #expect(ConsoleText.redraw("x") == "\rx\u{1B}[K")
    }

    @Test func summaryLine() {
        #expect(ConsoleText.seedSummary(users: 200_000, seconds: 11.3) == "seeded 200,000 users in 11.3 s")
        #expect(ConsoleText.seedSummary(users: 1, seconds: 0.04) == "seeded 1 user in 0.0 s")
    }

    func seedThroughTheCommandLine(terminal: Bool) throws -> String {
        let path = NSTemporaryDirectory() + "console-\(UUID().uuidString).json"
        defer { removeFile(path) }
        try writeFile(path, #"{"users": [{"email": "a@example.com"}, {"email": "b@example.com", "password": "password1"}, {"phone": "15550001"}]}"#)
        var options = EmulatorOptions.testing()
        options.configuration.passwordHashIterations = 1000
        let emulator = try Emulator.start(options)
        defer { emulator.stop() }
        let captured = CapturedConsole()
        var console = captured.console
        console.errorIsTerminal = terminal
        try CLI.seed(emulator, file: path, console: console, progress: SeedProgress())
        return captured.standardError
    }

    /// Into a file or a pipe: a line as it starts and the summary, nothing per row (a progress
    /// line only every ten seconds of a long seed).
    @Test func seedingOffATerminalPrintsTheStartAndTheSummary() throws {
        let text = try seedThroughTheCommandLine(terminal: false)
        #expect(text.wholeMatch(of: /seeding \S+\.json\.\.\.\nseeded 3 users in \d+\.\d s\n/) != nil, "\(text)")
    }

    /// A cancelled seed (a signal during `serve --seed`) stops within its hashing or writing and
    /// keeps nothing: its one transaction rolls back.
    @Test func aCancelledSeedKeepsNothing() throws {
        let users = (0..<4_000).map { #"{"email": "u\#($0)@example.com", "password": "password1"}"# }
        let fixture = try Fixture(bytes: Array(#"{"users": [\#(users.joined(separator: ","))]}"#.utf8))
        var options = EmulatorOptions.testing()
        options.configuration.passwordHashIterations = 1000
        let emulator = try Emulator(options: options)
        defer { emulator.stop() }
        let progress = SeedProgress()
        let canceller = try Threads.spawn(name: "cancel", stackSize: 1 << 20) {
            _ = waitUntil { progress.hashed > 0 }
            progress.cancel()
        }
        #expect(throws: EmulatorError.self) { try emulator.seed(fixture, progress: progress) }
        canceller.join()
        #expect(progress.isCancelled)
        let count = try emulator.project.database.read { try $0.scalar("SELECT count(*) FROM users") }
        #expect(count == 0)
    }

    /// On a terminal the summary replaces the progress line in place.
    @Test func seedingOnATerminalEndsWithTheSummaryInPlace() throws {
        let text = try seedThroughTheCommandLine(terminal: true)
        #expect(text.hasPrefix("\r"))
        #expect(text.firstMatch(of: /\rseeded 3 users in \d+\.\d s\u{1B}\[K\n$/) != nil, "\(text.debugDescription)")
    }

    // MARK: - stopping

    @Test func stopSummaryLine() {
        #expect(ConsoleText.stopSummary(Emulator.StopReport(requests: DrainReport(finished: 3, cutOff: 0), database: .checkpointed))
            == "stopping: 3 requests finished, 0 cut off, database checkpointed")
        #expect(ConsoleText.stopSummary(Emulator.StopReport(requests: DrainReport(finished: 1, cutOff: 2), database: .inMemory))
            == "stopping: 1 request finished, 2 cut off, in-memory database discarded")
        #expect(ConsoleText.stopSummary(Emulator.StopReport(requests: DrainReport(finished: 0, cutOff: 0), database: .partial(framesLeft: 12)))
            == "stopping: 0 requests finished, 0 cut off, database closed, 12 WAL frames left for the next open (another process was reading)")
    }

    @Test func stopReportsTheCheckpoint() throws {
        let directory = NSTemporaryDirectory() + "console-\(UUID().uuidString)"
        defer { removeFile(directory) }
        var options = EmulatorOptions.testing()
        options.databasePath = directory + "/auth.db"
        let emulator = try Emulator.start(options)
        #expect(emulator.stopReport == nil)
        emulator.stop()
        #expect(emulator.stopReport == Emulator.StopReport(requests: DrainReport(finished: 0, cutOff: 0), database: .checkpointed))

        let memory = try Emulator.start(.testing())
        memory.stop()
        #expect(memory.stopReport == Emulator.StopReport(requests: DrainReport(finished: 0, cutOff: 0), database: .inMemory))
    }
}

@testable import AuthEmulator
import AuthCrypto
import AuthJWT
import AuthPlatform
import AuthScenarios
import AuthStore
import Foundation
import GoTrue
import Testing

/// What the commands tell the person at the console: suggestions for mistyped names, and help.
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
        try writeFile(path, #"{"name": "x", "rules": [{"match": {"op": "signup.pasword"}, "then": {"status": 503}}]}"#)
        let result = run(["scenario", "validate", path])
        #expect(result.status == CLI.exitFailure)
        if let near = Spelling.suggestion(for: "signup.pasword", among: Operations.names) {
            #expect(result.error.contains("did you mean \"\(near)\"?"), "\(result.error)")
        }
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
}

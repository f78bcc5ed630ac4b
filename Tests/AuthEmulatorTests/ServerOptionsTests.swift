@testable import AuthEmulator
import AuthJSON
@testable import EmulatorConfiguration
import Foundation
import GoTrue
import Testing
@testable import auth_emulator

/// The server's options are rows (`EmulatorOptions.settings`): `serve --help`, the flag parser,
/// the environment reader and docs/running.md's options table all agree with them.
@Suite struct ServerOptionsTests {
    static var serveHelp: String { CLI.helpText(CLI.commands.first { $0.name == "serve" }!) }

    /// The flags the help lists, read back from its option lines.
    static var helpedFlags: [String] {
        serveHelp.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  --") else { return nil }
            let syntax = line.dropFirst(2).split(separator: " ").first.map(String.init) ?? ""
            return syntax.hasPrefix("--[no-]") ? String(syntax.dropFirst(7)) : String(syntax.dropFirst(2))
        }
    }

    @Test func everyFlagServeAcceptsIsInItsHelpAndNoOther() {
        let helped = Self.helpedFlags
        #expect(Set(helped).count == helped.count, "a flag is listed twice")
        #expect(Set(helped) == CLI.serveValueOptions.union(CLI.serveSwitches))
        // Each is accepted by the parser in the form the help gives it.
        for name in CLI.serveSwitches {
            #expect((try? CLI.parseOptions(["--no-\(name)"], values: CLI.serveValueOptions, switches: CLI.serveSwitches)) != nil, "--no-\(name)")
        }
        for name in CLI.serveValueOptions {
            #expect((try? CLI.parseOptions(["--\(name)", "x"], values: CLI.serveValueOptions, switches: CLI.serveSwitches)) != nil, "--\(name)")
        }
    }

    /// Every flag of the settings table has its place among the server's options, once.
    @Test func everySettingsFlagIsPlacedOnce() {
        let placed = EmulatorOptions.serveFlags.compactMap { entry -> String? in
            if case .setting(let row) = entry { return row.key } else { return nil }
        }
        #expect(Set(placed).count == placed.count)
        #expect(Set(placed) == Set(Configuration.settings.filter { $0.flag != nil }.map(\.key)))
        let flags = EmulatorOptions.serveFlags.compactMap(\.flag)
        #expect(Set(flags).count == flags.count, "two rows share a flag")
    }

    /// The help keeps to 100 columns (the usage line aside, which names the command in full).
    @Test func theHelpIsReadableIn100Columns() {
        for line in Self.serveHelp.split(separator: "\n") where !line.hasPrefix("USAGE:") {
            #expect(line.count <= CLI.helpWidth, "\(line)")
        }
    }

    /// A range is written once: the flag and the variable refuse the same values, each with its
    /// own exit code and wording.
    @Test func flagAndVariableShareEachRange() throws {
        for row in EmulatorOptions.settings {
            switch row.kind {
            case .integer(let range), .seconds(let range): try check(row, range)
            default: continue
            }
        }
        func check(_ row: ServerOption, _ range: ClosedRange<Int>) throws {
            for (value, accepted) in [(range.lowerBound - 1, false), (range.lowerBound, true), (range.upperBound, true), (range.upperBound + 1, false)] {
                if let flag = row.flag {
                    let flags = try CLI.parseOptions(["--\(flag)", String(value)], values: CLI.serveValueOptions, switches: CLI.serveSwitches)
                    let parsed = Result { try CLI.options(from: flags, context: CLI.Context(environment: [:], console: .silent)) }
                    #expect(((try? parsed.get()) != nil) == accepted, "--\(flag) \(value)")
                    if !accepted, case .failure(let error) = parsed { #expect(error is CLI.UsageError, "--\(flag) \(value)") }
                }
                for name in row.env {
                    var options = EmulatorOptions()
                    let read = Result { () throws(EmulatorError) in try EnvironmentConfiguration.apply([name: String(value)], to: &options) }
                    #expect(((try? read.get()) != nil) == accepted, "\(name)=\(value)")
                }
            }
        }
    }

    /// Each row reaches its field from the flag and from the variable.
    @Test func flagsAndVariablesFillTheOptions() throws {
        let flags = try CLI.parseOptions(["--header-timeout", "7", "--max-projects", "3", "--auto-create-projects", "--dashboard", "off"],
                                         values: CLI.serveValueOptions, switches: CLI.serveSwitches)
        let fromFlags = try CLI.options(from: flags, context: CLI.Context(environment: [:], console: .silent))
        #expect(fromFlags.headerTimeoutSeconds == 7 && fromFlags.maxProjects == 3 && fromFlags.autoCreateProjects && !fromFlags.dashboard)
        var fromEnvironment = EmulatorOptions()
        let ignored = try EnvironmentConfiguration.apply([
            "AUTH_EMULATOR_WRITE_TIMEOUT": "9", "AUTH_EMULATOR_WORKERS": "3", "AUTH_EMULATOR_SHUTDOWN_TIMEOUT": "4",
            "AUTH_EMULATOR_PERSIST_AUTO_CREATED_PROJECTS": "true", "AUTH_EMULATOR_DASHBOARD": "false", "GOTRUE_API_PORT": "", "PORT": "8123",
        ], to: &fromEnvironment)
        #expect(ignored.isEmpty)
        #expect(fromEnvironment.writeTimeoutSeconds == 9 && fromEnvironment.workerThreads == 3 && fromEnvironment.shutdownTimeoutSeconds == 4)
        #expect(fromEnvironment.persistAutoCreatedProjects && !fromEnvironment.dashboard && fromEnvironment.port == 8123)
        // The wording of each source's refusal is kept.
        var options = EmulatorOptions()
        do {
            try EnvironmentConfiguration.apply(["AUTH_EMULATOR_SHUTDOWN_TIMEOUT": "x"], to: &options)
            Issue.record("accepted")
        } catch {
            #expect(error.description == "AUTH_EMULATOR_SHUTDOWN_TIMEOUT: 'x' is not a whole number of seconds in 0...3600")
        }
    }

    /// docs/running.md's options table lists every server option, in the rows' order, with the
    /// flag and the variables as the rows name them.
    @Test func theRunningPageListsTheRows() throws {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        let page = try String(contentsOfFile: root.path + "/docs/running.md", encoding: .utf8)
        let start = try #require(page.range(of: "| Flag | Environment | Default |\n|---|---|---|\n"))
        let table = page[start.upperBound...].prefix { _ in true }.split(separator: "\n", omittingEmptySubsequences: false)
            .prefix { $0.hasPrefix("|") }
        let documented = table.map { line -> String in
            let cells = line.replacingOccurrences(of: "\\|", with: "\u{1}").split(separator: "|", omittingEmptySubsequences: false)
            return cells[1...2].map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\u{1}", with: "\\|") }.joined(separator: " | ")
        }
        #expect(documented == EmulatorOptions.settings.map(SettingsReference.runningTableCells))
    }

    /// `jwt_keys` is a row like the others: the environment and the control API read it through
    /// the table, with GoTrue's `JwtKeysDecoder` wording, element by element.
    @Test func jwtKeysIsARow() throws {
        let row = try #require(Configuration.setting("jwt_keys"))
        #expect(row.env == ["GOTRUE_JWT_KEYS"] && row.secret && row.runtime)
        for (text, message) in [
            ("{}", "GOTRUE_JWT_KEYS: expected a JSON array of JWKs"),
            ("[5]", "GOTRUE_JWT_KEYS[0]: expected a JWK object"),
            ("[" + JSON.object(JWTSettings.cliDefaultKey.members).serialized() + "," + JSON.object(JWTSettings.cliDefaultKey.members).serialized() + "]",
             "GOTRUE_JWT_KEYS[1]: duplicate \"kid\" \"\(JWTSettings.cliDefaultKeyID)\""),
        ] {
            var options = EmulatorOptions()
            do {
                try EnvironmentConfiguration.apply(["GOTRUE_JWT_KEYS": text], to: &options)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.description == message)
            }
        }
        var options = EmulatorOptions()
        try EnvironmentConfiguration.apply(["GOTRUE_JWT_KEYS": "null"], to: &options)
        #expect(options.configuration.jwt.keys.isEmpty && options.configuration.settingSources["jwt_keys"] == .env)
        // null at run time: back to no source's keys, the CLI's built-in one under the cli profile.
        var config = Configuration()
        try ConfigRoutes.apply(["jwt_keys": []], to: &config)
        #expect(config.jwt.keys.isEmpty && config.settingSources["jwt_keys"] == .runtime)
        try ConfigRoutes.apply(["jwt_keys": nil], to: &config)
        #expect(config.jwt.keys.map(\.key.kid) == [JWTSettings.cliDefaultKeyID] && config.settingSources["jwt_keys"] == nil)
        do {
            try ConfigRoutes.apply(["jwt_keys": "x"], to: &config)
            Issue.record("accepted a string")
        } catch {
            #expect(error.message == "jwt_keys: expected an array of private JWKs")
        }
    }
}

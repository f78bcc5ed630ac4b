@testable import AuthEmulator
import AuthJSON
@testable import EmulatorConfiguration
@testable import EmulatorTools
import Foundation
@testable import GoTrue
import Testing
@testable import auth_emulator

/// The settings table drives every source: each row, set through each of its names, gives the
/// same effective value; each invalid value is refused everywhere with a message naming the
/// setting as that source names it; both defaults columns are what the two profiles start
/// with; the reference page is the table's.
@Suite struct SettingsTableTests {
    /// Rows whose value is derived when nothing sets it (the note says from what), so the
    /// configuration holds more than the table's literal default.
    static let derivedDefaults: Set<String> = ["jwt_valid_methods", "anon_key", "service_role_key", "publishable_key", "secret_key"]

    /// A value of the row's kind other than its defaults, in each source's syntax.
    struct Sample {
        let value: SettingValue
        let text: String
        let toml: String
        let json: JSON
    }

    static func sample(_ setting: Setting) -> Sample? {
        switch setting.kind {
        case .bool:
            let on = !setting.cli.bool
            return Sample(value: .bool(on), text: on ? "true" : "false", toml: on ? "true" : "false", json: .bool(on))
        case .integer(let range), .seconds(let range):
            let n = [7, 8, range.upperBound, range.lowerBound].first { range.contains($0) && .int($0) != setting.cli && .int($0) != setting.gotrue }!
            return Sample(value: .int(n), text: String(n), toml: String(n), json: .number(Double(n)))
        case .duration, .optionalDuration:
            return Sample(value: .number(420), text: "7m", toml: "\"7m\"", json: 420)
        case .number:
            return Sample(value: .number(420), text: "420", toml: "420", json: 420)
        case .text, .optionalText:
            let text = "https://sample.example/\(setting.key.count)"
            return Sample(value: .string(text), text: text, toml: "\"\(text)\"", json: .string(text))
        case .choice(let names):
            let name = names.first { .string($0) != setting.cli }!
            return Sample(value: .string(name), text: name, toml: "\"\(name)\"", json: .string(name))
        case .list:
            return Sample(value: .strings(["https://a.example", "https://b.example"]), text: "https://a.example,https://b.example",
                          toml: #"["https://a.example", "https://b.example"]"#, json: ["https://a.example", "https://b.example"])
        case .characterSets:
            return Sample(value: .strings(["abc", "123"]), text: "abc:123", toml: #"["abc", "123"]"#, json: ["abc", "123"])
        case .rate:
            return Sample(value: .rate(SendRate(events: 7)), text: "7", toml: "7", json: 7)
        case .pairs:
            return Sample(value: .pairs(["a": "1", "b": "2"]), text: "a:1,b:2", toml: "", json: ["a": "1", "b": "2"])
        case .time:
            return Sample(value: .string("2030-01-01T00:00:00Z"), text: "2030-01-01T00:00:00Z", toml: "\"2030-01-01T00:00:00Z\"",
                          json: "2030-01-01T00:00:00Z")
        case .jwks:
            let keys: JSON = .array([.object(JWTSettings.cliDefaultKey.members)])
            return Sample(value: .keys([JWTSettings.cliDefaultKey]), text: keys.serialized(), toml: "", json: keys)
        }
    }

    /// `a.b.c = v` as a file: `[auth.a.b]` then `c = v`.
    static func toml(_ file: String, _ value: String) -> String {
        let parts = file.split(separator: ".").map(String.init)
        let table = (["auth"] + parts.dropLast()).joined(separator: ".")
        return "[\(table)]\n\(parts.last!) = \(value)\n"
    }

    static func flagArguments(_ setting: Setting, _ sample: Sample) -> [String] {
        guard let flag = setting.flag else { return [] }
        if case .bool(let on) = sample.value { return [(on != setting.flagInverted) ? "--\(flag)" : "--no-\(flag)"] }
        return ["--\(flag)=\(sample.text)"]
    }

    /// What a row reads after `value` was set, the derived-default rows aside.
    static func effective(_ setting: Setting, _ value: SettingValue) -> SettingValue {
        var config = Configuration()
        setting.write(&config, value)
        config.applyDefaults()
        return setting.value(in: config)
    }

    @Test func everySourceSetsEveryRowAlike() throws {
        var checked = 0
        for setting in Configuration.settings {
            guard let sample = Self.sample(setting) else { continue }
            let expected = Self.effective(setting, sample.value)
            #expect(expected != setting.cli || Self.derivedDefaults.contains(setting.key), "\(setting.key): the sample is the default")

            if let variable = setting.env.first {
                var options = EmulatorOptions()
                try EnvironmentConfiguration.apply([variable: sample.text], to: &options)
                #expect(setting.value(in: options.configuration) == expected, "env \(variable)")
                #expect(options.configuration.settingSources[setting.key] == .env, "env \(variable)")
            }

            if setting.file != nil, case .pairs = setting.kind {} else if let file = setting.file {
                var fileOptions = EmulatorOptions()
                var text = sample.toml
                if setting.fileInverted, case .bool(let on) = sample.value { text = on ? "false" : "true" }
                // A session limit of 0 in the file means unset, so the sample is a real duration.
                var document = Self.toml(file, text)
                // The CLI refuses enrolling a factor type without verifying it.
                if file.hasSuffix(".enroll_enabled") { document += "verify_enabled = true\n" }
                // ... and an enabled provider without its client id and secret.
                if file.hasPrefix("external."), file.hasSuffix(".enabled") { document += "client_id = \"id\"\nsecret = \"s\"\n" }
                try SupabaseConfigFile.apply(document, environment: [:], to: &fileOptions)
                #expect(setting.value(in: fileOptions.configuration) == expected, "file \(file)")
                #expect(fileOptions.configuration.settingSources[setting.key] == .file, "file \(file)")
            }

            let arguments = Self.flagArguments(setting, sample)
            if !arguments.isEmpty {
                let flags = try CLI.parseOptions(arguments, values: CLI.serveValueOptions, switches: CLI.serveSwitches)
                let flagged = try CLI.options(from: flags, context: CLI.Context(environment: [:], console: .silent))
                #expect(setting.value(in: flagged.configuration) == expected, "flag \(arguments)")
                #expect(flagged.configuration.settingSources[setting.key] == .flag, "flag \(arguments)")
            }

            if setting.runtime {
                var config = Configuration()
                try ConfigRoutes.apply([setting.key: sample.json], to: &config)
                #expect(setting.value(in: config) == expected, "control \(setting.key)")
                #expect(config.settingSources[setting.key] == .runtime, "control \(setting.key)")
                if let file = setting.file, file != setting.key {
                    var viaFileName = Configuration()
                    var json = sample.json
                    if setting.fileInverted, case .bool(let on) = sample.value { json = .bool(!on) }
                    try ConfigRoutes.apply([file: json], to: &viaFileName)
                    #expect(setting.value(in: viaFileName) == expected, "control by the file's name \(file)")
                }
            }
            checked += 1
        }
        #expect(checked == Configuration.settings.count)
    }

    /// An invalid value of the row's kind in each syntax, or nil where the kind takes any text.
    static func invalid(_ kind: SettingKind) -> (text: String?, toml: String, json: JSON)? {
        switch kind {
        case .bool: ("maybe", "\"maybe\"", "maybe")
        case .integer(let range), .seconds(let range):
            range.lowerBound >= 0 ? ("-1", "-1", -1) : ("seven", "\"seven\"", "seven")
        case .duration, .optionalDuration: ("7 parsecs", "\"7 parsecs\"", "7 parsecs")
        case .number: ("-1", "-1", -1)
        case .choice: ("nope", "\"nope\"", "nope")
        case .rate: ("often", "\"often\"", "often")
        case .time: ("yesterday", "\"yesterday\"", "yesterday")
        case .pairs: ("novalue", "", 5)
        case .text, .optionalText: (nil, "[1]", 5)
        case .list, .characterSets: (nil, "5", 5)
        case .jwks: ("{}", "", 5)
        }
    }

    @Test func everySourceRefusesInvalidValuesNamingTheSetting() throws {
        for setting in Configuration.settings {
            guard let bad = Self.invalid(setting.kind) else { continue }
            if let text = bad.text, let variable = setting.env.first {
                var options = EmulatorOptions()
                do {
                    try EnvironmentConfiguration.apply([variable: text], to: &options)
                    Issue.record("env \(variable)=\(text) was accepted")
                } catch {
                    #expect(error.description.hasPrefix(variable + ": "), "\(error.description)")
                }
                if let text = bad.text, let flag = setting.flag, !(setting.kind.isBool) {
                    let flags = try CLI.parseOptions(["--\(flag)=\(text)"], values: CLI.serveValueOptions, switches: CLI.serveSwitches)
                    do {
                        _ = try CLI.options(from: flags, context: CLI.Context(environment: [:], console: .silent))
                        Issue.record("flag --\(flag)=\(text) was accepted")
                    } catch let error as CLI.UsageError {
                        #expect(error.message.hasPrefix("--\(flag) must be"), "\(error.message)")
                    }
                }
            }
            if let file = setting.file, !bad.toml.isEmpty, setting.kind.isTyped {
                var options = EmulatorOptions()
                do {
                    try SupabaseConfigFile.apply(Self.toml(file, bad.toml), environment: [:], to: &options)
                    Issue.record("file \(file) = \(bad.toml) was accepted")
                } catch {
                    #expect(error.description.contains("auth.\(file): "), "\(error.description)")
                }
            }
            if setting.runtime {
                var config = Configuration()
                do {
                    try ConfigRoutes.apply([setting.key: bad.json], to: &config)
                    Issue.record("control \(setting.key) = \(bad.json) was accepted")
                } catch {
                    #expect(error.status == 400 && error.message.hasPrefix(setting.key + ": "), "\(error.message)")
                }
            }
        }
    }

    @Test func theDefaultsColumnsAreWhatEachProfileStartsWith() {
        for profile in DefaultsProfile.allCases {
            let config = EmulatorOptions(defaults: profile).configuration
            for setting in Configuration.settings where !Self.derivedDefaults.contains(setting.key) {
                #expect(setting.value(in: config) == setting.defaultValue(profile), "\(profile) \(setting.key)")
            }
        }
        // Spot checks against the sources (internal/conf/configuration.go; the CLI's template).
        let gotrue = Configuration(defaults: .gotrue), cli = Configuration()
        #expect(gotrue.mfa.totp.enroll && gotrue.mfa.totp.verify && !cli.mfa.totp.enroll && !cli.mfa.totp.verify)
        #expect(!gotrue.mailer.autoconfirm && cli.mailer.autoconfirm && !gotrue.sms.autoconfirm && cli.sms.autoconfirm)
        #expect(gotrue.mailer.otpExpirySeconds == 86_400 && cli.mailer.otpExpirySeconds == 3600)
        #expect(gotrue.sms.otpExpirySeconds == 60 && cli.sms.otpExpirySeconds == 6000)
        #expect(gotrue.security.refreshTokenReuseInterval == 0 && cli.security.refreshTokenReuseInterval == 10)
        #expect(gotrue.jwt.adminRoles == ["service_role", "supabase_admin"] && cli.jwt.adminRoles == ["service_role"])
        #expect(gotrue.mailer.urlPaths.confirmation == "/verify" && cli.mailer.urlPaths.confirmation == "/auth/v1/verify")
        #expect(gotrue.sms.delivery == .provider && cli.sms.delivery == .auto)
    }

    @Test func namesAreUnambiguous() {
        var keys: Set<String> = []
        var env: Set<String> = []
        var files: Set<String> = []
        var flags: Set<String> = []
        for setting in Configuration.settings {
            #expect(keys.insert(setting.key).inserted, "key \(setting.key)")
            for name in setting.env { #expect(env.insert(name).inserted, "env \(name)") }
            if let file = setting.file { #expect(files.insert(file).inserted, "file \(file)") }
            if let flag = setting.flag { #expect(flags.insert(flag).inserted, "flag \(flag)") }
        }
        // A control key is never a leaf and a parent object at once, and a file name the control
        // API accepts never means another row than the row with that key.
        for key in keys {
            #expect(!keys.contains { $0.hasPrefix(key + ".") }, "\(key) is a leaf and an object")
        }
        for setting in Configuration.settings {
            if let file = setting.file, let other = Configuration.setting(file) { #expect(other.key == setting.key, "\(file)") }
        }
    }

    @Test func theReferencePageIsTheTables() throws {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        let page = try String(contentsOfFile: root.path + "/docs/settings.md", encoding: .utf8)
        #expect(page == SettingsReference.markdown(),
                "docs/settings.md is stale: run swift run auth-emulator help settings --markdown > docs/settings.md")
        let help = SettingsReference.text()
        for entry in SettingsReference.entries {
            #expect(help.contains("\n  \(entry.key)\n"), "\(entry.key)")
            for name in entry.env { #expect(page.contains("`\(name)`") && help.contains(name), "\(name)") }
        }
        // Every flag of the table is in serve's own help.
        let serve = CLI.helpText(CLI.commands.first { $0.name == "serve" }!)
        for setting in Configuration.settings { if let flag = setting.flag { #expect(serve.contains("--\(flag)") || serve.contains("]\(flag)"), "--\(flag)") } }
    }

    @Test func controlAPIShowsEachSettingsSource() throws {
        var options = EmulatorOptions.testing()
        try SupabaseConfigFile.apply("[auth]\nminimum_password_length = 8\n", environment: [:], to: &options)
        try EnvironmentConfiguration.apply(["GOTRUE_JWT_EXP": "600"], to: &options)
        var config = options.configuration
        try ConfigRoutes.apply(["email.enable_confirmations": true, "mfa": ["totp": ["enroll_enabled": true, "verify_enabled": true]]], to: &config)
        let shown = ConfigRoutes.describe(config)
        #expect(shown["sources"]?["password_min_length"] == "file")
        #expect(shown["sources"]?["jwt_expiry"] == "env")
        #expect(shown["sources"]?["mailer_autoconfirm"] == "runtime")
        #expect(shown["sources"]?["mfa.totp.enroll_enabled"] == "runtime")
        #expect(shown["sources"]?["disable_signup"] == "default")
        #expect(shown["mailer_autoconfirm"] == false && shown["mfa"]?["totp"]?["enroll_enabled"] == true)
        #expect(shown["defaults"] == "cli")
        // Secrets are never shown.
        #expect(shown["jwt_secret"] == nil && shown["anon_key"] == nil && shown["sources"]?["jwt_secret"] != nil)
        // null returns a setting to its default.
        try ConfigRoutes.apply(["jwt_expiry": nil], to: &config)
        #expect(config.jwt.expirySeconds == 3600 && config.settingSources["jwt_expiry"] == nil)
        // Start-up-only settings say so.
        #expect(throws: AuthError.self) { try ConfigRoutes.apply(["jwt_secret": "another-secret-of-enough-length"], to: &config) }
    }

    @Test func profileFromTheFlagOrTheEnvironment() throws {
        func options(_ arguments: [String], _ environment: [String: String]) throws -> Configuration {
            let flags = try CLI.parseOptions(arguments, values: CLI.serveValueOptions, switches: CLI.serveSwitches)
            return try CLI.options(from: flags, context: CLI.Context(environment: environment, console: .silent)).configuration
        }
        #expect(try options([], [:]).defaultsProfile == .cli)
        let gotrue = try options(["--defaults", "gotrue"], [:])
        #expect(gotrue.defaultsProfile == .gotrue && gotrue.mfa.totp.enroll && !gotrue.mailer.autoconfirm)
        #expect(try options([], ["AUTH_EMULATOR_DEFAULTS": "gotrue"]).defaultsProfile == .gotrue)
        // The flag wins over the variable; a set value wins over either profile's default.
        #expect(try options(["--defaults=cli"], ["AUTH_EMULATOR_DEFAULTS": "gotrue"]).defaultsProfile == .cli)
        #expect(try options(["--defaults=gotrue"], ["GOTRUE_MAILER_AUTOCONFIRM": "true"]).mailer.autoconfirm)
        #expect(throws: CLI.UsageError.self) { try options(["--defaults=staging"], [:]) }
        #expect(throws: CLI.ConfigurationError.self) { try options([], ["AUTH_EMULATOR_DEFAULTS": "staging"]) }
        // The embedding API reads the variable too.
        let resolved = try EmulatorOptions.resolve(environment: ["AUTH_EMULATOR_DEFAULTS": "gotrue"])
        #expect(resolved.configuration.defaultsProfile == .gotrue && resolved.configuration.mfa.totp.verify)
    }

    /// What the emulator reads but cannot honour is said at start, not silently dropped.
    @Test func settingsWithoutAnEffectAreSaid() throws {
        // Web3 chains are settings now: the file turns them on with no warning.
        var options = EmulatorOptions()
        let warnings = try SupabaseConfigFile.apply("[auth.web3.solana]\nenabled = true\n[auth.web3.ethereum]\nenabled = false\n",
                                                    environment: [:], to: &options)
        #expect(warnings.isEmpty)
        #expect(options.configuration.external.web3Solana.enabled && !options.configuration.external.web3Ethereum.enabled)

        let captured = CapturedConsole()
        let context = CLI.Context(environment: ["GOTRUE_EXTERNAL_GITLAB_URL": "https://gitlab.example.com"], console: captured.console)
        let configured = try CLI.options(from: CLI.Flags(), context: context)
        #expect(configured.configuration.external.providers["gitlab"]?.url == "https://gitlab.example.com")
        #expect(captured.standardError.contains("warning: GOTRUE_EXTERNAL_GITLAB_URL (https://gitlab.example.com) is ignored"))
    }

}

extension SettingKind {
    var isBool: Bool { if case .bool = self { true } else { false } }
    /// The file refuses a value of the wrong type (strings take any scalar, weakly).
    var isTyped: Bool {
        switch self {
        case .text, .optionalText, .choice, .time, .pairs: false
        default: true
        }
    }
}

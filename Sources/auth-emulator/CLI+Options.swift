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

extension CLI {
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

    /// A server option's flag (`EmulatorOptions.settings`), held to the row's kind: a switch's
    /// state, a whole number within the row's range, one of a choice's names, or text (refused
    /// empty where an empty value means nothing).
    static func flagValue(_ flags: Flags, _ row: ServerOption) throws -> SettingValue? {
        guard let name = row.flag else { return nil }
        if case .bool = row.kind { return flags.switches[name].map(SettingValue.bool) }
        guard let text = flags.values[name] else { return nil }
        switch row.kind {
        case .integer(let range), .seconds(let range):
            return try number(flags, name, in: range).map(SettingValue.int)
        case .choice(let names):
            guard names.contains(text) else { throw UsageError(message: "--\(name) must be \(names.joined(separator: " or ")), not '\(text)'") }
            return .string(text)
        case .text(emptyIsUnset: true):
            guard !text.isEmpty else { throw UsageError(message: "--\(name) must not be empty") }
            return .string(text)
        default:
            return .string(text)
        }
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
        for row in EmulatorOptions.settings {
            guard let value = try flagValue(flags, row) else { continue }
            do {
                try row.apply(value, to: &options, name: "--" + (row.flag ?? row.key))
            } catch {
                throw UsageError(message: error.description)
            }
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
            try ConfigurationCheck.check(config)
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
}

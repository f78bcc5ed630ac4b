import AuthJWT
import GoTrue

/// The settings table: every setting declared once, with the names each source knows it by
/// (`GOTRUE_*` variable, `config.toml` key, control-API key, command-line flag), the kind of
/// value it takes and its limits, its default under the real server and under `supabase start`,
/// and one line of help. The readers of the environment, the config file, the control API and
/// the command line are drivers over this table (this module, AuthEmulator's config routes and
/// the CLI); the reference in `auth-emulator help settings` and `docs/settings.md` is printed
/// from it. GoTrue never reads it: it lives here, with the readers, and is built unoptimised
/// with them, off the path of the module every request runs through.
///
/// A row reads and writes one field of `Configuration`. Values are stored as given, within the
/// kind's limits; the real server's "0 means the default" rules are applied afterwards, in one
/// place, by `Configuration.applyDefaults()` (GoTrue's `conf.ApplyDefaults`).
///
/// The row type is generic over what it fills: `Setting` fills GoTrue's `Configuration`; the
/// server's own options (host, port, timeouts, ...) are rows of the same type over the
/// emulator's options, in a sibling table (`EmulatorOptions.settings`).
public struct SettingRow<Target>: Sendable {
    /// The control-API key (`PATCH /emulator/v1/config`), also the row's identity. Dots nest:
    /// `mfa.totp.enroll_enabled` is `{"mfa": {"totp": {"enroll_enabled": ...}}}` on the wire.
    public let key: String
    public let kind: SettingKind
    /// The environment variables, first match wins: the real server's `GOTRUE_*` names (and
    /// envconfig's aliases), or the emulator's own `AUTH_EMULATOR_*` ones.
    public let env: [String]
    /// The `[auth]` key of the Supabase CLI's `config.toml`, dotted for sub-tables.
    public let file: String?
    /// The file's key means the opposite (`enable_confirmations` is `!MAILER_AUTOCONFIRM`).
    public let fileInverted: Bool
    /// The `serve` flag, without dashes; a boolean's flag is a `--x` / `--no-x` switch.
    public let flag: String?
    public let flagInverted: Bool
    /// Whether `PATCH /emulator/v1/config` may change it (secrets and keys are start-up only).
    public let runtime: Bool
    /// Never shown by the control API or the help's defaults (secrets, keys).
    public let secret: Bool
    /// The default of a GoTrue container configured only by `GOTRUE_*` variables
    /// (`internal/conf/configuration.go`, after `ApplyDefaults`).
    public let gotrue: SettingValue
    /// The value `supabase start` gives the auth container with the `supabase init` template.
    public let cli: SettingValue
    /// Where a default is derived rather than fixed, how (shown instead of the value).
    public let defaultNote: String?
    public let help: String
    /// What the flag's value is called in help (`<path>|:memory:`); nil: derived from the kind.
    public let placeholder: String?
    let read: @Sendable (Target) -> SettingValue
    let write: @Sendable (inout Target, SettingValue) -> Void

    public init(
        _ key: String, _ kind: SettingKind, env: [String], file: String? = nil, flag: String? = nil,
        runtime: Bool = true, secret: Bool = false, gotrue: SettingValue, cli: SettingValue, note: String? = nil,
        placeholder: String? = nil, help: String, read: @escaping @Sendable (Target) -> SettingValue,
        write: @escaping @Sendable (inout Target, SettingValue) -> Void
    ) {
        self.key = key
        self.kind = kind
        self.env = env
        self.fileInverted = file?.hasPrefix("!") ?? false
        self.file = file.map { $0.hasPrefix("!") ? String($0.dropFirst()) : $0 }
        self.flagInverted = flag?.hasPrefix("!") ?? false
        self.flag = flag.map { $0.hasPrefix("!") ? String($0.dropFirst()) : $0 }
        self.runtime = runtime
        self.secret = secret
        self.gotrue = gotrue
        self.cli = cli
        self.defaultNote = note
        self.help = help
        self.placeholder = placeholder
        self.read = read
        self.write = write
    }

    /// The value in force in `target`.
    public func value(in target: Target) -> SettingValue { read(target) }

    /// Writes the value after checking it against the kind's limits (a row that records no
    /// source: the server's options).
    public func apply(_ value: SettingValue, to target: inout Target, name: String? = nil) throws(SettingError) {
        if let problem = kind.problem(value) { throw SettingError(name ?? key, problem) }
        write(&target, value)
    }

    /// The default under `profile`.
    public func defaultValue(_ profile: DefaultsProfile) -> SettingValue { profile == .gotrue ? gotrue : cli }

    /// The primary `GOTRUE_*` (or `AUTH_EMULATOR_*`) name.
    public var variable: String? { env.first }

    /// The flag as help writes it: `--[no-]x` for a switch, `--x <value>` otherwise.
    public var flagSyntax: String? {
        guard let flag else { return nil }
        if case .bool = kind, placeholder == nil { return "--[no-]\(flag)" }
        return "--\(flag) " + (placeholder ?? kind.placeholder)
    }
}

/// A row of the settings table proper: one setting of GoTrue's `Configuration`.
public typealias Setting = SettingRow<Configuration>

extension SettingRow where Target == Configuration {
    /// Sets the value after checking it against the kind's limits; the message names the
    /// setting the way the caller calls it (`name`). Records where the value came from.
    public func set(_ value: SettingValue, in config: inout Configuration, from source: SettingSource, name: String? = nil) throws(SettingError) {
        if let problem = kind.problem(value) { throw SettingError(name ?? key, problem) }
        write(&config, value)
        config.settingSources[key] = source
    }

    /// Returns the setting to its default under the configuration's profile, as if no source
    /// had set it.
    public func reset(in config: inout Configuration) {
        write(&config, defaultValue(config.defaultsProfile))
        config.settingSources[key] = nil
        // No source's signing keys: the cli profile's are the CLI's built-in key.
        config.applyCLISigningKey()
    }
}

/// A value refused by a setting's limits: the name as the user wrote it, and why.
public struct SettingError: Error, Sendable, CustomStringConvertible {
    public let name: String
    public let problem: String
    public init(_ name: String, _ problem: String) {
        self.name = name
        self.problem = problem
    }
    public var description: String { "\(name): \(problem)" }
}

/// One setting's value, whichever source it came from.
public enum SettingValue: Sendable {
    case bool(Bool)
    case int(Int)
    case number(Double)
    case string(String)
    case strings([String])
    /// `key:value` pairs (`GOTRUE_SMS_TEST_OTP`).
    case pairs([String: String])
    case rate(SendRate)
    /// Private JWKs (`GOTRUE_JWT_KEYS`).
    case keys([JWK])
    /// Unset, where a setting may be (an unlimited session timebox, no auto-approval).
    case null

    public var bool: Bool { if case .bool(let b) = self { b } else { false } }
    public var int: Int { if case .int(let n) = self { n } else { 0 } }
    public var number: Double {
        switch self {
        case .number(let n): n
        case .int(let n): Double(n)
        default: 0
        }
    }
    public var string: String { if case .string(let s) = self { s } else { "" } }
    public var optionalString: String? { if case .string(let s) = self { s } else { nil } }
    public var optionalNumber: Double? {
        switch self {
        case .number(let n): n
        case .int(let n): Double(n)
        default: nil
        }
    }
    public var strings: [String] { if case .strings(let list) = self { list } else { [] } }
    public var pairs: [String: String] { if case .pairs(let map) = self { map } else { [:] } }
    public var keys: [JWK] { if case .keys(let list) = self { list } else { [] } }
}

extension SettingValue: Equatable {
    /// Keys are equal when their members are (a JWK is read from its members).
    public static func == (a: SettingValue, b: SettingValue) -> Bool {
        switch (a, b) {
        case (.bool(let x), .bool(let y)): x == y
        case (.int(let x), .int(let y)): x == y
        case (.number(let x), .number(let y)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.strings(let x), .strings(let y)): x == y
        case (.pairs(let x), .pairs(let y)): x == y
        case (.rate(let x), .rate(let y)): x == y
        case (.keys(let x), .keys(let y)): x.map(\.members) == y.map(\.members)
        case (.null, .null): true
        default: false
        }
    }
}

/// What a setting takes, and the limits every source is held to.
public enum SettingKind: Sendable {
    case bool
    /// A whole number in the range.
    case integer(ClosedRange<Int>)
    /// Whole seconds, written as a plain number by every source (`GOTRUE_JWT_EXP`).
    case seconds(ClosedRange<Int>)
    /// A Go duration in the environment and the file (`10s`, `1h30m`); seconds in the control
    /// API. `positive`: zero is refused.
    case duration(positive: Bool)
    /// A duration that may be unset (unlimited): positive when set; a file's `0` means unset.
    case optionalDuration
    /// A number of 0 or more (rate-limit events, plain seconds).
    case number
    /// Text; `emptyIsUnset`: an empty environment value counts as not given (URLs, secrets).
    case text(emptyIsUnset: Bool)
    /// Text that may be null (unset).
    case optionalText
    /// A list of strings; comma-separated in the environment.
    case list
    /// One of the names.
    case choice([String])
    /// GoTrue's `conf.Rate`: events per hour, or `N/<duration>`.
    case rate
    /// `key:value,key:value` pairs.
    case pairs
    /// An RFC 3339 instant, or unset.
    case time
    /// Character sets of which each must appear: `:`-separated in the environment (`\\:` is
    /// a literal colon), a list elsewhere.
    case characterSets
    /// A JSON array of private JWKs of which at most one signs (`GOTRUE_JWT_KEYS`); the
    /// readers check the array as GoTrue's `JwtKeysDecoder` does.
    case jwks

    /// Why `value` is not a value of this kind, or nil.
    public func problem(_ value: SettingValue) -> String? {
        switch (self, value) {
        case (.bool, .bool), (.list, .strings), (.characterSets, .strings), (.rate, .rate), (.pairs, .pairs), (.jwks, .keys), (.optionalText, .null),
             (.time, .null), (.optionalDuration, .null):
            return nil
        case (.integer(let range), .int(let n)), (.seconds(let range), .int(let n)):
            return range.contains(n) ? nil : "must be \(describe)"
        case (.duration(let positive), .number(let n)):
            if !n.isFinite || n < 0 { return "must not be negative" }
            return positive && n == 0 ? "must be a positive duration" : nil
        case (.optionalDuration, .number(let n)):
            return n.isFinite && n > 0 ? nil : "must be positive when set"
        case (.number, .number(let n)):
            return n.isFinite && n >= 0 ? nil : "must be \(describe)"
        case (.text(emptyIsUnset: true), .string("")):
            return "must not be empty"
        case (.text, .string), (.optionalText, .string):
            return nil
        case (.time, .string(let text)):
            return Timestamp(rfc3339: text) == nil ? "must be \(describe)" : nil
        case (.choice(let names), .string(let name)):
            return names.contains(name) ? nil : "must be \(describe)"
        default:
            return "must be \(describe)"
        }
    }

    /// A flag's value as help names it: the names of a choice, else a word for the kind.
    public var placeholder: String {
        switch self {
        case .choice(let names): "<" + names.joined(separator: "|") + ">"
        case .integer: "<n>"
        case .seconds, .duration, .optionalDuration: "<s>"
        case .rate: "<rate>"
        default: "<value>"
        }
    }

    /// What the kind takes, in words, for help and messages.
    public var describe: String {
        switch self {
        case .bool: "true or false"
        case .integer(let range), .seconds(let range):
            range.upperBound >= Int(Int32.max)
                ? (range.lowerBound == 0 ? "a whole number (0 or more)" : "a whole number")
                : "a whole number in \(range.lowerBound)...\(range.upperBound)"
        case .duration(let positive): positive ? "a positive duration" : "a duration"
        case .optionalDuration: "a positive duration, or unset"
        case .number: "a number (0 or more)"
        case .text: "a string"
        case .optionalText: "a string or null"
        case .list: "a list of strings"
        case .choice(let names): "one of " + names.joined(separator: ", ")
        case .rate: "a rate (events per hour, or N/<duration> such as 10/1m)"
        case .pairs: "key:value pairs"
        case .time: "an RFC 3339 time such as 2030-01-01T00:00:00Z"
        case .characterSets: "character sets separated by ':'"
        case .jwks: "a JSON array of private JWKs"
        }
    }
}

extension Configuration {
    /// The defaults of `profile` for every setting: the CLI's are the fields' initial values
    /// (checked against the table by a test); the real server's differ in a few rows.
    public init(defaults profile: DefaultsProfile) {
        self.init()
        adoptDefaults(profile)
    }

    /// Switches to the defaults of `profile`: every setting no source has set and that still
    /// holds the old profile's default takes the new profile's default.
    public mutating func adoptDefaults(_ profile: DefaultsProfile) {
        let old = defaultsProfile
        defaultsProfile = profile
        guard profile != old else { return }
        for setting in Configuration.settings where setting.gotrue != setting.cli && settingSources[setting.key] == nil {
            if setting.read(self) == setting.defaultValue(old) { setting.write(&self, setting.defaultValue(profile)) }
        }
        if profile == .cli { applyCLISigningKey() } else { dropCLISigningKey() }
        applyDefaults()
    }

    /// The row whose control-API key is `key`.
    public static func setting(_ key: String) -> Setting? { settingsByKey[key] }

    static let settingsByKey: [String: Setting] = Dictionary(uniqueKeysWithValues: settings.map { ($0.key, $0) })
}

import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthPlatform
import GoFormats
import GoTrue

/// Reads the real server's environment variables (reference §15 and §20) into options, with the
/// real names, units and syntax: GoTrue loads them with `envconfig`, so booleans follow Go's
/// `strconv.ParseBool`, durations Go's `time.ParseDuration` (`10s`, `1h30m`, `500ms`), lists are
/// comma-separated and maps are `key:value,key:value`. Values GoTrue takes as plain seconds
/// (`GOTRUE_JWT_EXP`, `GOTRUE_MAILER_OTP_EXP`, `GOTRUE_SMS_OTP_EXP`,
/// `GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL`) are plain seconds here too.
///
/// A malformed value is an error naming the variable. Unknown `GOTRUE_*` names are not an error
/// (GoTrue ignores them, and real env files carry database, SMTP and hook settings the emulator
/// has no use for): `apply` returns them so the caller can mention them once.
public enum EnvironmentConfiguration {
    /// Emulator-only variables.
    public static let databaseVariable = "AUTH_EMULATOR_DB"
    public static let databaseBootstrapVariable = "AUTH_EMULATOR_DB_BOOTSTRAP"
    /// Where libpq is (Postgres mode); the loader reads it itself (`PostgresConnection`).
    public static let libpqVariable = "AUTH_EMULATOR_LIBPQ"
    /// `cli` or `gotrue`: whose defaults apply (`serve --defaults`).
    public static let defaultsVariable = "AUTH_EMULATOR_DEFAULTS"
    public static let journalSizeVariable = "AUTH_EMULATOR_JOURNAL_SIZE"
    public static let shutdownTimeoutVariable = "AUTH_EMULATOR_SHUTDOWN_TIMEOUT"
    public static let maxConnectionsVariable = "AUTH_EMULATOR_MAX_CONNECTIONS"
    public static let strictIDTokensVariable = "AUTH_EMULATOR_STRICT_ID_TOKENS"
    public static let dashboardVariable = "AUTH_EMULATOR_DASHBOARD"
    /// Benchmark instrument (bench/cost.sh): trace every SQL statement to this file.
    public static let statementTraceVariable = "AUTH_EMULATOR_SQL_TRACE"
    /// The HTTP transport's portable mode (`HTTPIOMode`, docs/platforms.md). AuthHTTP reads it
    /// itself, for every server of the process; it is checked here so a value that is not a
    /// boolean stops the start rather than silently meaning the native mode.
    public static let portableIOVariable = HTTPIOMode.environmentVariable
    /// The test switch that runs every write twice (`WriteRounds`, docs/tests.md). GoTrue reads
    /// it itself; checked here as the portable mode is, so a non-boolean value stops the start.
    public static let writesTwiceVariable = WriteRounds.writesTwiceVariable

    /// The variable naming GoTrue's database, if the environment has one: `GOTRUE_DB_DATABASE_URL`,
    /// or `DATABASE_URL` (the name GoTrue's `envconfig` falls back to) in an environment written
    /// for GoTrue (`GOTRUE_DB_DRIVER` set), as compose files give it; an app's own `DATABASE_URL`
    /// alone is not GoTrue's. The emulator's database is `--db` / `AUTH_EMULATOR_DB` alone.
    public static func gotrueDatabaseVariable(in environment: [String: String]) -> String? {
        if environment["GOTRUE_DB_DATABASE_URL"]?.isEmpty == false { return "GOTRUE_DB_DATABASE_URL" }
        if environment["GOTRUE_DB_DRIVER"] != nil, environment["DATABASE_URL"]?.isEmpty == false { return "DATABASE_URL" }
        return nil
    }

    /// Read by the project's test scripts (`scripts/test`, `Tests/python`), never by `serve`; a
    /// server those tests start inherits them, so they are not reported as unknown settings.
    public static let testHarnessVariables: Set<String> = [
        "AUTH_EMULATOR_BIN", "AUTH_EMULATOR_PYTHON", "AUTH_EMULATOR_VENV",
        // The passes of scripts/test and the Postgres-mode tests' cluster (docs/tests.md).
        "AUTH_EMULATOR_TEST_PORTABLE", "AUTH_EMULATOR_TEST_POSTGRES", "AUTH_EMULATOR_TEST_DB", "AUTH_EMULATOR_PG_BIN",
    ]

    /// Applies every variable that maps onto `options`; returns the `GOTRUE_*` and
    /// `AUTH_EMULATOR_*` names present in `environment` that were not used (sorted).
    @discardableResult
    public static func apply(_ environment: [String: String], to options: inout EmulatorOptions) throws(EmulatorError) -> [String] {
        try applyReporting(environment, to: &options).ignored
    }

    /// `apply`, also telling which names present in `environment` it read (sorted), for the
    /// banner: names only, since values may be secrets.
    static func applyReporting(
        _ environment: [String: String], to options: inout EmulatorOptions
    ) throws(EmulatorError) -> (applied: [String], ignored: [String], suggestions: [String: String]) {
        var env = Reader(environment: environment)

        try applyServerOptions(&env, &options)

        var config = options.configuration
        try applySettings(&env, &config)

        config.applyDefaults()
        config.applyCLIIssuer()
        config.applyCLISigningKey()
        options.configuration = config
        let ignored = environment.keys
            .filter { ($0.hasPrefix("GOTRUE_") || $0.hasPrefix("AUTH_EMULATOR_")) && !env.known.contains($0) }
            .filter { !testHarnessVariables.contains($0) }
            .sorted()
        // A slip (one edit: a missing, doubled, wrong or swapped letter) from a name the
        // emulator reads is named; a real GoTrue variable the emulator does not use differs from
        // every such name by more (GOTRUE_SMTP_HOST is two edits from GOTRUE_SMTP_PORT).
        var suggestions: [String: String] = [:]
        let known = env.known.sorted()
        for name in ignored {
            if let match = known.first(where: { Spelling.distance(name, $0) == 1 }) { suggestions[name] = match }
        }
        return (environment.keys.filter(env.known.contains).sorted(), ignored, suggestions)
    }

    /// Every server option with a variable (`EmulatorOptions.settings`): the first of its names
    /// with a value wins (`GOTRUE_API_PORT` before `PORT`); an empty value counts as unset.
    private static func applyServerOptions(_ env: inout Reader, _ options: inout EmulatorOptions) throws(EmulatorError) {
        for row in EmulatorOptions.settings {
            for name in row.env {
                guard let value = try env.value(name, kind: row.kind) else { continue }
                do {
                    try row.apply(value, to: &options, name: name)
                } catch {
                    throw EmulatorError(error.description)
                }
                break
            }
        }
    }

    /// Every row of the settings table with a variable: the first of its names that gives a
    /// value wins (`API_EXTERNAL_URL` before `GOTRUE_API_EXTERNAL_URL`).
    private static func applySettings(_ env: inout Reader, _ config: inout Configuration) throws(EmulatorError) {
        for setting in Configuration.settings {
            var found: (String, SettingValue)?
            for name in setting.env {
                guard let text = env.raw(name), found == nil else { continue }
                do {
                    if let value = try SettingSyntax.value(text: text, kind: setting.kind, name: name) { found = (name, value) }
                } catch {
                    throw EmulatorError(error.description)
                }
            }
            guard let (name, value) = found else { continue }
            do {
                try setting.set(value, in: &config, from: .env, name: name)
            } catch {
                throw EmulatorError("\(name): '\(environmentText(env, name))' \(error.problem)")
            }
        }
    }

    private static func environmentText(_ env: Reader, _ name: String) -> String { env.environment[name] ?? "" }

    /// Typed access to the environment that remembers every name it was asked about, so the
    /// names nobody asked about can be reported as ignored.
    struct Reader {
        let environment: [String: String]
        var known: Set<String> = []

        /// The value as set, even when empty (an empty string or list is a real value).
        mutating func raw(_ name: String) -> String? {
            known.insert(name)
            return environment[name]
        }

        /// A non-empty value; an empty one counts as unset (for required-looking settings such
        /// as URLs, the host and secrets, where empty is never meant).
        mutating func string(_ name: String) -> String? {
            guard let value = raw(name), !value.isEmpty else { return nil }
            return value
        }

        mutating func boolean(_ name: String) throws(EmulatorError) -> Bool? {
            guard let text = string(name) else { return nil }
            guard let value = GoStrconv.parseBool(text) else {
                throw EmulatorError("\(name): '\(text)' is not a boolean (use true or false)")
            }
            return value
        }

        /// A server option's value (`EmulatorOptions.settings`), held to the row's kind.
        mutating func value(_ name: String, kind: SettingKind) throws(EmulatorError) -> SettingValue? {
            switch kind {
            case .integer(let range): return try integer(name, in: range).map(SettingValue.int)
            case .seconds(let range): return try integer(name, in: range, unit: "seconds").map(SettingValue.int)
            case .bool: return try boolean(name).map(SettingValue.bool)
            case .choice(let names):
                guard let text = string(name) else { return nil }
                if names.contains(text) { return .string(text) }
                // An on/off choice (`AUTH_EMULATOR_DASHBOARD`) takes a boolean too.
                if names == ["on", "off"] { return try boolean(name).map { .string($0 ? "on" : "off") } }
                throw EmulatorError("\(name): '\(text)' is not \(names.joined(separator: " or "))")
            default:
                if case .text(emptyIsUnset: false) = kind { return raw(name).map(SettingValue.string) }
                return string(name).map(SettingValue.string)
            }
        }

        mutating func integer(_ name: String, in range: ClosedRange<Int>, unit: String? = nil) throws(EmulatorError) -> Int? {
            guard let text = string(name) else { return nil }
            guard let value = GoValue.parseInt(text), range.contains(value) else {
                let what = unit.map { "a whole number of \($0)" } ?? "a whole number"
                // Quote the range only where it is a real limit, not the width of an integer.
                let limits = range.upperBound < Int(Int32.max) ? " in \(range.lowerBound)...\(range.upperBound)" : range.lowerBound == 0 ? " (0 or more)" : ""
                throw EmulatorError("\(name): '\(text)' is not \(what)\(limits)")
            }
            return value
        }

   }
}

/// The Go value syntaxes GoTrue and the Supabase CLI accept, shared by the environment and the
/// config file readers.
enum GoValue {
    /// A decimal integer with an optional sign, surrounding spaces tolerated.
    static func parseInt(_ text: String) -> Int? {
        Int(GoStrings.trim(text, " \t"))
    }

    /// Go's `time.ParseDuration`, in seconds; nil where Go refuses the text.
    static func parseDuration(_ text: String) -> Double? {
        guard case .success(let nanoseconds) = GoTime.parseDuration(text) else { return nil }
        return Double(nanoseconds) / 1e9
    }

    /// GoTrue's `PasswordRequiredCharacters.Decode`: sets separated by `:`, where `\:` stands for
    /// a literal colon inside a set; empty sets are dropped.
    static func requiredCharacters(_ value: String) -> [String] {
        var parts = value.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        var i = 0
        while i < parts.count - 1 {
            if parts[i].hasSuffix("\\") {
                parts[i] = String(parts[i].dropLast()) + ":" + parts[i + 1]
                parts[i + 1] = ""
            }
            i += 1
        }
        return parts.filter { !$0.isEmpty }
    }
}

/// `GOTRUE_JWT_KEYS` (and the CLI's `signing_keys.json`): a JSON array of private JWKs of which
/// exactly one has `sign` in its `key_ops` (reference §7.3, conf/jwk.go). `null` or `[]` means
/// none, as `supabase start` passes when no signing keys are configured.
package enum JWTKeys {
    static func parse(_ text: String, setting: String) throws(EmulatorError) -> [JWK] {
        do {
            return try keys(text, setting: setting)
        } catch {
            throw EmulatorError(error.description)
        }
    }

    package static func parse(_ array: [JSON], setting: String) throws(EmulatorError) -> [JWK] {
        do {
            return try keys(array, setting: setting)
        } catch {
            throw EmulatorError(error.description)
        }
    }

    /// The keys of the row's kind (`SettingKind.jwks`); a refusal names the setting, or the
    /// element (`GOTRUE_JWT_KEYS[1]`).
    static func keys(_ text: String, setting: String) throws(SettingError) -> [JWK] {
        let json: JSON
        do {
            json = try JSON(parsing: text)
        } catch {
            throw SettingError(setting, "not valid JSON (\(error))")
        }
        if json.isNull { return [] }
        guard let array = json.arrayValue else { throw SettingError(setting, "expected a JSON array of JWKs") }
        return try keys(array, setting: setting)
    }

    static func keys(_ array: [JSON], setting: String) throws(SettingError) -> [JWK] {
        var keys: [JWK] = []
        for (position, element) in array.enumerated() {
            let which = "\(setting)[\(position)]"
            guard let object = element.objectValue else { throw SettingError(which, "expected a JWK object") }
            let jwk: JWK
            do {
                jwk = try JWK(object)
            } catch {
                throw SettingError(which, "\(error)")
            }
            let kid = jwk.key.kid ?? ""
            if keys.contains(where: { ($0.key.kid ?? "") == kid }) { throw SettingError(which, "duplicate \"kid\" \"\(kid)\"") }
            keys.append(jwk)
        }
        // GoTrue's JwtKeysDecoder.Validate messages.
        let signing = keys.filter(\.canSign).count
        if !keys.isEmpty && signing == 0 { throw SettingError(setting, "no signing key detected (one key needs \"key_ops\": [\"sign\", \"verify\"])") }
        if signing > 1 { throw SettingError(setting, "multiple signing keys detected, only 1 signing key is supported") }
        return keys
    }
}

/// Checks that hold across settings: `Configuration.problem()`, as the emulator reports it.
package enum ConfigurationCheck {
    package static func check(_ config: Configuration) throws(EmulatorError) {
        if let problem = config.problem() { throw EmulatorError(problem) }
    }
}

extension String {
    /// Go's `envconfig` list syntax: comma-separated; entries are trimmed and empty entries
    /// dropped, so `a, b,` is `["a", "b"]` and an empty value is an empty list.
    var commaSeparated: [String] {
        split(separator: ",").map { GoStrings.trim($0, " \t") }.filter { !$0.isEmpty }
    }
}

import AuthPlatform
import AuthTOML
import GoFormats
import GoTrue

/// The `[auth]` section of the Supabase CLI's `supabase/config.toml`, mapped onto the
/// configuration the way `supabase start` turns it into the auth container's `GOTRUE_*`
/// variables (Supabase CLI `internal/start/start.go`, `pkg/config/auth.go`), so a project's own
/// config file drives the emulator unchanged.
///
/// - Other top-level sections (`[api]`, `[db]`, `[studio]`, ...) are not the emulator's business
///   and are skipped without looking inside.
/// - Every key of the CLI's `[auth]` schema is known. Those with a counterpart in the emulator
///   are applied; the rest (captcha, SMTP, custom email bodies, third-party auth, ...) are
///   accepted and ignored, so an unmodified `supabase init` file
///   loads. A key the CLI does not know either is an error naming the key and its line,
///   like the CLI's own strict decoding.
/// - `"env(NAME)"` values are replaced by the environment variable `NAME` when it is set and
///   non-empty, and kept as written otherwise (the CLI's `LoadEnvHook`).
/// - Values are converted as the CLI's decoder does (weakly typed): a boolean or number may also
///   be given as a string (useful with `env(...)`), a list as a comma-separated string.
public enum SupabaseConfigFile {
    /// Reads the file at `path` and applies its `[auth]` section; returns warnings to show.
    @discardableResult
    public static func apply(path: String, environment: [String: String], to options: inout EmulatorOptions) throws(EmulatorError) -> [String] {
        let bytes = try Platform.readFile(path)
        return try apply(bytes, file: path, environment: environment, to: &options)
    }

    /// Applies the `[auth]` section of a config file's contents; `file` names it in messages.
    @discardableResult
    public static func apply(_ text: String, file: String = "config.toml", environment: [String: String], to options: inout EmulatorOptions) throws(EmulatorError) -> [String] {
        try apply(Array(text.utf8), file: file, environment: environment, to: &options)
    }

    static func apply(_ bytes: [UInt8], file: String, environment: [String: String], to options: inout EmulatorOptions) throws(EmulatorError) -> [String] {
        let document: TOMLTable
        do {
            document = try TOML.parse(bytes, file: file)
        } catch {
            throw EmulatorError(error.description)
        }
        guard let authValue = document["auth"] else { return [] }
        guard case .table(let auth) = authValue else {
            throw EmulatorError("\(file):\(document.line(of: "auth") ?? 1): auth: expected a table, found \(authValue.kindName)")
        }
        var mapper = Mapper(file: file, environment: environment, config: options.configuration)
        try mapper.walk(auth, node: schema, path: ["auth"])
        try mapper.finish()
        mapper.config.applyDefaults()
        mapper.config.applyCLIIssuer()
        mapper.config.applyCLISigningKey()
        options.configuration = mapper.config
        return mapper.warnings
    }

    // MARK: The CLI's [auth] schema

    /// A node of the `[auth]` schema.
    indirect enum Node: Sendable {
        /// A key the emulator applies.
        case setting(@Sendable (inout Mapper, Field) throws(EmulatorError) -> Void)
        /// A key the CLI knows whose feature the emulator does not model: accepted, unused.
        case ignored
        /// A table with a fixed set of keys.
        case section([String: Node])
        /// A table whose keys are names (providers, templates, phone numbers); `allowed` limits
        /// them when the set is closed.
        case map(allowed: Set<String>?, Node)

        /// This node with `node` at `path`, creating sections on the way. What is already there
        /// wins: a special rule, or a map of names.
        func inserting(_ path: ArraySlice<String>, _ node: Node) -> Node {
            guard let key = path.first, case .section(var children) = self else { return self }
            if path.count == 1 {
                if children[key] == nil { children[key] = node }
            } else {
                children[key] = (children[key] ?? .section([:])).inserting(path.dropFirst(), node)
            }
            return .section(children)
        }
    }

    static func ignoredSection(_ keys: String...) -> Node {
        .section(Dictionary(uniqueKeysWithValues: keys.map { ($0, Node.ignored) }))
    }

    /// The SMS providers in the order the CLI picks the first enabled one.
    static let smsProviders = ["twilio", "twilio_verify", "messagebird", "textlocal", "vonage"]

    /// The CLI's `password_requirements` levels and the `GOTRUE_PASSWORD_REQUIRED_CHARACTERS`
    /// values it sends for them (Supabase CLI `PasswordRequirements.ToChar`, through the
    /// Management API's `password_required_characters` enum), decoded as GoTrue decodes them.
    static let passwordRequirements: [String: String] = [
        "": "",
        "letters_digits": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ:0123456789",
        "lower_upper_letters_digits": "abcdefghijklmnopqrstuvwxyz:ABCDEFGHIJKLMNOPQRSTUVWXYZ:0123456789",
        "lower_upper_letters_digits_symbols": #"abcdefghijklmnopqrstuvwxyz:ABCDEFGHIJKLMNOPQRSTUVWXYZ:0123456789:!@#$%^&*()_+-=[]{};'\\:"|<>?,./`~"#,
    ]

    /// The schema: the keys the settings table maps (`Configuration.settings`, by their `file`
    /// name), on top of the keys that need more than one row's rule (`specialSchema`), which win.
    static let schema: Node = {
        var root = specialSchema
        for setting in Configuration.settings {
            guard let file = setting.file else { continue }
            root = root.inserting(file.split(separator: ".").map(String.init)[...], .setting { m, f throws(EmulatorError) in
                try m.apply(setting, f)
            })
        }
        return root
    }()

    /// Keys the CLI knows that are not one row of the table: ignored features, and settings that
    /// span rows or are resolved once the whole section was read.
    static let specialSchema: Node = .section([
        "enabled": .ignored,
        // The CLI's meaning: the URL Auth serves on, `/auth/v1` included; the emulator serves the
        // same routes at its root and under /auth/v1, so either form names it.
        "external_url": .setting { m, f throws(EmulatorError) in
            let url = try f.string()
            if !url.isEmpty { try m.apply(Configuration.setting("external_url")!, f, value: .string(url)) }
        },
        "password_requirements": .setting { m, f throws(EmulatorError) in
            let level = try f.string()
            guard let characters = passwordRequirements[level] else {
                throw f.failure("must be one of \"\", \"letters_digits\", \"lower_upper_letters_digits\", \"lower_upper_letters_digits_symbols\" (found \"\(level)\")")
            }
            try m.apply(Configuration.setting("password_required_characters")!, f, value: .strings(GoValue.requiredCharacters(characters)))
        },
        "signing_keys_path": .setting { m, f throws(EmulatorError) in
            let path = try f.string()
            if !path.isEmpty { m.signingKeysPath = (path, f) }
        },
        // Custom secrets (the CLI reads these from supabase/.env through env(...)), applied once
        // the section is read so the keys are derived from the final secret.
        "jwt_secret": .setting { m, f throws(EmulatorError) in
            let secret = try f.string()
            guard !secret.isEmpty else { return }
            // The CLI's own check (apikeys.go generateAPIKeys).
            guard secret.utf8.count >= 16 else { throw f.failure("must be at least 16 characters") }
            m.jwtSecret = (secret, f)
        },
        "anon_key": apiKey, "service_role_key": apiKey, "publishable_key": apiKey, "secret_key": apiKey,
        "rate_limit": .section([
            // The CLI passes email_sent only with [auth.email.smtp] enabled (the emulator sends no
            // mail, so the CLI's 360000 per hour applies).
            "email_sent": .ignored,
        ]),
        "captcha": ignoredSection("enabled", "provider", "secret"),
        "email": .section([
            // The CLI passes each template's subject as GOTRUE_MAILER_SUBJECTS_<ID>; custom bodies
            // (content_path, served to GoTrue over HTTP) are not modelled: the built-in ones apply.
            // Any name is accepted, as by the CLI (GoTrue ignores a subject it has no template for).
            "template": .map(allowed: nil, .section([
                "subject": .setting { m, f throws(EmulatorError) in
                    try m.apply(Configuration.setting("email.template.\(f.path[f.path.count - 2]).subject"), f)
                },
                "content": .setting { m, f throws(EmulatorError) in m.inlineContents.append(f) },
                "content_path": .setting { m, f throws(EmulatorError) in
                    let path = try f.string()
                    if !path.isEmpty { m.contentPaths[f.path[f.path.count - 2]] = (path, f, false) }
                },
            ])),
            // `enabled` becomes GOTRUE_MAILER_NOTIFICATIONS_<KIND>_ENABLED; the subject is passed
            // only for an enabled notice, under the template id `<kind>_notification`.
            "notification": .map(allowed: nil, .section([
                "enabled": .setting { m, f throws(EmulatorError) in
                    try m.apply(Configuration.setting("email.notification.\(f.path[f.path.count - 2]).enabled"), f)
                },
                "subject": .setting { m, f throws(EmulatorError) in m.notificationSubjects[f.path[f.path.count - 2]] = try f.string() },
                "content": .setting { m, f throws(EmulatorError) in m.inlineContents.append(f) },
                "content_path": .setting { m, f throws(EmulatorError) in
                    let path = try f.string()
                    if !path.isEmpty { m.contentPaths[f.path[f.path.count - 2] + "_notification"] = (path, f, true) }
                },
            ])),
            "smtp": ignoredSection("enabled", "host", "port", "user", "pass", "admin_email", "sender_name"),
        ]),
        "sms": .section([
            "test_otp": .map(allowed: nil, .setting { m, f throws(EmulatorError) in
                if !m.testOTPCleared {
                    m.config.sms.testOTP = [:]
                    m.testOTPCleared = true
                }
                m.config.sms.testOTP[Configuration.testPhone(f.path[f.path.count - 1])] = try f.string()
                m.config.settingSources["sms.test_otp"] = .file
            }),
        ].merging(smsProviders.map { ($0, Node.section(["enabled": .setting { m, f throws(EmulatorError) in
            m.smsProviderEnabled[f.path[f.path.count - 2]] = try f.boolean()
        }])) }) { $1 }),
        "third_party": .section([
            "firebase": ignoredSection("enabled", "project_id"),
            "auth0": ignoredSection("enabled", "tenant", "tenant_region"),
            "aws_cognito": ignoredSection("enabled", "user_pool_id", "user_pool_region"),
            "clerk": ignoredSection("enabled", "domain"),
            "workos": ignoredSection("enabled", "issuer_url"),
        ]),
    ])

    /// `anon_key` and the other keys: kept as written unless empty or an unresolved `env(...)`.
    static let apiKey: Node = .setting { m, f throws(EmulatorError) in
        if let key = try f.nonEmptyString() { m.apiKeys[f.path[f.path.count - 1]] = (key, f) }
    }

    // MARK: Walking the file

    /// One key of the file with its value, where it was written, and the environment for
    /// `env(...)` substitution.
    struct Field {
        let path: [String]
        let line: Int
        let value: TOMLValue
        let file: String
        let environment: [String: String]

        init(path: [String], line: Int, value: TOMLValue, file: String, environment: [String: String]) {
            self.path = path
            self.line = line
            self.value = value
            self.file = file
            self.environment = environment
        }

        var name: String { path.joined(separator: ".") }
        var location: String { "\(file):\(line)" }

        func failure(_ why: String) -> EmulatorError { EmulatorError("\(location): \(name): \(why)") }

        /// The CLI's `LoadEnvHook`: `env(NAME)` becomes `$NAME` when that is set and non-empty.
        func substituted(_ text: String) -> (value: String, unset: String?) {
            guard text.hasPrefix("env("), text.hasSuffix(")"), text.count > 5 else { return (text, nil) }
            let variable = String(text.dropFirst(4).dropLast())
            if let value = environment[variable], !value.isEmpty { return (value, nil) }
            return (text, variable)
        }

        /// A string after substitution; an unset reference in a typed setting is an error.
        func typedText(_ text: String, expecting what: String) throws(EmulatorError) -> String {
            let (value, unset) = substituted(text)
            if let unset { throw failure("\(what) is needed, but the environment variable \(unset) in \"\(text)\" is not set") }
            return value
        }

        func string() throws(EmulatorError) -> String {
            switch value {
            case .string(let text): return substituted(text).value
            // The CLI's decoder is weakly typed: scalars become their text.
            case .integer(let n): return String(n)
            case .boolean(let b): return b ? "1" : "0"
            default: throw failure("expected a string, found \(value.kindName)")
            }
        }

        func nonEmptyString() throws(EmulatorError) -> String? {
            let text = try string()
            return text.isEmpty || text.hasPrefix("env(") ? nil : text
        }

        func boolean() throws(EmulatorError) -> Bool {
            switch value {
            case .boolean(let b): return b
            case .integer(let n): return n != 0
            case .string(let text):
                let text = try typedText(text, expecting: "a boolean")
                // Weak decoding: an empty string is false.
                if text.isEmpty { return false }
                guard let b = GoStrconv.parseBool(text) else { throw failure("expected true or false, found \"\(text)\"") }
                return b
            default: throw failure("expected a boolean, found \(value.kindName)")
            }
        }

        /// A Go `uint` setting.
        func unsigned() throws(EmulatorError) -> Int {
            let n: Int64
            switch value {
            case .integer(let i): n = i
            case .string(let text):
                let text = try typedText(text, expecting: "a whole number")
                guard let i = Int64(GoStrings.trim(text, " \t")) else { throw failure("expected a whole number, found \"\(text)\"") }
                n = i
            default: throw failure("expected a whole number, found \(value.kindName)")
            }
            guard n >= 0, n <= Int64(Int32.max) else { throw failure("\(n) is out of range (0...\(Int32.max))") }
            return Int(n)
        }

        /// A Go `time.Duration` setting, given as a duration string (`"1s"`, `"24h"`).
        func seconds() throws(EmulatorError) -> Double {
            guard case .string(let raw) = value else {
                throw failure("expected a duration string such as \"5s\" or \"1h30m\", found \(value.kindName)")
            }
            let text = try typedText(raw, expecting: "a duration")
            guard let seconds = GoValue.parseDuration(text) else {
                throw failure("\"\(text)\" is not a duration (Go syntax such as \"10s\", \"1m\", \"1h30m\", \"500ms\")")
            }
            guard seconds >= 0 else { throw failure("\"\(text)\" must not be negative") }
            return seconds
        }

        /// A list of strings, or one comma-separated string (the CLI's `StringToSliceHookFunc`).
        func strings() throws(EmulatorError) -> [String] {
            switch value {
            case .array(let elements):
                var result: [String] = []
                for (position, element) in elements.enumerated() {
                    guard case .string(let text) = element else {
                        throw failure("element \(position + 1) is \(element.kindName); expected strings")
                    }
                    result.append(substituted(text).value)
                }
                return result
            case .string(let text):
                let text = substituted(text).value
                return text.isEmpty ? [] : text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            default:
                throw failure("expected an array of strings, found \(value.kindName)")
            }
        }

        /// `env(NAME)` references in this value whose variable is unset.
        var unsetVariables: [String] {
            switch value {
            case .string(let text): return substituted(text).unset.map { [$0] } ?? []
            case .array(let elements):
                return elements.compactMap { element in
                    if case .string(let text) = element { return substituted(text).unset }
                    return nil
                }
            default: return []
            }
        }
    }

    /// The state of one file's application: the configuration being built and the values that
    /// are resolved once the whole section has been read.
    struct Mapper {
        let file: String
        let environment: [String: String]
        var config: Configuration
        var warnings: [String] = []

        var jwtSecret: (String, Field)?
        /// `anon_key`, `service_role_key`, `publishable_key`, `secret_key` by name.
        var apiKeys: [String: (String, Field)] = [:]
        var smsProviderEnabled: [String: Bool] = [:]
        var signingKeysPath: (path: String, field: Field)?
        var testOTPCleared = false
        /// The line of each setting read, by table key, for checks that span settings.
        var lines: [String: Int] = [:]
        /// `[auth.email.notification.<kind>] subject`, applied only for enabled notices.
        var notificationSubjects: [String: String] = [:]
        /// `content_path` by template id (`<kind>_notification` for notices), read once the
        /// section is known (a notice's body only when it is enabled).
        var contentPaths: [String: (path: String, field: Field, notification: Bool)] = [:]
        /// `content` keys, which the CLI refuses without a `content_path`.
        var inlineContents: [Field] = []
        /// Lines of `[auth.external.<provider>]` tables, for messages about them.
        var providerLines: [String: Int] = [:]
        /// `(setting, variable)` for `env(...)` values left unresolved.
        var unresolved: [(field: Field, variable: String)] = []

        init(file: String, environment: [String: String], config: Configuration) {
            self.file = file
            self.environment = environment
            self.config = config
        }

        /// One row of the settings table from the file: the field read as the row's kind (or
        /// `value`, already read), inverted where the file's key means the opposite.
        mutating func apply(_ setting: Setting?, _ field: Field, value: SettingValue? = nil) throws(EmulatorError) {
            // A name the table has no row for (a subject of a template the server lacks) is
            // accepted and unused, as by the CLI.
            guard let setting else { return }
            var read = value
            if read == nil { read = try SettingSyntax.value(field: field, kind: setting.kind) }
            guard var value = read else { return }
            if setting.fileInverted, case .bool(let b) = value { value = .bool(!b) }
            do {
                try setting.set(value, in: &config, from: .file, name: field.name)
            } catch {
                throw field.failure(error.problem)
            }
            lines[setting.key] = field.line
        }

        mutating func walk(_ table: TOMLTable, node: Node, path: [String]) throws(EmulatorError) {
            for key in table.keys {
                guard let value = table[key] else { continue }
                let line = table.line(of: key) ?? 1
                let childPath = path + [key]
                let child: Node
                switch node {
                case .section(let children):
                    guard let known = children[key] else {
                        if path == ["auth", "external"] {
                            throw EmulatorError("\(file):\(line): \(childPath.joined(separator: ".")): unknown name '\(key)' (expected one of: \(children.keys.sorted().joined(separator: ", ")))")
                        }
                        // A near miss among the section's keys is named, as a mistyped flag is.
                        let hint = Spelling.suggestion(for: key, among: children.keys.sorted())
                            .map { " (did you mean '\($0)'?)" } ?? ""
                        throw EmulatorError("\(file):\(line): \(childPath.joined(separator: ".")): unknown setting (not part of the Supabase CLI's [\(path.joined(separator: "."))] section)\(hint)")
                    }
                    child = known
                case .map(let allowed, let element):
                    if let allowed, !allowed.contains(key) {
                        throw EmulatorError("\(file):\(line): \(childPath.joined(separator: ".")): unknown name '\(key)' (expected one of: \(allowed.sorted().joined(separator: ", ")))")
                    }
                    child = element
                case .setting, .ignored:
                    continue
                }
                if path == ["auth", "external"] { providerLines[key] = line }
                try visit(value, node: child, path: childPath, line: line)
            }
        }

        mutating func visit(_ value: TOMLValue, node: Node, path: [String], line: Int) throws(EmulatorError) {
            switch node {
            case .ignored:
                return
            case .setting(let apply):
                let field = Field(path: path, line: line, value: value, file: file, environment: environment)
                if case .table = value { throw field.failure("expected a value, found a table") }
                for variable in field.unsetVariables { unresolved.append((field, variable)) }
                try apply(&self, field)
            case .section, .map:
                guard case .table(let table) = value else {
                    throw EmulatorError("\(file):\(line): \(path.joined(separator: ".")): expected a table, found \(value.kindName)")
                }
                try walk(table, node: node, path: path)
            }
        }

        /// `signing_keys_path`: the CLI resolves a relative path against the `supabase/` folder
        /// (the config file's), passes the keys to GoTrue as `GOTRUE_JWT_KEYS`, and signs the
        /// anon and service_role keys with the first of them.
        mutating func applySigningKeys(_ path: String, _ field: Field) throws(EmulatorError) {
            var resolved = path
            if !path.hasPrefix("/") {
                let folder = file.lastIndex(of: "/").map { String(file[..<$0]) } ?? "."
                resolved = folder + "/" + (path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
            }
            let bytes: [UInt8]
            do {
                bytes = try Platform.readFile(resolved)
            } catch {
                throw field.failure("failed to read signing keys: \(error)")
            }
            let keys = try JWTKeys.parse(String(decoding: bytes, as: UTF8.self), setting: "\(field.location): \(field.name) (\(resolved))")
            config.settingSources["jwt_keys"] = .file
            if !config.adoptSigningKeys(keys), let first = keys.first {
                warnings.append("\(field.location): \(field.name): the first key (\(first.key.kid ?? "no kid")) has no private part, so the anon and service_role keys stay signed with the JWT secret")
            }
        }

        /// The custom bodies, read as the CLI reads them (`config.go` resolve and validate): a
        /// template's `content_path` relative to the project folder (the config folder's parent),
        /// a notice's relative to the config folder and only for an enabled notice; a missing
        /// file stops the start. An inline `content` without a path is refused, as by the CLI.
        mutating func readContentPaths() throws(EmulatorError) {
            for field in inlineContents where contentPaths[field.path[field.path.count - 2] + (field.path[2] == "notification" ? "_notification" : "")] == nil {
                throw field.failure("please use content_path instead")
            }
            let folder = file.lastIndex(of: "/").map { String(file[..<$0]) } ?? "."
            let project = folder.lastIndex(of: "/").map { String(folder[..<$0]) } ?? (folder == "." ? ".." : ".")
            for (id, entry) in contentPaths.sorted(by: { $0.key < $1.key }) {
                if entry.notification {
                    let kind = String(id.dropLast("_notification".count))
                    guard let notice = MailNotification(rawValue: kind), config.mailer.notifications.contains(notice) else { continue }
                }
                var resolved = entry.path
                if !resolved.hasPrefix("/") {
                    let base = entry.notification ? folder : project
                    resolved = base + "/" + (resolved.hasPrefix("./") ? String(resolved.dropFirst(2)) : resolved)
                }
                let bytes: [UInt8]
                do {
                    bytes = try Platform.readFile(resolved)
                } catch {
                    throw entry.field.failure("cannot read \(resolved): \(error)")
                }
                config.mailer.templates[id] = MailTemplateSource(text: String(decoding: bytes, as: UTF8.self), origin: .file(resolved))
                config.settingSources["email.template.\(id).content"] = .file
            }
        }

        /// Settings that depend on several keys, resolved after the whole section was read.
        mutating func finish() throws(EmulatorError) {
            if let (secret, field) = jwtSecret { try apply(Configuration.setting("jwt_secret"), field, value: .string(secret)) }
            if let (path, field) = signingKeysPath { try applySigningKeys(path, field) }
            for name in ["anon_key", "service_role_key", "publishable_key", "secret_key"] {
                if let (key, field) = apiKeys[name] { try apply(Configuration.setting(name), field, value: .string(key)) }
            }

            for (kind, subject) in notificationSubjects {
                guard let notice = MailNotification(rawValue: kind), config.mailer.notifications.contains(notice) else { continue }
                config.mailer.subjects[notice.templateID] = subject
                config.settingSources["email.template.\(notice.templateID).subject"] = .file
            }

            try readContentPaths()

            if smsProviderEnabled.values.contains(true) {
                config.sms.provider = SupabaseConfigFile.smsProviders.first { smsProviderEnabled[$0] == true } ?? ""
                config.settingSources["sms_provider"] = .file
            }

            // The CLI's `mfa.validate`: enrolling a type needs verifying it too.
            for (type, toggles) in [("totp", config.mfa.totp), ("phone", config.mfa.phone), ("web_authn", config.mfa.webAuthn)]
            where toggles.enroll && !toggles.verify {
                throw EmulatorError("\(file):\(lines["mfa.\(type).enroll_enabled"] ?? 1): auth.mfa.\(type).enroll_enabled: requires verify_enabled (Invalid MFA config)")
            }

            // The CLI's `external.validate`: an enabled provider needs a client ID, and a secret
            // except for Apple and Google (whose native sign-in uses ID tokens only).
            for (name, settings) in config.external.providers.sorted(by: { $0.key < $1.key }) where settings.enabled {
                guard let line = providerLines[name] else { continue }
                if settings.clientIDs.isEmpty {
                    throw EmulatorError("\(file):\(line): auth.external.\(name).client_id: required when the provider is enabled")
                }
                if !["apple", "google"].contains(name) && settings.secret.isEmpty {
                    throw EmulatorError("\(file):\(line): auth.external.\(name).secret: required when the provider is enabled")
                }
            }

            // Like the CLI, warn about unresolved env(...) only where the value is used: not for
            // the credentials of a disabled provider (the `supabase init` template has those).
            for (field, variable) in unresolved {
                if field.path.count == 4, field.path[1] == "external", !config.external.isEnabled(field.path[2]) { continue }
                if field.path.count == 4, field.path[1] == "sms", smsProviderEnabled[field.path[2]] != true { continue }
                warnings.append("\(field.location): \(field.name): environment variable \(variable) is not set; using \"env(\(variable))\" as written")
            }
        }
    }
}

import AuthHTTP
import AuthJSON
import AuthJWT
import EmulatorConfiguration
import EmulatorTools
import GoTrue

/// `GET /emulator/v1/config` and `PATCH /emulator/v1/config`: the live settings a test suite
/// flips between cases (confirmations, sign-up, anonymous users, password policy, rate limits)
/// without restarting the emulator. A change applies to the next request; `/settings` reflects
/// it. A PATCH is all or nothing: one bad field and nothing changes (400 naming the field).
///
/// Both read and write through the settings table: a field is named by its control-API key
/// (`mailer_autoconfirm`, `mfa.totp.enroll_enabled`) or by its `config.toml` key
/// (`email.enable_confirmations`, inverted where the file's key means the opposite), dotted or
/// nested (`{"mfa": {"totp": {"enroll_enabled": true}}}`).
enum ConfigRoutes {
    static func routes(project: Project, transport: CurlHookTransport) -> [Route] {
        let path = GoTrueAPI.emulatorPrefix + "/config"
        return [
            // Custom email bodies read again from their files and URLs (an edited template, a
            // template server started after the emulator), outside any write.
            Route("POST", GoTrueAPI.emulatorPrefix + "/templates/reload", operation: "emulator.templates.reload") { context in
                let loaded = BlockingIO.perform { TemplateSources.load(context.configuration, transport: transport) }
                project.settings.update { $0.mailer.templates = loaded.templates }
                var templates = JSONObject()
                for (id, source) in loaded.templates.sorted(by: { $0.key < $1.key }) { templates[id] = .string(source.name) }
                return .json(["templates": .object(templates), "warnings": .array(loaded.warnings.map(JSON.string))])
            },
            Route("GET", path, operation: "emulator.config.get") { context in .json(describe(context.configuration)) },
            Route("PATCH", path, operation: "emulator.config.update") { context in
                let patch = try ControlRequest.body(context.request)
                var changed: [String] = []
                try project.settings.update { (config: inout Configuration) throws(AuthError) in
                    let old = config
                    changed = try apply(patch, to: &config)
                    config.applyDefaults()
                    // A runtime change is held to the same rules as start-up, and may not strand
                    // the API keys already handed out.
                    if let problem = config.problem(changingFrom: old) { throw AuthError(400, .validationFailed, problem) }
                }
                // New limits start every bucket afresh: counts made under the old limits would
                // otherwise carry over into a window the test did not ask for.
                if changed.contains(where: { $0.hasPrefix("rate_limits.") }) { project.rateLimiter.reset() }
                return .json(describe(project.configuration))
            },
        ]
    }

    /// Every name a PATCH may use: control-API keys, then `config.toml` keys.
    static let names: [String: (setting: Setting, inverted: Bool)] = {
        var names: [String: (Setting, Bool)] = [:]
        for setting in Configuration.settings { names[setting.key] = (setting, false) }
        for setting in Configuration.settings {
            if let file = setting.file, names[file] == nil { names[file] = (setting, setting.fileInverted) }
        }
        return names
    }()

    static func describe(_ config: Configuration) -> JSON {
        var root = JSONObject()
        var sources = JSONObject()
        for setting in Configuration.settings {
            if !setting.secret {
                root.insert(SettingSyntax.json(setting.value(in: config)), at: setting.key.split(separator: ".").map(String.init)[...])
            }
            sources.append(setting.key, .string((config.settingSources[setting.key] ?? .default).rawValue))
        }
        root.append("defaults", .string(config.defaultsProfile.rawValue))
        root.append("mailer_notifications", .array(MailNotification.allCases.filter(config.mailer.notifications.contains)
            .map { .string($0.rawValue) }))
        root.append("sms_capture", .bool(config.sms.delivery == .capture))
        // Public facts only: never key material.
        root.append("jwt_keys", .array(config.jwt.keys.map { jwk in
            ["kid": .string(jwk.key.kid ?? ""), "alg": .string(jwk.key.algorithm.rawValue), "sign": .bool(jwk.canSign)]
        }))
        root.append("jwt_signing_algorithm", .string(config.jwt.signingKey.algorithm.rawValue))
        // The relying party in force (derived from site_url when unset).
        let rp = config.webAuthn.relyingParty(siteURL: config.siteURL)
        root.insert(["id": .string(rp.id), "name": .string(rp.name), "origins": .array(rp.origins.map(JSON.string))],
                    at: ["webauthn", "relying_party"])
        root.append("sources", .object(sources))
        return .object(root)
    }

    private static func invalid(_ field: String, _ why: String) -> AuthError {
        AuthError(400, .validationFailed, "\(field): \(why)")
    }

    /// Applies a PATCH body; returns the table keys it set.
    @discardableResult
    static func apply(_ patch: JSONObject, to config: inout Configuration) throws(AuthError) -> [String] {
        var changed: [String] = []
        try apply(patch, prefix: "", to: &config, changed: &changed)
        config.applyDefaults()
        return changed
    }

    private static func apply(_ object: JSONObject, prefix: String, to config: inout Configuration, changed: inout [String]) throws(AuthError) {
        for (key, value) in object {
            let name = prefix + key
            if let (setting, inverted) = names[name] {
                guard setting.runtime else {
                    throw invalid(name, "read-only at run time (set \(setting.variable ?? "it") at start-up)")
                }
                do {
                    if value.isNull && !setting.kind.isNullable {
                        // null returns a setting to its default.
                        setting.reset(in: &config)
                    } else {
                        var parsed = try SettingSyntax.value(json: value, kind: setting.kind, name: name)
                        if inverted, case .bool(let b) = parsed { parsed = .bool(!b) }
                        try setting.set(parsed, in: &config, from: .runtime, name: name)
                    }
                } catch {
                    throw AuthError(400, .validationFailed, error.description)
                }
                changed.append(setting.key)
                continue
            }
            switch name {
            case "rate_limits" where value.stringValue != nil, "rate_limits.preset" where value.stringValue == nil:
                try apply(["preset": value], prefix: "rate_limits.", to: &config, changed: &changed)
            case "sms_capture":
                guard let capture = value.boolValue else { throw invalid(name, "expected true or false") }
                try apply(["sms_delivery": .string(capture ? "capture" : "auto")], prefix: "", to: &config, changed: &changed)
            case "mailer_notifications":
                guard let array = value.arrayValue, array.allSatisfy({ $0.stringValue != nil }) else {
                    throw invalid(name, "expected an array of strings")
                }
                var kinds: Set<MailNotification> = []
                for text in array.compactMap(\.stringValue) {
                    guard let kind = MailNotification(rawValue: text) else {
                        throw invalid(name, "unknown notification '\(text)' (expected one of: \(MailNotification.allCases.map(\.rawValue).joined(separator: ", ")))")
                    }
                    kinds.insert(kind)
                }
                for kind in MailNotification.allCases {
                    let toggle: JSON = .bool(kinds.contains(kind))
                    try apply(["email.notification.\(kind.rawValue).enabled": toggle], prefix: "", to: &config, changed: &changed)
                }
            default:
                guard let nested = value.objectValue else { throw invalid(name, "unknown setting") }
                try apply(nested, prefix: name + ".", to: &config, changed: &changed)
            }
        }
    }
}

extension JSONObject {
    /// Puts `value` at the dotted path, creating objects on the way.
    mutating func insert(_ value: JSON, at path: ArraySlice<String>) {
        guard let key = path.first else { return }
        if path.count == 1 {
            _ = updateValue(value, forKey: key)
            return
        }
        var child = self[key]?.objectValue ?? JSONObject()
        child.insert(value, at: path.dropFirst())
        _ = updateValue(.object(child), forKey: key)
    }
}

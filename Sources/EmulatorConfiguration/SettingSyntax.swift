import AuthJSON
import AuthJWT
import GoFormats
import GoTrue

/// How each source writes a value of each kind of setting (`SettingKind`): the environment and
/// flags in Go's `envconfig` syntax, the config file in TOML decoded weakly as the Supabase CLI
/// decodes it, the control API in JSON. Each returns nil when the source's value means "not
/// given" (an empty variable for a number), and a `SettingError` naming the setting otherwise.
package enum SettingSyntax {
    /// A variable's or a flag's text.
    package static func value(text: String, kind: SettingKind, name: String) throws(SettingError) -> SettingValue? {
        func refused(_ what: String? = nil) -> SettingError {
            SettingError(name, "'\(text)' is not \(what ?? kind.describe)")
        }
        let trimmed = GoStrings.trim(text, " \t")
        switch kind {
        case .bool:
            if text.isEmpty { return nil }
            guard let value = GoStrconv.parseBool(text) else { throw refused("a boolean (use true or false)") }
            return .bool(value)
        case .integer, .seconds:
            if text.isEmpty { return nil }
            guard let value = GoValue.parseInt(text) else { throw refused() }
            return .int(value)
        case .duration, .optionalDuration:
            if text.isEmpty { return nil }
            guard let seconds = GoValue.parseDuration(text) else { throw refused("a duration (Go syntax such as 10s, 1m, 1h30m, 500ms)") }
            return .number(seconds)
        case .number:
            if text.isEmpty { return nil }
            guard let value = Double(trimmed), value.isFinite else { throw refused() }
            return .number(value)
        case .text(let emptyIsUnset):
            return emptyIsUnset && text.isEmpty ? nil : .string(text)
        case .optionalText:
            return text.isEmpty ? nil : .string(text)
        case .choice:
            return text.isEmpty ? nil : .string(trimmed)
        case .list:
            return .strings(text.commaSeparated)
        case .characterSets:
            return .strings(GoValue.requiredCharacters(text))
        case .rate:
            if text.isEmpty { return nil }
            guard let rate = SendRate.parse(trimmed, parseDuration: GoValue.parseDuration) else { throw refused() }
            return .rate(rate)
        case .pairs:
            var result: [String: String] = [:]
            // envconfig: pairs split on ',', key and value on the first ':'.
            for pair in text.split(separator: ",", omittingEmptySubsequences: true) {
                guard let colon = pair.firstIndex(of: ":") else {
                    throw SettingError(name, "'\(pair)' is not a key:value pair (expected key:value,key:value)")
                }
                result[GoStrings.trim(pair[..<colon], " \t")] = GoStrings.trim(pair[pair.index(after: colon)...], " \t")
            }
            return .pairs(result)
        case .time:
            // GoTrue's conf.Time: blank means no limit.
            return trimmed.isEmpty ? .null : .string(trimmed)
        case .jwks:
            return text.isEmpty ? nil : .keys(try JWTKeys.keys(text, setting: name))
        }
    }

    /// A value of the config file, weakly typed as the CLI's decoder reads it.
    static func value(field: SupabaseConfigFile.Field, kind: SettingKind) throws(EmulatorError) -> SettingValue? {
        switch kind {
        case .bool: return .bool(try field.boolean())
        case .integer, .seconds: return .int(try field.unsigned())
        case .duration: return .number(try field.seconds())
        case .optionalDuration:
            // `supabase start` passes a session limit only when it is above zero.
            let seconds = try field.seconds()
            return seconds > 0 ? .number(seconds) : .null
        case .number: return .number(Double(try field.unsigned()))
        case .rate: return .rate(SendRate(events: Double(try field.unsigned())))
        case .text(let emptyIsUnset):
            let text = try field.string()
            return emptyIsUnset && text.isEmpty ? nil : .string(text)
        case .optionalText, .choice, .time:
            let text = try field.string()
            return text.isEmpty ? nil : .string(text)
        case .list, .characterSets: return .strings(try field.strings())
        case .pairs: throw field.failure("expected a table")
        // The file names a file of keys instead (`signing_keys_path`, `SupabaseConfigFile`).
        case .jwks: throw field.failure("expected a path (signing_keys_path)")
        }
    }

    /// A value of `PATCH /emulator/v1/config`.
    package static func value(json: JSON, kind: SettingKind, name: String) throws(SettingError) -> SettingValue {
        let refused = SettingError(name, "expected \(kind.describe)")
        switch kind {
        case .bool:
            guard let flag = json.boolValue else { throw refused }
            return .bool(flag)
        case .integer, .seconds:
            guard let n = json.doubleValue, n == n.rounded(), abs(n) < 1e15 else { throw refused }
            return .int(Int(n))
        case .duration, .number:
            guard let n = json.doubleValue else { throw SettingError(name, "expected a number\(kind.isDuration ? " of seconds" : "")") }
            return .number(n)
        case .optionalDuration:
            if json.isNull { return .null }
            guard let n = json.doubleValue else { throw SettingError(name, "expected a number of seconds or null") }
            return .number(n)
        case .text, .choice, .time:
            if case .time = kind, json.isNull { return .null }
            guard let text = json.stringValue else { throw refused }
            return .string(text)
        case .optionalText:
            if json.isNull { return .null }
            guard let text = json.stringValue else { throw refused }
            return .string(text)
        case .list, .characterSets:
            guard let array = json.arrayValue, array.allSatisfy({ $0.stringValue != nil }) else {
                throw SettingError(name, "expected an array of strings")
            }
            return .strings(array.compactMap(\.stringValue))
        case .rate:
            if let n = json.doubleValue { return .rate(SendRate(events: n)) }
            guard let text = json.stringValue, let rate = SendRate.parse(text, parseDuration: GoValue.parseDuration) else { throw refused }
            return .rate(rate)
        case .pairs:
            guard let object = json.objectValue, object.allSatisfy({ $0.value.stringValue != nil }) else {
                throw SettingError(name, "expected an object of strings")
            }
            var result: [String: String] = [:]
            for (key, value) in object { result[key] = value.stringValue }
            return .pairs(result)
        case .jwks:
            // Key rotation: the same rules as GOTRUE_JWT_KEYS.
            guard let array = json.arrayValue else { throw SettingError(name, "expected an array of private JWKs") }
            return .keys(try JWTKeys.keys(array, setting: name))
        }
    }

    /// A value as the control API shows it.
    package static func json(_ value: SettingValue) -> JSON {
        switch value {
        case .bool(let b): .bool(b)
        case .int(let n): .number(n)
        case .number(let n): .number(n)
        case .string(let s): .string(s)
        case .strings(let list): .array(list.map(JSON.string))
        case .pairs(let map): .object(JSONObject(map.sorted { $0.key < $1.key }.map { ($0.key, JSON.string($0.value)) }))
        case .rate(let rate): rate.seconds == 3600 && rate.kind == .interval ? .number(rate.events) : .string(rate.text)
        // Public facts only: never key material.
        case .keys(let list):
            .array(list.map { ["kid": .string($0.key.kid ?? ""), "alg": .string($0.key.algorithm.rawValue), "sign": .bool($0.canSign)] })
        case .null: .null
        }
    }

    /// A value as the help and the docs show it.
    package static func text(_ value: SettingValue) -> String {
        switch value {
        case .bool(let b): b ? "true" : "false"
        case .int(let n): String(n)
        case .number(let n): n == n.rounded() && abs(n) < 1e15 ? String(Int(n)) : String(n)
        case .string(let s): s.isEmpty ? "\"\"" : s
        case .strings(let list): list.isEmpty ? "[]" : list.joined(separator: ",")
        case .pairs(let map): map.isEmpty ? "{}" : map.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
        case .rate(let rate): rate.text
        case .keys(let list): list.isEmpty ? "[]" : list.map { $0.key.kid ?? "(no kid)" }.joined(separator: ",")
        case .null: "unset"
        }
    }
}

extension SettingKind {
    /// Takes null as a value of its own (unset) rather than "back to the default".
    package var isNullable: Bool {
        switch self {
        case .optionalText, .optionalDuration, .time: true
        default: false
        }
    }

    var isDuration: Bool {
        switch self {
        case .duration, .optionalDuration: true
        default: false
        }
    }
}

extension SendRate {
    /// As `GOTRUE_RATE_LIMIT_*_SENT` writes it: `30` per hour, else `N/<seconds>s`.
    var text: String {
        let events = events == events.rounded() ? String(Int(events)) : String(events)
        if seconds == 3600 && kind == .interval { return events }
        let window = seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
        return "\(events)/\(window)s"
    }
}

import AuthJSON
import AuthPlatform
import AuthScenarios
import GoTrue

/// The validating reader behind `Scenario.init(json:source:)`: collects every issue rather than
/// stopping at the first, so one `scenario validate` run shows them all.
struct ScenarioParser {
    let source: String
    var issues: [ScenarioIssue] = []
    private var rule: Int?

    init(source: String) { self.source = source }

    static let topKeys: Set<String> = ["name", "description", "seed", "rules", "test"]
    static let ruleKeys: Set<String> = ["match", "when", "then"]
    static let matchKeys: Set<String> = ["op", "method", "path", "body", "query", "headers", "test"]
    static let whenKeys: Set<String> = ["times", "nth", "every", "after", "window_ms", "probability", "state", "next_state"]
    static let transportKeys: Set<String> = ["hang", "reset", "close_after_bytes", "empty_response", "drip", "delay_ms"]
    static let thenKeys: Set<String> = transportKeys.union([
        "error", "message", "retry_after", "consequence", "status", "headers", "body", "malformed_json", "passthrough_then",
        "hook",
    ])
    static let methods: Set<String> = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    /// The errors whose real-server side effect `consequence: true` can apply.
    static let consequentialErrors: Set<String> = ["refresh_token_already_used", "session_expired", "session_not_found"]

    mutating func issue(_ field: String, _ message: String) {
        issues.append(ScenarioIssue(file: source, rule: rule, field: field, message: message))
    }

    mutating func unknownKeys(_ object: JSONObject, allowed: Set<String>, at prefix: String) {
        for key in object.keys where !allowed.contains(key) {
            issue(prefix + key, "unknown field (expected one of: \(allowed.sorted().joined(separator: ", ")))")
        }
    }

    mutating func scenario(_ document: JSON) -> Scenario? {
        guard let object = document.objectValue else {
            issue("(document)", "expected a JSON object with name, description and rules")
            return nil
        }
        unknownKeys(object, allowed: Self.topKeys, at: "")
        var name = ""
        if let value = object["name"] {
            if let text = value.stringValue, ScenarioParser.isValidName(text) {
                name = text
            } else {
                issue("name", "must be a non-empty string of letters, digits, '.', '_' and '-' (it appears in URLs)")
            }
        } else {
            issue("name", "missing")
        }
        var description = ""
        if let value = object["description"] {
            if let text = value.stringValue { description = text } else { issue("description", "must be a string") }
        }
        var seed: UInt64?
        if let value = object["seed"] {
            if let number = value.doubleValue, number >= 0, number == number.rounded(), number < 9.007_199_254_740_992e15 {
                seed = UInt64(number)
            } else {
                issue("seed", "must be a non-negative whole number")
            }
        }
        var defaultTest: String?
        if let value = object["test"] {
            if let text = value.stringValue, !text.isEmpty { defaultTest = text } else { issue("test", "must be a non-empty string") }
        }
        var rules: [Scenario.Rule] = []
        if let value = object["rules"] {
            if let array = value.arrayValue, !array.isEmpty {
                for (index, element) in array.enumerated() {
                    rule = index
                    if var parsed = self.rule(element, prefix: "rules[\(index)].") {
                        if parsed.match.test == nil { parsed.match.test = defaultTest }
                        rules.append(parsed)
                    }
                }
                rule = nil
            } else {
                issue("rules", "must be a non-empty array of {match, when, then} objects")
            }
        } else {
            issue("rules", "missing")
        }
        return Scenario(name: name, description: description, seed: seed, rules: rules, source: source)
    }

    static func isValidName(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 100 && text.unicodeScalars.allSatisfy { c in
            (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9") || c == "." || c == "_" || c == "-"
        }
    }

    mutating func rule(_ value: JSON, prefix: String) -> Scenario.Rule? {
        guard let object = value.objectValue else {
            issue(String(prefix.dropLast()), "expected an object with match, when and then")
            return nil
        }
        unknownKeys(object, allowed: Self.ruleKeys, at: prefix)
        var match = Match()
        if let value = object["match"] {
            match = self.match(value, prefix: prefix + "match.")
        } else {
            issue(prefix + "match", "missing (use {} to match every request)")
        }
        var when = When()
        if let value = object["when"] { when = self.when(value, prefix: prefix + "when.") }
        var then = Effect()
        if let value = object["then"] {
            then = self.effect(value, prefix: prefix + "then.", operations: match.operations)
        } else {
            issue(prefix + "then", "missing")
        }
        return Scenario.Rule(match: match, when: when, then: then, json: object)
    }

    mutating func match(_ value: JSON, prefix: String) -> Match {
        var match = Match()
        guard let object = value.objectValue else {
            issue(String(prefix.dropLast()), "expected an object")
            return match
        }
        unknownKeys(object, allowed: Self.matchKeys, at: prefix)
        if let op = object["op"] {
            let names: [String]
            if let text = op.stringValue {
                names = [text]
            } else if let array = op.arrayValue, !array.isEmpty, array.allSatisfy({ $0.stringValue != nil }) {
                names = array.compactMap(\.stringValue)
            } else {
                names = []
                issue(prefix + "op", "expected an operation name or an array of them")
            }
            for name in names {
                if Operations.matchesAny(name) {
                    match.operations.append(name)
                } else {
                    // A glob that matches nothing is a pattern gone wrong, not a slip of one name.
                    let hint = name.contains("*") || name.contains("?") ? nil : Spelling.suggestion(for: name, among: Operations.names)
                    issue(prefix + "op", "unknown operation \"\(name)\"" + (hint.map { " (did you mean \"\($0)\"?)" }
                        ?? " (see scenarios/README.md for the names)"))
                }
            }
        }
        if let method = object["method"] {
            if let text = method.stringValue, Self.methods.contains(text) {
                match.method = text
            } else {
                issue(prefix + "method", "expected one of \(Self.methods.sorted().joined(separator: ", "))")
            }
        }
        if let path = object["path"] {
            if let text = path.stringValue, text.hasPrefix("/") {
                match.path = text
            } else {
                issue(prefix + "path", "expected a path glob starting with '/'")
            }
        }
        if let body = object["body"] {
            if let fields = body.objectValue {
                match.body = fields.map { ($0.key, $0.value) }
            } else {
                issue(prefix + "body", "expected an object of field: value")
            }
        }
        if let query = object["query"] {
            match.query.append(contentsOf: stringFields(query, at: prefix + "query"))
        }
        if let headers = object["headers"] {
            if let fields = headers.objectValue {
                for (name, value) in fields {
                    if let text = value.stringValue {
                        match.headers.append((name, .equals(text)))
                    } else if let flag = value.boolValue {
                        match.headers.append((name, flag ? .present : .absent))
                    } else {
                        issue(prefix + "headers." + name, "expected a string (equal to) or true/false (present/absent)")
                    }
                }
            } else {
                issue(prefix + "headers", "expected an object of name: value")
            }
        }
        if let test = object["test"] {
            if let text = test.stringValue, !text.isEmpty { match.test = text } else { issue(prefix + "test", "expected a non-empty string") }
        }
        return match
    }

    /// An object of name: string (a match's `query`, an effect's `headers`), in document order;
    /// each value that is not a string is an issue of its own and left out.
    mutating func stringFields(_ value: JSON, at path: String) -> [(name: String, value: String)] {
        guard let fields = value.objectValue else {
            issue(path, "expected an object of name: value")
            return []
        }
        var pairs: [(name: String, value: String)] = []
        for (name, field) in fields {
            if let text = field.stringValue { pairs.append((name, text)) } else { issue(path + "." + name, "expected a string") }
        }
        return pairs
    }

    mutating func count(_ object: JSONObject, _ key: String, prefix: String, minimum: Int) -> Int? {
        guard let value = object[key] else { return nil }
        guard let number = value.doubleValue, number == number.rounded(), number >= Double(minimum), number <= 1e9 else {
            issue(prefix + key, "expected a whole number of at least \(minimum)")
            return nil
        }
        return Int(number)
    }

    mutating func when(_ value: JSON, prefix: String) -> When {
        var when = When()
        guard let object = value.objectValue else {
            issue(String(prefix.dropLast()), "expected an object")
            return when
        }
        unknownKeys(object, allowed: Self.whenKeys, at: prefix)
        when.times = count(object, "times", prefix: prefix, minimum: 1)
        when.nth = count(object, "nth", prefix: prefix, minimum: 1)
        when.every = count(object, "every", prefix: prefix, minimum: 1)
        when.after = count(object, "after", prefix: prefix, minimum: 0)
        when.windowMilliseconds = count(object, "window_ms", prefix: prefix, minimum: 1)
        if when.windowMilliseconds != nil, when.nth != nil {
            issue(prefix + "window_ms", "cannot be combined with \"nth\" (which fires once, so there is no window to keep open)")
        }
        if let value = object["probability"] {
            if let p = value.doubleValue, p >= 0, p <= 1 { when.probability = p } else { issue(prefix + "probability", "expected a number from 0 to 1") }
        }
        for key in ["state", "next_state"] {
            guard let value = object[key] else { continue }
            guard let text = value.stringValue, !text.isEmpty else {
                issue(prefix + key, "expected a non-empty state name")
                continue
            }
            if key == "state" { when.state = text } else { when.nextState = text }
        }
        return when
    }

    mutating func flag(_ object: JSONObject, _ key: String, prefix: String) -> Bool {
        guard let value = object[key] else { return false }
        guard let flag = value.boolValue else {
            issue(prefix + key, "expected true or false")
            return false
        }
        return flag
    }

    mutating func effect(_ value: JSON, prefix: String, operations: [String]) -> Effect {
        var effect = Effect()
        guard var object = value.objectValue else {
            issue(String(prefix.dropLast()), "expected an object of effects")
            return effect
        }
        unknownKeys(object, allowed: Self.thenKeys, at: prefix)
        if object.isEmpty { issue(String(prefix.dropLast()), "needs at least one effect") }

        // `passthrough_then`: true (with transport keys beside it), a fault name, or an object of
        // transport keys. Its keys join the others.
        if let value = object["passthrough_then"] {
            effect.passthrough = true
            if let flag = value.boolValue {
                effect.passthrough = flag
            } else if let name = value.stringValue {
                if ["hang", "reset", "empty_response"].contains(name) {
                    object[name] = true
                } else {
                    issue(prefix + "passthrough_then", "expected true, \"hang\", \"reset\", \"empty_response\" or an object of transport faults")
                }
            } else if let inner = value.objectValue {
                unknownKeys(inner, allowed: Self.transportKeys, at: prefix + "passthrough_then.")
                for (key, innerValue) in inner where Self.transportKeys.contains(key) {
                    if object[key] != nil { issue(prefix + "passthrough_then." + key, "given twice") }
                    object[key] = innerValue
                }
            } else {
                issue(prefix + "passthrough_then", "expected true, a fault name or an object of transport faults")
            }
        }

        if let value = object["error"] {
            if let code = value.stringValue, ErrorCode.all.contains(ErrorCode(code)) {
                effect.error = ErrorCode(code)
            } else {
                issue(prefix + "error", "unknown GoTrue error code \(value.stringValue.map { "\"\($0)\"" } ?? "(not a string)")")
            }
        }
        if let value = object["message"] {
            if let text = value.stringValue { effect.message = text } else { issue(prefix + "message", "expected a string") }
            if object["error"] == nil { issue(prefix + "message", "only applies to \"error\"") }
        }
        effect.retryAfter = count(object, "retry_after", prefix: prefix, minimum: 0)
        effect.consequence = flag(object, "consequence", prefix: prefix)
        if effect.consequence {
            if let code = effect.error?.rawValue, !Self.consequentialErrors.contains(code) {
                issue(prefix + "consequence", "\"\(code)\" has no consequence to apply (only \(Self.consequentialErrors.sorted().joined(separator: ", ")))")
            } else if effect.error == nil {
                issue(prefix + "consequence", "only applies to \"error\"")
            }
        }
        if let value = object["status"] {
            if let number = value.doubleValue, number == number.rounded(), number >= 100, number <= 599 {
                effect.status = Int(number)
            } else {
                issue(prefix + "status", "expected an HTTP status from 100 to 599")
            }
        }
        if let value = object["headers"] {
            effect.headers.append(contentsOf: stringFields(value, at: prefix + "headers"))
        }
        if let value = object["body"] {
            if let text = value.stringValue {
                effect.body = .text(text)
            } else if value.objectValue != nil || value.arrayValue != nil {
                effect.body = .json(value)
            } else {
                issue(prefix + "body", "expected a string or a JSON object/array")
            }
            if effect.error != nil { issue(prefix + "body", "cannot be combined with \"error\" (the error has its own body)") }
        }
        if let value = object["delay_ms"] {
            if let number = value.doubleValue, number == number.rounded(), number >= 0, number <= 3_600_000 {
                effect.delay = .fixed(milliseconds: Int(number))
            } else if let range = value.objectValue, let low = range["min"]?.doubleValue, let high = range["max"]?.doubleValue,
                      low >= 0, low <= high, high <= 3_600_000, range.count == 2 {
                effect.delay = .range(min: Int(low), max: Int(high))
            } else {
                issue(prefix + "delay_ms", "expected milliseconds or {\"min\": ms, \"max\": ms} with min <= max")
            }
        }
        effect.hang = flag(object, "hang", prefix: prefix)
        effect.reset = flag(object, "reset", prefix: prefix)
        effect.emptyResponse = flag(object, "empty_response", prefix: prefix)
        effect.malformedJSON = flag(object, "malformed_json", prefix: prefix)
        if let value = object["hook"] {
            if let fault = value.stringValue, HookFaults.names.contains(fault) {
                effect.hook = fault
            } else {
                issue(prefix + "hook", "expected \"timeout\", \"unreachable\" or \"error\"")
            }
        }
        effect.closeAfterBytes = count(object, "close_after_bytes", prefix: prefix, minimum: 0)
        if let value = object["drip"] {
            if let spec = value.objectValue, let chunks = spec["chunks"]?.doubleValue, let duration = spec["duration_ms"]?.doubleValue,
               chunks >= 2, chunks <= 10_000, chunks == chunks.rounded(), duration >= 0, duration <= 3_600_000, spec.count == 2 {
                effect.drip = (Int(chunks), Int(duration))
            } else {
                issue(prefix + "drip", "expected {\"chunks\": K (2 or more), \"duration_ms\": T}")
            }
        }

        let breaking = [("hang", effect.hang), ("reset", effect.reset), ("empty_response", effect.emptyResponse),
                        ("close_after_bytes", effect.closeAfterBytes != nil)].filter(\.1).map(\.0)
        if breaking.count > 1 { issue(String(prefix.dropLast()), "\(breaking.joined(separator: " and ")) cannot be combined") }
        if effect.drip != nil, effect.hang || effect.reset || effect.emptyResponse {
            issue(prefix + "drip", "cannot be combined with \(breaking.joined(separator: ", "))")
        }
        if effect.malformedJSON, effect.body != nil { issue(prefix + "malformed_json", "cannot be combined with \"body\"") }
        if effect.passthrough {
            if effect.suppliesResponse {
                issue(prefix + "passthrough_then", "sends the real response; it cannot be combined with error, status, body or malformed_json")
            }
            if !effect.breaksTransport {
                issue(prefix + "passthrough_then", "needs a transport fault to follow the real handler: hang, reset, empty_response or close_after_bytes")
            }
        }
        return effect
    }
}

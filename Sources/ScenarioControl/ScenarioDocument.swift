import AuthJSON
import AuthScenarios

/// One problem found in a scenario document: where (file, rule index, field) and what.
public struct ScenarioIssue: Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var rule: Int?
    public var field: String
    public var message: String

    public init(file: String, rule: Int?, field: String, message: String) {
        self.file = file
        self.rule = rule
        self.field = field
        self.message = message
    }

    public var description: String {
        var location = file
        if let rule { location += ": rule \(rule)" }
        return "\(location): \(field): \(message)"
    }
}

/// A scenario that failed validation; every issue found is listed.
public struct ScenarioError: Error, Sendable, CustomStringConvertible {
    public var issues: [ScenarioIssue]
    public init(issues: [ScenarioIssue]) { self.issues = issues }
    public var description: String { issues.map(\.description).joined(separator: "\n") }
}

extension Scenario {
    /// Parses and validates a scenario document. `source` names it in messages (a file path).
    public init(json bytes: [UInt8], source: String) throws(ScenarioError) {
        let document: JSON
        do {
            document = try JSON(parsing: bytes)
        } catch {
            throw ScenarioError(issues: [ScenarioIssue(file: source, rule: nil, field: "(document)", message: "not valid JSON: \(error)")])
        }
        var parser = ScenarioParser(source: source)
        guard let scenario = parser.scenario(document), parser.issues.isEmpty else {
            throw ScenarioError(issues: parser.issues)
        }
        self = scenario
    }

    public init(json text: String, source: String) throws(ScenarioError) {
        try self.init(json: Array(text.utf8), source: source)
    }
}

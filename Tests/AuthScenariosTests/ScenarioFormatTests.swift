import AuthJSON
import Foundation
import EmulatorTools
import GoTrue
import ScenarioControl
import Testing
@testable import AuthScenarios

@Suite("Scenario documents")
struct ScenarioFormatTests {
    /// The canonical example of the issue that introduced scenarios.
    @Test func canonicalExampleParses() throws {
        let scenario = try Scenario(json: """
            {"name": "rate-limited-sign-in",
             "description": "The first sign-in is rate limited; the retry succeeds.",
             "seed": 42,
             "rules": [{"match": {"op": "token.password"},
                        "when":  {"times": 1},
                        "then":  {"error": "over_request_rate_limit", "retry_after": 30}}]}
            """, source: "example.json")
        #expect(scenario.name == "rate-limited-sign-in")
        #expect(scenario.seed == 42)
        #expect(scenario.rules.count == 1)
        #expect(scenario.rules[0].match.operations == ["token.password"])
        #expect(scenario.rules[0].when.times == 1)
        #expect(scenario.rules[0].then.error == .overRequestRateLimit)
        #expect(scenario.rules[0].then.retryAfter == 30)
    }

    @Test func everyFieldParses() throws {
        let scenario = try Scenario(json: """
            {"name": "all", "test": "suite-a", "rules": [
              {"match": {"op": ["token.*", "signup"], "method": "POST", "path": "/token", "body": {"email": "a@b.c", "data.plan": "pro"},
                         "query": {"grant_type": "password"}, "headers": {"X-Client": "ios", "X-Debug": true, "X-Skip": false}},
               "when": {"times": 2, "nth": 1, "every": 1, "after": 0, "probability": 0.5, "state": "started", "next_state": "two"},
               "then": {"error": "session_expired", "message": "gone", "retry_after": 5, "consequence": true, "headers": {"X-A": "b"},
                        "delay_ms": {"min": 1, "max": 2}}},
              {"match": {"test": "other"}, "when": {"window_ms": 5000, "times": 3},
               "then": {"status": 502, "body": "<html></html>", "drip": {"chunks": 3, "duration_ms": 10}, "malformed_json": false}},
              {"match": {}, "then": {"passthrough_then": "reset"}},
              {"match": {}, "then": {"passthrough_then": {"close_after_bytes": 10, "delay_ms": 5}}},
              {"match": {}, "then": {"malformed_json": true, "hang": false, "empty_response": false}}
            ]}
            """, source: "all.json")
        let first = scenario.rules[0]
        #expect(first.match.operations == ["token.*", "signup"])
        #expect(first.match.test == "suite-a")
        #expect(first.match.headers.map(\.condition) == [.equals("ios"), .present, .absent])
        #expect(first.when.times == 2 && first.when.nth == 1 && first.when.every == 1 && first.when.after == 0)
        #expect(first.when.probability == 0.5 && first.when.state == "started" && first.when.nextState == "two")
        #expect(first.when.windowMilliseconds == nil)
        #expect(first.then.delay == .range(min: 1, max: 2))
        #expect(first.then.consequence)
        #expect(scenario.rules[1].match.test == "other")
        var second = When()
        second.times = 3
        second.windowMilliseconds = 5000
        #expect(scenario.rules[1].when == second)
        #expect(scenario.rules[1].then.body == .text("<html></html>"))
        #expect(scenario.rules[1].then.drip?.chunks == 3)
        #expect(scenario.rules[2].then.passthrough && scenario.rules[2].then.reset)
        #expect(scenario.rules[3].then.passthrough && scenario.rules[3].then.closeAfterBytes == 10 && scenario.rules[3].then.delay == .fixed(milliseconds: 5))
        #expect(scenario.rules[4].then.malformedJSON)
    }

    /// Each invalid document yields an issue naming the file, the rule index and the field.
    @Test(arguments: [
        (#"{"rules": [{"match": {}, "then": {"reset": true}}]}"#, nil, "name"),
        (#"{"name": "a b", "rules": [{"match": {}, "then": {"reset": true}}]}"#, nil, "name"),
        (#"{"name": "x", "rules": []}"#, nil, "rules"),
        (#"{"name": "x", "rulez": [], "rules": [{"match": {}, "then": {"reset": true}}]}"#, nil, "rulez"),
        (#"{"name": "x", "rules": [{"match": {}, "then": {"reset": true}}, {"then": {"reset": true}}]}"#, 1, "rules[1].match"),
        (#"{"name": "x", "rules": [{"match": {"op": "token.pasword"}, "then": {"reset": true}}]}"#, 0, "rules[0].match.op"),
        (#"{"name": "x", "rules": [{"match": {"method": "post"}, "then": {"reset": true}}]}"#, 0, "rules[0].match.method"),
        (#"{"name": "x", "rules": [{"match": {"path": "token"}, "then": {"reset": true}}]}"#, 0, "rules[0].match.path"),
        (#"{"name": "x", "rules": [{"match": {}, "when": {"times": 0}, "then": {"reset": true}}]}"#, 0, "rules[0].when.times"),
        (#"{"name": "x", "rules": [{"match": {}, "when": {"probability": 1.5}, "then": {"reset": true}}]}"#, 0, "rules[0].when.probability"),
        (#"{"name": "x", "rules": [{"match": {}, "when": {"window_ms": 0}, "then": {"reset": true}}]}"#, 0, "rules[0].when.window_ms"),
        (#"{"name": "x", "rules": [{"match": {}, "when": {"window_ms": 1.5}, "then": {"reset": true}}]}"#, 0, "rules[0].when.window_ms"),
        (#"{"name": "x", "rules": [{"match": {}, "then": {"reset": true}}, {"match": {}, "when": {"nth": 2, "window_ms": 1000}, "then": {"reset": true}}]}"#, 1, "rules[1].when.window_ms"),
        (#"{"name": "x", "rules": [{"match": {}, "when": {"window": 1000}, "then": {"reset": true}}]}"#, 0, "rules[0].when.window"),
        (#"{"name": "x", "rules": [{"match": {}, "then": {}}]}"#, 0, "rules[0].then"),
        (#"{"name": "x", "rules": [{"match": {}, "then": {"error": "no_such_code"}}]}"#, 0, "rules[0].then.error"),
        (#"{"name": "x", "rules": [{"match": {}, "then": {"error": "invalid_credentials", "consequence": true}}]}"#, 0, "rules[0].then.consequence"),
        (#"{"name": "x", "rules": [{"match": {}, "then": {"status": 99}}]}"#, 0, "rules[0].then.status"),
        (#"{"name": "x", "rules": [{"match": {}, "then": {"error": "conflict", "body": "x"}}]}"#, 0, "rules[0].then.body"),
        (#"{"name": "x", "rules": [{"match": {}, "then": {"delay_ms": {"min": 5, "max": 1}}}]}"#, 0, "rules[0].then.delay_ms"),
        (#"{"name": "x", "rules": [{"match": {}, "then": {"hang": true, "reset": true}}]}"#, 0, "rules[0].then"),
        (#"{"name": "x", "rules": [{"match": {}, "then": {"drip": {"chunks": 1, "duration_ms": 5}}}]}"#, 0, "rules[0].then.drip"),
        (#"{"name": "x", "rules": [{"match": {}, "then": {"passthrough_then": true}}]}"#, 0, "rules[0].then.passthrough_then"),
        (#"{"name": "x", "rules": [{"match": {}, "then": {"passthrough_then": "reset", "error": "conflict"}}]}"#, 0, "rules[0].then.passthrough_then"),
        (#"{"name": "x", "rules": [{"match": {}, "then": {"hang": "yes"}}]}"#, 0, "rules[0].then.hang"),
        (#"{"name": "x", "rules": [{"match": {}, "then": {"reset": true, "retry": 1}}]}"#, 0, "rules[0].then.retry"),
        (#"{"name": "x", "rules": [{"match": {}, "then": {"reset": true}}"#, nil, "(document)"),
        (#"{"name": "x", "rules": [{"match": {"query": ["a"]}, "then": {"reset": true}}]}"#, 0, "rules[0].match.query"),
        (#"{"name": "x", "rules": [{"match": {"query": {"a": 1}}, "then": {"reset": true}}]}"#, 0, "rules[0].match.query.a"),
        (#"{"name": "x", "rules": [{"match": {}, "then": {"error": "conflict", "headers": "x"}}]}"#, 0, "rules[0].then.headers"),
        (#"{"name": "x", "rules": [{"match": {}, "then": {"error": "conflict", "headers": {"x-a": true}}}]}"#, 0, "rules[0].then.headers.x-a"),
    ] as [(String, Int?, String)])
    func invalidDocumentsNameTheField(document: String, rule: Int?, field: String) {
        do {
            _ = try Scenario(json: document, source: "bad.json")
            Issue.record("accepted an invalid document: \(document)")
        } catch {
            let issue = error.issues.first { $0.field == field }
            #expect(issue != nil, "expected an issue on \(field), got \(error.issues)")
            #expect(issue?.rule == rule)
            #expect(issue?.file == "bad.json")
            #expect(error.description.hasPrefix("bad.json: "))
        }
    }

    /// A match's `query` and an effect's `headers` are both objects of name: string.
    @Test func nameStringObjectsExplainTheirShape() {
        let document = #"{"name": "x", "rules": [{"match": {"query": {"a": "1", "b": 2}}, "then": {"error": "conflict", "headers": [1]}}]}"#
        do {
            _ = try Scenario(json: document, source: "f.json")
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains("rules[0].match.query.b: expected a string"))
            #expect(error.description.contains("rules[0].then.headers: expected an object of name: value"))
            #expect(error.issues.count == 2)
        }
    }

    @Test func allIssuesAreReportedAtOnce() {
        do {
            _ = try Scenario(json: #"{"name": "", "rules": [{"match": {"op": "nope"}, "then": {"error": "nope"}}, {"match": 1, "then": {"reset": true}}]}"#, source: "f.json")
            Issue.record("accepted")
        } catch {
            #expect(error.issues.count == 4)
            #expect(error.description.contains("f.json: rule 1: rules[1].match: expected an object"))
        }
    }

    /// The catalogue: every file in scenarios/ loads, validates, is named after its file and
    /// describes itself; the README table lists every one.
    @Test func catalogueFilesAreValid() throws {
        let directory = repositoryRoot + "/scenarios"
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }.sorted()
        #expect(files.count >= 14)
        let readme = try String(contentsOfFile: directory + "/README.md", encoding: .utf8)
        var names: Set<String> = []
        for file in files {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file)))
            let scenario = try Scenario(json: bytes, source: file)
            #expect(scenario.name + ".json" == file)
            #expect(scenario.description.count >= 30, "\(file) needs a description")
            #expect(names.insert(scenario.name).inserted)
            #expect(readme.contains("`\(file)`"), "scenarios/README.md does not list \(file)")
        }
    }

    /// scenarios/README.md names every operation a rule may match (SCIM's as `scim.*`).
    @Test func theReadmeListsEveryOperation() throws {
        let readme = try String(contentsOfFile: repositoryRoot + "/scenarios/README.md", encoding: .utf8)
        for name in Operations.names where !name.hasPrefix("scim.") {
            #expect(readme.contains("`\(name)`"), "scenarios/README.md does not list \(name)")
        }
    }

    @Test func operationGlobs() {
        #expect(Operations.matchesAny("token.password"))
        #expect(Operations.matchesAny("token.*"))
        #expect(Operations.matchesAny("admin.users.*"))
        #expect(!Operations.matchesAny("token.pasword"))
        #expect(Glob.matches("admin.users.*", "admin.users.factors.list", separator: nil))
        #expect(Glob.matches("/admin/users/*", "/admin/users/abc", separator: "/"))
        #expect(!Glob.matches("/admin/users/*", "/admin/users/abc/factors", separator: "/"))
        #expect(Glob.matches("/admin/**", "/admin/users/abc/factors", separator: "/"))
        #expect(Glob.matches("/t?ken", "/token", separator: "/"))
        #expect(!Glob.matches("/token", "/tokens", separator: "/"))
    }
}

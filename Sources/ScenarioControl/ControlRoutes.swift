import AuthHTTP
import AuthJSON
import AuthScenarios
import GoTrue

/// The emulator's control routes for scenarios and the journal, under `/emulator/v1` (where
/// `GoTrueAPI` requires the service_role key):
///
/// - `GET /emulator/v1/scenarios`, `GET /emulator/v1/scenarios/{name}`: rules, counters, state, seed
/// - `POST /emulator/v1/scenarios`: activate a scenario document (201; 400 naming the field)
/// - `DELETE /emulator/v1/scenarios`, `DELETE /emulator/v1/scenarios/{name}`: deactivate
/// - `POST /emulator/v1/scenarios/{name}/reset`: counters, state and random draws from the start
/// - `GET /emulator/v1/journal?op=&status=&test=&since=&limit=`, `GET /emulator/v1/journal/count`,
///   `DELETE /emulator/v1/journal`
public enum ControlRoutes {
    public static func routes(engine: ScenarioEngine, journal: Journal) -> [Route] {
        let prefix = GoTrueAPI.emulatorPrefix
        return [
            Route("GET", prefix + "/scenarios", operation: "emulator.scenarios.list") { _ in
                .json(["scenarios": .array(engine.describe())])
            },
            Route("POST", prefix + "/scenarios", operation: "emulator.scenarios.create") { context in
                let scenario: Scenario
                do {
                    scenario = try Scenario(json: context.request.body, source: "request")
                } catch let error as ScenarioError {
                    throw AuthError(400, .validationFailed, error.issues.map(\.description).joined(separator: "; "))
                }
                engine.add(scenario)
                return .json(status: 201, engine.describe(scenario.name).first ?? .null)
            },
            Route("DELETE", prefix + "/scenarios", operation: "emulator.scenarios.clear") { _ in
                engine.removeAll()
                return HTTPResponse(status: 204)
            },
            Route("GET", prefix + "/scenarios/{name}", operation: "emulator.scenarios.get") { context in
                let name = context.pathParameters["name"] ?? ""
                guard let found = engine.describe(name).first else { throw notFound(name) }
                return .json(found)
            },
            Route("DELETE", prefix + "/scenarios/{name}", operation: "emulator.scenarios.delete") { context in
                let name = context.pathParameters["name"] ?? ""
                guard engine.remove(name) else { throw notFound(name) }
                return HTTPResponse(status: 204)
            },
            Route("POST", prefix + "/scenarios/{name}/reset", operation: "emulator.scenarios.reset") { context in
                let name = context.pathParameters["name"] ?? ""
                guard engine.reset(name) else { throw notFound(name) }
                return .json(engine.describe(name).first ?? .null)
            },
            Route("GET", prefix + "/journal", operation: "emulator.journal.list") { context in
                var entries = journal.entries(try filter(context))
                if let text = context.request.queryValue("limit") {
                    guard let limit = Int(text), limit >= 0 else { throw AuthError(400, .validationFailed, "limit must be a whole number") }
                    entries = Array(entries.suffix(limit))
                }
                return .json(["entries": .array(journal.json(entries)), "capacity": .number(journal.capacity)])
            },
            Route("GET", prefix + "/journal/count", operation: "emulator.journal.count") { context in
                .json(["count": .number(journal.count(try filter(context)))])
            },
            Route("DELETE", prefix + "/journal", operation: "emulator.journal.clear") { _ in
                journal.clear()
                return HTTPResponse(status: 204)
            },
        ]
    }

    static func notFound(_ name: String) -> AuthError {
        AuthError(404, .unknown, "No active scenario named \"\(name)\"")
    }

    static func filter(_ context: RequestContext) throws(AuthError) -> JournalFilter {
        var filter = JournalFilter()
        let request = context.request
        if let op = request.queryValue("op"), !op.isEmpty { filter.operation = op }
        if let status = request.queryValue("status"), !status.isEmpty {
            guard JournalFilter.isValidStatus(status) else {
                throw AuthError(400, .validationFailed, "status must be a code such as 429, a class such as 5xx, or none")
            }
            filter.status = status
        }
        if let test = request.queryValue("test"), !test.isEmpty { filter.test = test }
        if let since = request.queryValue("since"), !since.isEmpty {
            if let id = Int(since) {
                filter.afterID = id
            } else if let time = Timestamp(rfc3339: since) {
                filter.since = time
            } else {
                throw AuthError(400, .validationFailed, "since must be an entry id or an RFC 3339 time")
            }
        }
        return filter
    }
}

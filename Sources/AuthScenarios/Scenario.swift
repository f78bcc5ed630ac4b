import AuthJSON
import AuthPlatform
import GoTrue

/// A scripted failure scenario: a named, ordered list of rules, each `match` (which requests),
/// `when` (which of them, in what state) and `then` (what the client gets instead). Scenarios are
/// data (JSON files in `scenarios/`, `serve --scenario FILE`, `POST /emulator/v1/scenarios`);
/// the JSON format is documented in `scenarios/README.md`.
public struct Scenario: Sendable {
    public var name: String
    public var description: String
    /// Seeds `probability` draws and `delay_ms` ranges; reported when chosen at random, so a
    /// run can be replayed.
    public var seed: UInt64?
    public var rules: [Rule]
    /// Where it came from (a file path, or `request`), for messages.
    public var source: String

    public init(name: String, description: String, seed: UInt64?, rules: [Rule], source: String) {
        self.name = name
        self.description = description
        self.seed = seed
        self.rules = rules
        self.source = source
    }

    public struct Rule: Sendable {
        public var match: Match
        public var when: When
        public var then: Effect
        /// The rule as written, shown back by `GET /emulator/v1/scenarios`.
        public var json: JSONObject

        public init(match: Match, when: When, then: Effect, json: JSONObject) {
            self.match = match
            self.when = when
            self.then = then
            self.json = json
        }
    }
}

/// Which requests a rule looks at. Every given condition must hold; an empty match is every
/// GoTrue request (never the emulator's own `/emulator/v1` routes).
public struct Match: Sendable {
    public enum HeaderCondition: Sendable, Equatable {
        case present
        case absent
        case equals(String)
    }

    /// Operation names or globs (`token.password`, `admin.users.*`); any may match.
    public var operations: [String] = []
    public var method: String?
    /// A glob over the path GoTrue sees (without `/auth/v1`): `*` within a segment, `**` across.
    public var path: String?
    /// Top-level (or dotted, `data.plan`) JSON body fields and the values they must equal.
    public var body: [(field: String, value: JSON)] = []
    public var query: [(name: String, value: String)] = []
    public var headers: [(name: String, condition: HeaderCondition)] = []
    /// The test-isolation id: only requests whose `X-Emulator-Test` header carries it.
    public var test: String?

    public static let testHeader = "X-Emulator-Test"

    public init() {}
}

/// Which matching requests fire the rule. All given conditions must hold.
public struct When: Sendable, Equatable {
    /// Fire at most this many times.
    public var times: Int?
    /// Fire on exactly the Nth matching request.
    public var nth: Int?
    /// Fire on every Kth matching request.
    public var every: Int?
    /// Skip the first K matching requests.
    public var after: Int?
    /// Fire only within this many milliseconds of the rule's first firing, measured on the
    /// project's clock: every matching request in the window fires, none after it. A client that
    /// retries on its own (supabase-swift once after 1 s, supabase-js's refresh for up to 30 s)
    /// then meets the fault on every attempt, where `times: 1` would hand its retry a success.
    public var windowMilliseconds: Int?
    /// Fire with this probability, drawn from the scenario's seeded generator.
    public var probability: Double?
    /// Only while the scenario is in this state (WireMock-style; the initial state is `started`).
    public var state: String?
    /// The scenario's state after the rule fired.
    public var nextState: String?

    public static let initialState = "started"

    public init() {}
}

/// What the client gets when a rule fires.
public struct Effect: Sendable {
    public enum Body: Sendable, Equatable {
        case text(String)
        case json(JSON)
    }

    public enum Delay: Sendable, Equatable {
        case fixed(milliseconds: Int)
        /// Uniform in `min...max`, drawn from the scenario's seeded generator.
        case range(min: Int, max: Int)
    }

    /// A GoTrue error by code, rendered by GoTrue's own renderer.
    public var error: ErrorCode?
    public var message: String?
    public var retryAfter: Int?
    /// Apply the real error's consequence too (session family revoked, session ended).
    public var consequence = false
    public var status: Int?
    public var headers: [(name: String, value: String)] = []
    public var body: Body?
    public var delay: Delay?
    public var hang = false
    public var reset = false
    public var closeAfterBytes: Int?
    public var malformedJSON = false
    public var drip: (chunks: Int, milliseconds: Int)?
    public var emptyResponse = false
    /// Run the real handler (its writes commit) and then break the transport.
    public var passthrough = false
    /// Make the request's auth hook calls fail this way (`timeout`, `unreachable`, `error`); the
    /// real handler runs and answers with the real server's hook error.
    public var hook: String?

    public init() {}

    /// Faults after which the client holds no complete response.
    public var breaksTransport: Bool { hang || reset || emptyResponse || closeAfterBytes != nil }
    /// Whether the rule supplies the response itself (the real handler does not run).
    public var suppliesResponse: Bool { error != nil || status != nil || body != nil || malformedJSON }
}


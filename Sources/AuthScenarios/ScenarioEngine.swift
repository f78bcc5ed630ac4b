import AuthCrypto
import AuthHTTP
import AuthJSON
import GoTrue
import Synchronization

/// A scenario's draws come from AuthCrypto's `SeededRandom` (SplitMix64, fully specified), so a
/// scenario's seed replays the same draws on every platform and Swift version.
extension RandomSource {
    /// Uniform in [0, 1) with 53 bits.
    func nextUnit() -> Double { Double(next64() >> 11) * 0x1p-53 }

    /// Uniform in `low...high`.
    func next(in low: Int, _ high: Int) -> Int {
        guard high > low else { return low }
        return low + Int(next64() % UInt64(high - low + 1))
    }
}

/// The facts of one request a rule can match on, gathered once per request.
struct RequestFacts {
    var operation: String?
    var method: String
    var path: String
    var request: HTTPRequest
    private var parsedBody: JSONObject??

    init(_ context: RequestContext) {
        operation = context.operation
        method = context.request.method
        path = context.path
        request = context.request
    }

    var test: String? { request.headers[Match.testHeader] }

    /// The JSON body, parsed on first use (most rules never look at it), read as GoTrue reads
    /// request bodies (`JSON.goDecode`), so a deep or odd body cannot exhaust a worker's stack.
    mutating func body() -> JSONObject? {
        if let parsedBody { return parsedBody }
        let object = (try? JSON.goDecode(request.body))?.value.objectValue
        parsedBody = .some(object)
        return object
    }
}

extension Match {
    func matches(_ facts: inout RequestFacts) -> Bool {
        if let test, facts.test != test { return false }
        if !operations.isEmpty {
            guard let operation = facts.operation,
                  operations.contains(where: { Glob.matches($0, operation, separator: nil) }) else { return false }
        }
        if let method, method != facts.method { return false }
        if let path, !Glob.matches(path, facts.path, separator: "/") { return false }
        for (name, value) in query where facts.request.queryValue(name) != value { return false }
        for (name, condition) in headers {
            let actual = facts.request.headers[name]
            switch condition {
            case .present: if actual == nil { return false }
            case .absent: if actual != nil { return false }
            case .equals(let expected): if actual != expected { return false }
            }
        }
        if !body.isEmpty {
            guard let object = facts.body() else { return false }
            for (field, expected) in body where Match.lookup(field, in: object) != expected { return false }
        }
        return true
    }

    /// A top-level field, or a dotted path into nested objects (`data.plan`).
    static func lookup(_ field: String, in object: JSONObject) -> JSON? {
        if let direct = object[field] { return direct }
        var current: JSON = .object(object)
        for part in field.split(separator: ".") {
            guard let next = current.objectValue?[String(part)] else { return nil }
            current = next
        }
        return current
    }
}

/// A rule that fired for a request: what to do, and by which rule.
public struct Firing: Sendable {
    public var scenario: String
    public var rule: Int
    public var effect: Effect
    /// The drawn delay, when the rule has one.
    public var delayMilliseconds: Int?

    /// `scenario#index`, as the journal names rules.
    public var label: String { "\(scenario)#\(rule)" }
}

/// The active scenarios of one project, their counters and states, behind one lock. Matching
/// and counting happen together under the lock, so concurrent requests see each count once.
public final class ScenarioEngine: Sendable {
    struct RuleState {
        var matched = 0
        var fired = 0
        /// When a `window_ms` rule first fired: its window runs from here.
        var windowOpened: Timestamp?
    }

    struct Active {
        var scenario: Scenario
        var seed: UInt64
        var seedWasGiven: Bool
        var random: SeededRandom
        var state = When.initialState
        var rules: [RuleState]

        init(_ scenario: Scenario, seed: UInt64, given: Bool) {
            self.scenario = scenario
            self.seed = seed
            seedWasGiven = given
            random = SeededRandom(seed: seed)
            rules = Array(repeating: RuleState(), count: scenario.rules.count)
        }

        mutating func reset() {
            random = SeededRandom(seed: seed)
            state = When.initialState
            rules = Array(repeating: RuleState(), count: scenario.rules.count)
        }
    }

    private let active = Mutex<[Active]>([])
    /// Emptiness without the lock: most servers run with no scenario at all.
    private let count = Atomic<Int>(0)
    private let environment: Environment

    /// - Parameter environment: where seeds come from when a scenario gives none.
    public init(environment: Environment = Environment()) {
        self.environment = environment
    }

    public var isEmpty: Bool { count.load(ordering: .relaxed) == 0 }

    /// Activates `scenario` (after the ones already active), replacing one of the same name.
    /// Returns the seed in use.
    @discardableResult
    public func add(_ scenario: Scenario) -> UInt64 {
        var seedBytes = environment.randomBytes(8)
        // Keep seeds below 2^53, so JSON numbers carry them exactly.
        seedBytes[0] = 0
        seedBytes[1] &= 0x1F
        let random = seedBytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let entry = Active(scenario, seed: scenario.seed ?? random, given: scenario.seed != nil)
        return active.withLock { list in
            if let index = list.firstIndex(where: { $0.scenario.name == scenario.name }) {
                list[index] = entry
            } else {
                list.append(entry)
            }
            count.store(list.count, ordering: .relaxed)
            return entry.seed
        }
    }

    /// Removes one scenario; false when none has that name.
    @discardableResult
    public func remove(_ name: String) -> Bool {
        active.withLock { list in
            let before = list.count
            list.removeAll { $0.scenario.name == name }
            count.store(list.count, ordering: .relaxed)
            return list.count != before
        }
    }

    public func removeAll() {
        active.withLock { list in
            list.removeAll()
            count.store(0, ordering: .relaxed)
        }
    }

    /// Counters, state and random sequence back to the start; false when none has that name.
    @discardableResult
    public func reset(_ name: String) -> Bool {
        active.withLock { list in
            guard let index = list.firstIndex(where: { $0.scenario.name == name }) else { return false }
            list[index].reset()
            return true
        }
    }

    /// The first rule, in scenario then rule order, that fires for this request; counts every
    /// rule that matched on the way.
    func evaluate(_ facts: inout RequestFacts) -> Firing? {
        if isEmpty { return nil }
        return active.withLock { list -> Firing? in
            for s in list.indices {
                for r in list[s].scenario.rules.indices {
                    let rule = list[s].scenario.rules[r]
                    if let required = rule.when.state, required != list[s].state { continue }
                    guard rule.match.matches(&facts) else { continue }
                    list[s].rules[r].matched += 1
                    let n = list[s].rules[r].matched
                    let when = rule.when
                    if let times = when.times, list[s].rules[r].fired >= times { continue }
                    if let nth = when.nth, n != nth { continue }
                    if let every = when.every, n % every != 0 { continue }
                    if let after = when.after, n <= after { continue }
                    // `window_ms`: the first firing opens the window; once it has passed, the rule is spent.
                    var opening: Timestamp?
                    if let window = when.windowMilliseconds {
                        let now = environment.now()
                        if let opened = list[s].rules[r].windowOpened {
                            if now.microseconds - opened.microseconds >= Int64(window) * 1000 { continue }
                        } else {
                            opening = now
                        }
                    }
                    if let p = when.probability, !(list[s].random.nextUnit() < p) { continue }
                    list[s].rules[r].fired += 1
                    if let opening { list[s].rules[r].windowOpened = opening }
                    if let next = when.nextState { list[s].state = next }
                    var delay: Int?
                    switch rule.then.delay {
                    case .fixed(let ms): delay = ms
                    case .range(let low, let high): delay = list[s].random.next(in: low, high)
                    case nil: delay = nil
                    }
                    return Firing(scenario: list[s].scenario.name, rule: r, effect: rule.then, delayMilliseconds: delay)
                }
            }
            return nil
        }
    }

    /// The scenario as `GET /emulator/v1/scenarios` shows it, or every one.
    public func describe(_ name: String? = nil) -> [JSON] {
        active.withLock { list in
            list.filter { name == nil || $0.scenario.name == name }.map { entry in
                var rules: [JSON] = []
                for (index, rule) in entry.scenario.rules.enumerated() {
                    var object = rule.json
                    object["index"] = .number(index)
                    object["matched"] = .number(entry.rules[index].matched)
                    object["fired"] = .number(entry.rules[index].fired)
                    // The rule's test scope as it applies, whether written in its `match` or
                    // given once for the whole file (top-level `test`, which the rule as
                    // written does not show): without it a scoped rule reads as global.
                    object["test"] = rule.match.test.map(JSON.string) ?? .null
                    if let window = rule.when.windowMilliseconds, let opened = entry.rules[index].windowOpened {
                        object["window_closes_at"] = .string(opened.adding(microseconds: Int64(window) * 1000).rfc3339)
                    }
                    rules.append(.object(object))
                }
                return [
                    "name": .string(entry.scenario.name),
                    "description": .string(entry.scenario.description),
                    "source": .string(entry.scenario.source),
                    "seed": .number(Double(entry.seed)),
                    "seed_given": .bool(entry.seedWasGiven),
                    "state": .string(entry.state),
                    "rules": .array(rules),
                ]
            }
        }
    }
}

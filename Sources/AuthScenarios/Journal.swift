import AuthJSON
import AuthPlatform
import GoTrue

/// One recorded request. Only what a test asserts on: never bodies, never headers, and query
/// values that could carry a secret are redacted.
public struct JournalEntry: Sendable, Equatable {
    public var id: Int
    /// On the project's clock, so it lines up with virtual time.
    public var time: Timestamp
    public var operation: String?
    public var method: String
    /// The path GoTrue saw (without the `/auth/v1` gateway prefix).
    public var path: String
    public var viaGateway: Bool
    public var query: [(name: String, value: String)]
    /// Nil when the client got no status line (hang, reset, empty response, a cut before it).
    public var status: Int?
    public var latencyMilliseconds: Double
    /// `scenario#index` of the rule that fired.
    public var rule: String?
    /// The transport fault applied, if any.
    public var fault: String?
    /// The request's `X-Emulator-Test` id.
    public var test: String?
    /// The `x-sb-error-code` the client received, if any.
    public var errorCode: String? = nil

    public static func == (a: JournalEntry, b: JournalEntry) -> Bool { a.id == b.id }

    /// Query parameters whose values may be credentials: recorded as `[redacted]`.
    static let secretWords = ["token", "password", "code", "nonce", "secret", "key", "otp", "verifier", "hash"]

    static func redacted(_ name: String, _ value: String) -> String {
        let lower = name.lowercased()
        if lower == "grant_type" { return value }
        return secretWords.contains(where: { lower.contains($0) }) ? "[redacted]" : value
    }

    /// What a test reading the journal needs to know about some answers: a 429 from a send
    /// limit is GoTrue's behaviour, not a fault, and two links in a row to one address meet it.
    static let hints: [String: String] = [
        "over_email_send_rate_limit": "a send limit, as GoTrue's: one mail per address per email.max_frequency (GOTRUE_SMTP_MAX_FREQUENCY), and rate_limit.email_sent per hour; move the virtual clock (POST /emulator/v1/clock) or lower the limit (PATCH /emulator/v1/config) to send another (docs/email-and-phone.md)",
        "over_sms_send_rate_limit": "a send limit, as GoTrue's: one SMS per number per sms.max_frequency, and rate_limit.sms_sent per hour; move the virtual clock (POST /emulator/v1/clock) or lower the limit (PATCH /emulator/v1/config) to send another",
    ]

    public var json: JSON {
        var query = JSONObject()
        for item in self.query { query[item.name] = .string(item.value) }
        var entry: JSONObject = [
            "id": .number(id),
            "time": .string(time.rfc3339),
            "op": operation.map(JSON.string) ?? .null,
            "method": .string(method),
            "path": .string(path),
            "via_gateway": .bool(viaGateway),
            "query": .object(query),
            "status": status.map { .number($0) } ?? .null,
            "latency_ms": .number((latencyMilliseconds * 1000).rounded() / 1000),
            "rule": rule.map(JSON.string) ?? .null,
            "fault": fault.map(JSON.string) ?? .null,
            "test": test.map(JSON.string) ?? .null,
            "error_code": errorCode.map(JSON.string) ?? .null,
        ]
        if let code = errorCode, let hint = JournalEntry.hints[code] { entry["hint"] = .string(hint) }

        return .object(entry)
    }
}

/// Which entries a journal query selects; every given condition must hold.
public struct JournalFilter: Sendable {
    /// An operation name or glob.
    public var operation: String?
    /// An exact status (`429`) or a class (`4xx`); `none` selects requests that got no status.
    public var status: String?
    public var test: String?
    /// Entries after this id.
    public var afterID: Int?
    /// Entries at or after this time.
    public var since: Timestamp?

    public init(operation: String? = nil, status: String? = nil, test: String? = nil, afterID: Int? = nil, since: Timestamp? = nil) {
        self.operation = operation
        self.status = status
        self.test = test
        self.afterID = afterID
        self.since = since
    }

    /// Whether `status` is a form the filter understands.
    public static func isValidStatus(_ text: String) -> Bool {
        if text == "none" { return true }
        if let n = Int(text) { return (100...599).contains(n) }
        let bytes = Array(text.utf8)
        return bytes.count == 3 && (0x31...0x35).contains(bytes[0]) && bytes[1] == 0x78 && bytes[2] == 0x78
    }

    func selects(_ entry: JournalEntry) -> Bool {
        if let operation {
            guard let actual = entry.operation, Glob.matches(operation, actual, separator: nil) else { return false }
        }
        if let status {
            if status == "none" {
                if entry.status != nil { return false }
            } else if let exact = Int(status) {
                if entry.status != exact { return false }
            } else {
                guard let actual = entry.status, let first = status.first, String(actual).first == first else { return false }
            }
        }
        if let test, entry.test != test { return false }
        if let afterID, entry.id <= afterID { return false }
        if let since, entry.time < since { return false }
        return true
    }
}

/// A ring buffer of the most recent requests, so a test can assert on what its client did
/// ("refreshed exactly once") without instrumenting the client.
public final class Journal: Sendable {
    private struct State {
        var entries: [JournalEntry] = []
        /// Index of the oldest entry once the buffer is full.
        var head = 0
        var nextID = 1
        /// What 5xx answers kept from their clients (`AuthError.internalError`: in Postgres mode
        /// the database's SQLSTATE, message, DETAIL, HINT and the trigger's CONTEXT), by entry
        /// id. Beside the entries rather than in them: every request copies an entry, few have
        /// a cause.
        var causes: [Int: String] = [:]
    }

    public let capacity: Int
    private let state = Lock(State())

    public static let defaultCapacity = 1000

    public init(capacity: Int = Journal.defaultCapacity) {
        self.capacity = max(0, capacity)
    }

    /// Stores `entry` (its id is assigned here) and returns the id.
    @discardableResult
    public func record(_ entry: JournalEntry) -> Int {
        guard capacity > 0 else { return 0 }
        return state.withLock { state in
            var entry = entry
            entry.id = state.nextID
            state.nextID += 1
            if state.entries.count < capacity {
                state.entries.append(entry)
            } else {
                if !state.causes.isEmpty { state.causes[state.entries[state.head].id] = nil }
                state.entries[state.head] = entry
                state.head = (state.head + 1) % capacity
            }
            return entry.id
        }
    }

    /// Keeps what the answer to entry `id` hid from its client, while the entry is kept.
    public func noteDatabaseError(_ cause: String, for id: Int) {
        state.withLock { state in
            if state.entries.contains(where: { $0.id == id }) { state.causes[id] = cause }
        }
    }

    /// The entries' JSON, each with `database_error` when its answer kept a cause.
    public func json(_ entries: [JournalEntry]) -> [JSON] {
        let causes = state.withLock { $0.causes }
        return entries.map { entry in
            guard let cause = causes[entry.id], case .object(var object) = entry.json else { return entry.json }
            object["database_error"] = .string(cause)
            return .object(object)
        }
    }

    /// Matching entries, oldest first.
    public func entries(_ filter: JournalFilter = JournalFilter()) -> [JournalEntry] {
        state.withLock { state in
            let ordered = state.entries[state.head...] + state.entries[..<state.head]
            return ordered.filter(filter.selects)
        }
    }

    public func count(_ filter: JournalFilter = JournalFilter()) -> Int {
        entries(filter).count
    }

    public func clear() {
        state.withLock { state in
            state.entries.removeAll()
            state.causes.removeAll()
            state.head = 0
        }
    }
}

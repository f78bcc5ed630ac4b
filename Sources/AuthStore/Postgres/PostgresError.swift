/// A failure reported by Postgres or by libpq: the Postgres counterpart of `StoreError`.
///
/// The server's fields (https://www.postgresql.org/docs/current/protocol-error-fields.html) are
/// kept apart, so a caller can map a SQLSTATE to GoTrue's answer and show a developer the whole
/// story of an app trigger that failed: message, detail, hint and the CONTEXT line naming the
/// function and line.
///
/// `description` is safe to log anywhere: SQLSTATE, step, message, hint and context. It leaves out
/// `detail`, which Postgres fills with row values ("Key (email)=(ada@example.com) already exists",
/// "Failing row contains (...)"), and the quoted input of data-exception messages ("invalid input
/// syntax for type uuid: "..."") — both can be bound values. `diagnostics` has everything, for a
/// developer's own log of their own database.
public struct PostgresError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The five-character SQLSTATE (https://www.postgresql.org/docs/current/errcodes-appendix.html),
    /// or one of the client-side codes below when the server said nothing.
    public let sqlstate: String
    /// Which step failed: "connect", "prepare", "execute", "load libpq", ...
    public let step: String
    /// The primary message, as the server (or libpq) wrote it.
    public let message: String
    public let detail: String?
    public let hint: String?
    /// CONTEXT: where it happened ("PL/pgSQL function handle_new_user() line 3 at RAISE").
    public let context: String?
    /// ERROR, FATAL, PANIC (not localized).
    public let severity: String?
    public let schema: String?
    public let table: String?
    public let column: String?
    public let constraint: String?

    public init(sqlstate: String, step: String, message: String, detail: String? = nil, hint: String? = nil,
                context: String? = nil, severity: String? = nil, schema: String? = nil, table: String? = nil,
                column: String? = nil, constraint: String? = nil) {
        self.sqlstate = sqlstate
        self.step = step
        self.message = message
        self.detail = detail
        self.hint = hint
        self.context = context
        self.severity = severity
        self.schema = schema
        self.table = table
        self.column = column
        self.constraint = constraint
    }

    /// libpq could not be loaded (not a SQLSTATE: nothing reached a server).
    public static let libraryMissing = "LIBPQ"
    /// No connection, or it was lost (libpq's message says why); SQLSTATE class 08 is
    /// connection_exception.
    public static let connectionFailure = "08006"
    /// A result libpq could not attribute to a SQLSTATE.
    public static let unknown = "XX000"
    /// The connection was closed by this process before the call.
    public static let closed = "08003"

    public var description: String {
        var text = "PostgresError(\(sqlstate)) \(step): \(Self.withoutQuotedInput(message, sqlstate: sqlstate))"
        if let hint { text += " HINT: \(hint)" }
        if let context { text += " CONTEXT: \(context.replacingNewlines())" }
        return text
    }

    /// Every field, detail included: for a developer's log of their own database, never for a
    /// client (detail may hold row values).
    public var diagnostics: String {
        var text = "PostgresError(\(sqlstate)) \(step): \(message)"
        if let detail { text += " DETAIL: \(detail)" }
        if let hint { text += " HINT: \(hint)" }
        if let context { text += " CONTEXT: \(context.replacingNewlines())" }
        return text
    }

    /// 23505 unique_violation (GoTrue maps these to "already exists").
    public var isUniqueViolation: Bool { sqlstate == "23505" }
    /// 23503 foreign_key_violation: an app's table refers to the row without ON DELETE CASCADE.
    public var isForeignKeyViolation: Bool { sqlstate == "23503" }
    /// Class 23, integrity constraint violation.
    public var isConstraintViolation: Bool { sqlstate.hasPrefix("23") }
    /// Class 08 (connection exception), or the server ending the session: 57P01
    /// admin_shutdown (also pg_terminate_backend), 57P02 crash_shutdown, 57P03
    /// cannot_connect_now. The connection needs `reconnect()`.
    public var isConnectionFailure: Bool { sqlstate.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlstate) }
    /// 40001 serialization_failure, 40P01 deadlock_detected: the transaction may be retried.
    public var isRetryable: Bool { sqlstate == "40001" || sqlstate == "40P01" }

    /// Class 22 (data exception) messages end with the offending input in quotes
    /// (`invalid input syntax for type uuid: "abc"`): keep the sentence, drop the input.
    static func withoutQuotedInput(_ message: String, sqlstate: String) -> String {
        guard sqlstate.hasPrefix("22"), let colon = message.firstRange(of: ": \"") else { return message }
        return String(message[..<colon.lowerBound]) + ": (value withheld)"
    }
}

extension String {
    /// Multi-line CONTEXT stacks on one log line.
    fileprivate func replacingNewlines() -> String {
        split(separator: "\n", omittingEmptySubsequences: true).joined(separator: " / ")
    }
}

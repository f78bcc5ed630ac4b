import AuthHTTP
import AuthJSON
import AuthStore
import Synchronization

/// The project's captured-message side: the global send limiters of reference §6.2 (in memory,
/// like the real server's) and the "message captured" observer. The messages themselves live in
/// the database (`emulator_outbox`), so other processes see them too.
public final class Outbox: Sendable {
    public typealias Observer = @Sendable (OutboxRecord) -> Void

    private struct State {
        var observer: Observer?
        var email: SendLimiter?
        var sms: SendLimiter?
    }

    private let state: Mutex<State>
    /// Interval windows are counted from here (the real server counts from its start).
    private let start: Int64

    public init(start: Timestamp) {
        self.start = start.microseconds
        self.state = Mutex(State())
    }

    /// Calls `observer` once for every message captured from now on, after its transaction
    /// committed. Replaces any previous observer; nil removes it.
    public func onMessage(_ observer: Observer?) {
        state.withLock { $0.observer = observer }
    }

    /// `limiterOpts.Email.Allow()`. A changed rate (live configuration) starts a fresh limiter.
    func allowEmail(_ rate: SendRate, now: Timestamp) -> Bool {
        state.withLock { s in
            if s.email?.rate != rate { s.email = SendLimiter(rate: rate, start: start) }
            return s.email!.allow(at: now.microseconds)
        }
    }

    /// `limiterOpts.Phone.Allow()`.
    func allowSMS(_ rate: SendRate, now: Timestamp) -> Bool {
        state.withLock { s in
            if s.sms?.rate != rate { s.sms = SendLimiter(rate: rate, start: start) }
            return s.sms!.allow(at: now.microseconds)
        }
    }

    /// Forgets the send counts (a reset starts the project afresh).
    public func resetLimits() {
        state.withLock { s in
            s.email = nil
            s.sms = nil
        }
    }

    /// Tells the observer about messages whose transaction has committed.
    func delivered(_ messages: [OutboxRecord]) {
        guard !messages.isEmpty, let observer = state.withLock({ $0.observer }) else { return }
        for message in messages { observer(message) }
    }

    /// One line for a terminal: recipient, type, code and link.
    public static func summary(_ m: OutboxRecord) -> String {
        var line = "\(m.channel) to \(m.recipient): \(m.type)"
        if !m.otp.isEmpty { line += " code \(m.otp)" }
        if !m.actionLink.isEmpty { line += " link \(m.actionLink)" }
        return line
    }

    /// The JSON a test reads from the control routes.
    static func json(_ m: OutboxRecord) -> JSON {
        var o = JSONObject()
        o["id"] = .string(m.id)
        o["channel"] = .string(m.channel)
        o["to"] = .string(m.recipient)
        o["type"] = .string(m.type)
        o["subject"] = .string(m.subject)
        o["body_html"] = .string(m.bodyHTML)
        o["body_text"] = .string(m.bodyText)
        o["otp"] = .string(m.otp)
        o["token_hash"] = .string(m.tokenHash)
        o["action_link"] = .string(m.actionLink)
        o["redirect_to"] = .string(m.redirectTo)
        o["user_id"] = m.userID.map { .string($0) } ?? .null
        o["sent_at"] = .string(Timestamp(microseconds: m.sentAt).rfc3339)
        return .object(o)
    }
}

/// The outbox control routes (emulator-only; the service_role check is done for the whole
/// `/emulator/v1` prefix by `GoTrueAPI`).
struct OutboxEndpoints {
    let api: Core

    var routes: [Route] {
        let prefix = GoTrueAPI.emulatorPrefix
        return [
            Route("GET", prefix + "/outbox", operation: "emulator.outbox.list") { context in try list(context) },
            Route("GET", prefix + "/outbox/latest", operation: "emulator.outbox.latest") { context in try latest(context) },
            Route("DELETE", prefix + "/outbox", operation: "emulator.outbox.clear") { context in try clear(context) },
        ]
    }

    private func filter(_ context: RequestContext, name: String) -> String? {
        guard let value = context.request.queryValue(name), !value.isEmpty else { return nil }
        return name == "to" ? OutboxEndpoints.normalizedRecipient(value) : value
    }

    /// Phones are stored as GoTrue stores them (digits, no `+`); emails lowercased.
    static func normalizedRecipient(_ to: String) -> String {
        to.contains("@") ? to.lowercased() : Validation.formatPhone(to)
    }

    func list(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        var limit: Int?
        if let text = context.request.queryValue("limit"), !text.isEmpty {
            guard let value = Int(text), value >= 0 else {
                throw AuthError(400, .validationFailed, "limit must be a non-negative integer")
            }
            limit = value
        }
        let to = filter(context, name: "to")
        let type = filter(context, name: "type")
        let messages = try api.read { conn in try conn.outboxMessages(recipient: to, type: type, limit: limit) }
        return .json(.array(messages.map(Outbox.json)))
    }

    func latest(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let to = filter(context, name: "to")
        let type = filter(context, name: "type")
        let messages = try api.read { conn in try conn.outboxMessages(recipient: to, type: type, limit: 1) }
        guard let message = messages.first else {
            throw AuthError(404, ErrorCode("not_found"), "No message captured" + (to.map { " for \($0)" } ?? ""))
        }
        return .json(Outbox.json(message))
    }

    func clear(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let deleted = try api.write { conn in try conn.clearOutbox() }
        return .json(["deleted": .number(Int64(deleted))])
    }
}

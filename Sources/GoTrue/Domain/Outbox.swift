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
    /// Counted once per write however many rounds it runs (`WriteRounds`).
    func allowEmail(_ rate: SendRate, now: Timestamp) -> Bool {
        WriteRounds.once {
            state.withLock { s in
                if s.email?.rate != rate { s.email = SendLimiter(rate: rate, start: start) }
                return s.email!.allow(at: now.microseconds)
            }
        }
    }

    /// `limiterOpts.Phone.Allow()`.
    func allowSMS(_ rate: SendRate, now: Timestamp) -> Bool {
        WriteRounds.once {
            state.withLock { s in
                if s.sms?.rate != rate { s.sms = SendLimiter(rate: rate, start: start) }
                return s.sms!.allow(at: now.microseconds)
            }
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
    package static func json(_ m: OutboxRecord) -> JSON {
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
        // What the reader could click: a custom template's own links (`{{ .SiteURL }}/auth/confirm
        // ?token_hash=...`) besides the action link the built-in templates use.
        o["links"] = .array(Outbox.links(inHTML: m.bodyHTML).map(JSON.string))
        o["redirect_to"] = .string(m.redirectTo)
        o["user_id"] = m.userID.map { .string($0) } ?? .null
        o["sent_at"] = .string(Timestamp(microseconds: m.sentAt).rfc3339)
        return .object(o)
    }
}

extension Outbox {
    /// The links a reader could follow in a message's HTML, in order and without repeats: the
    /// `href` of each `<a>` and `<area>` start tag as a browser's tokenizer reads it (tag and
    /// attribute names in any case, values quoted or not, character references decoded, so
    /// `&amp;` in a query is `&`). Text that merely looks like an attribute (`href="..."` in a
    /// paragraph, a comment, another attribute's value or a `<script>`) is no link.
    public static func links(inHTML html: String) -> [String] {
        var links: [String] = []
        var seen: Set<String> = []
        for token in HTMLTokens.tokens(html) {
            if let link = HTMLTokens.link(token), !link.isEmpty, seen.insert(link).inserted { links.append(link) }
        }
        return links
    }

    /// Text with its character references decoded, as the HTML tokenizer decodes text.
    static func decodeCharacterReferences(_ text: String) -> String {
        HTMLTokens.decodeCharacterReferences(ArraySlice(text.utf8), inAttribute: false)
    }
}

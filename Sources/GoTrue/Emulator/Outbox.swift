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
    /// The `href` values of a message's HTML, in order and without repeats, with the character
    /// references a browser decodes before following them (`&amp;` in a query is `&`).
    public static func links(inHTML html: String) -> [String] {
        var links: [String] = []
        let bytes = Array(html.utf8)
        var i = 0
        while i < bytes.count {
            // An attribute named href: preceded by a space, its name, optional spaces, "=".
            guard bytes[i] == UInt8(ascii: "h") || bytes[i] == UInt8(ascii: "H"), i > 0, isSpace(bytes[i - 1]),
                  i + 4 <= bytes.count, String(decoding: bytes[i..<(i + 4)], as: UTF8.self).lowercased() == "href" else {
                i += 1
                continue
            }
            var j = i + 4
            while j < bytes.count, isSpace(bytes[j]) { j += 1 }
            guard j < bytes.count, bytes[j] == UInt8(ascii: "=") else {
                i = j
                continue
            }
            j += 1
            while j < bytes.count, isSpace(bytes[j]) { j += 1 }
            guard j < bytes.count else { break }
            var end = j
            if bytes[j] == UInt8(ascii: "\"") || bytes[j] == UInt8(ascii: "'") {
                let quote = bytes[j]
                j += 1
                end = j
                while end < bytes.count, bytes[end] != quote { end += 1 }
            } else {
                while end < bytes.count, !isSpace(bytes[end]), bytes[end] != UInt8(ascii: ">") { end += 1 }
            }
            let link = decodeCharacterReferences(String(decoding: bytes[j..<min(end, bytes.count)], as: UTF8.self))
            if !link.isEmpty && !links.contains(link) { links.append(link) }
            i = end + 1
        }
        return links
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0C || byte == 0x0D
    }

    /// The numeric references and the few named ones template escaping produces (HTML §13.2.5.72).
    static func decodeCharacterReferences(_ text: String) -> String {
        guard text.contains("&") else { return text }
        let named: [String: String] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}"]
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            guard let semicolon = after.prefix(12).firstIndex(of: ";") else {
                out += "&"
                rest = after
                continue
            }
            let name = after[..<semicolon]
            var decoded: String?
            if name.hasPrefix("#x") || name.hasPrefix("#X") {
                decoded = UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String(Character($0)) }
            } else if name.hasPrefix("#") {
                decoded = UInt32(name.dropFirst()).flatMap(Unicode.Scalar.init).map { String(Character($0)) }
            } else {
                decoded = named[String(name)]
            }
            if let decoded {
                out += decoded
                rest = after[after.index(after: semicolon)...]
            } else {
                out += "&"
                rest = after
            }
        }
        return out + rest
    }
}

/// A global send rate as GoTrue's `conf.Rate` reads it (reference §6.2): a plain number is N
/// events per fixed one-hour window; `N/<duration>` is a token bucket of capacity N refilled
/// with one event per duration.
public struct SendRate: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// `IntervalLimiter`: at most `events` per window of `seconds`, windows counted from start.
        case interval
        /// `BurstLimiter` (`rate.NewLimiter(rate.Every(d), N)`).
        case burst
    }

    public var events: Double
    public var seconds: Double
    public var kind: Kind

    public init(events: Double, seconds: Double = 3600, kind: Kind = .interval) {
        self.events = events
        self.seconds = seconds
        self.kind = kind
    }

    /// `Rate.Decode`: a float (`30`, `2.5`) or `<uint>/<Go duration>` (`10/1m`). `parseDuration`
    /// returns seconds, or nil when the text is no Go duration.
    public static func parse(_ text: String, parseDuration: (String) -> Double?) -> SendRate? {
        if let events = Double(text), events.isFinite { return SendRate(events: events) }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let events = UInt64(parts[0]), events < 1 << 52,
              let seconds = parseDuration(String(parts[1]))
        else { return nil }
        return SendRate(events: Double(events), seconds: seconds, kind: .burst)
    }
}

/// The state of one global limiter. Time comes from the project's clock, so a virtual clock
/// moves these windows too.
struct SendLimiter: Sendable {
    var rate: SendRate
    /// Interval: the start of the current window; burst: the last refill.
    var last: Int64
    /// Interval: events in the current window; burst: tokens left.
    var count: Double

    init(rate: SendRate, start: Int64) {
        self.rate = rate
        self.last = start
        self.count = rate.kind == .burst ? max(rate.events.rounded(.towardZero), 0) : 0
    }

    mutating func allow(at now: Int64) -> Bool {
        switch rate.kind {
        case .interval:
            let window = Int64(rate.seconds * 1_000_000)
            if window > 0, now - last >= window {
                last += (now - last) / window * window
                count = 0
            }
            // `count < events` with Go's int(events) truncation.
            if count < rate.events.rounded(.towardZero) {
                count += 1
                return true
            }
            return false
        case .burst:
            let capacity = max(rate.events.rounded(.towardZero), 0)
            let every = rate.seconds > 0 ? rate.seconds : 3600
            if now > last {
                count = min(capacity, count + Double(now - last) / (every * 1_000_000))
                last = now
            }
            if count >= 1 {
                count -= 1
                return true
            }
            return false
        }
    }
}

/// Per-user resend throttling (reference §6.3).
enum FrequencyLimit {
    /// 429 "For security purposes, you can only request this after N seconds." while
    /// `sentAt + frequency` is still ahead; N is truncated, as Go's integer division.
    static func check(sentAt: Int64?, frequencySeconds: Double, now: Timestamp, code: ErrorCode) throws(AuthError) {
        guard let sentAt else { return }
        let until = sentAt + Int64(frequencySeconds * 1_000_000)
        guard until > now.microseconds else { return }
        let left = (until - now.microseconds) / 1_000_000
        throw AuthError(429, code, "For security purposes, you can only request this after \(left) seconds.")
    }
}

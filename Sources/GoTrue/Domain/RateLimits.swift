import AuthHTTP
import AuthPlatform
import GoFormats

/// The per-client request limits of reference §6.1: one token bucket per endpoint group and
/// client key, as GoTrue builds them with tollbooth over `golang.org/x/time/rate`.
///
/// GoTrue limits a client only when it can tell clients apart: `Sb-Forwarded-For` (when
/// `GOTRUE_SECURITY_SB_FORWARDED_FOR_ENABLED`) or the header named by `GOTRUE_RATE_LIMIT_HEADER`.
/// Neither is set by `supabase start`, so a local stack never limits. Every local request comes
/// from 127.0.0.1, so the emulator can key on the peer address instead (`keyOnPeerAddress`, and
/// the `real` and `tiny` presets), which lets an unmodified client observe the limits.
public struct RateLimitSettings: Sendable, Equatable {
    /// `--rate-limits`: how the limits apply.
    public enum Preset: String, Sendable, CaseIterable {
        /// As GoTrue: the configured limits, only for requests with a key header.
        case standard = "default"
        /// Nothing is limited (functional suites).
        case off
        /// The configured limits, keyed on the peer address when no key header is present.
        case real
        /// `RateLimitSettings.tinyEvents` per bucket and window (burst included), keyed like `real`,
        /// so rate-limit suites reach a 429 in a handful of requests.
        case tiny
    }

    public var preset: Preset = .standard
    /// `GOTRUE_RATE_LIMIT_HEADER`: the header whose first comma-separated value is the key.
    public var header = ""
    /// `GOTRUE_SECURITY_SB_FORWARDED_FOR_ENABLED`: key on a valid IP in `Sb-Forwarded-For` first.
    public var sbForwardedForEnabled = false
    /// Emulator-only (`AUTH_EMULATOR_RATE_LIMIT_PEER`): key on the peer address when no header
    /// gives a key.
    public var keyOnPeerAddress = false

    /// `GOTRUE_RATE_LIMIT_OTP`: Signups, Recover, Resend, MagicLink, Otp and User, per 5 minutes.
    public var otp: Double = 30
    /// `GOTRUE_RATE_LIMIT_ANONYMOUS_USERS`: per hour, burst equal to the value.
    public var anonymousUsers: Double = 30
    /// `GOTRUE_RATE_LIMIT_TOKEN_REFRESH`: every `/token` grant but web3, per 5 minutes.
    public var tokenRefresh: Double = 150
    /// `GOTRUE_RATE_LIMIT_VERIFY`: per 5 minutes.
    public var verify: Double = 30
    /// `GOTRUE_RATE_LIMIT_WEB3`: per 5 minutes.
    public var web3: Double = 30
    /// `GOTRUE_RATE_LIMIT_SSO`: per 5 minutes.
    public var sso: Double = 30
    /// `GOTRUE_RATE_LIMIT_PASSKEY`: per 5 minutes.
    public var passkey: Double = 30
    /// `GOTRUE_RATE_LIMIT_OAUTH_DYNAMIC_CLIENT_REGISTER`: per 5 minutes.
    public var oauthClientRegister: Double = 10
    /// `GOTRUE_MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY`: per minute.
    public var mfaChallengeAndVerify: Double = 15
    /// `GOTRUE_SAML_RATE_LIMIT_ASSERTION`: per 5 minutes.
    public var samlAssertion: Double = 15

    /// Requests per bucket and window under the `tiny` preset.
    public static let tinyEvents = 3

    public init() {}

    /// The rule the bucket follows under these settings; nil when it is not limited.
    public func rule(for bucket: RateLimitBucket) -> RateLimitRule? {
        if preset == .off { return nil }
        let fiveMinutes = 300.0, hour = 3600.0
        var rule: RateLimitRule
        switch bucket {
        case .anonymousSignIns:
            // apilimiter: AnonymousUsers/(60*60) with a burst of the value itself.
            rule = RateLimitRule(events: anonymousUsers, window: hour, burst: Int(anonymousUsers), ttl: hour)
        case .factorChallenge, .factorVerify:
            rule = RateLimitRule(events: mfaChallengeAndVerify, window: 60, burst: 30, ttl: 60)
        default:
            let events: Double
            switch bucket {
            case .token: events = tokenRefresh
            case .verify: events = verify
            case .web3: events = web3
            case .sso: events = sso
            case .samlAssertion: events = samlAssertion
            case .passkeyAuthentication: events = passkey
            case .oauthClientRegister: events = oauthClientRegister
            default: events = otp
            }
            // Every other limiter: value/(60*5) per second, a fixed burst of 30, keys kept 1 h.
            rule = RateLimitRule(events: events, window: fiveMinutes, burst: 30, ttl: hour)
        }
        if preset == .tiny {
            rule.events = Double(RateLimitSettings.tinyEvents)
            rule.burst = RateLimitSettings.tinyEvents
        }
        return rule
    }

    /// The client key of a request (reference §6.1), or nil when the request is not limited.
    public func clientKey(for request: HTTPRequest) -> String? {
        if preset == .off { return nil }
        if sbForwardedForEnabled, let value = request.headers["Sb-Forwarded-For"] {
            let first = RateLimitSettings.firstValue(value)
            // sbff's `parseSBFFHeader`: `net.ParseIP(key).String()`.
            if let address = GoNet.canonicalIP(first) { return address }
        }
        if !header.isEmpty, let value = request.headers[header] {
            // `strings.SplitN(value, ",", 2)[0]`, trimmed; an empty key is not limited.
            let first = RateLimitSettings.firstValue(value)
            if !first.isEmpty { return first }
        }
        if keyOnPeerAddress || preset == .real || preset == .tiny { return request.remoteAddress }
        return nil
    }

    static func firstValue(_ value: String) -> String {
        let first = value.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return GoStrings.trimSpace(first)
    }

    /// An address `net.ParseIP` accepts (`GoNet.canonicalIP`).
    static func isIPAddress(_ text: String) -> Bool {
        GoNet.canonicalIP(text) != nil
    }
}

/// A token bucket's parameters: `events` per `window` seconds refill rate, `burst` capacity, and
/// how long a client's bucket lives after it was made.
public struct RateLimitRule: Sendable, Equatable {
    public var events: Double
    public var window: Double
    public var burst: Int
    public var ttl: Double

    public var perSecond: Double { events / window }
}

/// GoTrue's per-endpoint limiters (`apilimiter.Limiter` fields). Each has its own buckets even
/// where two share a setting (reference §6.1).
public struct RateLimitBucket: Hashable, Sendable, CustomStringConvertible {
    public let name: String
    public init(_ name: String) { self.name = name }
    public var description: String { name }

    public static let signups = RateLimitBucket("Signups")
    public static let anonymousSignIns = RateLimitBucket("AnonymousSignIns")
    public static let recover = RateLimitBucket("Recover")
    public static let resend = RateLimitBucket("Resend")
    public static let magicLink = RateLimitBucket("MagicLink")
    public static let otp = RateLimitBucket("Otp")
    public static let user = RateLimitBucket("User")
    public static let token = RateLimitBucket("Token")
    public static let web3 = RateLimitBucket("Web3")
    public static let verify = RateLimitBucket("Verify")
    public static let factorChallenge = RateLimitBucket("FactorChallenge")
    public static let factorVerify = RateLimitBucket("FactorVerify")
    public static let sso = RateLimitBucket("SSO")
    public static let samlAssertion = RateLimitBucket("SAMLAssertion")
    public static let passkeyAuthentication = RateLimitBucket("PasskeyAuthentication")
    public static let oauthClientRegister = RateLimitBucket("OAuthClientRegister")

    public static let all: [RateLimitBucket] = [
        .signups, .anonymousSignIns, .recover, .resend, .magicLink, .otp, .user, .token, .web3, .verify,
        .factorChallenge, .factorVerify, .sso, .samlAssertion, .passkeyAuthentication, .oauthClientRegister,
    ]
}

/// The buckets of one project, in memory (as GoTrue's are, per process), on the project's clock
/// so a virtual clock refills them. A change of the settings starts every bucket afresh, as
/// GoTrue's `Limiter.Update` replaces the limiters whose values changed.
public final class RateLimiter: Sendable {
    private struct Key: Hashable {
        var bucket: String
        var client: String
    }

    private struct Bucket {
        var tokens: Double
        var last: Int64
        var created: Int64
    }

    private struct State {
        var settings: RateLimitSettings?
        var buckets: [Key: Bucket] = [:]
    }

    /// Past this many client buckets, expired ones are dropped.
    private static let pruneThreshold = 4096

    private let state = Lock(State())

    public init() {}

    /// Takes one token from the client's bucket; false when the bucket is empty (then nothing
    /// is taken, as `rate.Limiter.Allow`).
    public func allow(_ bucket: RateLimitBucket, client: String, settings: RateLimitSettings, now: Timestamp) -> Bool {
        guard let rule = settings.rule(for: bucket) else { return true }
        let at = now.microseconds
        return state.withLock { state in
            if state.settings != settings {
                state.settings = settings
                state.buckets.removeAll()
            }
            let key = Key(bucket: bucket.name, client: client)
            let ttl = Int64(rule.ttl * 1_000_000)
            var current = Bucket(tokens: Double(rule.burst), last: at, created: at)
            // tollbooth keeps a client's limiter for the TTL from its creation, then starts anew.
            if let existing = state.buckets[key], at - existing.created < ttl {
                let elapsed = Double(max(0, at - existing.last)) / 1_000_000
                current = existing
                current.tokens = min(Double(rule.burst), existing.tokens + elapsed * rule.perSecond)
                current.last = max(existing.last, at)
            } else if state.buckets.count >= RateLimiter.pruneThreshold {
                state.buckets = state.buckets.filter { at - $0.value.created < ttl }
            }
            guard current.tokens >= 1 else { return false }
            current.tokens -= 1
            state.buckets[key] = current
            return true
        }
    }

    /// Forgets every bucket.
    public func reset() {
        state.withLock { $0.buckets.removeAll() }
    }
}

extension Core {
    /// `performRateLimiting`: 429 `over_request_rate_limit` when the request's client has used up
    /// `bucket`. Endpoints call it where GoTrue applies the limiter (route middleware for most,
    /// inside the handler for `/signup` and `/token`). No `Retry-After` or `X-RateLimit-*`
    /// headers: the real limiter is called in a way that emits none.
    func rateLimit(_ bucket: RateLimitBucket, _ context: RequestContext) throws(AuthError) {
        let settings = snapshot.configuration.rateLimits
        guard let client = settings.clientKey(for: context.request) else { return }
        if !project.rateLimiter.allow(bucket, client: client, settings: settings, now: project.environment.now()) {
            throw AuthError(429, .overRequestRateLimit, "Request rate limit reached")
        }
    }
}
extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

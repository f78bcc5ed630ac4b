import AuthHTTP
import AuthJWT
import AuthPlatform
import AuthStore

/// All state of one emulated project. Nothing in GoTrue is global, so several isolated projects
/// can share one process.
public struct Project: Sendable {
    /// The live configuration, shared by every copy of this project: the emulator's control
    /// API may change it while the server runs (auto-confirm, signup, rate limits, ...).
    public let settings: LiveConfiguration
    public var database: Database
    public var environment: Environment
    /// Captured email/SMS bookkeeping: global send limiters and the "message captured" observer.
    public let outbox: Outbox
    /// The per-client request limiters (reference §6.1), shared by every copy of this project.
    public let rateLimiter = RateLimiter()
    /// The identity providers GoTrue's OAuth flows and id_token grant reach (the seam; the
    /// emulator binds its fake providers). Nil: none answers.
    package var identityProviders: (@Sendable (Core) -> any IdentityProviderSeam)?
    /// How auth hooks are called (the emulator binds its HTTP client; nothing by default).
    public var hookTransport: any HookTransport = UnavailableHookTransport()
    /// Seconds between hook attempts after a connection failure (`hookshttp`: 2 s).
    public var hookBackoff: Double = 2
    /// The latest hook calls, newest last (bounded).
    public let hookLog = HookLog()
    /// Held by a write from the round before a send-email or send-SMS hook call to its commit
    /// (`WriteRounds`): such calls, and the send limits they follow, go one at a time. Worker
    /// threads only; the event loop never takes it.
    public let hookEffects = ConditionLock<Void>()
    /// What the layers above keep per project (fixtures, fake providers, wallets, dashboard):
    /// GoTrue holds it and never reads it.
    public let extensions = ProjectExtensions()

    public init(configuration: Configuration, database: Database, environment: Environment = Environment()) {
        self.settings = LiveConfiguration(configuration)
        self.database = database
        self.environment = environment
        self.outbox = Outbox(start: environment.now())
    }

    /// A snapshot of the live configuration. Setting it replaces the live configuration.
    public var configuration: Configuration {
        get { settings.current }
        nonmutating set { settings.update { $0 = newValue } }
    }
}

/// State the layers above keep per project, one value per type, made on first use and shared
/// by every copy of the project.
public final class ProjectExtensions: Sendable {
    private let values = Lock<[ObjectIdentifier: any Sendable]>([:])

    public init() {}

    /// The value of type `T`, made by `make` the first time it is asked for.
    public func value<T: Sendable>(_ make: () -> T) -> T {
        values.withLock { values in
            if let value = values[ObjectIdentifier(T.self)] as? T { return value }
            let value = make()
            values[ObjectIdentifier(T.self)] = value
            return value
        }
    }
}

/// The project's configuration behind a lock, so it can change at runtime.
///
/// The lock guards a reference to an immutable box, never the struct itself: every request
/// reads the configuration, and copying the whole struct (a retain per field) inside the lock
/// made it the server's most contended one. With 8 workers on 2 cores, `GET /user` spent 14 %
/// of its CPU spinning in that lock (perf, bench/cost.sh).
public final class LiveConfiguration: Sendable {
    private let value: Lock<ConfigurationSnapshot>

    public init(_ configuration: Configuration) { value = Lock(ConfigurationSnapshot(configuration)) }

    public var current: Configuration { snapshot.configuration }

    /// The configuration as it is now, by reference: a request keeps it for its whole life.
    public var snapshot: ConfigurationSnapshot { value.withLock { $0 } }

    /// Applies `change` atomically; nothing changes when it throws.
    ///
    /// `change` runs on a copy outside the lock, since it may be slow (a PATCH parses and
    /// escapes email templates) and every request, the event loop's `/health` among them, takes
    /// this lock for its snapshot. The result is swapped in only if no other change landed
    /// meanwhile; otherwise `change` runs again on the newer configuration, so it must only
    /// change its copy (and values it resets itself).
    public func update<E: Error>(_ change: (inout Configuration) throws(E) -> Void) throws(E) {
        while true {
            let base = snapshot
            var copy = base.configuration
            try change(&copy)
            let next = ConfigurationSnapshot(copy)
            let swapped = value.withLock { (current: inout ConfigurationSnapshot) -> Bool in
                guard current === base else { return false }
                current = next
                return true
            }
            if swapped { return }
        }
    }
}

/// One immutable configuration and what requests derive from it, computed once.
///
/// Requests hold this reference instead of a copy of the struct: a copy retains every field
/// (about 1,600 instructions), and `GET /user` made three. The key set that verifies access
/// tokens is built here once, not per request.
public final class ConfigurationSnapshot: Sendable {
    public let configuration: Configuration
    /// `configuration.jwt.verificationKeys`.
    public let verificationKeys: JWTKeySet

    public init(_ configuration: Configuration) {
        self.configuration = configuration
        self.verificationKeys = configuration.jwt.verificationKeys
    }
}

/// The latest hook calls, for tests and the control routes.
public final class HookLog: Sendable {
    private let calls = Lock<(all: [HookCall], pending: [HookCall])>(([], []))
    static let capacity = 200

    public init() {}

    func append(_ call: HookCall) {
        calls.withLock { log in
            log.all.append(call)
            if log.all.count > HookLog.capacity { log.all.removeFirst(log.all.count - HookLog.capacity) }
            log.pending.append(call)
            if log.pending.count > HookLog.capacity { log.pending.removeFirst(log.pending.count - HookLog.capacity) }
        }
    }

    public var entries: [HookCall] { calls.withLock { $0.all } }

    /// The calls made since the last drain (the request journal takes them).
    public func drain() -> [HookCall] {
        calls.withLock { log in
            defer { log.pending = [] }
            return log.pending
        }
    }

    /// What 5xx answers kept from their clients (`AuthError.internalError`), by request, until
    /// the request journal takes them; the newest few only, since requests the journal does not
    /// record (the emulator's own routes) never take theirs. Kept here, beside the hook calls
    /// the journal also takes, rather than on the response: the journal's middleware reading
    /// the response cost every request a copy of it.
    private let internalErrors = Lock<[(request: RequestID, cause: String)]>([])

    func noteInternalError(_ cause: String, request: RequestID) {
        internalErrors.withLock { list in
            list.append((request, cause))
            if list.count > 32 { list.removeFirst(list.count - 32) }
        }
    }

    /// The cause the answer to `request` kept from its client, once.
    public func takeInternalError(request: RequestID) -> String? {
        internalErrors.withLock { list in
            guard let index = list.firstIndex(where: { $0.request == request }) else { return nil }
            return list.remove(at: index).cause
        }
    }
}

import AuthHTTP
import AuthJSON
import AuthJWT
import AuthPlatform
import AuthStore
import GoFormats

/// The caller of a user-authenticated endpoint (`requireAuthentication`, reference §1.3).
struct Authenticated {
    var claims: JSONObject
    var user: UserRecord
    var session: SessionRecord?
    var token: String
    /// Loaded in the same read transaction when asked for.
    var identities: [IdentityRecord]?
    /// The user's MFA factors (loaded with the identities).
    var factors: [FactorRecord] = []
}

/// What every endpoint group shares: the project, the request's configuration snapshot and the
/// request-level helpers. Built once per request (see `EndpointGroup`).
package struct Core: Sendable {
    package let project: Project
    /// The configuration snapshot `GoTrueAPI.respond` took for this request.
    package let snapshot: ConfigurationSnapshot
    /// For this file only. Every other file reads `snapshot.configuration` (stored properties all
    /// the way down): GoTrue's files are optimized one by one (Package.swift), and a getter called
    /// from another file returns a copy of the whole struct, a retain per field (14 of them per
    /// refresh when the endpoints read it through here).
    fileprivate var config: Configuration { snapshot.configuration }

    init(project: Project, snapshot: ConfigurationSnapshot) {
        self.project = project
        self.snapshot = snapshot
    }

    /// Outside a request (the embedding API, start-up, fixtures): one snapshot taken now.
    package init(project: Project) {
        self.init(project: project, snapshot: project.settings.snapshot)
    }

    /// `extractBearerToken`: 401 `no_authorization` without a well-formed bearer token.
    func bearerToken(_ context: RequestContext) throws(AuthError) -> String {
        guard let token = context.request.bearerToken else {
            throw AuthError(401, .noAuthorization, "This endpoint requires a valid Bearer token")
        }
        return token
    }

    /// `parseJWTClaims`: verified against the project's keys and the (virtual) clock.
    /// Access tokens each worker thread verified recently (`JWTVerificationCache`): a client
    /// presents the same token on every call until it refreshes. Shared by every project in
    /// the process; a hit still needs the same key in the project's current key set.
    static let verifiedTokens = ThreadLocal { JWTVerificationCache() }

    func verifiedClaims(_ token: String) throws(AuthError) -> JSONObject {
        do {
            let keys = snapshot.verificationKeys
            let now = project.environment.now().unixSeconds
            return try Core.verifiedTokens.withValue { cache in try cache.verify(token, keys: keys, now: now) }.claims
        } catch {
            throw AuthError(403, .badJwt, "invalid JWT: unable to parse or verify signature, \(error)")
        }
    }

    /// `requireAuthentication`: a valid token whose `sub` is an existing user and whose
    /// `session_id`, when present, is an existing session; banned users refused. Without
    /// `refusingBanned`, `maybeLoadUserOrSession` alone, as the admin routes load a session-bound
    /// token's user (`requireAdminCredentials`: no ban check there).
    func authenticate(_ context: RequestContext, loadingIdentities: Bool = false,
                      refusingBanned: Bool = true) throws(AuthError) -> Authenticated {
        let token = try bearerToken(context)
        let claims = try verifiedClaims(token)
        guard let sub = claims["sub"]?.stringValue, !sub.isEmpty else {
            throw AuthError(403, .badJwt, "invalid claim: missing sub claim")
        }
        guard let userID = UUIDText.lowercased(sub) else {
            throw AuthError(400, .badJwt, "invalid claim: sub claim must be a UUID")
        }
        let sessionID = claims["session_id"]?.stringValue ?? ""
        // The session to load, if any: a claim of "" or the nil UUID names none.
        var sessionKey: String?
        if !sessionID.isEmpty, sessionID != Validation.nilUUID {
            guard let key = UUIDText.lowercased(sessionID) else {
                throw AuthError(403, .badJwt, "invalid claim: session_id claim must be a UUID")
            }
            sessionKey = key
        }
        let loaded: (UserRecord?, SessionRecord?, [IdentityRecord]?, [FactorRecord])
        do {
            loaded = try project.database.read { [sessionKey] conn in
                let user = try conn.user(id: userID)
                let session = try sessionKey.flatMap { try conn.session(id: $0) }
                let identities = loadingIdentities && user != nil ? try conn.identities(userID: userID) : nil
                let factors = loadingIdentities && user != nil ? try conn.factors(userID: userID) : []
                return (user, session, identities, factors)
            }
        } catch {
            throw storeFailure(error)
        }
        guard let user = loaded.0 else { throw AuthError(403, .userNotFound, "User from sub claim in JWT does not exist") }
        if sessionKey != nil, loaded.1 == nil {
            throw AuthError(403, .sessionNotFound, "Session from session_id claim in JWT does not exist")
        }
        if refusingBanned && isBanned(user) { throw AuthError(403, .userBanned, "User is banned") }
        return Authenticated(claims: claims, user: user, session: loaded.1, token: token, identities: loaded.2, factors: loaded.3)
    }

    /// The emulator's control routes accept the service_role key (or the `sb_secret_` key) as
    /// `apikey` or bearer, or any valid token whose role is an admin role.
    func requireServiceRole(_ context: RequestContext) throws(AuthError) {
        let keys = config.apiKeys
        let secrets = [keys.serviceRole, keys.secret].compactMap { $0 }
        var presented: [String] = []
        if let key = context.request.headers["apikey"], !key.isEmpty { presented.append(key) }
        if let token = context.request.bearerToken { presented.append(token) }
        guard !presented.isEmpty else {
            throw AuthError(401, .noAuthorization, "This endpoint requires the service_role key")
        }
        if presented.contains(where: { secrets.contains($0) }) { return }
        for token in presented {
            if let claims = try? verifiedClaims(token), let role = claims["role"]?.stringValue,
               config.jwt.adminRoles.contains(role) {
                return
            }
        }
        throw AuthError(403, .notAdmin, "User not allowed")
    }

    func isBanned(_ user: UserRecord) -> Bool {
        guard let until = user.bannedUntil else { return false }
        return until > project.environment.now().microseconds
    }

    /// `requestAud`: `X-JWT-AUD`, else the token's `aud` (ignored for admin roles), else the default.
    func requestAudience(_ context: RequestContext, claims: JSONObject? = nil) -> String {
        if let header = context.request.headers["X-JWT-AUD"], !header.isEmpty { return header }
        if let claims, let role = claims["role"]?.stringValue, !config.jwt.adminRoles.contains(role) {
            if let aud = claims["aud"]?.stringValue, !aud.isEmpty { return aud }
            if let first = claims["aud"]?.arrayValue?.first?.stringValue, !first.isEmpty { return first }
        }
        return config.jwt.audience
    }

    /// A database failure no call site named: GoTrue's generic 500 (the cause goes to the log
    /// and the journal when the response is made: `GoTrueAPI.render`).
    package func storeFailure(_ error: any Error) -> AuthError {
        if let auth = error as? AuthError { return auth }
        var failure = AuthError.databaseFailure("Database error", error)
        failure.isUnnamedStoreFailure = true
        return failure
    }

    /// Runs a write transaction, mapping store failures to GoTrue's 500 and letting `AuthError`s
    /// (which roll the transaction back) through.
    ///
    /// With any hook on, `body` may run more than once (`WriteRounds`): hooks it calls are
    /// called between runs, never while the writer is held, and only the last run commits. So
    /// `body` is `@Sendable` (it cannot assign what it captured: it returns what the response
    /// needs) and queues what it produces outside the database on its round (`WriteRound`),
    /// which is published once that round has committed and dropped with any other.
    package func write<T>(_ body: @Sendable (Connection, inout WriteRound) throws -> T) throws(AuthError) -> T {
        if runsInRounds {
            let committed = try writeInRounds(body)
            committed.round.publish(to: project)
            return committed.value
        }
        var round = WriteRound()
        let value: T
        do {
            value = try storeWrite { conn in
                round = WriteRound()  // a run again after a conflict starts with nothing published
                return try body(conn, &round)
            }
        } catch {
            throw storeFailure(error)
        }
        round.publish(to: project)
        return value
    }

    /// A write that produces nothing outside the database.
    package func write<T>(_ body: @Sendable (Connection) throws -> T) throws(AuthError) -> T {
        if runsInRounds { return try writeInRounds { conn, _ in try body(conn) }.value }
        do {
            return try storeWrite(body)
        } catch {
            throw storeFailure(error)
        }
    }

    /// How many times a write Postgres ended as a deadlock victim is run again.
    static let conflictRetries = 3

    private func storeWrite<T>(_ body: (Connection) throws -> T) throws -> T {
        try project.writeRerunningConflicts(body)
    }

    /// With a hook on (or the `writesTwice` test switch), outside another write's rounds.
    private var runsInRounds: Bool {
        (config.hooks.anyCallable || WriteRounds.writesTwice) && WriteRounds.current == nil
    }

    private func writeInRounds<T>(_ body: @Sendable (Connection, inout WriteRound) throws -> T) throws(AuthError) -> (value: T, round: WriteRound) {
        let rounds = WriteRounds(rehearsing: WriteRounds.writesTwice)
        var holdsEffects = false
        defer { if holdsEffects { project.hookEffects.unlock() } }
        while true {
            do {
                return try storeWrite { conn in
                    try rounds.round {
                        var round = WriteRound()
                        let value = try body(conn, &round)
                        return (value, round)
                    }
                }
            } catch {
                if rounds.takeRehearsal() { continue }
                guard let pending = rounds.takePending() else { throw storeFailure(error) }
                if WriteRounds.outsideEffects.contains(pending.name) && !holdsEffects {
                    // The rest of this write's rounds run under the lock: the round is run again
                    // before the call, so what it checks (the send limits) is checked again.
                    // The wait may be long (another write's hook call): a stand-in serves meanwhile.
                    // Past the project's bound of waiting requests, this request's hook call
                    // fails as one reaching its deadline does, and the write answers that.
                    do throws(AuthError) {
                        try BlockingIO.perform(refusing: { Hooks.timedOut }) { () throws(AuthError) in project.hookEffects.lock() }
                    } catch {
                        rounds.record(pending, outcome: .failure(error))
                        continue
                    }
                    holdsEffects = true
                    continue
                }
                guard rounds.calls < 2 * WriteRounds.maxCalls else {
                    logError("hook \(pending.name): the write kept reaching new hook calls; giving up")
                    throw AuthError.unexpected
                }
                rounds.record(pending, outcome: pending.call())
            }
        }
    }

    package func read<T>(_ body: (Connection) throws -> T) throws(AuthError) -> T {
        do {
            return try project.database.read(body)
        } catch {
            throw storeFailure(error)
        }
    }

    /// Appends an audit-log entry as `models.NewAuditLogEntry` stores it. The payload is a Go map
    /// that `JSONMap.Value` marshals, so its text has sorted keys (Postgres keeps a `json`
    /// column's text as written): `actor_name` whenever the user's metadata has a `full_name`
    /// (any JSON value, null included), the username is the phone when there is one, else the
    /// email. Most call sites upstream pass no IP address; those that pass
    /// `utilities.GetIPAddress(r)` pass `clientIP`. With `GOTRUE_AUDIT_LOG_DISABLE_POSTGRES`
    /// GoTrue only logs the event: nothing is stored.
    package func audit(_ conn: Connection, _ context: RequestContext, actor: UserRecord?, action: AuditAction,
               traits: JSONObject? = nil, ipAddress: String = "") throws {
        if config.auditLogDisablePostgres { return }
        let payload = Core.auditPayload(actor: actor, name: Core.auditName(actor), action: action, traits: traits)
        try conn.insertAuditLogEntry(id: project.environment.uuid(), payload: payload, ipAddress: ipAddress,
                                     at: project.environment.now().microseconds)
    }

    /// The user's `full_name`, any JSON value, when the metadata has one. Parsed only when the
    /// text can hold the key.
    private static func auditName(_ actor: UserRecord?) -> JSON? {
        guard let metadata = actor?.userMetadata, metadata.utf8.count > 12, mayContainFullName(metadata) else { return nil }
        return Models.object(metadata)["full_name"]
    }

    private static func auditPayload(actor: UserRecord?, name: JSON?, action: AuditAction, traits: JSONObject?) -> String {
        var payload = JSONByteWriter(reservingCapacity: 192)
        payload.beginObject()
        payload.member("action", action.rawValue)
        payload.member("actor_id", actor?.id ?? "")
        if let name { payload.member("actor_name", name.sortedRecursively()) }
        let phone = actor?.phone ?? ""
        payload.member("actor_username", phone.isEmpty ? actor?.email ?? "" : phone)
        payload.member("actor_via_sso", actor?.isSSOUser ?? false)
        payload.member("log_type", action.logType)
        if let traits { payload.member("traits", .object(traits.sortedRecursively())) }
        payload.endObject()
        return String(decoding: payload.bytes, as: UTF8.self)
    }
}

extension Core {
    /// Whether JSON text may have a `full_name` key: the bytes `full_name` (a key escaped with
    /// `\u` sequences is found by the parse this guards only if it is there at all).
    static func mayContainFullName(_ text: String) -> Bool {
        let needle = fullNameKey
        let found = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            let n = bytes.count
            var i = 0
            while i < n {
                let byte = bytes[i]
                if byte == UInt8(ascii: "\\") && i + 1 < n && bytes[i + 1] == UInt8(ascii: "u") { return true }
                if byte == UInt8(ascii: "f") && i + needle.count <= n {
                    var k = 1
                    while k < needle.count && bytes[i + k] == needle[k] { k += 1 }
                    if k == needle.count { return true }
                }
                i += 1
            }
            return false
        }
        return found ?? true
    }

    private static let fullNameKey: [UInt8] = Array("full_name".utf8)
}

extension Core {
    /// `utilities.GetIPAddress`: the `Sb-Forwarded-For` address when that header is trusted,
    /// else the first valid address of `X-Forwarded-For`, else the peer's address; a header's
    /// address as `net.ParseIP(...).String()` prints it (`::ffff:1.2.3.4` is `1.2.3.4`). MFA
    /// challenges record it and verification must come from the same one.
    func clientIP(_ context: RequestContext) -> String { clientIP(context.request) }

    func clientIP(_ request: HTTPRequest) -> String {
        let headers = request.headers
        if config.rateLimits.sbForwardedForEnabled, let value = headers["Sb-Forwarded-For"] {
            if let address = GoNet.canonicalIP(RateLimitSettings.firstValue(value)) { return address }
        }
        if let forwarded = headers["X-Forwarded-For"] {
            for part in forwarded.split(separator: ",") {
                let candidate = GoStrings.trimSpace(part)
                if !candidate.isEmpty, let address = GoNet.canonicalIP(candidate) { return address }
            }
        }
        return request.remoteAddress
    }
}

extension Project {
    /// `Database.write`, run again (alone, up to `Core.conflictRetries` times) when Postgres ends
    /// its transaction as a deadlock victim. A process groups the writes arriving together into
    /// one transaction, which then holds several requests' row locks at once: two processes
    /// signing in the same users in another order close a cycle that two GoTrue replicas, one
    /// request per transaction, never close. Run alone, the write is again one request's
    /// transaction; a conflict that outlasts the retries is thrown, and answers GoTrue's 500 as a
    /// replica's deadlock does. `body` must be re-runnable, as a `Core.write` closure is by
    /// construction.
    package func writeRerunningConflicts<T>(_ body: (Connection) throws -> T) throws -> T {
        var retries = 0
        while true {
            do {
                return try database.write(alone: retries > 0, body)
            } catch let error as StoreError where error.isTransactionConflict && retries < Core.conflictRetries {
                retries += 1
            } catch let error as AuthError where error.isTransactionConflict && retries < Core.conflictRetries {
                retries += 1
            }
        }
    }
}

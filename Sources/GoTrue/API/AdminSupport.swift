import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore
import GoFormats

/// The caller of an admin endpoint (`requireAdminCredentials`, reference §1.3).
struct AdminCaller {
    var claims: JSONObject
    var role: String

    /// `requireAdmin` stands in a user with the token's role as both role and email, so audit
    /// entries of admin actions read `actor_id` nil UUID and `actor_username` the role.
    var actor: UserRecord {
        var user = UserRecord(id: Validation.nilUUID, createdAt: 0)
        user.role = role
        user.email = role
        return user
    }
}

extension Core {
    /// `requireAdminCredentials`: a verified bearer JWT; when it names a session (a user's token
    /// whose role is an admin role), the user and session must exist and the session must still
    /// be valid; then the `role` claim must be one of `GOTRUE_JWT_ADMIN_ROLES`.
    func requireAdmin(_ context: RequestContext) throws(AuthError) -> AdminCaller {
        // Opaque `sb_` keys arrive here already swapped for JWTs by the gateway (`translateKeys`).
        let claims = try verifiedClaims(try bearerToken(context))
        let sessionID = claims["session_id"]?.stringValue ?? ""
        if !sessionID.isEmpty && sessionID != Validation.nilUUID {
            let caller = try authenticate(context, refusingBanned: false)
            if let session = caller.session,
               !isSessionValid(session, userHasVerifiedFactor: caller.factors.contains { $0.status == "verified" }) {
                throw AuthError(403, .sessionExpired, "Session is no longer valid")
            }
        }
        let role = claims["role"]?.stringValue ?? ""
        guard snapshot.configuration.jwt.adminRoles.contains(role) else {
            throw AuthError(403, .notAdmin, "User not allowed")
        }
        return AdminCaller(claims: claims, role: role)
    }

    /// `Session.CheckValidity`'s time rules: `not_after`, the timebox and inactivity (measured
    /// from the last refresh, else the creation).
    func isSessionValid(_ s: SessionRecord, userHasVerifiedFactor: Bool) -> Bool {
        let now = project.environment.now().microseconds
        let sessions = snapshot.configuration.sessions
        if let notAfter = s.notAfter, now > notAfter { return false }
        if let timebox = sessions.timeboxSeconds, timebox > 0, now > s.createdAt + Int64(timebox * 1_000_000) {
            return false
        }
        if let timeout = sessions.inactivityTimeoutSeconds, timeout > 0,
           now > (s.refreshedAt ?? s.createdAt) + Int64(timeout * 1_000_000) {
            return false
        }
        if let deadline = sessions.lowAALDeadline(createdAt: s.createdAt, aal: s.aal, userHasVerifiedFactor: userHasVerifiedFactor),
           now > deadline {
            return false
        }
        return true
    }
}

/// Pagination as `paginate` / `addPaginationHeaders` do it (reference §12.1, §12.8).
struct AdminPagination {
    var page: UInt64 = 1
    var perPage: UInt64 = 50

    /// `paginate`: `page` and `per_page` parsed as unsigned decimals; 400 otherwise.
    init(_ request: HTTPRequest) throws(AuthError) {
        for (name, keyPath) in [("page", \AdminPagination.page), ("per_page", \AdminPagination.perPage)] {
            guard let text = request.queryValue(name), !text.isEmpty else { continue }
            switch GoStrconv.parseUInt(text) {
            case .success(let value): self[keyPath: keyPath] = value
            case .failure(let error):
                throw AuthError(400, .validationFailed, "Bad Pagination Parameters: \(error.message)")
            }
        }
    }

    var paging: Paging {
        Paging(page: page > UInt64(Int.max) ? Int.max : Int(page), perPage: perPage > UInt64(Int.max) ? Int.max : Int(perPage))
    }

    /// `Link` (`rel="next"` while pages remain, always `rel="last"`) and `X-Total-Count`, with
    /// URLs built from the path GoTrue sees and the request's query re-encoded by Go's rules.
    /// A `per_page` of 0 divides by zero in the real server: a recovered panic, 500.
    func headers(_ context: RequestContext, total: Int) throws(AuthError) -> HTTPHeaders {
        guard perPage > 0 else { throw AuthError.internalServerError }
        let count = UInt64(total)
        let pages = count / perPage + (count % perPage > 0 ? 1 : 0)
        func link(page: UInt64) -> String {
            // `query.Set("page", …)` replaces every `page`; `Encode` sorts the keys anyway.
            let items = context.request.query.filter { $0.name != "page" } + [QueryItem(name: "page", value: String(page))]
            return "<" + context.path + "?" + GoURL.encode(items) + ">"
        }
        var value = ""
        if pages > page { value += link(page: page + 1) + "; rel=\"next\", " }
        value += link(page: pages) + "; rel=\"last\""
        var headers = HTTPHeaders()
        headers["Link"] = value
        headers["X-Total-Count"] = String(total)
        return headers
    }
}

extension GoURL {
    /// `url.Values.Encode`: keys sorted (byte order), each value in its original order.
    package static func encode(_ items: [QueryItem]) -> String {
        var order: [String] = []
        var values: [String: [String]] = [:]
        for item in items {
            if values[item.name] == nil { order.append(item.name) }
            values[item.name, default: []].append(item.value)
        }
        order.sort { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        var parts: [String] = []
        for key in order {
            for value in values[key] ?? [] { parts.append(queryEscape(key) + "=" + queryEscape(value)) }
        }
        return parts.joined(separator: "&")
    }
}

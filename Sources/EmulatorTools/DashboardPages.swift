import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
import GoTrue

/// The dashboard's pages, rendered on the server (they work without JavaScript), and its
/// actions. Reads and writes go through the admin and control routes (`call`), so each action
/// is exactly what the matching API call does; the few reads no route offers (a user's
/// sessions and audit entries, factor counts, the live stamp) use the store's existing queries.
extension DashboardEndpoints {
    typealias H = DashboardHTML

    static let usersPerPage = 50

    // MARK: Users

    func usersPage(_ context: RequestContext, status: Int = 200, error: String? = nil,
                   draft: [String: String] = [:]) throws -> HTTPResponse {
        let search = context.request.queryValue("q") ?? ""
        let number = max(1, Int(context.request.queryValue("page") ?? "") ?? 1)
        let perPage = DashboardEndpoints.usersPerPage
        let root = context.dashboardRoot
        var body = """
            <h1>Users</h1>
            <form method="get" action="\(root)" class="bar" role="search">
            <label>Search email, phone, name or id<input type="search" name="q" value="\(H.escape(search))"></label>
            <button type="submit">Search</button>\(search.isEmpty ? "" : " <a href=\"\(root)\">Clear</a>")</form>
            """
        body += createUserForm(draft, open: error != nil, root: root)
        let total: Int
        let users: [JSON]
        if search.isEmpty {
            // The admin listing: LIMIT/OFFSET over the users' creation order, one count.
            let reply = call("GET", "/admin/users" + H.query([("page", String(number)), ("per_page", String(perPage))]), from: context)
            guard reply.ok else {
                return page(context, status: reply.status, title: "Users", view: "users", error: reply.message, body: body)
            }
            total = Int(reply.headers["X-Total-Count"] ?? "") ?? 0
            users = reply.json["users"]?.arrayValue ?? []
        } else {
            // The admin API's `filter` is GoTrue's (case-sensitive email, `full_name` only), which
            // clients rely on; the search box asks the store's case-insensitive search instead.
            let found = try api.read { conn in
                try conn.searchUsers(aud: api.snapshot.configuration.jwt.audience, text: search, paging: Paging(page: number, perPage: perPage))
            }
            total = found.total
            users = found.items.map { Models.user($0, identities: nil) }
        }
        let ids = users.compactMap { $0["id"]?.stringValue }
        // The listing leaves factors out (as GoTrue's does); count them for this page only.
        let factorCounts: [String: Int] = try api.read { conn in
            var counts: [String: Int] = [:]
            for id in ids { counts[id] = try conn.factors(userID: id).count }
            return counts
        }
        let pages = max(1, (total + perPage - 1) / perPage)
        body += "<p class=\"muted\">\(H.counted(total, "user"))\(search.isEmpty ? "" : " matching") · page \(H.grouped(number)) of \(H.grouped(pages))</p>"
        if users.isEmpty {
            body += "<p>No users\(search.isEmpty ? " yet. Sign up from the app, or seed fixtures with <code>POST /emulator/v1/seed</code>." : " match.")</p>"
        } else {
            body += H.tableStart(["Email", "Phone", "Providers", "Confirmed", "Last sign-in", "Banned", "Anonymous", "MFA factors",
                                  "Created"])
            for user in users {
                let id = user["id"]?.stringValue ?? ""
                let email = user["email"]?.stringValue ?? ""
                let providers = user["app_metadata"]?["providers"]?.arrayValue?.compactMap(\.stringValue) ?? []
                let label = email.isEmpty ? (user["phone"]?.stringValue.flatMap { $0.isEmpty ? nil : "+" + $0 } ?? id) : email
                body += "<tr><td><a href=\"\(root)/users/\(H.urlEncode(id))\">\(H.escape(label))</a></td>"
                body += "<td>\(H.escape(user["phone"]?.stringValue ?? ""))</td>"
                body += "<td>\(providers.map { "<span class=\"badge\">\(H.escape($0))</span>" }.joined())</td>"
                body += "<td>\(yesNo(isConfirmed(user)))</td>"
                body += "<td>\(H.escape(shortTime(user["last_sign_in_at"])))</td>"
                body += "<td>\(isBanned(user) ? "<span class=\"badge bad\">banned</span>" : "")</td>"
                body += "<td>\(user["is_anonymous"]?.boolValue == true ? "yes" : "")</td>"
                body += "<td>\(factorCounts[id] ?? 0)</td>"
                body += "<td>\(H.escape(shortTime(user["created_at"])))</td></tr>"
            }
            body += H.tableEnd
        }
        if pages > 1 {
            body += "<nav class=\"pager\" aria-label=\"Pages\">"
            if number > 1 { body += "<a href=\"\(root)\(H.query([("q", search), ("page", String(number - 1))]))\" rel=\"prev\">← Newer</a>" }
            if number < pages { body += "<a href=\"\(root)\(H.query([("q", search), ("page", String(number + 1))]))\" rel=\"next\">Older →</a>" }
            body += "</nav>"
        }
        return page(context, status: status, title: "Users", view: "users", stamp: stamp("users", context), error: error, body: body)
    }

    func isConfirmed(_ user: JSON) -> Bool {
        for key in ["email_confirmed_at", "phone_confirmed_at"] where user[key]?.stringValue != nil { return true }
        return false
    }

    /// Banned until a time still ahead on the project's (virtual) clock.
    func isBanned(_ user: JSON) -> Bool {
        guard let text = user["banned_until"]?.stringValue, let until = Timestamp(rfc3339: text) else { return false }
        return until.microseconds > api.project.environment.now().microseconds
    }

    func yesNo(_ flag: Bool) -> String { flag ? "<span class=\"badge good\">yes</span>" : "<span class=\"badge\">no</span>" }

    /// `2026-01-01T10:00:00.123Z` as `2026-01-01 10:00:00`.
    func shortTime(_ value: JSON?) -> String {
        guard let text = value?.stringValue, text.count >= 19 else { return "" }
        return String(text.prefix(19)).replacingT()
    }

    func shortTime(microseconds: Int64?) -> String {
        guard let microseconds else { return "" }
        return shortTime(.string(Timestamp(microseconds: microseconds).rfc3339))
    }

    /// A session's refresh tokens: the legacy format's rows (issued, revoked), or the second
    /// format's counter (one token at a time, no rows).
    func refreshFamily(_ session: SessionRecord, _ family: RefreshTokenFamily) -> String {
        if family.count == 0, let counter = session.refreshTokenCounter { return "counter \(counter) (session format)" }
        let live = family.count - family.revoked
        return "\(family.count) issued · \(family.revoked) revoked" + (live == 0 && family.count > 0 ? " <span class=\"badge bad\">all revoked</span>" : "")
    }

    // MARK: One user

    /// `draft` holds a refused form's fields, shown again; `minted` a token just minted.
    func userPage(_ context: RequestContext, status: Int = 200, error: String? = nil, draft: [String: String] = [:],
                  minted: JSON? = nil) throws -> HTTPResponse {
        let id = context.pathParameters["user_id"] ?? ""
        let root = context.dashboardRoot
        let reply = call("GET", "/admin/users/" + H.urlEncode(id), from: context)
        guard reply.ok else {
            return page(context, status: reply.status, title: "User", view: "user", error: reply.message,
                        body: "<h1>User</h1><p><a href=\"\(root)\">All users</a></p>")
        }
        let user = reply.json
        let userID = user["id"]?.stringValue ?? id
        let email = user["email"]?.stringValue ?? ""
        let phone = user["phone"]?.stringValue ?? ""
        let (sessions, families, audit) = try api.read { conn in
            let sessions = try conn.sessions(userID: userID)
            return (sessions, try sessions.map { try conn.refreshTokenFamily(sessionID: $0.id) },
                    try conn.auditLogEntries(columns: ["actor_id", "traits.user_id"], value: userID, paging: Paging(page: 1, perPage: 50)))
        }
        let passkeys = call("GET", "/admin/users/" + H.urlEncode(userID) + "/passkeys", from: context).json.arrayValue ?? []
        let csrf = csrfToken
        let base = root + "/users/" + H.urlEncode(userID)
        var body = "<p><a href=\"\(root)\">← All users</a></p><h1>\(H.escape(email.isEmpty ? (phone.isEmpty ? userID : "+" + phone) : email))</h1>"
        body += "<div class=\"actions\">"
        if !isConfirmed(user) { body += H.button(base + "/confirm", "Confirm", csrf: csrf) }
        body += isBanned(user)
            ? H.button(base + "/unban", "Unban", csrf: csrf, style: "secondary")
            : H.button(base + "/ban", "Ban", csrf: csrf, style: "secondary", confirm: "Ban this user? Their sign-ins and refreshes will be refused.")
        if !email.isEmpty {
            body += H.button(base + "/magiclink", "Send magic link", csrf: csrf, style: "secondary")
            body += H.button(base + "/recovery", "Send recovery email", csrf: csrf, style: "secondary")
        }
        body += H.button(base + "/signout", "Sign out everywhere", csrf: csrf, style: "secondary",
                         confirm: "End every session of this user? Their refresh tokens stop working.")
        body += H.button(base + "/delete", "Delete user", csrf: csrf, style: "danger", confirm: "Delete this user for good?")
        body += "</div>"
        if let minted { body += mintedToken(minted, root: root) }
        body += "<div class=\"grid\"><section class=\"card\" aria-labelledby=\"facts\"><h3 id=\"facts\">Account</h3><dl>"
        let facts: [(String, String)] = [
            ("ID", userID), ("Email", email), ("Phone", phone), ("Role", user["role"]?.stringValue ?? ""),
            ("Audience", user["aud"]?.stringValue ?? ""),
            ("Email confirmed", shortTime(user["email_confirmed_at"])), ("Phone confirmed", shortTime(user["phone_confirmed_at"])),
            ("Last sign-in", shortTime(user["last_sign_in_at"])), ("Created", shortTime(user["created_at"])),
            ("Updated", shortTime(user["updated_at"])),
            ("Banned until", isBanned(user) ? shortTime(user["banned_until"]) : ""),
            ("Anonymous", user["is_anonymous"]?.boolValue == true ? "yes" : "no"),
        ]
        for (name, value) in facts where !value.isEmpty {
            let shown = name == "ID" ? H.copyable("user-id", value) : H.escape(value)
            body += "<dt>\(H.escape(name))</dt><dd>\(shown)</dd>"
        }
        body += "</dl></section>"
        body += "<section class=\"card\" aria-labelledby=\"metadata\"><h3 id=\"metadata\">Metadata</h3>\(metadataForm(base, user: user, draft: draft))</section>"
        body += "<section class=\"card\" aria-labelledby=\"mint\"><h3 id=\"mint\">Mint a token for this user</h3>\(mintForm(base, draft: draft))</section></div>"

        let identities = user["identities"]?.arrayValue ?? []
        body += H.listing("Identities (\(identities.count))", isEmpty: identities.isEmpty,
                          columns: ["Provider", "Provider id", "Email", "Last sign-in", "Data"]) {
            var rows = ""
            for identity in identities {
                rows += "<tr><td>\(H.escape(identity["provider"]?.stringValue ?? ""))</td><td>\(H.escape(identity["id"]?.stringValue ?? ""))</td>"
                rows += "<td>\(H.escape(identity["email"]?.stringValue ?? ""))</td><td>\(H.escape(shortTime(identity["last_sign_in_at"])))</td>"
                rows += "<td class=\"wrap\"><code>\(H.escape(H.pretty(identity["identity_data"] ?? .null, compact: true)))</code></td></tr>"
            }
            return rows
        }

        // Fits the page at 1280 px with Revoke in view: each time pairs with the one it goes
        // with (created over refreshed, the family over its last rotation), and the user
        // agent, the one long and unbounded value, gets a second line across the row.
        body += H.listing("Sessions (\(sessions.count))", isEmpty: sessions.isEmpty,
                          columns: ["Session", "AAL", "Created · refreshed", "Refresh tokens", "IP", ""], class: "sessions") {
            var rows = ""
            for (session, family) in zip(sessions, families) {
                let agent = session.userAgent ?? ""
                let rotated = shortTime(microseconds: family.count > 0 ? family.lastIssuedAt : session.refreshedAt)
                let refreshed = shortTime(microseconds: session.refreshedAt)
                rows += "<tr\(agent.isEmpty ? "" : " class=\"has-detail\"")><td><code>\(H.escape(session.id))</code></td><td>\(H.escape(session.aal))</td>"
                rows += "<td>\(H.escape(shortTime(microseconds: session.createdAt)))"
                rows += refreshed.isEmpty ? "" : "<br><span class=\"muted\">refreshed \(H.escape(refreshed))</span>"
                rows += "</td><td>\(refreshFamily(session, family))"
                rows += rotated.isEmpty ? "" : "<br><span class=\"muted\">last rotated \(H.escape(rotated))</span>"
                rows += "</td><td class=\"ip\">\(H.escape(session.ip ?? ""))</td>"
                let revoke = H.button(base + "/sessions/" + H.urlEncode(session.id) + "/revoke", "Revoke", csrf: csrf, style: "danger",
                                      accessibleLabel: "Revoke session " + session.id)
                rows += "<td>\(revoke)</td></tr>"
                if !agent.isEmpty {
                    rows += "<tr class=\"detail\"><td colspan=\"6\"><span class=\"muted\">User agent</span> \(H.escape(agent))</td></tr>"
                }
            }
            return rows
        }

        let factors = user["factors"]?.arrayValue ?? []
        body += H.listing("MFA factors (\(factors.count))", isEmpty: factors.isEmpty,
                          columns: ["Factor", "Type", "Name", "Status", "Created", ""]) {
            var rows = ""
            for factor in factors {
                let factorID = factor["id"]?.stringValue ?? ""
                rows += "<tr><td><code>\(H.escape(factorID))</code></td><td>\(H.escape(factor["factor_type"]?.stringValue ?? ""))</td>"
                rows += "<td>\(H.escape(factor["friendly_name"]?.stringValue ?? ""))</td><td>\(H.escape(factor["status"]?.stringValue ?? ""))</td>"
                rows += "<td>\(H.escape(shortTime(factor["created_at"])))</td>"
                let delete = H.button(base + "/factors/" + H.urlEncode(factorID) + "/delete", "Delete", csrf: csrf, style: "danger",
                                      confirm: "Delete this factor?", accessibleLabel: "Delete factor " + factorID)
                rows += "<td>\(delete)</td></tr>"
            }
            return rows
        }

        body += H.listing("Passkeys (\(passkeys.count))", isEmpty: passkeys.isEmpty,
                          columns: ["Passkey", "Name", "Created", "Last used", ""]) {
            var rows = ""
            for passkey in passkeys {
                let passkeyID = passkey["id"]?.stringValue ?? ""
                rows += "<tr><td><code>\(H.escape(passkeyID))</code></td><td>\(H.escape(passkey["friendly_name"]?.stringValue ?? ""))</td>"
                rows += "<td>\(H.escape(shortTime(passkey["created_at"])))</td><td>\(H.escape(shortTime(passkey["last_used_at"])))</td>"
                let delete = H.button(base + "/passkeys/" + H.urlEncode(passkeyID) + "/delete", "Delete", csrf: csrf, style: "danger",
                                      confirm: "Delete this passkey?", accessibleLabel: "Delete passkey " + passkeyID)
                rows += "<td>\(delete)</td></tr>"
            }
            return rows
        }

        body += H.listing("Audit log (latest \(audit.items.count) of \(H.grouped(audit.total)))", isEmpty: audit.items.isEmpty,
                          empty: "No entries.", columns: ["Time", "Action", "Actor", "Type"]) {
            var rows = ""
            for entry in audit.items {
                let payload = (try? JSON(parsing: Array(entry.payload.utf8))) ?? .null
                rows += "<tr><td>\(H.escape(shortTime(microseconds: entry.createdAt)))</td><td>\(H.escape(payload["action"]?.stringValue ?? ""))</td>"
                rows += "<td>\(H.escape(payload["actor_username"]?.stringValue ?? ""))</td><td>\(H.escape(payload["log_type"]?.stringValue ?? ""))</td></tr>"
            }
            return rows
        }
        return page(context, status: status, title: email.isEmpty ? "User" : email, view: "user", stamp: stamp("user", context, id: userID),
                    liveQuery: "&id=" + H.urlEncode(userID), error: error, body: body)
    }

    /// Confirm, ban, unban, delete, magic link, recovery: each the admin or public route that does it.
    func userAction(_ context: RequestContext) throws -> HTTPResponse {
        let id = context.pathParameters["user_id"] ?? ""
        let action = context.pathParameters["action"] ?? ""
        let path = "/admin/users/" + H.urlEncode(id)
        let current = call("GET", path, from: context)
        guard current.ok else { return try userPage(context, status: current.status, error: current.message) }
        let email = current.json["email"]?.stringValue ?? ""
        let phone = current.json["phone"]?.stringValue ?? ""
        let reply: DashboardReply
        let notice: String
        switch action {
        case "confirm":
            var changes = JSONObject()
            if !email.isEmpty { changes["email_confirm"] = true }
            if !phone.isEmpty { changes["phone_confirm"] = true }
            reply = call("PUT", path, .object(changes), from: context)
            notice = "Confirmed."
        case "ban":
            // A century: GoTrue's ban is a duration; this one outlives any test.
            reply = call("PUT", path, ["ban_duration": "876000h"], from: context)
            notice = "Banned."
        case "unban":
            reply = call("PUT", path, ["ban_duration": "none"], from: context)
            notice = "Ban lifted."
        case "delete":
            reply = call("DELETE", path, from: context)
            if reply.ok { return H.redirect(context.dashboardRoot + H.query([("notice", "Deleted " + (email.isEmpty ? id : email) + ".")])) }
            notice = ""
        case "signout":
            let ended = try signOutEverywhere(context, userID: id)
            reply = current
            notice = "Signed out everywhere: \(ended) session\(ended == 1 ? "" : "s") ended."
        case "magiclink":
            // What supabase-js's signInWithOtp sends for an existing user.
            reply = call("POST", "/otp", ["email": .string(email), "create_user": false], from: context)
            notice = "Magic link sent: see the mailbox."
        case "recovery":
            reply = call("POST", "/recover", ["email": .string(email)], from: context)
            notice = "Recovery email sent: see the mailbox."
        default:
            return page(context, status: 404, title: "Not found", view: "user", error: "Unknown action \"\(action)\".", body: "")
        }
        guard reply.ok else { return try userPage(context, status: reply.status, error: reply.message) }
        return H.redirect(context.dashboardRoot + "/users/" + H.urlEncode(id) + H.query([("notice", notice)]))
    }

    /// Ends one session as a local logout does: the row goes and its refresh tokens with it.
    /// No API route names a session, so this is the logout's own store call and audit entry.
    func revokeSession(_ context: RequestContext) throws -> HTTPResponse {
        let id = AdminEndpoints.canonicalUUID(context.pathParameters["user_id"] ?? "") ?? ""
        let sessionID = (context.pathParameters["session_id"] ?? "").lowercased()
        let revoked = try api.write { conn -> Bool in
            guard let user = try conn.user(id: id), let session = try conn.session(id: sessionID), session.userID == user.id else {
                return false
            }
            try api.audit(conn, context, actor: user, action: .logout)
            try conn.deleteSession(id: session.id)
            return true
        }
        guard revoked else { return try userPage(context, status: 404, error: "Session not found") }
        return H.redirect(context.dashboardRoot + "/users/" + H.urlEncode(id) + H.query([("notice", "Session revoked.")]))
    }

    func deleteFactor(_ context: RequestContext) throws -> HTTPResponse {
        try deleteUserItem(context, collection: "factors", parameter: "factor_id", notice: "Factor deleted.")
    }

    /// Deletes one of a user's factors or passkeys through its admin route
    /// (`DELETE /admin/users/{id}/<collection>/{item}`), then shows the user's page again.
    func deleteUserItem(_ context: RequestContext, collection: String, parameter: String, notice: String) throws -> HTTPResponse {
        let id = context.pathParameters["user_id"] ?? ""
        let itemID = context.pathParameters[parameter] ?? ""
        let reply = call("DELETE", "/admin/users/" + H.urlEncode(id) + "/" + collection + "/" + H.urlEncode(itemID), from: context)
        guard reply.ok else { return try userPage(context, status: reply.status, error: reply.message) }
        return H.redirect(context.dashboardRoot + "/users/" + H.urlEncode(id) + H.query([("notice", notice)]))
    }
}

extension DashboardEndpoints {
    /// A settings switch and how to say it positively.
    struct Toggle {
        var setting: String
        var label: String
        var on: String
        var off: String
        var turnOn: String
        var turnOff: String
        /// The stored flag means the opposite of `on` (`disable_signup`).
        var inverted = false
    }

    static let toggles: [Toggle] = [
        Toggle(setting: "disable_signup", label: "Sign-ups", on: "allowed", off: "not allowed",
               turnOn: "Allow", turnOff: "Disallow", inverted: true),
        Toggle(setting: "mailer_autoconfirm", label: "New email addresses", on: "confirmed automatically",
               off: "confirmed by link", turnOn: "Confirm automatically", turnOff: "Require the link"),
        Toggle(setting: "anonymous_users_enabled", label: "Anonymous sign-ins", on: "allowed", off: "not allowed",
               turnOn: "Allow", turnOff: "Disallow"),
        Toggle(setting: "phone_enabled", label: "Phone sign-ins", on: "allowed", off: "not allowed",
               turnOn: "Allow", turnOff: "Disallow"),
        Toggle(setting: "sms_autoconfirm", label: "New phone numbers", on: "confirmed automatically",
               off: "confirmed by code", turnOn: "Confirm automatically", turnOff: "Require the code"),
    ]
}

extension String {
    func replacingT() -> String {
        String(map { $0 == "T" ? " " : $0 })
    }

    /// The target without a `notice` query item (so a notice is not shown twice).
    func removingNotice() -> String {
        guard let mark = firstIndex(of: "?") else { return self }
        let kept = self[index(after: mark)...].split(separator: "&").filter { !$0.hasPrefix("notice=") }
        return String(self[..<mark]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
    }

    /// The target with `notice` as its (only) notice.
    func withNotice(_ notice: String) -> String {
        let base = removingNotice()
        return base + (base.contains("?") ? "&" : "?") + "notice=" + DashboardHTML.urlEncode(notice)
    }
}

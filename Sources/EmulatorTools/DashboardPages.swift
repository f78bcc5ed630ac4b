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
            body += """
                <div class="scroll"><table><thead><tr><th scope="col">Email</th><th scope="col">Phone</th><th scope="col">Providers</th>\
                <th scope="col">Confirmed</th><th scope="col">Last sign-in</th><th scope="col">Banned</th><th scope="col">Anonymous</th>\
                <th scope="col">MFA factors</th><th scope="col">Created</th></tr></thead><tbody>
                """
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
            body += "</tbody></table></div>"
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
        body += "<h2>Identities (\(identities.count))</h2>"
        if identities.isEmpty { body += "<p class=\"muted\">None.</p>" } else {
            body += "<div class=\"scroll\"><table><thead><tr><th scope=\"col\">Provider</th><th scope=\"col\">Provider id</th><th scope=\"col\">Email</th><th scope=\"col\">Last sign-in</th><th scope=\"col\">Data</th></tr></thead><tbody>"
            for identity in identities {
                body += "<tr><td>\(H.escape(identity["provider"]?.stringValue ?? ""))</td><td>\(H.escape(identity["id"]?.stringValue ?? ""))</td>"
                body += "<td>\(H.escape(identity["email"]?.stringValue ?? ""))</td><td>\(H.escape(shortTime(identity["last_sign_in_at"])))</td>"
                body += "<td class=\"wrap\"><code>\(H.escape(H.pretty(identity["identity_data"] ?? .null, compact: true)))</code></td></tr>"
            }
            body += "</tbody></table></div>"
        }

        body += "<h2>Sessions (\(sessions.count))</h2>"
        if sessions.isEmpty { body += "<p class=\"muted\">None.</p>" } else {
            // Fits the page at 1280 px with Revoke in view: each time pairs with the one it goes
            // with (created over refreshed, the family over its last rotation), and the user
            // agent, the one long and unbounded value, gets a second line across the row.
            body += "<div class=\"scroll\"><table class=\"sessions\"><thead><tr><th scope=\"col\">Session</th><th scope=\"col\">AAL</th><th scope=\"col\">Created · refreshed</th><th scope=\"col\">Refresh tokens</th><th scope=\"col\">IP</th><th scope=\"col\"></th></tr></thead><tbody>"
            for (session, family) in zip(sessions, families) {
                let agent = session.userAgent ?? ""
                let rotated = shortTime(microseconds: family.count > 0 ? family.lastIssuedAt : session.refreshedAt)
                let refreshed = shortTime(microseconds: session.refreshedAt)
                body += "<tr\(agent.isEmpty ? "" : " class=\"has-detail\"")><td><code>\(H.escape(session.id))</code></td><td>\(H.escape(session.aal))</td>"
                body += "<td>\(H.escape(shortTime(microseconds: session.createdAt)))"
                body += refreshed.isEmpty ? "" : "<br><span class=\"muted\">refreshed \(H.escape(refreshed))</span>"
                body += "</td><td>\(refreshFamily(session, family))"
                body += rotated.isEmpty ? "" : "<br><span class=\"muted\">last rotated \(H.escape(rotated))</span>"
                body += "</td><td class=\"ip\">\(H.escape(session.ip ?? ""))</td>"
                let revoke = H.button(base + "/sessions/" + H.urlEncode(session.id) + "/revoke", "Revoke", csrf: csrf, style: "danger",
                                      accessibleLabel: "Revoke session " + session.id)
                body += "<td>\(revoke)</td></tr>"
                if !agent.isEmpty {
                    body += "<tr class=\"detail\"><td colspan=\"6\"><span class=\"muted\">User agent</span> \(H.escape(agent))</td></tr>"
                }
            }
            body += "</tbody></table></div>"
        }

        let factors = user["factors"]?.arrayValue ?? []
        body += "<h2>MFA factors (\(factors.count))</h2>"
        if factors.isEmpty { body += "<p class=\"muted\">None.</p>" } else {
            body += "<div class=\"scroll\"><table><thead><tr><th scope=\"col\">Factor</th><th scope=\"col\">Type</th><th scope=\"col\">Name</th><th scope=\"col\">Status</th><th scope=\"col\">Created</th><th scope=\"col\"></th></tr></thead><tbody>"
            for factor in factors {
                let factorID = factor["id"]?.stringValue ?? ""
                body += "<tr><td><code>\(H.escape(factorID))</code></td><td>\(H.escape(factor["factor_type"]?.stringValue ?? ""))</td>"
                body += "<td>\(H.escape(factor["friendly_name"]?.stringValue ?? ""))</td><td>\(H.escape(factor["status"]?.stringValue ?? ""))</td>"
                body += "<td>\(H.escape(shortTime(factor["created_at"])))</td>"
                let delete = H.button(base + "/factors/" + H.urlEncode(factorID) + "/delete", "Delete", csrf: csrf, style: "danger",
                                      confirm: "Delete this factor?", accessibleLabel: "Delete factor " + factorID)
                body += "<td>\(delete)</td></tr>"
            }
            body += "</tbody></table></div>"
        }

        body += "<h2>Passkeys (\(passkeys.count))</h2>"
        if passkeys.isEmpty { body += "<p class=\"muted\">None.</p>" } else {
            body += "<div class=\"scroll\"><table><thead><tr><th scope=\"col\">Passkey</th><th scope=\"col\">Name</th><th scope=\"col\">Created</th><th scope=\"col\">Last used</th><th scope=\"col\"></th></tr></thead><tbody>"
            for passkey in passkeys {
                let passkeyID = passkey["id"]?.stringValue ?? ""
                body += "<tr><td><code>\(H.escape(passkeyID))</code></td><td>\(H.escape(passkey["friendly_name"]?.stringValue ?? ""))</td>"
                body += "<td>\(H.escape(shortTime(passkey["created_at"])))</td><td>\(H.escape(shortTime(passkey["last_used_at"])))</td>"
                let delete = H.button(base + "/passkeys/" + H.urlEncode(passkeyID) + "/delete", "Delete", csrf: csrf, style: "danger",
                                      confirm: "Delete this passkey?", accessibleLabel: "Delete passkey " + passkeyID)
                body += "<td>\(delete)</td></tr>"
            }
            body += "</tbody></table></div>"
        }

        body += "<h2>Audit log (latest \(audit.items.count) of \(H.grouped(audit.total)))</h2>"
        if audit.items.isEmpty { body += "<p class=\"muted\">No entries.</p>" } else {
            body += "<div class=\"scroll\"><table><thead><tr><th scope=\"col\">Time</th><th scope=\"col\">Action</th><th scope=\"col\">Actor</th><th scope=\"col\">Type</th></tr></thead><tbody>"
            for entry in audit.items {
                let payload = (try? JSON(parsing: Array(entry.payload.utf8))) ?? .null
                body += "<tr><td>\(H.escape(shortTime(microseconds: entry.createdAt)))</td><td>\(H.escape(payload["action"]?.stringValue ?? ""))</td>"
                body += "<td>\(H.escape(payload["actor_username"]?.stringValue ?? ""))</td><td>\(H.escape(payload["log_type"]?.stringValue ?? ""))</td></tr>"
            }
            body += "</tbody></table></div>"
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
            try api.audit(conn, context, actor: user, action: "logout", logType: "account")
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

    // MARK: Mailbox

    func mailboxPage(_ context: RequestContext, status: Int = 200, error: String? = nil) throws -> HTTPResponse {
        let to = context.request.queryValue("to") ?? ""
        let reply = call("GET", "/emulator/v1/outbox" + H.query([("to", to), ("limit", "100")]), from: context)
        let root = context.dashboardRoot
        var body = """
            <h1>Mailbox</h1>
            <div class="actions"><form method="get" action="\(root)/mailbox" class="bar" role="search">
            <label>Recipient<input type="search" name="to" value="\(H.escape(to))" placeholder="email or phone"></label>
            <button type="submit">Filter</button>\(to.isEmpty ? "" : " <a href=\"\(root)/mailbox\">All</a>")</form>
            \(H.button(root + "/mailbox/clear", "Clear mailbox", csrf: csrfToken, style: "danger", confirm: "Delete every captured message?"))</div>
            """
        guard reply.ok else {
            return page(context, status: reply.status, title: "Mailbox", view: "mailbox", error: reply.message, body: body)
        }
        let messages = reply.json.arrayValue ?? []
        if messages.isEmpty { body += "<p>No messages captured\(to.isEmpty ? "" : " for this recipient").</p>" }
        body += "<div class=\"grid\">"
        for (index, message) in messages.enumerated() {
            let otp = message["otp"]?.stringValue ?? ""
            let link = message["action_link"]?.stringValue ?? ""
            let channel = message["channel"]?.stringValue ?? ""
            let subject = message["subject"]?.stringValue ?? ""
            body += "<article class=\"card\"><h3>\(H.escape(subject.isEmpty ? (message["type"]?.stringValue ?? channel) : subject))</h3><dl>"
            body += "<dt>To</dt><dd>\(H.escape(message["to"]?.stringValue ?? ""))</dd>"
            body += "<dt>Type</dt><dd><span class=\"badge\">\(H.escape(channel))</span>\(H.escape(message["type"]?.stringValue ?? ""))</dd>"
            body += "<dt>Sent</dt><dd>\(H.escape(shortTime(message["sent_at"])))</dd></dl>"
            if !otp.isEmpty { body += "<p>Code: <span class=\"otp\" id=\"otp-\(index)\">\(H.escape(otp))</span><button type=\"button\" class=\"small\" data-copy=\"otp-\(index)\">Copy</button></p>" }
            if !link.isEmpty {
                // Only web links become clickable: a captured value is never trusted as a URL scheme.
                let lower = link.lowercased()
                if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
                    body += "<p><a class=\"link\" href=\"\(H.escape(link))\" target=\"_blank\" rel=\"noopener noreferrer\">Open the link</a><br>"
                } else {
                    body += "<p>Link: "
                }
                body += "\(H.copyable("link-\(index)", link))</p>"
            }
            // A custom template's own links, each to copy (the app's /auth/confirm route, ...).
            let others = (message["links"]?.arrayValue ?? []).compactMap(\.stringValue).filter { $0 != link }
            for (number, other) in others.enumerated() {
                body += "<p>Link in the mail: \(H.copyable("link-\(index)-\(number)", other))</p>"
            }
            let html = message["body_html"]?.stringValue ?? ""
            let text = message["body_text"]?.stringValue ?? ""
            if !html.isEmpty {
                // The captured HTML runs in a sandbox with no scripts, no same origin and no
                // forms; links open in a new tab (allowed popups), never inside the dashboard.
                body += "<details\(index == 0 ? " open" : "")><summary>Email</summary>"
                body += "<iframe title=\"\(H.escape(subject))\" loading=\"lazy\" sandbox=\"allow-popups allow-popups-to-escape-sandbox\" srcdoc=\"\(H.escape("<base target=\"_blank\">" + html))\"></iframe></details>"
            } else if !text.isEmpty {
                body += "<pre>\(H.escape(text))</pre>"
            }
            body += "</article>"
        }
        body += "</div>"
        return page(context, status: status, title: "Mailbox", view: "mailbox", stamp: stamp("mailbox", context), error: error, body: body)
    }

    func clearMailbox(_ context: RequestContext) throws -> HTTPResponse {
        let reply = call("DELETE", "/emulator/v1/outbox", from: context)
        guard reply.ok else { return try mailboxPage(context, status: reply.status, error: reply.message) }
        let count = reply.json["deleted"]?.intValue ?? 0
        return H.redirect(context.dashboardRoot + "/mailbox" + H.query([("notice", "Deleted \(H.counted(count, "message")).")]))
    }

    // MARK: Journal

    func journalPage(_ context: RequestContext) throws -> HTTPResponse {
        let op = context.request.queryValue("op") ?? ""
        let status = context.request.queryValue("status") ?? ""
        let test = context.request.queryValue("test") ?? ""
        let reply = call("GET", "/emulator/v1/journal" + H.query([("op", op), ("status", status), ("test", test), ("limit", "200")]),
                         from: context)
        let root = context.dashboardRoot
        var body = """
            <h1>Journal</h1>
            <form method="get" action="\(root)/journal" class="bar" role="search">
            <label>Operation<input type="search" name="op" value="\(H.escape(op))" placeholder="token.*"></label>
            <label>Status<input type="search" name="status" value="\(H.escape(status))" placeholder="4xx" size="6"></label>
            <label>Test id<input type="search" name="test" value="\(H.escape(test))"></label>
            <button type="submit">Filter</button>\(op.isEmpty && status.isEmpty && test.isEmpty ? "" : " <a href=\"\(root)/journal\">All</a>")</form>
            """
        guard reply.ok else {
            let message = reply.status == 404 ? "This server keeps no request journal." : reply.message
            return page(context, status: reply.status == 404 ? 200 : reply.status, title: "Journal", view: "journal", error: message, body: body)
        }
        let entries = Array((reply.json["entries"]?.arrayValue ?? []).reversed())
        body += "<div class=\"actions\">" + H.button(root + "/journal/clear", "Clear journal", csrf: csrfToken, style: "danger",
                                                     confirm: "Forget every recorded request?") + "</div>"
        body += "<p class=\"muted\">Newest first; \(H.grouped(entries.count)) shown (the journal keeps \(H.grouped(reply.json["capacity"]?.intValue ?? 0))).</p>"
        if entries.isEmpty { body += "<p>No requests recorded.</p>" } else {
            body += """
                <div class="scroll"><table><thead><tr><th scope="col">Time</th><th scope="col">Method</th><th scope="col">Path</th>\
                <th scope="col">Operation</th><th scope="col">Status</th><th scope="col">Error code</th><th scope="col">ms</th>\
                <th scope="col">Test</th><th scope="col">Rule / fault</th></tr></thead><tbody>
                """
            for entry in entries {
                let code = entry["status"]?.intValue
                let statusText = code.map(String.init) ?? "none"
                let statusClass = code.map { "status-\($0 / 100)" } ?? "status-none"
                let rule = [entry["rule"]?.stringValue, entry["fault"]?.stringValue].compactMap { $0 }.joined(separator: " ")
                body += "<tr><td>\(H.escape(shortTime(entry["time"])))</td><td>\(H.escape(entry["method"]?.stringValue ?? ""))</td>"
                body += "<td class=\"wrap\">\(H.escape(entry["path"]?.stringValue ?? ""))</td><td>\(H.escape(entry["op"]?.stringValue ?? ""))</td>"
                body += "<td class=\"\(statusClass)\">\(statusText)</td><td>\(H.escape(entry["error_code"]?.stringValue ?? ""))</td>"
                body += "<td>\(H.escape((entry["latency_ms"] ?? .null).serialized()))</td><td>\(H.escape(entry["test"]?.stringValue ?? ""))</td>"
                body += "<td>\(H.escape(rule))</td></tr>"
            }
            body += "</tbody></table></div>"
        }
        return page(context, title: "Journal", view: "journal", stamp: stamp("journal", context), body: body)
    }

    // MARK: Scenarios

    func scenariosPage(_ context: RequestContext, status: Int = 200, error: String? = nil, pasted: String = "") throws -> HTTPResponse {
        let reply = call("GET", "/emulator/v1/scenarios", from: context)
        guard reply.status != 404 else {
            return page(context, title: "Scenarios", view: "scenarios", error: "This server runs no failure scenarios.",
                        body: "<h1>Scenarios</h1>")
        }
        let csrf = csrfToken
        let root = context.dashboardRoot
        var body = "<h1>Scenarios</h1>"
        let active = reply.json["scenarios"]?.arrayValue ?? []
        body += "<h2>Active (\(active.count))</h2>"
        if active.isEmpty { body += "<p class=\"muted\">None: the emulator answers as the plain server.</p>" }
        for scenario in active {
            let name = scenario["name"]?.stringValue ?? ""
            body += "<section class=\"card\"><h3>\(H.escape(name))</h3>"
            if let description = scenario["description"]?.stringValue, !description.isEmpty { body += "<p>\(H.escape(description))</p>" }
            body += "<p class=\"muted\">source \(H.escape(scenario["source"]?.stringValue ?? "")) · state \(H.escape(scenario["state"]?.stringValue ?? "")) · seed \(H.escape((scenario["seed"] ?? .null).serialized()))</p>"
            body += "<div class=\"scroll\"><table><thead><tr><th scope=\"col\">#</th><th scope=\"col\">Matched</th><th scope=\"col\">Fired</th><th scope=\"col\">Test id</th><th scope=\"col\">Rule</th></tr></thead><tbody>"
            for rule in scenario["rules"]?.arrayValue ?? [] {
                var shown = rule.objectValue ?? JSONObject()
                for key in ["index", "matched", "fired", "test"] { shown[key] = nil }
                // A rule scoped by the file's top-level `test` shows no `test` in its own JSON;
                // the route's effective `test` says whose requests it sees, so a scoped rule
                // never reads as one that fires for every test.
                let scope = rule["test"]?.stringValue.map { "<code class=\"test-scope\">\(H.escape($0))</code>" }
                    ?? "<span class=\"muted\">every request</span>"
                body += "<tr><td>\(rule["index"]?.intValue ?? 0)</td><td>\(rule["matched"]?.intValue ?? 0)</td><td>\(rule["fired"]?.intValue ?? 0)</td>"
                body += "<td>\(scope)</td>"
                body += "<td class=\"wrap\"><code>\(H.escape(H.pretty(.object(shown), compact: true)))</code></td></tr>"
            }
            body += "</tbody></table></div><div class=\"actions\">"
            body += H.button(root + "/scenarios/" + H.urlEncode(name) + "/remove", "Remove", csrf: csrf, style: "danger",
                             accessibleLabel: "Remove scenario " + name)
            body += "</div></section>"
        }
        let catalogue = dashboard.catalogue
        body += "<h2>Load from the catalogue</h2>"
        if catalogue.isEmpty {
            body += "<p class=\"muted\">No scenario files found (the catalogue is the <code>scenarios/</code> folder where the emulator was started).</p>"
        } else {
            body += "<form method=\"post\" action=\"\(root)/scenarios\" class=\"bar\">\(H.csrfField(csrf))<label>File<select name=\"catalogue\">"
            for entry in catalogue { body += "<option>\(H.escape(entry.name))</option>" }
            body += "</select></label><button type=\"submit\">Load</button></form>"
        }
        body += """
            <h2>Paste a scenario</h2>
            <form method="post" action="\(root)/scenarios">\(H.csrfField(csrf))
            <label>Scenario JSON<textarea name="json" spellcheck="false" placeholder='{"name": "...", "rules": [...]}'>\(H.escape(pasted))</textarea></label>
            <div class="actions"><button type="submit">Activate</button></div></form>
            """
        return page(context, status: status, title: "Scenarios", view: "scenarios", stamp: stamp("scenarios", context), error: error, body: body)
    }

    /// The document goes to `POST /emulator/v1/scenarios` as it is, so a bad one is refused with
    /// exactly the control route's errors.
    func loadScenario(_ context: RequestContext) throws -> HTTPResponse {
        let name = DashboardEndpoints.field(context.request, "catalogue") ?? ""
        let pasted = DashboardEndpoints.field(context.request, "json") ?? ""
        let document: [UInt8]
        if !name.isEmpty {
            guard let entry = dashboard.catalogue.first(where: { $0.name == name }) else {
                return try scenariosPage(context, status: 404, error: "No catalogue file named \"\(name)\".")
            }
            document = entry.contents
        } else {
            document = Array(pasted.utf8)
        }
        let reply = call("POST", "/emulator/v1/scenarios", raw: document, from: context)
        guard reply.ok else { return try scenariosPage(context, status: reply.status, error: reply.message, pasted: pasted) }
        let loaded = reply.json["name"]?.stringValue ?? ""
        return H.redirect(context.dashboardRoot + "/scenarios" + H.query([("notice", "Activated \(loaded).")]))
    }

    func removeScenario(_ context: RequestContext) throws -> HTTPResponse {
        let name = context.pathParameters["name"] ?? ""
        let reply = call("DELETE", "/emulator/v1/scenarios/" + H.urlEncode(name), from: context)
        guard reply.ok else { return try scenariosPage(context, status: reply.status, error: reply.message) }
        return H.redirect(context.dashboardRoot + "/scenarios" + H.query([("notice", "Removed \(name).")]))
    }

    // MARK: Settings

    func settingsPage(_ context: RequestContext, status: Int = 200, error: String? = nil) throws -> HTTPResponse {
        let csrf = csrfToken
        let root = context.dashboardRoot
        let clock = call("GET", "/emulator/v1/clock", from: context).json
        let config = call("GET", "/emulator/v1/config", from: context)
        let keys = api.snapshot.configuration.apiKeys
        let projectURL = api.snapshot.configuration.externalURL
        let authURL = projectURL + GoTrueAPI.gatewayPrefix
        let frozen = clock["frozen"]?.boolValue == true
        let offset = clock["offset_seconds"]?.doubleValue ?? 0
        var body = "<h1>Settings</h1><div class=\"grid\"><section class=\"card\" aria-labelledby=\"clock\"><h3 id=\"clock\">Virtual clock</h3>"
        body += "<p>Now: <strong data-clock-offset=\"\(offset)\" data-frozen=\"\(frozen)\">\(H.escape(clock["now"]?.stringValue ?? ""))</strong>"
        body += "<br><span class=\"muted\">offset \(H.escape(formatSeconds(offset)))\(frozen ? " · frozen" : "")</span></p><div class=\"actions\">"
        for (label, seconds) in [("+1 min", 60), ("+1 hour", 3600), ("+1 day", 86_400), ("+7 days", 604_800)] {
            body += H.button(root + "/settings/clock", label, csrf: csrf, style: "secondary", fields: [("advance", String(seconds))])
        }
        body += H.button(root + "/settings/clock", frozen ? "Unfreeze" : "Freeze", csrf: csrf, style: "secondary",
                         fields: [("freeze", frozen ? "false" : "true")])
        body += "</div><form method=\"post\" action=\"\(root)/settings/clock\" class=\"bar\">\(H.csrfField(csrf))"
        body += "<label>Advance by seconds<input type=\"number\" name=\"advance\" step=\"any\" required></label><button type=\"submit\">Advance</button></form></section>"

        body += "<section class=\"card\" aria-labelledby=\"config\"><h3 id=\"config\">Live configuration</h3>"
        if config.ok {
            body += "<dl>"
            for toggle in DashboardEndpoints.toggles {
                // Phrased by what is allowed, never "disabled: off": an inverted setting
                // (`disable_signup`) is shown and flipped through its positive meaning.
                let stored = config.json[toggle.setting]?.boolValue == true
                let on = stored != toggle.inverted
                body += "<dt>\(H.escape(toggle.label))</dt><dd>\(H.escape(on ? toggle.on : toggle.off)) "
                body += H.button(root + "/settings/config", on ? toggle.turnOff : toggle.turnOn, csrf: csrf, style: "small",
                                 fields: [("setting", toggle.setting), ("value", String(on == toggle.inverted))],
                                 accessibleLabel: (on ? toggle.turnOff : toggle.turnOn) + ": " + toggle.label)
                body += "</dd>"
            }
            let preset = config.json["rate_limits"]?["preset"]?.stringValue ?? ""
            body += "<dt>Rate limits</dt><dd><form method=\"post\" action=\"\(root)/settings/config\" class=\"inline\">\(H.csrfField(csrf))"
            body += "<input type=\"hidden\" name=\"setting\" value=\"rate_limits\"><select name=\"value\" aria-label=\"Rate-limit preset\">"
            for option in RateLimitSettings.Preset.allCases.map(\.rawValue) {
                body += "<option\(option == preset ? " selected" : "")>\(H.escape(option))</option>"
            }
            body += "</select><button type=\"submit\" class=\"small\">Apply</button></form></dd></dl>"
            body += "<p class=\"muted\">The same change as <code>PATCH /emulator/v1/config</code>; the next request sees it.</p>"
        } else {
            body += "<p class=\"muted\">This server has no runtime configuration routes.</p>"
        }
        body += "</section></div>"

        body += """
            <h2>Reset</h2><form method="post" action="\(root)/settings/reset" class="card" \
            data-confirm="Delete every user, session, message and key of this project?">\(H.csrfField(csrf))
            <p>Empties every table and sets the virtual clock back to the wall clock, as <code>POST /emulator/v1/reset</code> does.</p>
            <label class="check"><input type="checkbox" name="confirm" value="yes" required> Yes, delete everything</label>
            <label class="check"><input type="checkbox" name="keep_seed" value="yes"> Apply the last seeded fixture again</label>
            <div class="actions"><button type="submit" class="danger">Reset the project</button></div></form>
            """
        body += "<h2>Project</h2><div class=\"card\"><dl class=\"stack\">"
        body += "<dt>Project URL</dt><dd>\(H.copyable("project-url", projectURL))</dd>"
        body += "<dt>Auth URL</dt><dd>\(H.copyable("auth-url", authURL))</dd>"
        body += "<dt>JWKS</dt><dd><a href=\"\(H.escape(authURL + "/.well-known/jwks.json"))\">\(H.escape(authURL + "/.well-known/jwks.json"))</a></dd>"
        body += "<dt>anon key</dt><dd>\(H.copyable("anon-key", keys.anon))</dd>"
        body += "<dt>service_role key</dt><dd>\(H.copyable("service-role-key", keys.serviceRole))</dd>"
        if let publishable = keys.publishable { body += "<dt>publishable key</dt><dd>\(H.copyable("publishable-key", publishable))</dd>" }
        if let secret = keys.secret { body += "<dt>secret key</dt><dd>\(H.copyable("secret-key", secret))</dd>" }
        body += "</dl></div>"

        let clientKey = keys.publishable ?? keys.anon
        let snippets: [(String, String, String)] = [
            ("snippet-js", "supabase-js", """
                import { createClient } from '@supabase/supabase-js'

                const supabase = createClient('\(projectURL)', '\(clientKey)')
                """),
            ("snippet-swift", "supabase-swift", """
                import Supabase

                let supabase = SupabaseClient(
                  supabaseURL: URL(string: "\(projectURL)")!,
                  supabaseKey: "\(clientKey)"
                )
                """),
            ("snippet-py", "supabase-py", """
                from supabase import create_client

                supabase = create_client("\(projectURL)", "\(clientKey)")
                """),
        ]
        body += "<h2>Client snippets</h2><div class=\"grid\">"
        for (id, title, code) in snippets {
            body += "<section class=\"card\"><h3>\(H.escape(title))<button type=\"button\" class=\"small\" data-copy=\"\(id)\">Copy</button></h3>"
            // Wrapped inside its card, not cut off: each line of a snippet is read whole.
            body += "<pre id=\"\(id)\" class=\"snippet\">\(H.escape(code))</pre></section>"
        }
        body += "</div>"
        return page(context, status: status, title: "Settings", view: "settings", stamp: stamp("settings", context), error: error, body: body)
    }

    func formatSeconds(_ seconds: Double) -> String {
        let whole = Int64(seconds.rounded())
        let sign = whole < 0 ? "-" : "+"
        let magnitude = abs(whole)
        return "\(sign)\(magnitude / 86_400)d \(magnitude % 86_400 / 3600)h \(magnitude % 3600 / 60)m \(magnitude % 60)s"
    }

    func moveClock(_ context: RequestContext) throws -> HTTPResponse {
        var change = JSONObject()
        if let text = DashboardEndpoints.field(context.request, "set")?.trimmingASCIISpaces(), !text.isEmpty {
            // A `datetime-local` field sends `2030-01-01T09:30` (no seconds, no zone): read as UTC,
            // as the header says. Anything else goes to the clock route as typed.
            change["set"] = .string(text.count == 16 && text.dropFirst(10).first == "T" ? text + ":00Z" : text)
        }
        if let text = DashboardEndpoints.field(context.request, "advance"), !text.isEmpty {
            // Passed on as given: the clock route judges it (and names the problem).
            change["advance_seconds"] = Double(text).map(JSON.number) ?? .string(text)
        }
        if let text = DashboardEndpoints.field(context.request, "freeze") { change["freeze"] = .bool(text == "true") }
        let reply = call("POST", "/emulator/v1/clock", .object(change), from: context)
        guard reply.ok else { return try settingsPage(context, status: reply.status, error: reply.message) }
        // The header's buttons come back to the page they were pressed on.
        let root = context.dashboardRoot
        let back = DashboardEndpoints.localTarget(DashboardEndpoints.field(context.request, "return"), root: root) ?? root + "/settings"
        return H.redirect(back.withNotice("Clock now " + (reply.json["now"]?.stringValue ?? "") + "."))
    }

    /// One setting, sent as `PATCH /emulator/v1/config` would receive it from a test.
    func changeConfig(_ context: RequestContext) throws -> HTTPResponse {
        let setting = DashboardEndpoints.field(context.request, "setting") ?? ""
        let text = DashboardEndpoints.field(context.request, "value") ?? ""
        let value: JSON = text == "true" ? .bool(true) : text == "false" ? .bool(false) : .string(text)
        let reply = call("PATCH", "/emulator/v1/config", .object(JSONObject([(setting, value)])), from: context)
        guard reply.ok else { return try settingsPage(context, status: reply.status, error: reply.message) }
        var notice = "\(setting) is now \(text)."
        if let toggle = DashboardEndpoints.toggles.first(where: { $0.setting == setting }), let stored = value.boolValue {
            notice = "\(toggle.label): \(stored != toggle.inverted ? toggle.on : toggle.off)."
        }
        return H.redirect(context.dashboardRoot + "/settings" + H.query([("notice", notice)]))
    }

    /// The header's clock on every page: the virtual time (ticking with the script), +1 h,
    /// +1 day, and a time to set, all through `POST /emulator/v1/clock`.
    func clockBar(_ context: RequestContext) -> String {
        guard !dashboard.requiresKey || authorized(context) else { return "" }
        let clock = call("GET", "/emulator/v1/clock", from: context).json
        let frozen = clock["frozen"]?.boolValue == true
        let offset = clock["offset_seconds"]?.doubleValue ?? 0
        let root = context.dashboardRoot
        // The target as the browser asked for it: the server took the mount off.
        let here = context.request.method == "GET" ? context.mountPrefix + context.request.target.removingNotice() : root + "/settings"
        let csrf = csrfToken
        var html = "<div class=\"clock\" role=\"group\" aria-label=\"Virtual clock\"><span>Clock "
        // Whole seconds, as the script's ticking shows them.
        let now = (clock["now"]?.stringValue ?? "").prefix(19) + "Z"
        html += "<time id=\"header-clock\" data-clock-offset=\"\(offset)\" data-frozen=\"\(frozen)\">\(H.escape(String(now)))</time>"
        html += frozen ? " (frozen)</span>" : "</span>"
        for (label, seconds, name) in [("+1 h", 3600, "+1 hour"), ("+1 day", 86_400, "+1 day")] {
            html += H.button(root + "/settings/clock", label, csrf: csrf, style: "secondary",
                             fields: [("advance", String(seconds)), ("return", here)], accessibleLabel: "Advance the clock " + name)
        }
        html += "<form method=\"post\" action=\"\(root)/settings/clock\">\(H.csrfField(csrf))"
        html += "<input type=\"hidden\" name=\"return\" value=\"\(H.escape(here))\">"
        html += "<input type=\"datetime-local\" name=\"set\" required aria-label=\"Set the clock to (UTC)\">"
        html += "<button type=\"submit\" class=\"secondary\">Set (UTC)</button></form></div>"
        return html
    }

    /// A dashboard page to go back to: only paths under this dashboard's `root` (its
    /// `RequestContext.dashboardRoot`), never another site, nor another project on this server.
    static func localTarget(_ text: String?, root: String) -> String? {
        guard let text, text == root || text.hasPrefix(root + "/") || text.hasPrefix(root + "?"),
              !text.contains("\\"), !text.unicodeScalars.contains(where: { $0.value < 0x20 }) else { return nil }
        return text
    }

    func resetProject(_ context: RequestContext) throws -> HTTPResponse {
        guard DashboardEndpoints.field(context.request, "confirm") == "yes" else {
            return try settingsPage(context, status: 400, error: "Tick \"Yes, delete everything\" to reset the project: nothing was deleted.")
        }
        let keepSeed = DashboardEndpoints.field(context.request, "keep_seed") == "yes"
        let reply = call("POST", "/emulator/v1/reset" + (keepSeed ? "?keep_seed=true" : ""), from: context)
        guard reply.ok else { return try settingsPage(context, status: reply.status, error: reply.message) }
        let users = reply.json["users"]?.intValue ?? 0
        return H.redirect(context.dashboardRoot + H.query([("notice", "Project reset: \(users) user\(users == 1 ? "" : "s") left.")]))
    }

    func clearJournal(_ context: RequestContext) throws -> HTTPResponse {
        let reply = call("DELETE", "/emulator/v1/journal", from: context)
        guard reply.ok else {
            let message = reply.status == 404 ? "This server keeps no request journal." : reply.message
            return page(context, status: reply.status, title: "Journal", view: "journal", error: message, body: "<h1>Journal</h1>")
        }
        return H.redirect(context.dashboardRoot + "/journal" + H.query([("notice", "Journal cleared.")]))
    }

    // MARK: Live updates

    /// `GET /emulator/live?view=...`: a short digest of what the view shows, cheap to compute
    /// (no page rendering), which the page's script compares with the one it was rendered from.
    func live(_ context: RequestContext) throws -> HTTPResponse {
        let view = context.request.queryValue("view") ?? ""
        return .json(["stamp": .string(stamp(view, context, id: context.request.queryValue("id") ?? ""))])
    }

    func stamp(_ view: String, _ context: RequestContext, id: String = "") -> String {
        var parts = [view]
        switch view {
        case "users", "user":
            // New users, and most changes to users (sign-ins, updates, bans, deletions), leave
            // an audit entry; the users' count and newest row, and the newest audit entry (by
            // rowid: the audit table has no index on time, and this runs every two seconds per
            // open page), cover them.
            if let (users, audit) = try? api.read({ conn in
                (try conn.users(aud: api.snapshot.configuration.jwt.audience, filter: "", ascending: false, paging: Paging(page: 1, perPage: 1)),
                 try conn.newestAuditLogEntry())
            }) {
                parts += [String(users.total), users.items.first?.id ?? "", String(users.items.first?.updatedAt ?? 0),
                          String(audit?.rowid ?? 0), audit?.id ?? ""]
            }
            if view == "user", let user = try? api.read({ conn in try conn.user(id: id) }) {
                parts += [String(user.updatedAt), String(user.lastSignInAt ?? 0)]
                parts += ((try? api.read { conn in try conn.sessions(userID: id).map(\.id) }) ?? [])
            }
        case "mailbox":
            let newest = try? api.read { conn in try conn.outboxMessages(limit: 1) }
            parts.append(newest?.first?.id ?? "")
        case "journal":
            let reply = call("GET", "/emulator/v1/journal?limit=1", from: context)
            parts.append((reply.json["entries"]?[0]?["id"] ?? .null).serialized())
        case "scenarios":
            parts.append(call("GET", "/emulator/v1/scenarios", from: context).json.serialized())
        case "settings":
            let clock = call("GET", "/emulator/v1/clock", from: context).json
            // While frozen the offset drifts and the time stands; otherwise the reverse.
            parts.append(clock["frozen"]?.boolValue == true ? clock["now"]?.stringValue ?? "" : (clock["offset_seconds"] ?? .null).serialized())
            parts.append(call("GET", "/emulator/v1/config", from: context).json.serialized())
        default:
            break
        }
        return String(SHA256.hash(data: Array(parts.joined(separator: "\u{1F}").utf8)).hexString.prefix(20))
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
    fileprivate func replacingT() -> String {
        String(map { $0 == "T" ? " " : $0 })
    }

    /// The target without a `notice` query item (so a notice is not shown twice).
    fileprivate func removingNotice() -> String {
        guard let mark = firstIndex(of: "?") else { return self }
        let kept = self[index(after: mark)...].split(separator: "&").filter { !$0.hasPrefix("notice=") }
        return String(self[..<mark]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
    }

    /// The target with `notice` as its (only) notice.
    fileprivate func withNotice(_ notice: String) -> String {
        let base = removingNotice()
        return base + (base.contains("?") ? "&" : "?") + "notice=" + DashboardHTML.urlEncode(notice)
    }
}

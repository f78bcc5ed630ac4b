import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
import GoFormats
import GoTrue

extension DashboardEndpoints {
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
        if let text = DashboardEndpoints.field(context.request, "set").map({ GoStrings.trimSpace($0) }), !text.isEmpty {
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

import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
import GoTrue

extension DashboardEndpoints {
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
            body += H.tableStart(["Time", "Method", "Path", "Operation", "Status", "Error code", "ms", "Test", "Rule / fault"])
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
            body += H.tableEnd
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
            body += H.tableStart(["#", "Matched", "Fired", "Test id", "Rule"])
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
            body += H.tableEnd + "<div class=\"actions\">"
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
}

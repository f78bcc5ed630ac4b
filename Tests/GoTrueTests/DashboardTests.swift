import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore
import Synchronization
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// A dashboard over an in-process API, open as on a loopback bind unless `requiresKey`.
func makeDashboardAPI(requiresKey: Bool = false, base: ManualClock = ManualClock(),
                      configure: (inout Configuration) -> Void = { _ in }) throws -> (GoTrueAPI, VirtualClock) {
    let (api, clock) = try makeControlAPI(base: base, configure: configure)
    api.project.dashboard.configure(enabled: true, requiresKey: requiresKey)
    return (api, clock)
}

/// A browser's view of the dashboard: it keeps the cookies pages set and sends forms back with
/// the CSRF field the page carried. With a `mountPath` it is a browser on `/project/<ref>/...`:
/// targets are given as the server hands them on, with the mount already taken off.
struct DashboardBrowser {
    let api: GoTrueAPI
    var cookies: [String: String] = [:]
    var mountPath = ""

    init(_ api: GoTrueAPI) { self.api = api }

    var cookieHeader: String { cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }

    mutating func keep(_ response: HTTPResponse) {
        for header in response.headers.values(for: "Set-Cookie") {
            let pair = header.split(separator: ";")[0].split(separator: "=", maxSplits: 1)
            if pair.count == 2 { cookies[String(pair[0])] = String(pair[1]) }
        }
    }

    mutating func get(_ target: String, headers extra: HTTPHeaders = [:]) -> HTTPResponse {
        var headers = extra
        if !cookies.isEmpty { headers["Cookie"] = cookieHeader }
        let response = api.respond(to: request("GET", target, headers: headers), mountPath: mountPath)
        keep(response)
        return response
    }

    /// A form POST; `csrf` nil leaves the field out.
    mutating func post(_ target: String, _ fields: [(String, String)] = [], csrf: String?) -> HTTPResponse {
        var headers: HTTPHeaders = ["Content-Type": "application/x-www-form-urlencoded"]
        if !cookies.isEmpty { headers["Cookie"] = cookieHeader }
        var all = fields
        if let csrf { all.append(("csrf", csrf)) }
        let body = all.map { DashboardHTML.urlEncode($0.0) + "=" + DashboardHTML.urlEncode($0.1) }.joined(separator: "&")
        let response = api.respond(to: request("POST", target, headers: headers, body: body), mountPath: mountPath)
        keep(response)
        return response
    }

    /// Loads a page and returns the CSRF token its forms carry.
    mutating func token(from target: String = "/emulator/mailbox") -> String {
        let html = get(target).text
        guard let range = html.range(of: "name=\"csrf\" value=\"") else { return "" }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }
}

@Suite struct DashboardTests {
    func isHTML(_ response: HTTPResponse) -> Bool {
        response.headers["Content-Type"] == "text/html; charset=utf-8"
    }

    func userID(_ api: GoTrueAPI, _ email: String) -> String {
        api.control("GET", "/admin/users").json["users"]?.arrayValue?.first { $0["email"]?.stringValue == email }?["id"]?.stringValue ?? ""
    }

    /// What in a page would make the browser fetch from another origin: a `src` (script, image,
    /// frame) or a `<link>` (stylesheet, icon, preload) to `http(s)://` or protocol-relative
    /// `//`, a protocol-relative link, a CSS `@import` or `url()` off the page, a script's fetch
    /// of an absolute URL. Plain links to the API (`<a href="http://...">`) are navigation, not
    /// assets. The dashboard must work offline and leak nothing to a CDN.
    func externalAssets(in html: String) throws -> [String] {
        let patterns = [
            #"(?i)\bsrc\s*=\s*["']?\s*(https?:)?//"#,
            #"(?i)<link\b[^>]*\bhref\s*=\s*["']?\s*(https?:)?//"#,
            #"(?i)\bhref\s*=\s*["']?\s*//"#,
            #"(?i)@import"#,
            #"(?i)url\(\s*["']?\s*(https?:)?//"#,
            #"(?i)\b(fetch|EventSource|WebSocket)\s*\(\s*["'`](https?:|wss?:)?//"#,
        ]
        var found: [String] = []
        for pattern in patterns {
            let regex = try Regex(pattern)
            found += html.matches(of: regex).map { String(html[$0.range]) }
        }
        return found
    }

    /// The check above finds each kind of external asset, and leaves links alone.
    @Test func externalAssetCheckFindsEachKind() throws {
        for html in [
            #"<script src="https://cdn.example/app.js"></script>"#, #"<img src='http://cdn.example/a.png'>"#,
            #"<script src=//cdn.example/app.js></script>"#, #"<link rel="stylesheet" href="https://cdn.example/a.css">"#,
            #"<link href="//fonts.example/f.css" rel="stylesheet">"#, #"<style>@import url(http://cdn.example/a.css);</style>"#,
            #"<style>body{background:url('//cdn.example/bg.png')}</style>"#, #"<script>fetch('https://tracker.example/')</script>"#,
            #"<a href="//elsewhere.example/">x</a>"#,
        ] {
            #expect(try !externalAssets(in: html).isEmpty, "\(html)")
        }
        for html in [#"<a href="http://127.0.0.1:9999/auth/v1">API</a>"#, #"<link rel="icon" href="data:,">"#,
                     #"<script>fetch(root+'/live')</script>"#, #"<form action="/emulator/users">"#] {
            #expect(try externalAssets(in: html) == [], "\(html)")
        }
    }

    @Test func everyPageRendersAsHTML() throws {
        let (api, _) = try makeDashboardAPI()
        _ = api.signUp("ada@example.com")
        let id = userID(api, "ada@example.com")
        var browser = DashboardBrowser(api)
        let pages: [(String, String)] = [
            ("/emulator", "ada@example.com"),
            ("/emulator/users/\(id)", "Sessions (1)"),
            ("/emulator/tokens", "Decode"),
            ("/emulator/mailbox", "Mailbox"),
            ("/emulator/journal", "Journal"),
            ("/emulator/scenarios", "Scenarios"),
            ("/emulator/settings", "Virtual clock"),
            ("/emulator/login", "Dashboard sign-in"),
        ]
        // Every page the route table serves is in the list (the live digest is JSON, not a page),
        // so a new page cannot skip the checks below.
        let served = Set(DashboardEndpoints.endpoints.filter { $0.method == "GET" && $0.pattern != Dashboard.path + "/live" }.map(\.pattern))
        #expect(Set(pages.map { $0.0.replacingOccurrences(of: id, with: "{user_id}") }) == served)
        for (target, content) in pages {
            let response = browser.get(target)
            #expect(response.status == 200, "\(target)")
            #expect(isHTML(response), "\(target)")
            #expect(response.text.contains(content), "\(target)")
            #expect(response.text.hasPrefix("<!doctype html>"), "\(target)")
            #expect(try externalAssets(in: response.text) == [], "\(target)")
        }
        // The server's root names the dashboard in the same frame, and loads nothing either.
        let index = api.respond(to: request("GET", "/", headers: ["Accept": "text/html"]))
        #expect(index.text.hasPrefix("<!doctype html>"))
        #expect(try externalAssets(in: index.text) == [])
        // The settings page shows the real keys and a client snippet built from them.
        let settings = browser.get("/emulator/settings").text
        #expect(settings.contains(api.project.configuration.apiKeys.serviceRole))
        #expect(settings.contains("createClient("))
        #expect(settings.contains("/.well-known/jwks.json"))
    }

    @Test func userDataIsEscaped() throws {
        let (api, _) = try makeDashboardAPI()
        _ = api.signUp("eve@example.com", data: ["name": "<script>alert(1)</script>", "full_name": "\"><img src=x>"])
        let id = userID(api, "eve@example.com")
        var browser = DashboardBrowser(api)
        let page = browser.get("/emulator/users/\(id)").text
        #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!page.contains("<script>alert(1)"))
        #expect(!page.contains("<img src=x>"))
        // The search box echoes its query escaped too.
        let search = browser.get("/emulator?q=%3Cb%3Ebold").text
        #expect(search.contains("value=\"&lt;b&gt;bold\""))
        #expect(!search.contains("<b>bold"))
    }

    /// A refused create form comes back with what was typed, as text: the admin route rejects the
    /// address, the page shows the draft escaped in its fields, and no user is made.
    @Test func refusedDraftsAreShownEscaped() throws {
        let (api, _) = try makeDashboardAPI()
        var browser = DashboardBrowser(api)
        let token = browser.token(from: "/emulator")
        let refused = browser.post("/emulator/users", [("email", "<b>x</b>"), ("phone", "\"><i>1</i>")], csrf: token)
        #expect(refused.status == 400)
        #expect(refused.text.contains("value=\"&lt;b&gt;x&lt;/b&gt;\""), "\(refused.text)")
        #expect(refused.text.contains("value=\"&#34;&gt;&lt;i&gt;1&lt;/i&gt;\""))
        #expect(!refused.text.contains("<b>x</b>") && !refused.text.contains("<i>1</i>"))
        // Metadata that is not JSON is refused before the route is called, and shown as typed.
        let markup = "{\"a\": \"</textarea><script>alert(1)</script>"
        let notJSON = browser.post("/emulator/users", [("email", "ok@example.com"), ("user_metadata", markup)], csrf: token)
        #expect(notJSON.status == 400)
        #expect(notJSON.text.contains("&lt;/textarea&gt;&lt;script&gt;alert(1)&lt;/script&gt;</textarea>"))
        #expect(!notJSON.text.contains("<script>alert(1)"))
        #expect(api.control("GET", "/admin/users").json["users"]?.arrayValue?.isEmpty == true)
    }

    @Test func postsWithoutTheRightCSRFTokenAreRefused() throws {
        let (api, _) = try makeDashboardAPI()
        _ = api.signUp("ada@example.com")
        let id = userID(api, "ada@example.com")
        var browser = DashboardBrowser(api)
        let token = browser.token()
        #expect(!token.isEmpty)
        #expect(browser.cookies[DashboardEndpoints.csrfCookie] == token)
        #expect(browser.post("/emulator/users/\(id)/ban", csrf: nil).status == 403)
        // A token differing in its first character (never equal to the real one).
        let forged = (token.first == "0" ? "1" : "0") + token.dropFirst()
        #expect(browser.post("/emulator/users/\(id)/ban", csrf: forged).status == 403)
        // The right field without the cookie (a cross-site form cannot send a SameSite=Strict one).
        var stranger = DashboardBrowser(api)
        #expect(stranger.post("/emulator/users/\(id)/ban", csrf: token).status == 403)
        #expect(api.control("GET", "/admin/users/\(id)").json["banned_until"]?.isNull ?? true)
        // With both, the action runs.
        #expect(browser.post("/emulator/users/\(id)/ban", csrf: token).status == 303)
        #expect(api.control("GET", "/admin/users/\(id)").json["banned_until"]?.stringValue != nil)
    }

    @Test func banUnbanConfirmAndDelete() throws {
        let (api, _) = try makeDashboardAPI()
        _ = api.control("POST", "/admin/users", ["email": "new@example.com"])
        let id = userID(api, "new@example.com")
        var browser = DashboardBrowser(api)
        let token = browser.token()
        #expect(api.control("GET", "/admin/users/\(id)").json["email_confirmed_at"]?.isNull ?? true)
        var response = browser.post("/emulator/users/\(id)/confirm", csrf: token)
        #expect(response.status == 303)
        #expect(response.headers["Location"]?.hasPrefix("/emulator/users/\(id)?notice=") == true)
        #expect(api.control("GET", "/admin/users/\(id)").json["email_confirmed_at"]?.stringValue != nil)

        #expect(browser.post("/emulator/users/\(id)/ban", csrf: token).status == 303)
        #expect(browser.get("/emulator").text.contains("banned"))
        #expect(api.signIn("new@example.com").status != 200)
        #expect(browser.post("/emulator/users/\(id)/unban", csrf: token).status == 303)
        #expect(api.control("GET", "/admin/users/\(id)").json["banned_until"]?.isNull ?? true)

        response = browser.post("/emulator/users/\(id)/delete", csrf: token)
        #expect(response.status == 303)
        #expect(api.control("GET", "/admin/users/\(id)").status == 404)
        // The deleted user's page reports what the admin route says.
        let gone = browser.get("/emulator/users/\(id)")
        #expect(gone.status == 404)
        #expect(gone.text.contains("User not found"))
    }

    @Test func revokesOneSession() throws {
        let (api, _) = try makeDashboardAPI()
        let session = api.signUp("ada@example.com")
        let id = session["user"]?["id"]?.stringValue ?? ""
        _ = api.signIn("ada@example.com")
        let sessions = try api.project.database.read { conn in try conn.sessions(userID: id) }
        #expect(sessions.count == 2)
        var browser = DashboardBrowser(api)
        let token = browser.token()
        let target = sessions[0].id
        #expect(browser.post("/emulator/users/\(id)/sessions/\(target)/revoke", csrf: token).status == 303)
        let left = try api.project.database.read { conn in try conn.sessions(userID: id) }
        #expect(left.map(\.id) == [sessions[1].id])
        // Another user's session is not this user's to revoke.
        #expect(browser.post("/emulator/users/\(id)/sessions/\(target)/revoke", csrf: token).status == 404)
    }

    @Test func deletesAFactor() throws {
        let (api, _) = try makeDashboardAPI { $0.mfa.totp.enroll = true }
        let session = api.signUp("ada@example.com")
        let id = session["user"]?["id"]?.stringValue ?? ""
        let bearer = session["access_token"]?.stringValue ?? ""
        let factor = api.call("POST", "/factors", ["factor_type": "totp", "friendly_name": "phone app"], bearer: bearer)
        #expect(factor.status == 200)
        let factorID = factor.json["id"]?.stringValue ?? ""
        var browser = DashboardBrowser(api)
        #expect(browser.get("/emulator").text.contains("<td>1</td>"))
        #expect(browser.get("/emulator/users/\(id)").text.contains("phone app"))
        let token = browser.token()
        #expect(browser.post("/emulator/users/\(id)/factors/\(factorID)/delete", csrf: token).status == 303)
        #expect(api.control("GET", "/admin/users/\(id)/factors").json.arrayValue?.isEmpty == true)
        // The admin route's own error for a factor that is gone.
        let again = browser.post("/emulator/users/\(id)/factors/\(factorID)/delete", csrf: token)
        #expect(again.status == 404)
        #expect(again.text.contains("Factor not found"))
    }

    @Test func mailboxShowsCodesAndLinksAndClears() throws {
        let (api, _) = try makeDashboardAPI()
        _ = api.signUp("ada@example.com")
        let id = userID(api, "ada@example.com")
        var browser = DashboardBrowser(api)
        let token = browser.token()
        // The user page's recovery button sends what POST /recover sends.
        #expect(browser.post("/emulator/users/\(id)/recovery", csrf: token).status == 303)
        let message = api.control("GET", "/emulator/v1/outbox/latest").json
        let otp = message["otp"]?.stringValue ?? ""
        #expect(!otp.isEmpty)
        let page = browser.get("/emulator/mailbox").text
        #expect(page.contains("<span class=\"otp\" id=\"otp-0\">\(otp)</span>"))
        #expect(page.contains("sandbox=\"allow-popups allow-popups-to-escape-sandbox\" srcdoc=\"&lt;base target=&#34;_blank&#34;&gt;"))
        #expect(page.contains("Open the link"))
        // Filtered by another recipient: nothing.
        #expect(browser.get("/emulator/mailbox?to=bob%40example.com").text.contains("No messages captured"))
        #expect(browser.post("/emulator/mailbox/clear", csrf: token).status == 303)
        #expect(api.control("GET", "/emulator/v1/outbox").json.arrayValue?.isEmpty == true)
    }

    @Test func capturedMailCannotBecomeMarkupOrAScriptLink() throws {
        let (api, _) = try makeDashboardAPI()
        var message = OutboxRecord(id: "00000000-0000-4000-8000-000000000001", channel: "email",
                                   recipient: "eve@example.com", type: "magiclink", sentAt: 1_767_225_600_000_000)
        message.subject = "</h3><script>alert(1)</script>"
        message.bodyHTML = "<p onclick=\"x\">\"quoted\" & <script>alert(2)</script></p>"
        message.actionLink = "javascript:alert(3)"
        try api.project.database.write { conn in try conn.insertOutboxMessage(message) }
        var browser = DashboardBrowser(api)
        let page = browser.get("/emulator/mailbox").text
        #expect(!page.contains("<script>alert"))
        #expect(!page.contains("href=\"javascript:"))
        #expect(page.contains("javascript:alert(3)"))
        #expect(page.contains("&lt;p onclick=&#34;x&#34;&gt;&#34;quoted&#34; &amp; &lt;script&gt;alert(2)"))
    }

    @Test func clockAdvancesThroughTheClockRoute() throws {
        let (api, clock) = try makeDashboardAPI()
        var browser = DashboardBrowser(api)
        let token = browser.token(from: "/emulator/settings")
        #expect(browser.post("/emulator/settings/clock", [("advance", "3600")], csrf: token).status == 303)
        #expect(clock.reading.offsetMicroseconds == 3_600_000_000)
        #expect(browser.post("/emulator/settings/clock", [("freeze", "true")], csrf: token).status == 303)
        #expect(clock.reading.frozen)
        // The clock route's own validation message comes back on the page.
        let bad = browser.post("/emulator/settings/clock", [("advance", "soon")], csrf: token)
        #expect(bad.status == 400)
        #expect(bad.text.contains("advance_seconds"))
    }

    @Test func usersArePaged() throws {
        let (api, _) = try makeDashboardAPI()
        for index in 0..<55 { _ = api.control("POST", "/admin/users", ["email": .string("user\(index)@example.com")]) }
        var browser = DashboardBrowser(api)
        let first = browser.get("/emulator").text
        #expect(first.contains("55 users"))
        #expect(first.contains("page 1 of 2"))
        #expect(first.contains("user54@example.com"))
        #expect(!first.contains("user0@example.com<"))
        let second = browser.get("/emulator?page=2").text
        #expect(second.contains("user0@example.com"))
        #expect(browser.get("/emulator?q=user12").text.contains("1 user matching"))
    }

    @Test func liveStampMovesWithTheData() throws {
        let (api, _) = try makeDashboardAPI()
        var browser = DashboardBrowser(api)
        let before = browser.get("/emulator/live?view=users").json["stamp"]?.stringValue
        #expect(before == browser.get("/emulator/live?view=users").json["stamp"]?.stringValue)
        _ = api.signUp("ada@example.com")
        let after = browser.get("/emulator/live?view=users").json["stamp"]?.stringValue
        #expect(before != nil && after != nil && before != after)
        // The page carries the stamp it was rendered from, so the script reloads only on change.
        #expect(browser.get("/emulator").text.contains("data-stamp=\"\(after ?? "")\""))
    }

    @Test func beyondLoopbackTheKeyIsRequired() throws {
        let (api, _) = try makeDashboardAPI(requiresKey: true)
        var browser = DashboardBrowser(api)
        var response = browser.get("/emulator")
        #expect(response.status == 401)
        #expect(response.text.contains("service_role key"))
        #expect(!response.text.contains(api.project.configuration.apiKeys.anon))
        #expect(browser.get("/emulator/live?view=users").status == 401)
        let token = browser.token(from: "/emulator/login")
        response = browser.post("/emulator/login", [("key", "not-the-key")], csrf: token)
        #expect(response.status == 401)
        #expect(browser.cookies[DashboardEndpoints.sessionCookie] == nil)
        response = browser.post("/emulator/login", [("key", api.project.configuration.apiKeys.serviceRole)], csrf: token)
        #expect(response.status == 303)
        #expect(response.headers["Set-Cookie"]?.contains("HttpOnly; SameSite=Strict") == true)
        #expect(browser.get("/emulator").status == 200)
        // A made-up session cookie opens nothing.
        var forger = DashboardBrowser(api)
        forger.cookies[DashboardEndpoints.sessionCookie] = String(repeating: "0", count: 64)
        #expect(forger.get("/emulator").status == 401)
        // The key as a bearer works for scripts.
        var script = DashboardBrowser(api)
        #expect(script.get("/emulator", headers: ["Authorization": "Bearer " + api.project.configuration.apiKeys.serviceRole]).status == 200)
    }

    @Test func offMeansNotFound() throws {
        let (api, _) = try makeDashboardAPI()
        api.project.dashboard.configure(enabled: false, requiresKey: false)
        var browser = DashboardBrowser(api)
        for target in ["/emulator", "/emulator/settings", "/emulator/live?view=users"] {
            #expect(browser.get(target).status == 404)
        }
        #expect(browser.post("/emulator/mailbox/clear", csrf: "x").status == 404)
    }

    @Test func escapingHelpers() {
        #expect(DashboardHTML.escape("<a href=\"x\">'&'</a>") == "&lt;a href=&#34;x&#34;&gt;&#39;&amp;&#39;&lt;/a&gt;")
        #expect(DashboardHTML.urlEncode("a b/ü?&=") == "a%20b%2F%C3%BC%3F%26%3D")
        #expect(DashboardHTML.query([("q", "x y"), ("page", "")]) == "?q=x%20y")
    }

    /// Every table: a scrolling box, one row of column headings; a listing says so when empty.
    @Test func tablesAndListings() {
        #expect(DashboardHTML.tableStart(["A&B", ""], class: "sessions")
            == #"<div class="scroll"><table class="sessions"><thead><tr><th scope="col">A&amp;B</th><th scope="col"></th></tr></thead><tbody>"#)
        #expect(DashboardHTML.tableStart(["#"]) == #"<div class="scroll"><table><thead><tr><th scope="col">#</th></tr></thead><tbody>"#)
        var rendered = false
        let none = DashboardHTML.listing("Passkeys (0)", isEmpty: true, columns: ["Passkey"]) { rendered = true; return "" }
        #expect(none == #"<h2>Passkeys (0)</h2><p class="muted">None.</p>"#)
        #expect(!rendered)
        let audit = DashboardHTML.listing("Audit", isEmpty: true, empty: "No entries.", columns: ["Time"]) { "" }
        #expect(audit == #"<h2>Audit</h2><p class="muted">No entries.</p>"#)
        let one = DashboardHTML.listing("Factors (1)", isEmpty: false, columns: ["Factor"]) { "<tr><td>f</td></tr>" }
        #expect(one == "<h2>Factors (1)</h2>" + DashboardHTML.tableStart(["Factor"]) + "<tr><td>f</td></tr>" + DashboardHTML.tableEnd)
        #expect(DashboardHTML.tableEnd == "</tbody></table></div>")
    }

    /// Counts read at a glance: a comma between each group of three digits, one noun singular.
    @Test func countsHaveThousandsSeparatorsAndOneIsSingular() throws {
        let grouped = [0, 7, 999, 1000, 12_345, 100_001, 1_234_567, -4200].map(DashboardHTML.grouped)
        #expect(grouped == ["0", "7", "999", "1,000", "12,345", "100,001", "1,234,567", "-4,200"])
        #expect(DashboardHTML.counted(100_001, "user") == "100,001 users")
        #expect(DashboardHTML.counted(1, "user") == "1 user")
        #expect(DashboardHTML.counted(0, "message") == "0 messages")

        // The users page says it so: one user is "1 user", never "1 users".
        let (api, _) = try makeDashboardAPI()
        _ = api.control("POST", "/admin/users", ["email": "only@example.com"])
        var browser = DashboardBrowser(api)
        #expect(browser.get("/emulator").text.contains(">1 user · page 1 of 1<"))
    }
}

// MARK: The dashboard as a daily tool: create and edit users, tokens, reset, the header clock.

extension DashboardTests {
    func sessionCount(_ api: GoTrueAPI, _ id: String) throws -> Int {
        try api.project.database.read { conn in try conn.sessions(userID: id) }.count
    }

    /// Every form added for daily use refuses a POST without the page's token, or with a wrong
    /// one, before doing anything.
    @Test func everyNewFormNeedsTheCSRFToken() throws {
        let (api, clock) = try makeDashboardAPI()
        _ = api.signUp("ada@example.com")
        let id = userID(api, "ada@example.com")
        var browser = DashboardBrowser(api)
        let token = browser.token()
        let forged = (token.first == "0" ? "1" : "0") + token.dropFirst()
        let forms: [(String, [(String, String)])] = [
            ("/emulator/users", [("email", "new@example.com"), ("password", "password1")]),
            ("/emulator/users/\(id)/metadata", [("user_metadata", "{\"x\": 1}"), ("app_metadata", "{}")]),
            ("/emulator/users/\(id)/signout", []),
            ("/emulator/users/\(id)/token", [("role", "authenticated")]),
            ("/emulator/users/\(id)/passkeys/00000000-0000-4000-8000-000000000001/delete", []),
            ("/emulator/tokens", [("token", "a.b.c")]),
            ("/emulator/journal/clear", []),
            ("/emulator/settings/reset", [("confirm", "yes")]),
            ("/emulator/settings/clock", [("advance", "3600"), ("return", "/emulator")]),
            ("/emulator/settings/clock", [("set", "2030-01-01T00:00")]),
        ]
        for (target, fields) in forms {
            #expect(browser.post(target, fields, csrf: nil).status == 403, "\(target)")
            #expect(browser.post(target, fields, csrf: forged).status == 403, "\(target)")
            var stranger = DashboardBrowser(api)
            #expect(stranger.post(target, fields, csrf: token).status == 403, "\(target)")
        }
        // Nothing happened: one user, unchanged metadata, its session, the clock where it was.
        let users = api.control("GET", "/admin/users").json["users"]?.arrayValue ?? []
        #expect(users.count == 1)
        #expect(users.first?["user_metadata"]?["x"] == nil)
        #expect(try sessionCount(api, id) == 1)
        #expect(clock.reading.offsetMicroseconds == 0)
    }

    @Test func createsAUserThroughTheAdminRoute() throws {
        let (api, _) = try makeDashboardAPI()
        var browser = DashboardBrowser(api)
        let token = browser.token(from: "/emulator")
        #expect(browser.get("/emulator").text.contains("action=\"/emulator/users\""))
        // Bad metadata: the page again with the error and the typed fields, and no user.
        var response = browser.post("/emulator/users", [("email", "ada@example.com"), ("password", "secret-pw"),
                                                        ("user_metadata", "{\"full_name\": ")], csrf: token)
        #expect(response.status == 400)
        #expect(response.text.contains("user_metadata is not valid JSON"))
        #expect(response.text.contains("value=\"ada@example.com\""))
        #expect(!response.text.contains("secret-pw"))
        response = browser.post("/emulator/users", [("email", "ada@example.com"), ("user_metadata", "[1]")], csrf: token)
        #expect(response.status == 400)
        #expect(response.text.contains("must be a JSON object"))
        #expect(api.control("GET", "/admin/users").json["users"]?.arrayValue?.isEmpty == true)

        response = browser.post("/emulator/users", [("email", "ada@example.com"), ("password", "password1"), ("confirmed", "yes"),
                                                    ("user_metadata", "{\"full_name\": \"<script>alert(1)</script>\"}")], csrf: token)
        #expect(response.status == 303)
        let id = userID(api, "ada@example.com")
        #expect(response.headers["Location"]?.hasPrefix("/emulator/users/\(id)?notice=") == true)
        let user = api.control("GET", "/admin/users/\(id)").json
        #expect(user["email_confirmed_at"]?.stringValue != nil)
        #expect(user["user_metadata"]?["full_name"]?.stringValue == "<script>alert(1)</script>")
        #expect(api.signIn("ada@example.com").status == 200)
        let page = browser.get("/emulator/users/\(id)").text
        #expect(!page.contains("<script>alert(1)"))
        #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        // The admin route's own refusal comes back on the page (an address already taken).
        response = browser.post("/emulator/users", [("email", "ada@example.com")], csrf: token)
        #expect(response.status == 422)
        #expect(response.text.contains("already been registered"))
        // A phone user, unconfirmed.
        response = browser.post("/emulator/users", [("phone", "+15551234567"), ("password", "password1")], csrf: token)
        #expect(response.status == 303)
        let phoneUser = api.control("GET", "/admin/users").json["users"]?.arrayValue?.first { $0["phone"]?.stringValue == "15551234567" }
        #expect(phoneUser?["phone_confirmed_at"]?.stringValue == nil)
    }

    @Test func editsMetadataAndRefusesBadJSON() throws {
        let (api, _) = try makeDashboardAPI()
        _ = api.signUp("ada@example.com", data: ["nickname": "ada", "team": "red"])
        let id = userID(api, "ada@example.com")
        var browser = DashboardBrowser(api)
        let token = browser.token(from: "/emulator/users/\(id)")
        #expect(browser.get("/emulator/users/\(id)").text.contains("<textarea name=\"user_metadata\""))
        var response = browser.post("/emulator/users/\(id)/metadata", [("user_metadata", "{nickname: 1}"), ("app_metadata", "{}")], csrf: token)
        #expect(response.status == 400)
        #expect(response.text.contains("user_metadata is not valid JSON: nothing was changed."))
        // The typed text is kept (escaped) for fixing.
        #expect(response.text.contains("{nickname: 1}"))
        response = browser.post("/emulator/users/\(id)/metadata", [("user_metadata", "{}"), ("app_metadata", "\"x\"")], csrf: token)
        #expect(response.status == 400)
        var user = api.control("GET", "/admin/users/\(id)").json
        #expect(user["user_metadata"]?["team"]?.stringValue == "red")

        let app = (user["app_metadata"]?.objectValue ?? [:])
        var newApp = app
        newApp["plan"] = "<b>pro</b>"
        response = browser.post("/emulator/users/\(id)/metadata",
                                [("user_metadata", "{\"nickname\": \"countess\"}"), ("app_metadata", JSON.object(newApp).serialized())],
                                csrf: token)
        #expect(response.status == 303)
        user = api.control("GET", "/admin/users/\(id)").json
        // The textarea is the whole object: "team" was removed, so it is gone.
        #expect(user["user_metadata"]?["nickname"]?.stringValue == "countess")
        #expect(user["user_metadata"]?["team"] == nil)
        #expect(user["app_metadata"]?["plan"]?.stringValue == "<b>pro</b>")
        #expect(user["app_metadata"]?["provider"]?.stringValue == "email")
        let page = browser.get("/emulator/users/\(id)").text
        #expect(page.contains("&lt;b&gt;pro&lt;/b&gt;"))
        #expect(!page.contains("<b>pro</b>"))
    }

    @Test func signsTheUserOutEverywhere() throws {
        let (api, _) = try makeDashboardAPI()
        let session = api.signUp("ada@example.com")
        let id = userID(api, "ada@example.com")
        _ = api.signIn("ada@example.com")
        #expect(try sessionCount(api, id) == 2)
        var browser = DashboardBrowser(api)
        let token = browser.token()
        let response = browser.post("/emulator/users/\(id)/signout", csrf: token)
        #expect(response.status == 303)
        #expect(response.headers["Location"]?.contains("2%20sessions%20ended") == true)
        #expect(try sessionCount(api, id) == 0)
        // The refresh token is dead, as after a global logout.
        let refresh = api.call("POST", "/token?grant_type=refresh_token", ["refresh_token": session["refresh_token"] ?? .null])
        #expect(refresh.status == 400)
        let audit = try api.project.database.read { conn in
            try conn.auditLogEntries(columns: ["actor_id"], value: id, paging: Paging(page: 1, perPage: 1))
        }
        #expect(audit.items.first?.payload.contains("\"action\":\"logout\"") == true)
    }

    @Test func mintsATokenTheAPIAccepts() throws {
        let (api, _) = try makeDashboardAPI()
        _ = api.signUp("ada@example.com")
        let id = userID(api, "ada@example.com")
        var browser = DashboardBrowser(api)
        let token = browser.token(from: "/emulator/users/\(id)")
        var response = browser.post("/emulator/users/\(id)/token", [("claims", "{oops")], csrf: token)
        #expect(response.status == 400)
        #expect(response.text.contains("Extra claims is not valid JSON"))
        #expect(try sessionCount(api, id) == 1)
        // The token route's own validation.
        response = browser.post("/emulator/users/\(id)/token", [("expires_in", "soon")], csrf: token)
        #expect(response.status == 400)

        response = browser.post("/emulator/users/\(id)/token", [("role", "authenticated"), ("aal", "aal2"), ("expires_in", "120"),
                                                              ("claims", "{\"tenant\": \"<script>x</script>\"}")], csrf: token)
        #expect(response.status == 200)
        #expect(!response.text.contains("data-live=\"/emulator"))
        let html = response.text
        guard let start = html.range(of: "<code id=\"minted-token\">") else {
            Issue.record("no minted token on the page")
            return
        }
        let jwt = String(html[start.upperBound...].prefix { $0 != "<" })
        let me = api.call("GET", "/user", bearer: jwt)
        #expect(me.status == 200)
        #expect(me.json["id"]?.stringValue == id)
        let claims = try Core(project: api.project).verifiedClaims(jwt)
        #expect(claims["aal"]?.stringValue == "aal2")
        #expect(claims["tenant"]?.stringValue == "<script>x</script>")
        #expect(claims["role"]?.stringValue == "authenticated")
        #expect((claims["exp"]?.doubleValue ?? 0) - (claims["iat"]?.doubleValue ?? 0) == 120)

        // Decoded: header and claims shown escaped, with the verdict.
        let decoded = browser.post("/emulator/tokens", [("token", jwt)], csrf: token)
        #expect(decoded.status == 200)
        #expect(decoded.text.contains("Signature valid."))
        #expect(decoded.text.contains("&#34;tenant&#34;: &#34;&lt;script&gt;x&lt;/script&gt;&#34;"))
        #expect(!decoded.text.contains("<script>x"))
    }

    @Test func decoderNamesEveryVerdict() throws {
        let (api, clock) = try makeDashboardAPI()
        _ = api.signUp("ada@example.com")
        let id = userID(api, "ada@example.com")
        var browser = DashboardBrowser(api)
        let token = browser.token(from: "/emulator/tokens")
        #expect(browser.get("/emulator/tokens").text.contains("<textarea name=\"token\""))
        let minted = api.control("POST", "/emulator/v1/token", ["user_id": .string(id), "expires_in": 60]).json["access_token"]?.stringValue ?? ""
        let parts = minted.split(separator: ".").map(String.init)
        // Another first character of the signature: still base64url, no longer the MAC.
        let tampered = parts[0] + "." + parts[1] + "." + (parts[2].hasPrefix("A") ? "B" : "A") + parts[2].dropFirst()
        #expect(browser.post("/emulator/tokens", [("token", tampered)], csrf: token).text.contains("Signature invalid."))
        #expect(browser.post("/emulator/tokens", [("token", "not-a-jwt")], csrf: token).status == 400)
        clock.advance(microseconds: 120_000_000)
        #expect(browser.post("/emulator/tokens", [("token", minted)], csrf: token).text.contains("Expired."))
        // A kid no key of the project has.
        let other = JWTKey(kid: "someone-else", secret: "another-secret-of-at-least-32-characters")
        let foreign = JWTSigner.sign(claims: ["sub": "x", "exp": 4_000_000_000], key: other)
        let keys = JWTKeySet(keys: [JWTKey(kid: "ours", secret: "ours-secret-of-at-least-32-characters-long")])
        let verdict = DashboardEndpoints.verdict(foreign, keys: keys, now: Timestamp(microseconds: 0))
        #expect(verdict.title == "Unknown key id.")
        #expect(!verdict.valid)
    }

    @Test func sessionsShowTheirRefreshTokenFamily() throws {
        let (api, _) = try makeDashboardAPI()
        let session = api.signUp("ada@example.com")
        let id = userID(api, "ada@example.com")
        let refreshed = api.call("POST", "/token?grant_type=refresh_token", ["refresh_token": session["refresh_token"] ?? .null])
        #expect(refreshed.status == 200)
        var browser = DashboardBrowser(api)
        let page = browser.get("/emulator/users/\(id)").text
        #expect(page.contains("2 issued · 1 revoked"))
        #expect(page.contains("data-copy=\"user-id\""))
    }

    @Test func deletesAPasskey() throws {
        let (api, _) = try makeDashboardAPI()
        _ = api.signUp("ada@example.com")
        let id = userID(api, "ada@example.com")
        let passkeyID = "00000000-0000-4000-8000-0000000000aa"
        try api.project.database.write { conn in
            try conn.insertWebAuthnCredential(WebAuthnCredentialRecord(
                id: passkeyID, userID: id, credentialID: [1, 2, 3], publicKey: [4, 5, 6], attestationType: "none", aaguid: nil,
                signCount: 0, transports: "[]", backupEligible: false, backedUp: false, friendlyName: "<i>laptop</i>",
                at: 1_767_225_600_000_000))
        }
        var browser = DashboardBrowser(api)
        let page = browser.get("/emulator/users/\(id)").text
        #expect(page.contains("Passkeys (1)"))
        #expect(page.contains("&lt;i&gt;laptop&lt;/i&gt;"))
        let token = browser.token(from: "/emulator/users/\(id)")
        #expect(browser.post("/emulator/users/\(id)/passkeys/\(passkeyID)/delete", csrf: token).status == 303)
        #expect(api.control("GET", "/admin/users/\(id)/passkeys").json.arrayValue?.isEmpty == true)
        #expect(browser.post("/emulator/users/\(id)/passkeys/\(passkeyID)/delete", csrf: token).status == 404)
    }

    @Test func searchIgnoresCaseAndCoversPhoneNameAndID() throws {
        let (api, _) = try makeDashboardAPI()
        _ = api.control("POST", "/admin/users", ["email": "Alice@Example.com", "user_metadata": ["full_name": "Alice Liddell"]])
        _ = api.control("POST", "/admin/users", ["email": "bob@example.com", "phone": "15557654321", "user_metadata": ["name": "Robert"]])
        _ = api.control("POST", "/admin/users", ["email": "carol@example.com"])
        let alice = userID(api, "alice@example.com")
        var browser = DashboardBrowser(api)
        // GoTrue stores the address lowercased; the search ignores case anyway.
        for (query, expected) in [("Alice", "alice@example.com"), ("ALICE@EXAMPLE", "alice@example.com"), ("LIDDELL", "alice@example.com"),
                                  ("ROBERT", "bob@example.com"), ("+1555765", "bob@example.com"), ("7654321", "bob@example.com"),
                                  (alice, "alice@example.com"), (alice.uppercased(), "alice@example.com"),
                                  (String(alice.prefix(8)), "alice@example.com")] {
            let page = browser.get("/emulator" + DashboardHTML.query([("q", query)])).text
            #expect(page.contains("1 user matching"), "\(query)")
            #expect(page.contains(expected), "\(query)")
        }
        // Wildcards are literal; a character the stored JSON escapes (`&` as \u0026) still matches.
        #expect(browser.get("/emulator?q=%25").text.contains("0 users matching"))
        _ = api.control("POST", "/admin/users", ["email": "dave@example.com", "user_metadata": ["full_name": "Dave & Co"]])
        #expect(browser.get("/emulator?q=%26%20CO").text.contains("1 user matching"))
        // The admin API keeps GoTrue's filter (case-sensitive on the email).
        #expect(api.control("GET", "/admin/users?filter=ALICE%40").json["users"]?.arrayValue?.isEmpty == true)
    }

    @Test func resetNeedsTheCheckboxAndEmptiesTheProject() throws {
        let (api, clock) = try makeDashboardAPI()
        _ = api.signUp("ada@example.com")
        clock.advance(microseconds: 3_600_000_000)
        var browser = DashboardBrowser(api)
        let token = browser.token(from: "/emulator/settings")
        let settings = browser.get("/emulator/settings").text
        #expect(settings.contains("name=\"confirm\" value=\"yes\" required"))
        var response = browser.post("/emulator/settings/reset", csrf: token)
        #expect(response.status == 400)
        #expect(response.text.contains("nothing was deleted"))
        #expect(api.control("GET", "/admin/users").json["users"]?.arrayValue?.count == 1)
        response = browser.post("/emulator/settings/reset", [("confirm", "yes")], csrf: token)
        #expect(response.status == 303)
        #expect(api.control("GET", "/admin/users").json["users"]?.arrayValue?.isEmpty == true)
        #expect(clock.reading.offsetMicroseconds == 0)
    }

    @Test func headerClockOnEveryPage() throws {
        let (api, clock) = try makeDashboardAPI()
        _ = api.signUp("ada@example.com")
        let id = userID(api, "ada@example.com")
        var browser = DashboardBrowser(api)
        for target in ["/emulator", "/emulator/users/\(id)", "/emulator/tokens", "/emulator/mailbox", "/emulator/journal",
                       "/emulator/scenarios", "/emulator/settings"] {
            let page = browser.get(target).text
            #expect(page.contains("id=\"header-clock\""), "\(target)")
            #expect(page.contains("2026-01-01T00:00:00Z"), "\(target)")
        }
        let token = browser.token(from: "/emulator")
        var response = browser.post("/emulator/settings/clock", [("advance", "3600"), ("return", "/emulator/users/\(id)")], csrf: token)
        #expect(response.status == 303)
        #expect(response.headers["Location"]?.hasPrefix("/emulator/users/\(id)?notice=") == true)
        #expect(clock.reading.offsetMicroseconds == 3_600_000_000)
        // Never back to another site.
        response = browser.post("/emulator/settings/clock", [("advance", "1"), ("return", "https://evil.example/emulator")], csrf: token)
        #expect(response.headers["Location"]?.hasPrefix("/emulator/settings?") == true)
        response = browser.post("/emulator/settings/clock", [("set", "2030-06-01T09:30")], csrf: token)
        #expect(response.status == 303)
        #expect(api.control("GET", "/emulator/v1/clock").json["now"]?.stringValue?.hasPrefix("2030-06-01T09:30:0") == true)
        response = browser.post("/emulator/settings/clock", [("set", "tomorrow")], csrf: token)
        #expect(response.status == 400)
        #expect(response.text.contains("RFC 3339"))
    }

    @Test func settingsSayWhatIsAllowed() throws {
        // A stand-in for the runtime configuration route the layer above adds: it keeps the
        // last PATCH, so the page's toggles can be read and flipped.
        let stored = Mutex<JSONObject>(["disable_signup": false, "mailer_autoconfirm": true, "anonymous_users_enabled": false,
                                        "sms_autoconfirm": false, "phone_enabled": false])
        let routes = [
            Route("GET", "/emulator/v1/config", operation: "emulator.config.get") { _ in .json(.object(stored.withLock { $0 })) },
            Route("PATCH", "/emulator/v1/config", operation: "emulator.config.update") { context in
                let changes = (try? JSON(parsing: context.request.body))?.objectValue ?? [:]
                return .json(.object(stored.withLock { current in
                    for (key, value) in changes { current[key] = value }
                    return current
                }))
            },
        ]
        let (plain, _) = try makeControlAPI()
        let api = GoTrueAPI(emulating: plain.project, extensions: routes)
        api.project.dashboard.configure(enabled: true, requiresKey: false)
        var browser = DashboardBrowser(api)
        var page = browser.get("/emulator/settings").text
        #expect(page.contains("<dt>Sign-ups</dt><dd>allowed "))
        #expect(page.contains("<dt>Anonymous sign-ins</dt><dd>not allowed "))
        #expect(page.contains("<dt>New email addresses</dt><dd>confirmed automatically "))
        #expect(!page.contains("disabled"))
        #expect(!page.contains("Turn on") && !page.contains("Turn off"))
        let token = browser.token(from: "/emulator/settings")
        // "Disallow" sign-ups stores disable_signup = true.
        let response = browser.post("/emulator/settings/config", [("setting", "disable_signup"), ("value", "true")], csrf: token)
        #expect(response.status == 303)
        #expect(response.headers["Location"]?.contains("Sign-ups%3A%20not%20allowed") == true)
        #expect(stored.withLock { $0["disable_signup"] } == .bool(true))
        page = browser.get("/emulator/settings").text
        #expect(page.contains("<dt>Sign-ups</dt><dd>not allowed "))
        #expect(page.contains("name=\"value\" value=\"false\"><button type=\"submit\" class=\"small\" aria-label=\"Allow: Sign-ups\">Allow</button>"))
    }

    @Test func rootNamesTheDashboardOnlyWhileItIsOn() throws {
        let (api, _) = try makeDashboardAPI()
        var html = api.respond(to: request("GET", "/", headers: ["Accept": "text/html,application/xhtml+xml"]))
        #expect(html.status == 200)
        #expect(html.text.contains("/emulator\""))
        #expect(html.text.contains("/auth/v1/.well-known/jwks.json"))
        let text = api.respond(to: request("GET", "/"))
        #expect(text.status == 200)
        #expect(text.headers["Content-Type"] == "text/plain; charset=utf-8")
        #expect(text.text.contains("Dashboard: http"))
        #expect(text.text.contains("Control API: http"))
        let slash = api.respond(to: request("GET", "/emulator/"))
        #expect(slash.status == 302)
        #expect(slash.headers["Location"] == "/emulator")
        // Everything else keeps GoTrue's 404, the root through the gateway included.
        for target in ["/auth/v1/", "/nothing", "/emulator/nothing/"] {
            let response = api.respond(to: request("GET", target))
            #expect(response.status == 404, "\(target)")
            #expect(response.text == "404 page not found\n", "\(target)")
        }
        #expect(api.respond(to: request("POST", "/")).status == 404)
        api.project.dashboard.configure(enabled: false, requiresKey: false)
        html = api.respond(to: request("GET", "/", headers: ["Accept": "text/html"]))
        #expect(html.status == 404)
        #expect(html.text == "404 page not found\n")
        #expect(api.respond(to: request("GET", "/emulator/")).status == 404)
    }

    @Test func clearJournalAsksTheJournalRoute() throws {
        // GoTrue alone keeps no journal (the scenarios layer adds it): the page says so.
        let (api, _) = try makeDashboardAPI()
        var browser = DashboardBrowser(api)
        let token = browser.token(from: "/emulator/journal")
        let response = browser.post("/emulator/journal/clear", csrf: token)
        #expect(response.status == 404)
        #expect(response.text.contains("keeps no request journal"))
    }
}

// MARK: A project mounted under a path, and the project switcher.

extension DashboardTests {
    static let mount = "/project/abc"

    /// What in a response would take the browser out of `mount`: each attribute value that is a
    /// path from the server's root (`href="/`, `action="/`, `value="/`, `data-live="/`, ...) but
    /// not under the mount, any quoted `/emulator` address, a `Location` and each cookie `Path`.
    func unmounted(_ response: HTTPResponse, mount: String = DashboardTests.mount) -> [String] {
        let text = response.text
        var found: [String] = []
        var rest = Substring(text)
        while let range = rest.range(of: "=\"/") {
            let value = "/" + rest[range.upperBound...].prefix { $0 != "\"" }
            if value != mount && !value.hasPrefix(mount + "/") { found.append(value) }
            rest = rest[range.upperBound...]
        }
        for quote in ["\"", "'"] where text.contains(quote + "/emulator") { found.append(quote + "/emulator") }
        if let location = response.headers["Location"], !location.hasPrefix(mount + "/") { found.append("Location: " + location) }
        for cookie in response.headers.values(for: "Set-Cookie") where !cookie.contains("; Path=\(mount)/emulator;") {
            found.append("Set-Cookie: " + cookie)
        }
        return found
    }

    @Test func pagesUnderAPathMountStayInsideIt() throws {
        let (api, _) = try makeDashboardAPI()
        _ = api.signUp("ada@example.com")
        let id = userID(api, "ada@example.com")
        // A second page of users, for the pager's links.
        for index in 0..<50 { _ = api.control("POST", "/admin/users", ["email": .string("user\(index)@example.com")]) }
        var browser = DashboardBrowser(api)
        browser.mountPath = DashboardTests.mount
        let pages = ["/emulator", "/emulator?page=2", "/emulator?q=ada", "/emulator/users/\(id)", "/emulator/tokens",
                     "/emulator/mailbox", "/emulator/mailbox?to=ada%40example.com", "/emulator/journal?op=token",
                     "/emulator/scenarios", "/emulator/settings"]
        for target in pages {
            let response = browser.get(target)
            #expect(response.status == 200, "\(target)")
            #expect(unmounted(response).isEmpty, "\(target): \(unmounted(response))")
            #expect(response.text.contains("data-live=\"\(DashboardTests.mount)/emulator/live?view="), "\(target)")
        }
        // The pager, the search's Clear and the mailbox's All were among the links checked.
        #expect(browser.get("/emulator").text.contains("href=\"/project/abc/emulator?page=2\" rel=\"next\""))
        #expect(browser.get("/emulator?q=ada").text.contains("<a href=\"/project/abc/emulator\">Clear</a>"))
        // The header clock sends the browser back to the page as it addressed it.
        #expect(browser.get("/emulator/users/\(id)").text
            .contains("name=\"return\" value=\"/project/abc/emulator/users/\(id)\""))
        // Pages that answer a POST: a minted token (with its Decode form) and a decoded one.
        let token = browser.token(from: "/emulator/users/\(id)")
        let minted = browser.post("/emulator/users/\(id)/token", [("role", "authenticated")], csrf: token)
        #expect(minted.status == 200)
        #expect(minted.text.contains("action=\"/project/abc/emulator/tokens\" class=\"inline\""))
        #expect(unmounted(minted).isEmpty, "\(unmounted(minted))")
        let decoded = browser.post("/emulator/tokens", [("token", "a.b.c")], csrf: token)
        #expect(decoded.status == 400)
        #expect(unmounted(decoded).isEmpty, "\(unmounted(decoded))")
        // The same pages at the root are what they always were.
        var root = DashboardBrowser(api)
        let page = root.get("/emulator")
        #expect(page.text.contains("action=\"/emulator\" class=\"bar\""))
        #expect(page.headers["Set-Cookie"]?.contains("; Path=/emulator;") == true)
        #expect(!unmounted(page).isEmpty)
    }

    @Test func actionsUnderAPathMountRedirectInsideIt() throws {
        let (api, clock) = try makeDashboardAPI()
        _ = api.control("POST", "/admin/users", ["email": "new@example.com"])
        let id = userID(api, "new@example.com")
        var browser = DashboardBrowser(api)
        browser.mountPath = DashboardTests.mount
        let token = browser.token(from: "/emulator/users/\(id)")
        var response = browser.post("/emulator/users/\(id)/confirm", csrf: token)
        #expect(response.status == 303)
        #expect(response.headers["Location"]?.hasPrefix("/project/abc/emulator/users/\(id)?notice=") == true)
        #expect(api.control("GET", "/admin/users/\(id)").json["email_confirmed_at"]?.stringValue != nil)
        response = browser.post("/emulator/users/\(id)/metadata", [("user_metadata", "{}"), ("app_metadata", "{}")], csrf: token)
        #expect(response.headers["Location"]?.hasPrefix("/project/abc/emulator/users/\(id)?notice=") == true)
        response = browser.post("/emulator/users", [("email", "ada@example.com")], csrf: token)
        #expect(response.status == 303)
        #expect(response.headers["Location"]?.hasPrefix("/project/abc/emulator/users/") == true)
        response = browser.post("/emulator/mailbox/clear", csrf: token)
        #expect(response.headers["Location"]?.hasPrefix("/project/abc/emulator/mailbox?notice=") == true)
        response = browser.post("/emulator/users/\(id)/delete", csrf: token)
        #expect(response.headers["Location"]?.hasPrefix("/project/abc/emulator?notice=") == true)

        // The header clock returns to a page of this project, never to the root's own dashboard.
        response = browser.post("/emulator/settings/clock", [("advance", "60"), ("return", "/project/abc/emulator/mailbox?to=x")],
                                csrf: token)
        #expect(response.headers["Location"]?.hasPrefix("/project/abc/emulator/mailbox?to=x&notice=") == true)
        response = browser.post("/emulator/settings/clock", [("advance", "60"), ("return", "/emulator/mailbox")], csrf: token)
        #expect(response.headers["Location"]?.hasPrefix("/project/abc/emulator/settings?notice=") == true)
        #expect(clock.reading.offsetMicroseconds == 120_000_000)
        // The trailing-slash address redirects within the mount too.
        let slash = api.respond(to: request("GET", "/emulator/"), mountPath: DashboardTests.mount)
        #expect(slash.status == 302)
        #expect(slash.headers["Location"] == "/project/abc/emulator")
    }

    @Test func signingInUnderAPathMountKeepsTheCookieToIt() throws {
        let (api, _) = try makeDashboardAPI(requiresKey: true)
        var browser = DashboardBrowser(api)
        browser.mountPath = DashboardTests.mount
        let login = browser.get("/emulator")
        #expect(login.status == 401)
        #expect(login.text.contains("action=\"/project/abc/emulator/login\""))
        #expect(unmounted(login).isEmpty, "\(unmounted(login))")
        let token = browser.token(from: "/emulator/login")
        let response = browser.post("/emulator/login", [("key", api.project.configuration.apiKeys.serviceRole)], csrf: token)
        #expect(response.status == 303)
        #expect(response.headers["Location"] == "/project/abc/emulator")
        // Path-scoped: another project's dashboard on the same host never receives it.
        #expect(response.headers["Set-Cookie"]?.contains("; Path=/project/abc/emulator; HttpOnly") == true)
        #expect(unmounted(response).isEmpty, "\(unmounted(response))")
        #expect(browser.get("/emulator").status == 200)
    }

    @Test func headerSwitchesBetweenProjects() throws {
        let (api, _) = try makeDashboardAPI()
        _ = api.signUp("ada@example.com")
        let id = userID(api, "ada@example.com")
        api.project.dashboard.setProjects {
            [Dashboard.ProjectLink(ref: "default", path: "/emulator", current: false),
             Dashboard.ProjectLink(ref: "abc", path: "/project/abc/emulator", current: true),
             Dashboard.ProjectLink(ref: "q&a", path: "/project/q&a/emulator", current: false)]
        }
        var browser = DashboardBrowser(api)
        browser.mountPath = DashboardTests.mount
        let switcher = "<nav class=\"projects\" aria-label=\"Projects\"><span class=\"muted\">Project</span>"
            + "<a href=\"/emulator\">default</a><span aria-current=\"true\">abc</span>"
            + "<a href=\"/project/q&amp;a/emulator\">q&amp;a</a></nav>"
        for target in ["/emulator", "/emulator/users/\(id)", "/emulator/tokens", "/emulator/mailbox", "/emulator/journal",
                       "/emulator/scenarios", "/emulator/settings"] {
            let page = browser.get(target).text
            // The other projects' addresses are the server's, as given: not under this mount.
            #expect(page.contains("<header><span class=\"brand\">auth emulator</span>" + switcher), "\(target)")
            #expect(!page.contains("href=\"/project/abc/emulator\">abc"), "\(target)")
            #expect(page.contains(" · abc · auth emulator</title>"), "\(target)")
            #expect(page.contains(".projects{"), "\(target)")
        }

        // One project, or none: no switcher, and the page is byte for byte the one without it.
        var root = DashboardBrowser(api)
        api.project.dashboard.setProjects { [] }
        let plain = root.get("/emulator").text
        api.project.dashboard.setProjects { [Dashboard.ProjectLink(ref: "default", path: "/emulator", current: true)] }
        let single = root.get("/emulator").text
        #expect(single == plain)
        #expect(!single.contains("class=\"projects\""))
        #expect(!single.contains(".projects{"))
        #expect(single.contains("<title>Users · auth emulator</title>"))
    }

    @Test func aVisitorWithoutTheKeyIsNotShownTheOtherProjects() throws {
        let (api, _) = try makeDashboardAPI(requiresKey: true)
        api.project.dashboard.setProjects {
            [Dashboard.ProjectLink(ref: "default", path: "/emulator", current: true),
             Dashboard.ProjectLink(ref: "secret-client", path: "/project/secret-client/emulator", current: false)]
        }
        var browser = DashboardBrowser(api)
        let login = browser.get("/emulator")
        #expect(login.status == 401)
        #expect(!login.text.contains("secret-client"))
        let key = api.project.configuration.apiKeys.serviceRole
        #expect(browser.get("/emulator", headers: ["Authorization": "Bearer " + key]).text.contains("secret-client"))
    }
}

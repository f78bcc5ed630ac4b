import AuthHTTP
import AuthJSON
import AuthStore
import Testing
@testable import GoTrue

/// A dashboard over an in-process API, open as on a loopback bind unless `requiresKey`.
func makeDashboardAPI(requiresKey: Bool = false, base: ManualClock = ManualClock(),
                      configure: (inout Configuration) -> Void = { _ in }) throws -> (GoTrueAPI, VirtualClock) {
    let (api, clock) = try makeControlAPI(base: base, configure: configure)
    api.project.dashboard.configure(enabled: true, requiresKey: requiresKey)
    return (api, clock)
}

/// A browser's view of the dashboard: it keeps the cookies pages set and sends forms back with
/// the CSRF field the page carried.
struct DashboardBrowser {
    let api: GoTrueAPI
    var cookies: [String: String] = [:]

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
        let response = api.respond(to: request("GET", target, headers: headers))
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
        let response = api.respond(to: request("POST", target, headers: headers, body: body))
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

    @Test func everyPageRendersAsHTML() throws {
        let (api, _) = try makeDashboardAPI()
        _ = api.signUp("ada@example.com")
        let id = userID(api, "ada@example.com")
        var browser = DashboardBrowser(api)
        let pages: [(String, String)] = [
            ("/emulator", "ada@example.com"),
            ("/emulator/users/\(id)", "Sessions (1)"),
            ("/emulator/mailbox", "Mailbox"),
            ("/emulator/journal", "Journal"),
            ("/emulator/scenarios", "Scenarios"),
            ("/emulator/settings", "Virtual clock"),
        ]
        for (target, content) in pages {
            let response = browser.get(target)
            #expect(response.status == 200, "\(target)")
            #expect(isHTML(response), "\(target)")
            #expect(response.text.contains(content), "\(target)")
            #expect(response.text.hasPrefix("<!doctype html>"), "\(target)")
        }
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
        #expect(page.contains("sandbox=\"allow-popups allow-popups-to-escape-sandbox\" srcdoc=\"&lt;base target=&quot;_blank&quot;&gt;"))
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
        #expect(page.contains("&lt;p onclick=&quot;x&quot;&gt;&quot;quoted&quot; &amp; &lt;script&gt;alert(2)"))
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
        #expect(DashboardHTML.escape("<a href=\"x\">'&'</a>") == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;")
        #expect(DashboardHTML.urlEncode("a b/ü?&=") == "a%20b%2F%C3%BC%3F%26%3D")
        #expect(DashboardHTML.query([("q", "x y"), ("page", "")]) == "?q=x%20y")
    }
}

import AuthHTTP
import AuthJSON
import GoTrue

/// Where things are, for a person who opens the server's bare URL.
///
/// The real server answers `GET /` with its router's plain `404 page not found`, and so does
/// the emulator for every path no route knows. The one deliberate exception: while the
/// dashboard is on, `GET /` (at the root, not under `/auth/v1`) names the dashboard, the auth
/// URL, the control API and the JWKS, and `GET /emulator/` (a trailing slash, which the router
/// treats as another path) redirects to `/emulator` (under the project's mount, when it has one).
/// With the dashboard off both stay GoTrue's 404.
extension DashboardEndpoints {
    static let discoveryOperation = "emulator.dashboard.discovery"

    /// The route answering `path` in place of a 404, when there is one.
    static func discovery(method: String, path: String, viaGateway: Bool, project: Project) -> Route? {
        guard method == "GET", !viaGateway, project.dashboard.isEnabled else { return nil }
        switch path {
        case Dashboard.path + "/":
            return Route(method, path, operation: discoveryOperation) { context in DashboardHTML.redirect(context.dashboardRoot, status: 302) }
        case "/":
            return Route(method, path, operation: discoveryOperation) { context in index(context) }
        default:
            return nil
        }
    }

    /// HTML for a browser (its `Accept` names `text/html`), plain text for anything else.
    static func index(_ context: RequestContext) -> HTTPResponse {
        // Absolute addresses from the project's external URL, the one its clients, mail links and
        // token issuer use: whatever mount that URL names is in it already, so `mountPath` is not
        // added again.
        let base = context.configuration.externalURL
        let links: [(String, String, String)] = [
            ("Dashboard", base + Dashboard.path, "users, mailbox, journal, scenarios, tokens, settings"),
            ("Auth API", base + GoTrueAPI.gatewayPrefix, "what Supabase clients call (GoTrue's routes, also served at the root)"),
            ("Control API", base + GoTrueAPI.emulatorPrefix, "the emulator's test side-door (service_role key)"),
            ("JWKS", base + GoTrueAPI.gatewayPrefix + "/.well-known/jwks.json", "the project's public signing keys"),
        ]
        let accept = context.request.headers["Accept"] ?? ""
        guard accept.lowercased().contains("text/html") else {
            let lines = links.map { name, url, what in "\(name): \(url)\n  \(what)" }
            return .plainText(status: 200, "Supabase Auth emulator\n\n" + lines.joined(separator: "\n"))
        }
        var body = "<h1>Supabase Auth emulator</h1><dl class=\"stack\">"
        for (name, url, what) in links {
            body += "<dt>\(DashboardHTML.escape(name))</dt><dd><a href=\"\(DashboardHTML.escape(url))\">\(DashboardHTML.escape(url))</a>"
            body += "<br><span class=\"muted\">\(DashboardHTML.escape(what))</span></dd>"
        }
        body += "</dl>"
        let html = DashboardHTML.page(title: "Supabase Auth emulator", view: "index", root: context.dashboardRoot, stamp: "",
                                      live: false, navigation: false, body: body)
        return DashboardHTML.response(html)
    }
}

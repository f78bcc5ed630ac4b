import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
import GoFormats
import GoTrue
import Synchronization

/// The dashboard's per-project settings and its seam to the layers above. GoTrue does not know
/// scenarios, the journal or runtime configuration exist (they are routes added by the layers
/// above), so the dashboard reaches them the way a test does: by calling the project's own
/// control routes in-process through the API's router. The same handler, the same validation,
/// the same errors; no second implementation of any rule.
public final class Dashboard: Sendable {
    /// Where the pages live. Outside `/emulator/v1`, so the control routes' bearer-key check does
    /// not apply: pages authenticate with a cookie (or not at all on a loopback bind).
    public static let path = GoTrueAPI.sideDoorPrefix

    /// A scenario file the scenarios page offers to load.
    public struct CatalogueEntry: Sendable {
        public var name: String
        public var contents: [UInt8]
        public init(name: String, contents: [UInt8]) {
            self.name = name
            self.contents = contents
        }
    }

    private struct State {
        var enabled = true
        // Secure by default: only the assembler, which knows the bind address, lifts it.
        var requiresKey = true
        /// The test providers' consent page asks for the key too (`configure`); off by default,
        /// so a project assembled in-process signs in through it as on loopback.
        var consentRequiresKey = false
        var catalogue: @Sendable () -> [CatalogueEntry] = { [] }
        var projects: @Sendable () -> [ProjectLink] = { [] }
        weak var api: GoTrueAPI?
        var secret: [UInt8]?
    }

    private let state = Mutex(State())

    public init() {}

    /// `--dashboard off` answers every page with 404; `requiresKey` asks for the service_role
    /// key (set when the server listens beyond loopback), on the dashboard and on the test
    /// providers' consent page.
    public func configure(enabled: Bool, requiresKey: Bool) {
        state.withLock {
            $0.enabled = enabled
            $0.requiresKey = requiresKey
            $0.consentRequiresKey = requiresKey
        }
    }

    public var isEnabled: Bool { state.withLock { $0.enabled } }
    public var requiresKey: Bool { state.withLock { $0.requiresKey } }
    var consentRequiresKey: Bool { state.withLock { $0.consentRequiresKey } }

    /// The scenario files offered for loading (the layer that reads files provides them).
    public func setCatalogue(_ provider: @escaping @Sendable () -> [CatalogueEntry]) {
        state.withLock { $0.catalogue = provider }
    }

    var catalogue: [CatalogueEntry] { state.withLock { $0.catalogue }() }

    /// A project the switcher offers: its ref and the dashboard's address within this server,
    /// relative to the server's root (`/project/<ref>/emulator`; the default project's is
    /// `/emulator`).
    public struct ProjectLink: Sendable, Equatable {
        public var ref: String
        public var path: String
        /// Whether it is the project this dashboard shows.
        public var current: Bool
        public init(ref: String, path: String, current: Bool) {
            self.ref = ref
            self.path = path
            self.current = current
        }
    }

    /// The projects the page header's switcher lists (the layer that hosts several projects
    /// provides them; none: no switcher).
    public func setProjects(_ provider: @escaping @Sendable () -> [ProjectLink]) {
        state.withLock { $0.projects = provider }
    }

    var projects: [ProjectLink] { state.withLock { $0.projects }() }

    /// Called by `GoTrueAPI.init`: the router (with every extension route) actions go through.
    /// Held weakly: the API owns the routes that own this project.
    func attach(_ api: GoTrueAPI) { state.withLock { $0.api = api } }

    var api: GoTrueAPI? { state.withLock { $0.api } }

    /// A per-process secret, drawn from the project's random source on first use: the CSRF
    /// token and the login cookie are MACs under it, so a restart invalidates both.
    func secret(_ environment: Environment) -> [UInt8] {
        state.withLock { s in
            if let secret = s.secret { return secret }
            let fresh = environment.randomBytes(32)
            s.secret = fresh
            return fresh
        }
    }
}

extension RequestContext {
    /// The dashboard's root as the browser addresses it: `/emulator` at the root, else under the
    /// mount (`/project/<ref>/emulator`). Every link, form, redirect, cookie path and script URL
    /// the dashboard emits starts here, so a browser that came in through a mount stays in that
    /// project, and two projects' cookies on one host never meet.
    var dashboardRoot: String { mountPrefix + Dashboard.path }

    /// `mountPath` with each segment percent-encoded, so it can go as it is into an attribute, a
    /// `Location` or a cookie's `Path`; "" at the root.
    var mountPrefix: String {
        mountPath.split(separator: "/").map { "/" + DashboardHTML.urlEncode(String($0)) }.joined()
    }
}

/// A control or admin route's answer, as the dashboard reads it.
struct DashboardReply {
    var status: Int
    var json: JSON
    var headers: HTTPHeaders

    var ok: Bool { status < 300 }

    /// GoTrue's message in either body format (`msg`, `message`, `error_description`).
    var message: String {
        for key in ["msg", "message", "error_description", "error"] {
            if let text = json[key]?.stringValue, !text.isEmpty { return text }
        }
        return "HTTP \(status)"
    }
}

/// The dashboard's pages and actions (see `DashboardPages.swift` for the pages themselves).
///
/// Security: nothing is served when the dashboard is off (404). With `requiresKey` (a
/// non-loopback bind) a page needs the login cookie, an HMAC of the service_role key under a
/// per-process secret (set by `POST /emulator/login`, HttpOnly, SameSite=Strict), or the key as
/// a bearer/`apikey`. Every POST must carry the CSRF token both in a form field and in the
/// SameSite=Strict cookie, so another site can neither read nor forge it.
struct DashboardEndpoints: EndpointGroup {
    let api: Core

    static let csrfCookie = "sb-emulator-csrf"
    static let sessionCookie = "sb-emulator-session"

    static var endpoints: [Endpoint<Self>] {
        let root = Dashboard.path
        func get(_ pattern: String, _ name: String,
                 _ body: @escaping @Sendable (Self, RequestContext) throws -> HTTPResponse) -> Endpoint<Self> {
            Endpoint("GET", root + pattern, operation: "emulator.dashboard." + name) { g, c in try g.guarded(c, post: false, body) }
        }
        func post(_ pattern: String, _ name: String,
                  _ body: @escaping @Sendable (Self, RequestContext) throws -> HTTPResponse) -> Endpoint<Self> {
            Endpoint("POST", root + pattern, operation: "emulator.dashboard." + name) { g, c in try g.guarded(c, post: true, body) }
        }
        return [
            get("", "users") { g, c in try g.usersPage(c) },
            post("/users", "user.create") { g, c in try g.createUser(c) },
            get("/users/{user_id}", "user") { g, c in try g.userPage(c) },
            // Before the generic `{action}` route: the router takes the first match.
            post("/users/{user_id}/metadata", "user.metadata") { g, c in try g.editMetadata(c) },
            post("/users/{user_id}/token", "user.token") { g, c in try g.mintToken(c) },
            post("/users/{user_id}/{action}", "user.action") { g, c in try g.userAction(c) },
            post("/users/{user_id}/sessions/{session_id}/revoke", "user.session.revoke") { g, c in try g.revokeSession(c) },
            post("/users/{user_id}/factors/{factor_id}/delete", "user.factor.delete") { g, c in try g.deleteFactor(c) },
            post("/users/{user_id}/passkeys/{passkey_id}/delete", "user.passkey.delete") { g, c in try g.deletePasskey(c) },
            get("/tokens", "tokens") { g, c in try g.tokensPage(c) },
            post("/tokens", "tokens.decode") { g, c in try g.decodeToken(c) },
            get("/mailbox", "mailbox") { g, c in try g.mailboxPage(c) },
            post("/mailbox/clear", "mailbox.clear") { g, c in try g.clearMailbox(c) },
            get("/journal", "journal") { g, c in try g.journalPage(c) },
            post("/journal/clear", "journal.clear") { g, c in try g.clearJournal(c) },
            get("/scenarios", "scenarios") { g, c in try g.scenariosPage(c) },
            post("/scenarios", "scenarios.load") { g, c in try g.loadScenario(c) },
            post("/scenarios/{name}/remove", "scenarios.remove") { g, c in try g.removeScenario(c) },
            get("/settings", "settings") { g, c in try g.settingsPage(c) },
            post("/settings/clock", "settings.clock") { g, c in try g.moveClock(c) },
            post("/settings/config", "settings.config") { g, c in try g.changeConfig(c) },
            post("/settings/reset", "settings.reset") { g, c in try g.resetProject(c) },
            get("/live", "live") { g, c in try g.live(c) },
            get("/login", "login") { g, c in g.loginPage(c) },
            post("/login", "login.submit") { g, c in g.login(c) },
        ]
    }

    var dashboard: Dashboard { api.project.dashboard }

    // MARK: Access

    /// The gate in front of every page and action: enabled, authenticated, CSRF-checked.
    func guarded(_ context: RequestContext, post: Bool, _ body: (Self, RequestContext) throws -> HTTPResponse) throws -> HTTPResponse {
        guard dashboard.isEnabled else { return .plainText(status: 404, "404 page not found") }
        let isLogin = context.path == Dashboard.path + "/login"
        if post && !csrfValid(context) {
            return page(context, status: 403, title: "Refused", view: "", navigation: false,
                        error: "The form's CSRF token is missing or wrong. Reload the page and try again.", body: "")
        }
        if !isLogin && !authorized(context) {
            if context.path == Dashboard.path + "/live" {
                return .json(status: 401, ["message": "The dashboard requires the service_role key"])
            }
            return loginPage(context, status: 401)
        }
        return try body(self, context)
    }

    func mac(_ label: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Array(label.utf8), using: SymmetricKey(data: dashboard.secret(api.project.environment))).hexString
    }

    var csrfToken: String { mac("csrf") }

    /// The login cookie's value for a key: changes when the key does.
    func sessionValue(_ key: String) -> String { mac("session:" + key) }

    static func cookie(_ request: HTTPRequest, _ name: String) -> String? {
        for header in request.headers.values(for: "Cookie") {
            for part in header.split(separator: ";") {
                let pair = part.split(separator: "=", maxSplits: 1)
                guard pair.count == 2 else { continue }
                if GoStrings.trim(pair[0], " ") == name { return GoStrings.trim(pair[1], " ") }
            }
        }
        return nil
    }

    /// The submitted form fields (`application/x-www-form-urlencoded`), decoded as a query.
    static func form(_ request: HTTPRequest) -> [QueryItem] {
        HTTPRequest(method: "GET", target: "/?" + String(decoding: request.body, as: UTF8.self)).query
    }

    static func field(_ request: HTTPRequest, _ name: String) -> String? {
        form(request).first { $0.name == name }?.value
    }

    func csrfValid(_ context: RequestContext) -> Bool {
        let expected = Array(csrfToken.utf8)
        guard let field = DashboardEndpoints.field(context.request, "csrf"),
              let cookie = DashboardEndpoints.cookie(context.request, DashboardEndpoints.csrfCookie) else { return false }
        return constantTimeEquals(Array(field.utf8), expected) && constantTimeEquals(Array(cookie.utf8), expected)
    }

    /// The keys that open the dashboard: the service_role key and the opaque secret key.
    var adminKeys: [String] { [api.snapshot.configuration.apiKeys.serviceRole, api.snapshot.configuration.apiKeys.secret].compactMap { $0 } }

    func authorized(_ context: RequestContext) -> Bool {
        guard dashboard.requiresKey else { return true }
        let request = context.request
        if let cookie = DashboardEndpoints.cookie(request, DashboardEndpoints.sessionCookie) {
            for key in adminKeys where constantTimeEquals(Array(cookie.utf8), Array(sessionValue(key).utf8)) { return true }
        }
        var presented: [String] = []
        if let key = request.headers["apikey"] { presented.append(key) }
        if let bearer = request.bearerToken { presented.append(bearer) }
        return presented.contains { given in adminKeys.contains { constantTimeEquals(Array(given.utf8), Array($0.utf8)) } }
    }

    func loginPage(_ context: RequestContext, status: Int = 200, error: String? = nil) -> HTTPResponse {
        let body = """
            <h1>Dashboard sign-in</h1>
            <p>This emulator listens beyond loopback, so the dashboard asks for the project's
            <code>service_role</code> key (or its <code>sb_secret_</code> key), as the control routes do.</p>
            <form method="post" action="\(context.dashboardRoot)/login" class="bar">\(DashboardHTML.csrfField(csrfToken))
            <label>service_role key<input type="password" name="key" autocomplete="off" required size="40"></label>
            <button type="submit">Sign in</button></form>
            """
        return page(context, status: status, title: "Sign in", view: "login", navigation: false, error: error, body: body)
    }

    func login(_ context: RequestContext) -> HTTPResponse {
        let given = DashboardEndpoints.field(context.request, "key") ?? ""
        guard let key = adminKeys.first(where: { constantTimeEquals(Array(given.utf8), Array($0.utf8)) }) else {
            return loginPage(context, status: 401, error: "That is not this project's service_role key.")
        }
        let root = context.dashboardRoot
        var response = DashboardHTML.redirect(root)
        response.headers.add(name: "Set-Cookie",
                             value: "\(DashboardEndpoints.sessionCookie)=\(sessionValue(key)); Path=\(root); HttpOnly; SameSite=Strict")
        return response
    }

    /// Every page goes out with the CSRF cookie its forms are checked against. A page answering
    /// a POST (an error, a minted token, a decoded one) does not poll for live updates: the
    /// script would fetch its URL with a GET, which is another page or none.
    func page(_ context: RequestContext, status: Int = 200, title: String, view: String, stamp: String = "",
              liveQuery: String = "", navigation: Bool = true, notice: String? = nil, error: String? = nil,
              body: String) -> HTTPResponse {
        let live = context.request.method == "GET"
        let root = context.dashboardRoot
        // The switcher goes with the navigation: a visitor who may not see the pages is not
        // told which other projects this server hosts.
        let html = DashboardHTML.page(title: title, view: view, root: root, stamp: stamp, liveQuery: liveQuery, live: live,
                                      notice: notice ?? context.request.queryValue("notice"),
                                      error: error, navigation: navigation,
                                      projects: navigation ? dashboard.projects : [],
                                      clock: navigation ? clockBar(context) : "", body: body)
        var headers = HTTPHeaders()
        headers.add(name: "Set-Cookie", value: "\(DashboardEndpoints.csrfCookie)=\(csrfToken); Path=\(root); HttpOnly; SameSite=Strict")
        return DashboardHTML.response(html, status: status, headers: headers)
    }

    // MARK: Calling the project's own routes

    /// Answers `method target` as the API would for a service_role caller, through the same
    /// router and handlers (admin, outbox, clock, and the control routes of the layers above),
    /// but past the middleware: the dashboard's own calls are neither journaled nor faulted.
    func call(_ method: String, _ target: String, _ body: JSON? = nil, raw: [UInt8]? = nil,
              from context: RequestContext) -> DashboardReply {
        var headers = HTTPHeaders()
        headers["Authorization"] = "Bearer " + api.snapshot.configuration.apiKeys.serviceRole
        headers["Content-Type"] = "application/json"
        let request = HTTPRequest(method: method, target: target, headers: headers, body: raw ?? body.map { Array($0.serialized().utf8) } ?? [],
                                  remoteAddress: context.request.remoteAddress, remotePort: context.request.remotePort)
        var inner = RequestContext(request: request, requestID: context.requestIDSource, apiVersion: APIVersion(headerValue: nil),
                                   path: request.path, viaGateway: false, configuration: api.project.settings.current)
        guard let gotrue = dashboard.api else {
            return DashboardReply(status: 503, json: ["message": "the dashboard is not attached to an API"], headers: [:])
        }
        let response: HTTPResponse
        switch gotrue.router.match(method: method, path: request.path) {
        case .found(let route, let parameters):
            inner.operation = route.operation
            inner.pathParameters = parameters
            do {
                response = try route.handler(inner)
            } catch {
                response = GoTrueAPI.render(error, inner)
            }
        default:
            return DashboardReply(status: 404, json: ["message": "not available in this build"], headers: [:])
        }
        let json = response.body.isEmpty ? JSON.null : ((try? JSON(parsing: response.body)) ?? .null)
        return DashboardReply(status: response.status, json: json, headers: response.headers)
    }
}


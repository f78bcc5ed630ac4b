import AuthHTTP
import GoFormats

/// `POST /logout?scope=global|local|others` (reference §5.12): 204, no body.
struct LogoutEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [Endpoint("POST", "/logout", operation: "logout", guards: [.requireAuthentication]) { g, context in
            try g.logout(context)
        }]
    }

    func logout(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.caller(context)
        let scope = context.request.queryValue("scope") ?? ""
        guard ["", "global", "local", "others"].contains(scope) else {
            throw AuthError(400, .validationFailed, "Unsupported logout scope \(GoStrconv.quote(scope))")
        }
        try api.write { conn in
            try api.audit(conn, context, actor: caller.user, action: .logout)
            // Without a session claim the real server logs the user out everywhere.
            switch (scope, caller.session) {
            case ("local", let session?): try conn.deleteSession(id: session.id)
            case ("others", let session?): try conn.deleteSessions(userID: caller.user.id, except: session.id)
            default: try conn.deleteSessions(userID: caller.user.id)
            }
        }
        return HTTPResponse(status: 204)
    }
}

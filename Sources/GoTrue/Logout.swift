import AuthHTTP

/// `POST /logout?scope=global|local|others` (reference §5.12): 204, no body.
struct LogoutEndpoints {
    let api: Core

    var routes: [Route] {
        [Route("POST", "/logout", operation: "logout") { context in try logout(context) }]
    }

    func logout(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let caller = try api.authenticate(context)
        let scope = context.request.queryValue("scope") ?? ""
        guard ["", "global", "local", "others"].contains(scope) else {
            throw AuthError(400, .validationFailed, "Unsupported logout scope \(goQuoted(scope))")
        }
        try api.write { conn in
            try api.audit(conn, context, actor: caller.user, action: "logout", logType: "account")
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

/// Go's `%q`: a double-quoted string with Go escapes.
func goQuoted(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if scalar.value < 0x20 || scalar.value == 0x7F {
                let hex = String(scalar.value, radix: 16)
                out += "\\x" + (hex.count < 2 ? "0" + hex : hex)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}

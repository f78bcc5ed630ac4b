import AuthHTTP
import AuthJSON
import AuthStore
import GoFormats
import GoTrue

/// The users pages' forms beyond one-click actions: create a user, edit the metadata, mint a
/// token, delete a passkey. Each is the admin or control route a test would call (`call`); the
/// dashboard only turns form fields into that route's JSON and refuses JSON that does not parse
/// before anything is sent, so a typo changes nothing.
extension DashboardEndpoints {
    /// The submitted form as a dictionary (the first value of a repeated field wins).
    static func fields(_ request: HTTPRequest) -> [String: String] {
        var out: [String: String] = [:]
        for item in form(request) where out[item.name] == nil { out[item.name] = item.value }
        return out
    }

    /// A JSON object typed into a textarea; empty text is an empty object. The error names the
    /// field and what was expected, for the page to show.
    static func jsonObject(_ text: String, field: String) -> Result<JSONObject, DashboardFormError> {
        let trimmed = GoStrings.trimSpace(text)
        if trimmed.isEmpty { return .success(JSONObject()) }
        guard let value = try? JSON(parsing: trimmed) else {
            return .failure(DashboardFormError(message: "\(field) is not valid JSON: nothing was changed."))
        }
        guard let object = value.objectValue else {
            return .failure(DashboardFormError(message: "\(field) must be a JSON object such as {\"full_name\": \"Ada\"}: nothing was changed."))
        }
        return .success(object)
    }

    // MARK: Create

    func createUserForm(_ draft: [String: String], open: Bool, root: String) -> String {
        """
        <details\(open ? " open" : "")><summary>Create a user</summary>
        <form method="post" action="\(root)/users" class="card">\(H.csrfField(csrfToken))
        <div class="bar">
        <label>Email<input type="email" name="email" autocomplete="off" value="\(H.escape(draft["email"] ?? ""))"></label>
        <label>Phone<input type="tel" name="phone" autocomplete="off" placeholder="+15551234567" value="\(H.escape(draft["phone"] ?? ""))"></label>
        <label>Password<input type="password" name="password" autocomplete="new-password"></label>
        <label class="check"><input type="checkbox" name="confirmed" value="yes"\(draft["confirmed"] == "yes" ? " checked" : "")> Confirmed</label>
        </div>
        <label>user_metadata (JSON object)<textarea name="user_metadata" class="short" spellcheck="false" placeholder='{"full_name": "Ada Lovelace"}'>\(H.escape(draft["user_metadata"] ?? ""))</textarea></label>
        <div class="actions"><button type="submit">Create user</button></div>
        <p class="muted">Sent as <code>POST /admin/users</code>: its rules, its errors.</p>
        </form></details>
        """
    }

    /// `POST /emulator/users` → `POST /admin/users`.
    func createUser(_ context: RequestContext) throws -> HTTPResponse {
        var draft = DashboardEndpoints.fields(context.request)
        draft["password"] = nil  // never echoed back into the page
        let email = GoStrings.trimSpace(draft["email"] ?? "")
        let phone = GoStrings.trimSpace(draft["phone"] ?? "")
        let password = DashboardEndpoints.field(context.request, "password") ?? ""
        let metadata: JSONObject
        switch DashboardEndpoints.jsonObject(draft["user_metadata"] ?? "", field: "user_metadata") {
        case .success(let object): metadata = object
        case .failure(let problem): return try usersPage(context, status: 400, error: problem.message, draft: draft)
        }
        var body = JSONObject()
        if !email.isEmpty { body["email"] = .string(email) }
        if !phone.isEmpty { body["phone"] = .string(phone) }
        if !password.isEmpty { body["password"] = .string(password) }
        if draft["confirmed"] == "yes" {
            if !email.isEmpty { body["email_confirm"] = true }
            if !phone.isEmpty { body["phone_confirm"] = true }
        }
        if !metadata.isEmpty { body["user_metadata"] = .object(metadata) }
        let reply = call("POST", "/admin/users", .object(body), from: context)
        guard reply.ok, let id = reply.json["id"]?.stringValue else {
            return try usersPage(context, status: reply.ok ? 500 : reply.status, error: reply.message, draft: draft)
        }
        let name = email.isEmpty ? (phone.isEmpty ? id : phone) : email
        return H.redirect(context.dashboardRoot + "/users/" + H.urlEncode(id) + H.query([("notice", "Created \(name).")]))
    }

    // MARK: Metadata

    func metadataForm(_ base: String, user: JSON, draft: [String: String]) -> String {
        let userText = draft["user_metadata"] ?? H.pretty(user["user_metadata"] ?? .object([:]))
        let appText = draft["app_metadata"] ?? H.pretty(user["app_metadata"] ?? .object([:]))
        return """
            <form method="post" action="\(base)/metadata">\(H.csrfField(csrfToken))
            <label>user_metadata<textarea name="user_metadata" spellcheck="false">\(H.escape(userText))</textarea></label>
            <label>app_metadata<textarea name="app_metadata" class="short" spellcheck="false">\(H.escape(appText))</textarea></label>
            <div class="actions"><button type="submit">Save metadata</button></div>
            <p class="muted">Saved with <code>PUT /admin/users/{id}</code>; a key removed here is sent as <code>null</code>, which removes it.</p>
            </form>
            """
    }

    /// `POST /emulator/users/{id}/metadata` → `PUT /admin/users/{id}`. GoTrue's update merges
    /// each object into the stored one (`UpdateUserMetaData`: a `null` value deletes the key), so
    /// the textareas' whole objects become "what it should be" by sending `null` for every key
    /// that was removed.
    func editMetadata(_ context: RequestContext) throws -> HTTPResponse {
        let id = context.pathParameters["user_id"] ?? ""
        let draft = DashboardEndpoints.fields(context.request)
        var parsed: [String: JSONObject] = [:]
        for field in ["user_metadata", "app_metadata"] {
            switch DashboardEndpoints.jsonObject(draft[field] ?? "", field: field) {
            case .success(let object): parsed[field] = object
            case .failure(let problem): return try userPage(context, status: 400, error: problem.message, draft: draft)
            }
        }
        let path = "/admin/users/" + H.urlEncode(id)
        let current = call("GET", path, from: context)
        guard current.ok else { return try userPage(context, status: current.status, error: current.message) }
        var changes = JSONObject()
        for field in ["user_metadata", "app_metadata"] {
            var wanted = parsed[field] ?? JSONObject()
            for (key, _) in current.json[field]?.objectValue ?? JSONObject() where wanted[key] == nil { wanted[key] = .null }
            changes[field] = .object(wanted)
        }
        let reply = call("PUT", path, .object(changes), from: context)
        guard reply.ok else { return try userPage(context, status: reply.status, error: reply.message, draft: draft) }
        return H.redirect(context.dashboardRoot + "/users/" + H.urlEncode(id) + H.query([("notice", "Metadata saved.")]))
    }

    // MARK: Tokens

    func mintForm(_ base: String, draft: [String: String]) -> String {
        let aal = draft["aal"] ?? ""
        var options = ""
        for (value, label) in [("", "the session's (aal1)"), ("aal1", "aal1"), ("aal2", "aal2")] {
            options += "<option value=\"\(value)\"\(value == aal ? " selected" : "")>\(label)</option>"
        }
        return """
            <form method="post" action="\(base)/token">\(H.csrfField(csrfToken))
            <div class="bar">
            <label>Role<input name="role" placeholder="the user's role" value="\(H.escape(draft["role"] ?? ""))"></label>
            <label>AAL<select name="aal">\(options)</select></label>
            <label>Expires in (seconds)<input type="number" name="expires_in" placeholder="\(api.snapshot.configuration.jwt.expirySeconds)" value="\(H.escape(draft["expires_in"] ?? ""))"></label>
            </div>
            <label>Extra claims (JSON object)<textarea name="claims" class="short" spellcheck="false" placeholder='{"tenant": "acme"}'>\(H.escape(draft["claims"] ?? ""))</textarea></label>
            <div class="actions"><button type="submit">Mint token</button></div>
            <p class="muted">The same token as <code>POST /emulator/v1/token</code> (and <code>auth-emulator token</code>):
            signed with the project's current key, for a new session of this user.</p>
            </form>
            """
    }

    /// `POST /emulator/users/{id}/token` → `POST /emulator/v1/token`; the answer is the user
    /// page with the token shown once (a redirect would have to carry it in a URL).
    func mintToken(_ context: RequestContext) throws -> HTTPResponse {
        let id = context.pathParameters["user_id"] ?? ""
        let draft = DashboardEndpoints.fields(context.request)
        var claims: JSONObject
        switch DashboardEndpoints.jsonObject(draft["claims"] ?? "", field: "Extra claims") {
        case .success(let object): claims = object
        case .failure(let problem): return try userPage(context, status: 400, error: problem.message, draft: draft)
        }
        if let aal = draft["aal"], !aal.isEmpty, claims["aal"] == nil { claims["aal"] = .string(aal) }
        var body: JSONObject = ["user_id": .string(id)]
        if let role = draft["role"].map({ GoStrings.trimSpace($0) }), !role.isEmpty { body["role"] = .string(role) }
        if let text = draft["expires_in"].map({ GoStrings.trimSpace($0) }), !text.isEmpty {
            // Passed on as given: the token route judges it (and names the problem).
            body["expires_in"] = Double(text).map(JSON.number) ?? .string(text)
        }
        if !claims.isEmpty { body["claims"] = .object(claims) }
        let reply = call("POST", GoTrueAPI.emulatorPrefix + "/token", .object(body), from: context)
        guard reply.ok else { return try userPage(context, status: reply.status, error: reply.message, draft: draft) }
        return try userPage(context, draft: draft, minted: reply.json)
    }

    func mintedToken(_ minted: JSON, root: String) -> String {
        let token = minted["access_token"]?.stringValue ?? ""
        let expiresAt = minted["expires_at"]?.doubleValue.map { Timestamp(microseconds: Int64($0) * 1_000_000).rfc3339 } ?? ""
        var html = "<section class=\"card\" aria-labelledby=\"minted\"><h3 id=\"minted\">Minted access token</h3>"
        html += "<p>\(H.copyable("minted-token", token))</p><p class=\"muted\">Expires \(H.escape(expiresAt)); shown once.</p>"
        if let refresh = minted["refresh_token"]?.stringValue {
            html += "<p>Refresh token: \(H.copyable("minted-refresh-token", refresh))</p>"
        }
        html += "<form method=\"post\" action=\"\(root)/tokens\" class=\"inline\">\(H.csrfField(csrfToken))"
        html += "<input type=\"hidden\" name=\"token\" value=\"\(H.escape(token))\"><button type=\"submit\" class=\"secondary\">Decode</button></form>"
        html += "</section>"
        return html
    }

    // MARK: Passkeys

    func deletePasskey(_ context: RequestContext) throws -> HTTPResponse {
        try deleteUserItem(context, collection: "passkeys", parameter: "passkey_id", notice: "Passkey deleted.")
    }

    // MARK: Signing out

    /// What `POST /logout?scope=global` does for the user's own token (`models.Logout`): every
    /// session goes, and their refresh tokens with them; one `logout` audit entry with the user
    /// as actor. No admin route signs a user out, so this is the logout's store call.
    func signOutEverywhere(_ context: RequestContext, userID: String) throws -> Int {
        let id = AdminEndpoints.canonicalUUID(userID) ?? ""
        return try api.write { conn -> Int in
            guard let user = try conn.user(id: id) else { throw AuthError(404, .userNotFound, "User not found") }
            let count = try conn.sessions(userID: user.id).count
            try api.audit(conn, context, actor: user, action: .logout)
            try conn.deleteSessions(userID: user.id)
            return count
        }
    }
}

/// A form field the dashboard refuses before calling any route.
struct DashboardFormError: Error {
    var message: String
}

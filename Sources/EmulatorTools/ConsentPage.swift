import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import GoFormats
import GoTrue

/// The fake providers' HTML: plain markup, inline CSS, no external resources, no script needed.
/// Every interpolated value goes through `escape`. Stable ids for browser tests: `#email`,
/// `#name`, `#email_verified`, `#continue`, `#cancel`, and `button.account[data-email]` for
/// each remembered account.
enum ConsentPage {
    /// HTML-escapes text for element content and quoted attribute values, as the email
    /// templates do (Go's `html/template` escapes).
    static func escape(_ text: String) -> String { GoHTML.escapeString(text) }

    static let style = """
        body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;background:#f3f4f6;color:#111827;margin:0}
        main{max-width:26rem;margin:3rem auto;background:#fff;border-radius:12px;padding:2rem;box-shadow:0 1px 4px rgba(0,0,0,.12)}
        h1{font-size:1.35rem;margin:.25rem 0 .5rem}h2{font-size:1rem;margin:1.5rem 0 .5rem}
        .badge{display:inline-block;font-size:.75rem;background:#fef3c7;color:#92400e;border-radius:999px;padding:.15rem .6rem;margin:0}
        .muted{color:#6b7280;font-size:.9rem;margin:.25rem 0}.problem{color:#b91c1c}
        label{display:block;font-size:.85rem;margin:.75rem 0 .25rem}
        input[type=email],input[type=text],input[type=password]{box-sizing:border-box;width:100%;padding:.55rem;border:1px solid #d1d5db;border-radius:8px;font-size:1rem}
        label.check{display:flex;gap:.5rem;align-items:center}
        .actions{display:flex;gap:.75rem;margin-top:1.25rem}
        button{font-size:1rem;border-radius:8px;padding:.55rem 1rem;cursor:pointer;border:1px solid #d1d5db;background:#fff}
        #continue{background:#2563eb;border-color:#2563eb;color:#fff}
        form.pick{margin:0}button.account{display:block;width:100%;text-align:left;margin:.35rem 0}
        button.account small{display:block;color:#6b7280}
        """

    static func document(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>\(escape(title))</title>
        <style>\(style)</style>
        </head>
        <body>
        <main>
        \(body)
        </main>
        </body>
        </html>

        """
    }

    static func response(status: Int = 200, _ html: String) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers["Content-Type"] = "text/html; charset=utf-8"
        headers["Cache-Control"] = "no-store"
        headers["X-Content-Type-Options"] = "nosniff"
        return HTTPResponse(status: status, headers: headers, body: Array(html.utf8))
    }

    static func hidden(_ name: String, _ value: String) -> String {
        "<input type=\"hidden\" name=\"\(escape(name))\" value=\"\(escape(value))\">"
    }

    /// The consent page. The forms post to `authorize` relative to the page, so the same page
    /// works at the root and under the gateway prefix.
    static func page(provider: String, request: AuthorizationRequest, accounts: [IdentityProviderStore.Account],
                     email: String? = nil, name: String = "", problem: String? = nil, key: String? = nil) -> HTTPResponse {
        let display = FakeIdentityProvider.displayName(provider)
        let carried = (request.hiddenFields + (key.map { [("key", $0)] } ?? [])).map { hidden($0.0, $0.1) }.joined(separator: "\n")
        var body = """
            <p class="badge">Test identity provider &middot; Supabase Auth emulator</p>
            <h1>Sign in with \(escape(display))</h1>
            <p class="muted">to continue to <strong id="client">\(escape(request.clientID))</strong></p>

            """
        if let problem { body += "<p class=\"problem\" id=\"problem\" role=\"alert\">\(escape(problem))</p>\n" }
        if !accounts.isEmpty {
            body += "<section id=\"accounts\">\n<h2>Choose an account</h2>\n"
            for account in accounts {
                guard let address = account.email else { continue }
                let label = account.name.flatMap { $0.isEmpty ? nil : $0 } ?? address
                body += """
                    <form class="pick" method="post" action="authorize">
                    \(carried)
                    \(hidden("email", address))
                    \(hidden("name", account.name ?? ""))
                    \(hidden("email_verified", account.emailVerified ? "true" : "false"))
                    \(hidden("action", "approve"))
                    <button type="submit" class="account" data-email="\(escape(address))" data-sub="\(escape(account.subject))">\(escape(label))<small>\(escape(address))</small></button>
                    </form>

                    """
            }
            body += "</section>\n<h2>Or use another test account</h2>\n"
        }
        let emailValue = email ?? request.loginHint
        body += """
            <form id="consent" method="post" action="authorize">
            \(carried)
            <label for="email">Email</label>
            <input id="email" name="email" type="email" required autocomplete="email" value="\(escape(emailValue))" autofocus>
            <label for="name">Name</label>
            <input id="name" name="name" type="text" autocomplete="name" value="\(escape(name))">
            \(hidden("email_verified", "false"))
            <label class="check"><input id="email_verified" name="email_verified" type="checkbox" value="true" checked> Email verified</label>
            <div class="actions">
            <button id="continue" type="submit" name="action" value="approve">Continue</button>
            <button id="cancel" type="submit" name="action" value="deny" formnovalidate>Cancel</button>
            </div>
            </form>
            <p class="muted">No real \(escape(display)) account is involved: whatever you enter here is what the application receives.</p>
            """
        return response(status: problem == nil ? 200 : 400, document(title: "Sign in with \(display) (test)", body: body))
    }

    /// The page beyond loopback before the key is given (`keyAccepted`).
    static func keyPrompt(provider: String, request: AuthorizationRequest, problem: String? = nil) -> HTTPResponse {
        let display = FakeIdentityProvider.displayName(provider)
        let carried = request.hiddenFields.map { hidden($0.0, $0.1) }.joined(separator: "\n")
        var body = """
            <p class="badge">Test identity provider &middot; Supabase Auth emulator</p>
            <h1>Sign in with \(escape(display))</h1>
            <p class="muted">This emulator listens beyond this machine, so its test provider, which signs in
            as any account, asks for the project's <code>service_role</code> (or <code>sb_secret_</code>) key first.</p>

            """
        if let problem { body += "<p class=\"problem\" id=\"problem\" role=\"alert\">\(escape(problem))</p>\n" }
        body += """
            <form id="unlock" method="post" action="authorize">
            \(carried)
            <label for="key">service_role key</label>
            <input id="key" name="key" type="password" required autocomplete="off" autofocus>
            <div class="actions"><button id="continue" type="submit" name="action" value="unlock">Continue</button></div>
            </form>
            """
        return response(status: problem == nil ? 401 : 403, document(title: "Sign in with \(display) (test)", body: body))
    }

    /// A request the provider cannot serve: it must not redirect (RFC 6749 §4.1.2.1).
    static func error(_ message: String, provider: String) -> HTTPResponse {
        let display = FakeIdentityProvider.displayName(provider)
        let body = """
            <p class="badge">Test identity provider &middot; Supabase Auth emulator</p>
            <h1 id="error">Invalid authorization request</h1>
            <p class="problem" id="problem">\(escape(message))</p>
            <p class="muted">\(escape(display)) sign-in cannot continue.</p>
            """
        return response(status: 400, document(title: "Invalid authorization request", body: body))
    }

    /// OAuth 2.0 Form Post Response Mode: the parameters as a form auto-posted to the client.
    /// The one-line script only presses the button a user could press.
    static func formPost(action: String, fields: [QueryItem]) -> HTTPResponse {
        let inputs = fields.map { hidden($0.name, $0.value) }.joined(separator: "\n")
        let body = """
            <p class="badge">Test identity provider &middot; Supabase Auth emulator</p>
            <h1>Returning to the application&hellip;</h1>
            <form id="response" method="post" action="\(escape(action))">
            \(inputs)
            <div class="actions"><button id="submit" type="submit">Continue</button></div>
            </form>
            <script>document.getElementById("response").submit()</script>
            """
        return response(document(title: "Returning to the application", body: body))
    }
}

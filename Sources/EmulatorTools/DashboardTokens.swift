import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import GoTrue

/// `/emulator/tokens`: paste a JWT, read its header and claims, and learn whether this project
/// would accept it. The verdict is the project's own verification (`JWT.verify` with the key
/// set and virtual clock GoTrue's `parseJWTClaims` uses), so "valid" here means `/user` takes it.
extension DashboardEndpoints {
    func tokensPage(_ context: RequestContext, status: Int = 200, error: String? = nil, token: String = "",
                    result: String = "") throws -> HTTPResponse {
        let body = """
            <h1>Tokens</h1>
            <p>Decode any JWT and check it against this emulator's keys. To mint one for a user, open the user's page.</p>
            <form method="post" action="\(context.dashboardRoot)/tokens">\(H.csrfField(csrfToken))
            <label>JWT<textarea name="token" class="short" spellcheck="false" autocomplete="off" placeholder="eyJhbGciOi...">\(H.escape(token))</textarea></label>
            <div class="actions"><button type="submit">Decode</button></div></form>
            \(result)
            """
        return page(context, status: status, title: "Tokens", view: "tokens", error: error, body: body)
    }

    /// A POST, so a token never lands in a URL (history, logs).
    func decodeToken(_ context: RequestContext) throws -> HTTPResponse {
        let token = (DashboardEndpoints.field(context.request, "token") ?? "").filter { !$0.isWhitespace }
        guard !token.isEmpty else { return try tokensPage(context, status: 400, error: "Paste a token to decode.") }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let header = try? JSON(parsing: Base64URL.decode(parts[0])), header.objectValue != nil,
              let claims = try? JSON(parsing: Base64URL.decode(parts[1])), claims.objectValue != nil else {
            return try tokensPage(context, status: 400, error: "Not a JWT: expected three base64url parts, the first two JSON objects.",
                                  token: token)
        }
        let verdict = DashboardEndpoints.verdict(token, keys: api.snapshot.verificationKeys, now: api.project.environment.now())
        var result = "<p class=\"\(verdict.valid ? "notice" : "error")\" role=\"status\" id=\"verdict\"><strong>\(H.escape(verdict.title))</strong>"
        result += " \(H.escape(verdict.detail))</p>"
        result += "<div class=\"grid\"><section class=\"card\" aria-labelledby=\"jwt-header\"><h3 id=\"jwt-header\">Header</h3>"
        result += "<pre id=\"decoded-header\">\(H.escape(H.pretty(header)))</pre></section>"
        result += "<section class=\"card\" aria-labelledby=\"jwt-claims\"><h3 id=\"jwt-claims\">Claims</h3>"
        result += "<pre id=\"decoded-claims\">\(H.escape(H.pretty(claims)))</pre>"
        var times = ""
        for name in ["iat", "nbf", "exp"] {
            guard let seconds = claims[name]?.doubleValue, seconds.isFinite, abs(seconds) < 1e11 else { continue }
            times += "<dt>\(name)</dt><dd>\(H.escape(Timestamp(microseconds: Int64(seconds) * 1_000_000).rfc3339))</dd>"
        }
        if !times.isEmpty { result += "<dl>\(times)</dl>" }
        result += "</section></div>"
        return try tokensPage(context, token: token, result: result)
    }

    struct TokenVerdict {
        var valid: Bool
        var title: String
        var detail: String
    }

    /// One of: signature valid, expired (a valid signature whose time is up on the virtual
    /// clock), unknown key id, invalid signature, or malformed, with golang-jwt's wording.
    static func verdict(_ token: String, keys: JWTKeySet, now: Timestamp) -> TokenVerdict {
        do {
            let verified = try JWT.verify(token, keys: keys, now: now.unixSeconds)
            let kid = verified.header["kid"]?.stringValue.map { " (kid \($0))" } ?? ""
            return TokenVerdict(valid: true, title: "Signature valid.",
                                detail: "Signed with this emulator's key\(kid) and within its time claims: GoTrue accepts it.")
        } catch {
            switch error {
            case .invalidClaims(let problems) where problems.contains(.expired):
                return TokenVerdict(valid: false, title: "Expired.",
                                    detail: "The signature is this emulator's, but exp has passed on the virtual clock (\(now.rfc3339)).")
            case .invalidClaims:
                return TokenVerdict(valid: false, title: "Not valid now.", detail: "The signature is this emulator's, but \(error).")
            case .unverifiable(.unknownKey(let kid, _)):
                return TokenVerdict(valid: false, title: "Unknown key id.",
                                    detail: "No key of this emulator has kid \(kid ?? "(none)"): \(error).")
            case .signatureInvalid:
                return TokenVerdict(valid: false, title: "Signature invalid.", detail: "\(error).")
            default:
                return TokenVerdict(valid: false, title: "Not verifiable.", detail: "\(error).")
            }
        }
    }
}

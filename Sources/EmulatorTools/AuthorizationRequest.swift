import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore
import GoFormats
import GoTrue
import Synchronization

/// The parameters of an authorization request (RFC 6749 §4.1.1, OpenID Connect Core 1.0
/// §3.1.2.1), from the query or from the consent form's hidden fields.
struct AuthorizationRequest: Sendable {
    var clientID = ""
    var redirectURI = ""
    var responseType = ""
    var scope = ""
    var state = ""
    var nonce = ""
    var loginHint = ""
    var responseMode = ""
    var codeChallenge = ""
    var codeChallengeMethod = ""

    static let fields = ["client_id", "redirect_uri", "response_type", "scope", "state", "nonce", "response_mode",
                         "code_challenge", "code_challenge_method"]

    init(_ items: [QueryItem]) {
        func value(_ name: String) -> String { items.first { $0.name == name }?.value ?? "" }
        clientID = value("client_id")
        redirectURI = value("redirect_uri")
        responseType = value("response_type")
        scope = value("scope")
        state = value("state")
        nonce = value("nonce")
        loginHint = value("login_hint")
        responseMode = value("response_mode")
        codeChallenge = value("code_challenge")
        codeChallengeMethod = value("code_challenge_method")
    }

    /// The pairs carried through the consent form.
    var hiddenFields: [(String, String)] {
        [("client_id", clientID), ("redirect_uri", redirectURI), ("response_type", responseType), ("scope", scope),
         ("state", state), ("nonce", nonce), ("response_mode", responseMode), ("code_challenge", codeChallenge),
         ("code_challenge_method", codeChallengeMethod)].filter { !$0.1.isEmpty }
    }

    /// Why the request cannot be served, or nil. Nothing is redirected for these: without a
    /// usable client and redirect URI the provider must not redirect (RFC 6749 §4.1.2.1).
    func problem() -> String? {
        if clientID.isEmpty { return "The request has no client_id." }
        if redirectURI.isEmpty { return "The request has no redirect_uri." }
        if !AuthorizationRequest.isAcceptableRedirect(redirectURI) {
            return "The redirect_uri is not an absolute URL this provider can send a browser to."
        }
        if responseType != "code" {
            return responseType.isEmpty ? "The request has no response_type (expected \"code\")."
                : "Unsupported response_type \"\(responseType)\" (only \"code\" is supported)."
        }
        if !["", "query", "form_post"].contains(responseMode) {
            return "Unsupported response_mode \"\(responseMode)\" (expected \"query\" or \"form_post\")."
        }
        if !["", "plain", "S256"].contains(codeChallengeMethod) {
            return "Unsupported code_challenge_method \"\(codeChallengeMethod)\"."
        }
        return nil
    }

    /// An absolute URL (`scheme:` then something) that Go's `url.Parse` accepts, whose host a
    /// browser reads as the parser does (`RedirectTarget`), and whose scheme cannot run script in
    /// the page (the URI becomes a form action and a Location header).
    static func isAcceptableRedirect(_ uri: String) -> Bool {
        guard let target = RedirectTarget(uri), uri.utf8.count > target.go.scheme.utf8.count + 1 else { return false }
        return !RedirectTarget.scriptSchemes.contains(target.go.scheme)
            && !uri.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F })
    }

    /// `form_post` when asked, and for Apple unless `query` was asked: Apple requires it
    /// whenever name or email scopes are requested, and GoTrue always asks Apple for it.
    func usesFormPost(provider: String) -> Bool {
        responseMode == "form_post" || (responseMode.isEmpty && provider == "apple")
    }
}

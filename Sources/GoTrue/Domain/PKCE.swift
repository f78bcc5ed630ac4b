import AuthHTTP
import AuthJSON
import AuthStore

/// PKCE parameter rules (`validatePKCEParams`, pkce.go; reference §10.6). The method itself is
/// checked when the flow state is created.
enum PKCE {
    static func validateParameters(method: String, challenge: String) throws(AuthError) {
        if challenge.isEmpty != method.isEmpty {
            throw AuthError(400, .validationFailed, "PKCE flow requires code_challenge_method and code_challenge")
        }
        guard !challenge.isEmpty else { return }
        guard (43...128).contains(challenge.utf8.count) else {
            throw AuthError(400, .validationFailed, "code challenge has to be between 43 and 128 characters")
        }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._~-".utf8)
        guard challenge.utf8.allSatisfy({ allowed.contains($0) }) else {
            throw AuthError(400, .validationFailed,
                            "code challenge can only contain alphanumeric characters, hyphens, periods, underscores and tildes")
        }
    }
}

import AuthHTTP
import AuthJSON

/// The provider seam: what GoTrue's OAuth redirect flow (`/authorize`, `/callback`) and the
/// id_token grant need from an identity provider. The real server reaches Google, Apple, ...
/// over the network; the emulator binds this to its fake providers (`Core.identityProviders`,
/// in `Emulator/`), so the endpoint code never names them.
protocol IdentityProviderSeam {
    /// The issuer (`iss`) the provider's id_tokens carry.
    func issuer(for provider: String) -> String
    /// The provider whose issuer is `iss`, if the seam serves it.
    func provider(forIssuer iss: String) -> String?
    /// The provider's authorization URL with the OAuth query (`oauth2.Config.AuthCodeURL`).
    func authorizationURL(provider: String, query: [QueryItem]) -> String
    /// Whether `token` was signed by one of the seam's providers (so `verify` can check it).
    func isEmulatorToken(_ token: String) -> Bool
    /// The claims of one of the seam's tokens, signature and times checked.
    func verify(_ token: String) throws -> JSONObject
    /// The code exchange at the provider's token endpoint; nil for an unknown or used code.
    func redeem(code: String, provider: String) -> IdentityProviderRedemption?
}

/// What redeeming an authorization code gives GoTrue's callback.
struct IdentityProviderRedemption: Sendable {
    /// The id_token claims, exactly as the provider's token endpoint signs them.
    var claims: JSONObject
    /// The provider's tokens (`provider_token` / `provider_refresh_token` in GoTrue's answer).
    var accessToken: String
    var refreshToken: String
    /// Apple's `user` form field (JSON text) on the first authorization of the subject.
    var appleUser: String?
}

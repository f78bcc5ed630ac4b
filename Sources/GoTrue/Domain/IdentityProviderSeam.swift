import AuthHTTP
import AuthJSON

/// The provider seam: what GoTrue's OAuth redirect flow (`/authorize`, `/callback`) and the
/// id_token grant need from an identity provider. The real server reaches Google, Apple, ...
/// over the network; the emulator binds this to its fake providers (`Project.identityProviders`,
/// set by the EmulatorTools module), so the endpoint code never names them.
public protocol IdentityProviderSeam {
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
    /// Where the seam's issuers live (`<base><provider>`): a custom provider whose URLs start
    /// here is served in-process.
    var issuerBase: String { get }
    /// Whether the seam serves `provider` (`google`, `custom:acme`, ...).
    func serves(_ provider: String) -> Bool
    /// The OIDC discovery document of one of the seam's providers.
    func discoveryDocument(provider: String) -> JSONObject?
    /// A GET of the provider's own API (`url`, GitHub's `/user`, ...) with an access token the
    /// seam issued: the JSON answer, nil for a failed request.
    func providerAPI(provider: String, accessToken: String, url: String) -> JSON?
}

/// The plain server's seam: no provider answers, as when every provider is unreachable.
struct UnreachableIdentityProviders: IdentityProviderSeam {
    func issuer(for provider: String) -> String { "" }
    func provider(forIssuer iss: String) -> String? { nil }
    func authorizationURL(provider: String, query: [QueryItem]) -> String { "" }
    func isEmulatorToken(_ token: String) -> Bool { false }
    func verify(_ token: String) throws -> JSONObject { throw AuthError.unexpected }
    func redeem(code: String, provider: String) -> IdentityProviderRedemption? { nil }
    var issuerBase: String { "\u{0}" }
    func serves(_ provider: String) -> Bool { false }
    func discoveryDocument(provider: String) -> JSONObject? { nil }
    func providerAPI(provider: String, accessToken: String, url: String) -> JSON? { nil }
}

/// What redeeming an authorization code gives GoTrue's callback.
public struct IdentityProviderRedemption: Sendable {
    /// The id_token claims, exactly as the provider's token endpoint signs them.
    public var claims: JSONObject
    /// The provider's tokens (`provider_token` / `provider_refresh_token` in GoTrue's answer).
    public var accessToken: String
    public var refreshToken: String
    /// Apple's `user` form field (JSON text) on the first authorization of the subject.
    public var appleUser: String?
    /// The token response's other fields (WorkOS's `profile`).
    public var tokenExtras: JSONObject

    public init(claims: JSONObject, accessToken: String, refreshToken: String, appleUser: String?, tokenExtras: JSONObject = [:]) {
        self.claims = claims
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.appleUser = appleUser
        self.tokenExtras = tokenExtras
    }
}

extension Core {
    /// The project's identity providers (the emulator's fake ones, or none).
    var identityProviders: any IdentityProviderSeam {
        project.identityProviders?(self) ?? UnreachableIdentityProviders()
    }
}

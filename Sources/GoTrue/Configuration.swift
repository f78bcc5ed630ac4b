import AuthJWT

/// The live configuration of one emulated project. Names follow the real server's `GOTRUE_*`
/// variables (reference §15); defaults follow `supabase start` so existing local setups work.
public struct Configuration: Sendable {
    /// `GOTRUE_SITE_URL`: default redirect target.
    public var siteURL: String = "http://127.0.0.1:3000"
    /// `API_EXTERNAL_URL`: the public base URL used in links.
    public var externalURL: String = "http://127.0.0.1:9999"
    public var jwt = JWTSettings()
    /// The keys the gateway (`/auth/v1/...`) accepts in `apikey`; derived from the JWT secret
    /// unless given explicitly.
    public var apiKeys: APIKeys
    /// Reported by `GET /health`.
    public var version: String = Configuration.emulatorVersion

    /// The GoTrue release whose wire behaviour is reproduced, and this emulator's own version.
    public static let emulatedGoTrueVersion = "v2.196.0"
    public static let emulatorVersion = "v2.196.0-emulator.0.1.0"

    public init(jwt: JWTSettings = JWTSettings(), apiKeys: APIKeys? = nil) {
        self.jwt = jwt
        self.apiKeys = apiKeys ?? APIKeys.standard(secret: jwt.secret)
    }
}

public struct JWTSettings: Sendable {
    /// `GOTRUE_JWT_SECRET`; the `supabase start` default.
    public var secret: String = JWTSettings.defaultSecret
    /// `GOTRUE_JWT_EXP`: access-token lifetime in seconds.
    public var expirySeconds: Int = 3600
    /// `GOTRUE_JWT_AUD`.
    public var audience: String = "authenticated"
    /// `GOTRUE_JWT_ADMIN_ROLES`.
    public var adminRoles: [String] = ["service_role", "supabase_admin"]
    /// `GOTRUE_JWT_DEFAULT_GROUP_NAME`: the `role` given to new users.
    public var defaultGroupName: String = "authenticated"
    /// `GOTRUE_JWT_ISSUER`: `iss` claim when non-empty.
    public var issuer: String = ""

    public static let defaultSecret = "super-secret-jwt-token-with-at-least-32-characters-long"

    public init() {}
}

/// The project's API keys, as the Supabase CLI mints them for local development: HS256 JWTs
/// `{"iss":"supabase-demo","role":<role>,"exp":1983812996}` signed with the JWT secret. With the
/// default secret these are byte-for-byte the well-known local `anon` and `service_role` keys.
public struct APIKeys: Sendable, Equatable {
    public var anon: String
    public var serviceRole: String

    public init(anon: String, serviceRole: String) {
        self.anon = anon
        self.serviceRole = serviceRole
    }

    public static func standard(secret: String) -> APIKeys {
        func key(_ role: String) -> String {
            let claims: JSONObject = ["iss": "supabase-demo", "role": .string(role), "exp": 1_983_812_996]
            return JWTSigner.sign(claims: claims, key: JWTKey(kid: nil, secret: Array(secret.utf8)))
        }
        return APIKeys(anon: key("anon"), serviceRole: key("service_role"))
    }
}

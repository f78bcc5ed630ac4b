import AuthJSON
import AuthJWT

/// The project's API keys, as the Supabase CLI mints them for local development: HS256 JWTs
/// `{"iss":"supabase-demo","role":<role>,"exp":1983812996}` signed with the JWT secret. With the
/// default secret these are byte-for-byte the well-known local `anon` and `service_role` keys.
/// The newer opaque keys (`sb_publishable_...`, `sb_secret_...`) are accepted too, when set.
public struct APIKeys: Sendable, Equatable {
    public var anon: String
    public var serviceRole: String
    /// `sb_publishable_...`: behaves as the anon key at the gateway.
    public var publishable: String?
    /// `sb_secret_...`: behaves as the service_role key at the gateway.
    public var secret: String?

    /// The opaque keys `supabase start` prints for every local project.
    public static let localPublishable = "sb_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH"
    public static let localSecret = "sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz"

    public static func standard(secret: String) -> APIKeys {
        func key(_ role: String) -> String {
            let claims: JSONObject = ["iss": "supabase-demo", "role": .string(role), "exp": 1_983_812_996]
            return JWTSigner.sign(claims: claims, key: JWTKey(kid: nil, secret: Array(secret.utf8)))
        }
        return APIKeys(anon: key("anon"), serviceRole: key("service_role"),
                       publishable: APIKeys.localPublishable, secret: APIKeys.localSecret)
    }

    /// The anon and service_role keys as the Supabase CLI derives them when signing keys are
    /// configured (`generateJWT` with `GenerateAsymmetricJWT`): `{"iss":"supabase-demo",
    /// "role":...,"exp":...}` signed by the first key, its `kid` in the header. The CLI sets
    /// `exp` ten years from now; here it is the well-known keys' fixed `exp` (2032), so with
    /// deterministic signatures (RFC 6979, Ed25519, PKCS #1 v1.5) a restart prints the same keys
    /// and apps configured with them keep working.
    /// - Precondition: `key.canSign`.
    public static func derived(from key: JWTKey) -> APIKeys {
        func token(_ role: String) -> String {
            let claims: JSONObject = ["iss": "supabase-demo", "role": .string(role), "exp": 1_983_812_996]
            return JWTSigner.sign(claims: claims, key: key)
        }
        return APIKeys(anon: token("anon"), serviceRole: token("service_role"),
                       publishable: APIKeys.localPublishable, secret: APIKeys.localSecret)
    }
}

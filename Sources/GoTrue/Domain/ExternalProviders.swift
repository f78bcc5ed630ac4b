import AuthFormats
import AuthJSON
import GoFormats

/// A claim of the wrong JSON type: Go's decoder fails the whole token, which GoTrue reports as
/// "Bad ID token".
struct ClaimTypeError: Error {
    var claim: String
}

/// The providers GoTrue knows, their real issuers, and how each turns id_token claims into user
/// data (`internal/api/provider/oidc.go`, `ParseIDToken` and the per-provider parsers).
enum ExternalProviders {
    static let appleIssuers = ["https://appleid.apple.com", "https://account.apple.com"]
    static let googleIssuer = "https://accounts.google.com"
    static let facebookIssuer = "https://www.facebook.com"
    static let kakaoIssuer = "https://kauth.kakao.com"
    static let vercelMarketplaceIssuer = "https://marketplace.vercel.com"
    static let snapchatIssuer = "https://accounts.snapchat.com/accounts/oauth2/token"

    /// Every provider `/authorize` accepts (`API.Provider`), lowercased as GoTrue compares them.
    static let oauthProviders: Set<String> = Set(ExternalSettings.settingsProviders + ["x", "zoom", "vercel_marketplace"])

    static func isAppleIssuer(_ iss: String) -> Bool { appleIssuers.contains(iss) }

    static func isAzureIssuer(_ iss: String) -> Bool {
        iss.hasPrefix("https://login.microsoftonline.com/") || iss.hasPrefix("https://sts.windows.net/")
    }

    /// `provider.IsAzureIssuer`, which picks Azure from a request's `issuer`: only
    /// `^https://login[.]microsoftonline[.]com/([^/]+)/v2[.]0/?$` (the detected issuer is then held
    /// to the looser `isAzureIssuer`).
    static func isAzureRequestIssuer(_ iss: String) -> Bool {
        let prefix = "https://login.microsoftonline.com/"
        guard iss.hasPrefix(prefix) else { return false }
        var rest = Substring(iss.dropFirst(prefix.count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard rest.hasSuffix("/v2.0") else { return false }
        let tenant = rest.dropLast("/v2.0".count)
        return !tenant.isEmpty && !tenant.contains("/")
    }

    /// The real issuers whose tokens count as the provider's (go-oidc accepts Google's issuer
    /// also without its scheme).
    static func realIssuers(_ provider: String, configuration: Configuration) -> [String] {
        switch provider {
        case "apple": return appleIssuers
        case "google": return [googleIssuer, "accounts.google.com"]
        case "facebook": return [facebookIssuer]
        case "kakao": return [kakaoIssuer]
        case "vercel_marketplace": return [vercelMarketplaceIssuer]
        case "snapchat": return [snapchatIssuer]
        case "keycloak":
            let url = configuration.external.providers["keycloak"]?.url ?? ""
            return url.isEmpty ? [] : [url]
        default: return []
        }
    }

    /// `ParseIDToken`'s per-issuer parsing, chosen here by provider (the emulator's fake issuers
    /// stand in for the real ones, so the issuer alone cannot pick the parser).
    static func userData(provider: String, claims: JSONObject) throws(ClaimTypeError) -> ProviderUserData {
        let c = ClaimReader(claims)
        var data = ProviderUserData()
        var m = ProviderClaims()
        switch provider {
        case "google":
            // The whole claims object is decoded at once in Go: a mistyped claim fails the
            // token even when its value would not be used.
            let email = try c.string("email")
            let emailVerified = try c.bool("email_verified")
            let verifiedEmail = try c.bool("verified_email")
            if !email.isEmpty {
                data.emails.append(ProviderEmail(email: email, verified: emailVerified || verifiedEmail, primary: true))
            }
            m.issuer = try c.string("iss")
            m.subject = try c.string("sub")
            m.name = try c.string("name")
            m.picture = try c.string("picture")
            m.avatarURL = m.picture
            m.fullName = m.name
            m.providerID = m.subject
            let hd = try c.string("hd")
            if !hd.isEmpty { m.customClaims = ["hd": .string(hd)] }
        case "apple":
            // Apple vouches for every address it hands out, private-relay ones included.
            data.emails.append(ProviderEmail(email: try c.string("email"), verified: true, primary: true))
            m.issuer = try c.string("iss")
            m.subject = try c.string("sub")
            m.providerID = m.subject
            var custom = JSONObject()
            if let value = claims["is_private_email"], value != .null {
                custom["is_private_email"] = .bool(try c.looseBool("is_private_email"))
            }
            if let authTime = claims["auth_time"], authTime != .null {
                guard case .number = authTime else { throw ClaimTypeError(claim: "auth_time") }
                custom["auth_time"] = authTime
            }
            let transfer = try c.string("transfer_sub")
            if !transfer.isEmpty { custom["transfer_sub"] = .string(transfer) }
            m.customClaims = custom.isEmpty ? nil : custom
        case "azure":
            let email = try c.string("email")
            m.issuer = try c.string("iss")
            m.subject = try c.string("sub")
            m.providerID = m.subject
            m.preferredUsername = try c.string("preferred_username")
            m.fullName = try c.string("name")
            if !email.isEmpty {
                // `AzureIDTokenClaims.IsEmailVerified`: without `xms_edov` an email counts as
                // verified; with it, only when it says true ("1"/"true" or a boolean).
                var verified = true
                switch claims["xms_edov"] {
                case nil, .null?: verified = true
                case .bool(let b)?: verified = b
                case .string(let s)?: verified = s == "1" || s == "true"
                default: verified = false
                }
                data.emails = [ProviderEmail(email: email, verified: verified, primary: true)]
            }
            var custom = claims
            for key in ["aud", "iss", "iat", "nbf", "exp", "c_hash", "at_hash", "aio", "nonce", "rh", "uti", "jti",
                        "ver", "sub", "name", "preferred_username"] {
                custom[key] = nil
            }
            m.customClaims = custom
        case "facebook":
            let email = try c.string("email")
            if !email.isEmpty { data.emails.append(ProviderEmail(email: email, verified: true, primary: true)) }
            m.issuer = try c.string("iss")
            m.subject = try c.string("sub")
            m.name = try c.string("name")
            m.picture = try c.string("picture")
            m.providerID = m.subject
            m.email = email
            m.emailVerified = !email.isEmpty
        case "kakao":
            let email = try c.string("email")
            if !email.isEmpty { data.emails.append(ProviderEmail(email: email, verified: true, primary: true)) }
            m.issuer = try c.string("iss")
            m.subject = try c.string("sub")
            m.name = try c.string("nickname")
            m.preferredUsername = m.name
            m.providerID = m.subject
            m.picture = try c.string("picture")
        case "vercel_marketplace":
            data.emails.append(ProviderEmail(email: try c.string("user_email"), verified: true, primary: true))
            m.issuer = try c.string("iss")
            let global = try c.string("global_user_id")
            m.subject = global.isEmpty ? try c.string("sub") : "global_user_id:" + global
            m.providerID = m.subject
            m.name = try c.string("user_name")
            m.picture = try c.string("user_avatar_url")
        case "snapchat":
            // `parseSnapchatIDToken`: the claims as the generic parser reads them, and an email
            // always counts as verified.
            m = try genericClaims(c, claims)
            if !m.email.isEmpty {
                data.emails.append(ProviderEmail(email: m.email, verified: true, primary: true))
                m.emailVerified = true
            }
        default:
            // `parseGenericIDToken`: the claims decoded straight into `provider.Claims`.
            m = try genericClaims(c, claims)
            if !m.email.isEmpty {
                data.emails.append(ProviderEmail(email: m.email, verified: m.emailVerified, primary: true))
            }
        }
        data.metadata = m
        return data
    }

    /// `token.Claims(&provider.Claims)`: every claim of the struct, by its JSON name and type.
    private static func genericClaims(_ c: ClaimReader, _ claims: JSONObject) throws(ClaimTypeError) -> ProviderClaims {
        var m = ProviderClaims()
        m.issuer = try c.string("iss")
        m.subject = try c.string("sub")
        m.audience = try c.audience()
        m.issuedAt = try c.number("iat")
        m.expiresAt = try c.number("exp")
        m.name = try c.string("name")
        m.familyName = try c.string("family_name")
        m.givenName = try c.string("given_name")
        m.middleName = try c.string("middle_name")
        m.nickName = try c.string("nickname")
        m.preferredUsername = try c.string("preferred_username")
        m.profile = try c.string("profile")
        m.picture = try c.string("picture")
        m.website = try c.string("website")
        m.gender = try c.string("gender")
        m.birthdate = try c.string("birthdate")
        m.zoneInfo = try c.string("zoneinfo")
        m.locale = try c.string("locale")
        m.updatedAt = try c.unixTimeOrString("updated_at")
        m.email = try c.string("email")
        m.emailVerified = try c.bool("email_verified")
        m.phone = try c.string("phone")
        m.phoneVerified = try c.bool("phone_verified")
        if let custom = claims["custom_claims"], custom != .null {
            guard let object = custom.objectValue else { throw ClaimTypeError(claim: "custom_claims") }
            m.customClaims = object
        }
        m.fullName = try c.string("full_name")
        m.avatarURL = try c.string("avatar_url")
        m.slug = try c.string("slug")
        m.providerID = try c.string("provider_id")
        m.userName = try c.string("user_name")
        return m
    }
}

/// Reads claims with Go's `encoding/json` typing into string/bool/float fields: absent or
/// `null` is the zero value, any other type a decoding error.
struct ClaimReader {
    let claims: JSONObject
    init(_ claims: JSONObject) { self.claims = claims }

    func string(_ key: String) throws(ClaimTypeError) -> String {
        switch claims[key] {
        case nil, .null?: return ""
        case .string(let s)?: return s
        default: throw ClaimTypeError(claim: key)
        }
    }

    func bool(_ key: String) throws(ClaimTypeError) -> Bool {
        switch claims[key] {
        case nil, .null?: return false
        case .bool(let b)?: return b
        default: throw ClaimTypeError(claim: key)
        }
    }

    func number(_ key: String) throws(ClaimTypeError) -> Double {
        switch claims[key] {
        case nil, .null?: return 0
        case .number(let n)?: return n
        default: throw ClaimTypeError(claim: key)
        }
    }

    /// `UnixTimeOrString.UnmarshalJSON`: a number is whole seconds since the epoch, a string an
    /// RFC 3339 time ("" the zero time), either written back as `time.Time` marshals (UTC);
    /// absent or `null` is none, anything else fails the token.
    func unixTimeOrString(_ key: String) throws(ClaimTypeError) -> String? {
        switch claims[key] {
        case nil, .null?:
            return nil
        case .number(let n)?:
            // Years 0001-9999 only: `time.Time` refuses to marshal others (the identity could
            // not be stored), and the emulator's timestamps end far sooner than Go's.
            guard n.isFinite, n >= -62_135_596_800, n < 253_402_300_800 else { throw ClaimTypeError(claim: key) }
            return Timestamp(seconds: Int64(n)).rfc3339
        case .string(let s)?:
            if s.isEmpty { return Timestamp.goZero.rfc3339 }
            guard let time = Timestamp(rfc3339: s) else { throw ClaimTypeError(claim: key) }
            return time.rfc3339
        default:
            throw ClaimTypeError(claim: key)
        }
    }

    /// Apple sends some booleans as strings ("true"); `strconv.ParseBool` spellings accepted.
    func looseBool(_ key: String) throws(ClaimTypeError) -> Bool {
        switch claims[key] {
        case nil, .null?: return false
        case .bool(let b)?: return b
        case .string(let s)?:
            guard let b = GoStrconv.parseBool(s) else { throw ClaimTypeError(claim: key) }
            return b
        default: throw ClaimTypeError(claim: key)
        }
    }

    /// `aud`: a string or an array of strings (`audience.UnmarshalJSON`).
    func audience() throws(ClaimTypeError) -> [String] {
        switch claims["aud"] {
        case nil, .null?: return []
        case .string(let s)?: return [s]
        case .array(let values)?:
            var out: [String] = []
            for value in values {
                guard let s = value.stringValue else { throw ClaimTypeError(claim: "aud") }
                out.append(s)
            }
            return out
        default: throw ClaimTypeError(claim: "aud")
        }
    }
}

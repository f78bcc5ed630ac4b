import AuthJSON

/// An email address a provider vouches for (`provider.Email`).
package struct ProviderEmail: Sendable, Equatable {
    package var email: String
    package var verified: Bool
    package var primary: Bool

    package init(email: String, verified: Bool, primary: Bool) {
        self.email = email
        self.verified = verified
        self.primary = primary
    }
}

/// What a provider tells about a user (`provider.UserProvidedData`): its emails and the profile
/// claims that become the identity's `identity_data` and are merged into `user_metadata`.
package struct ProviderUserData: Sendable {
    package var emails: [ProviderEmail] = []
    package var metadata = ProviderClaims()

    package init() {}

    /// GoTrue picks the primary email (else the last one) into the metadata before linking.
    package mutating func promotePrimaryEmail() {
        metadata.emailVerified = false
        for email in emails {
            metadata.email = email.email
            metadata.emailVerified = email.verified
            if email.primary { break }
        }
    }
}

/// `provider.Claims`: the standard OIDC profile claims plus GoTrue's legacy aliases. Converted
/// to `identity_data` the way `structs.Map` does: every field tagged `omitempty` left out when
/// empty, `email_verified` and `phone_verified` always present.
package struct ProviderClaims: Sendable {
    package var issuer = "", subject = ""
    package var audience: [String] = []
    package var issuedAt: Double = 0, expiresAt: Double = 0
    package var name = "", familyName = "", givenName = "", middleName = "", nickName = "", preferredUsername = ""
    package var profile = "", picture = "", website = "", gender = "", birthdate = "", zoneInfo = "", locale = ""
    /// `UpdatedAt *UnixTimeOrString`, as `time.Time` marshals it (RFC 3339, UTC); nil when absent.
    package var updatedAt: String?
    package var email = ""
    package var emailVerified = false
    package var phone = ""
    package var phoneVerified = false
    package var customClaims: JSONObject?
    package var fullName = "", avatarURL = "", slug = "", providerID = "", userName = ""

    package init() {}

    /// `structs.Map(provider.Claims)`. Go maps serialize with sorted keys, which the JSON
    /// renderer does when the identity is written out.
    package var identityData: JSONObject {
        var o = JSONObject()
        func put(_ key: String, _ value: String) { if !value.isEmpty { o[key] = .string(value) } }
        put("iss", issuer)
        put("sub", subject)
        if !audience.isEmpty { o["aud"] = .array(audience.map { .string($0) }) }
        if issuedAt != 0 { o["iat"] = .number(issuedAt) }
        if expiresAt != 0 { o["exp"] = .number(expiresAt) }
        put("name", name)
        put("family_name", familyName)
        put("given_name", givenName)
        put("middle_name", middleName)
        put("nickname", nickName)
        put("preferred_username", preferredUsername)
        put("profile", profile)
        put("picture", picture)
        put("website", website)
        put("gender", gender)
        put("birthdate", birthdate)
        put("zoneinfo", zoneInfo)
        put("locale", locale)
        if let updatedAt { o["updated_at"] = .string(updatedAt) }
        put("email", email)
        o["email_verified"] = .bool(emailVerified)
        put("phone", phone)
        o["phone_verified"] = .bool(phoneVerified)
        if let customClaims { o["custom_claims"] = .object(customClaims) }
        put("full_name", fullName)
        put("avatar_url", avatarURL)
        put("slug", slug)
        put("provider_id", providerID)
        put("user_name", userName)
        return o
    }
}

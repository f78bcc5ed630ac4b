import AuthFormats
/// `GOTRUE_PASSKEY_ENABLED`, `GOTRUE_PASSKEY_MAX_PASSKEYS_PER_USER` (conf.PasskeyConfiguration:
/// off and 10 by default, as the real server).
public struct PasskeySettings: Sendable, Equatable {
    public var enabled = false
    public var maxPasskeysPerUser = 10
    public init() {}
}

/// `GOTRUE_WEBAUTHN_RP_ID`, `_RP_DISPLAY_NAME`, `_RP_ORIGINS`, `_CHALLENGE_EXPIRY_DURATION`
/// (conf.WebAuthnConfiguration), shared by passkeys and WebAuthn MFA factors.
///
/// The real server has no default for the first three: with them unset it only logs a warning
/// and every ceremony fails with 500 "Failed to initialize WebAuthn". The emulator instead
/// derives them from `GOTRUE_SITE_URL` so local development works out of the box: the RP id
/// is the site's host (`localhost` when that is an IP literal, which browsers never accept as an
/// RP id, WebAuthn §5.1.4.1), the display name "Supabase" (the CLI template's example), and the
/// origins the site's origin plus its `localhost`/`127.0.0.1` twin.
public struct WebAuthnSettings: Sendable, Equatable {
    public var rpID = ""
    public var rpDisplayName = ""
    public var rpOrigins: [String] = []
    /// `GOTRUE_WEBAUTHN_CHALLENGE_EXPIRY_DURATION` (default 5m).
    public var challengeExpirySeconds: Double = 300
    public init() {}

    /// The relying party in force for a project whose site URL is `siteURL`.
    public func relyingParty(siteURL: String) -> RelyingParty {
        let origin = WebAuthnSettings.origin(of: siteURL)
        var host = origin.flatMap { o in o.split(separator: "/").last.map { String($0) } } ?? "localhost"
        if host.hasPrefix("[") { host = String(host.prefix(while: { $0 != "]" })) + "]" }
        else if let colon = host.lastIndex(of: ":") { host = String(host[..<colon]) }
        let isIP = host.hasPrefix("[") || host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." }
        var origins = rpOrigins
        if origins.isEmpty, let origin {
            origins = [origin]
            if origin.contains("://127.0.0.1") { origins.append(origin.replacingFirst("://127.0.0.1", with: "://localhost")) }
            if origin.contains("://localhost") { origins.append(origin.replacingFirst("://localhost", with: "://127.0.0.1")) }
        }
        return RelyingParty(
            id: rpID.isEmpty ? (isIP || host.isEmpty ? "localhost" : host.lowercased()) : rpID,
            name: rpDisplayName.isEmpty ? "Supabase" : rpDisplayName,
            origins: origins)
    }

    /// `scheme://host[:port]` of an absolute URL.
    static func origin(of url: String) -> String? {
        guard let (scheme, authority) = URLAuthority.split(url), !authority.isEmpty else { return nil }
        return scheme.lowercased() + "://" + authority.lowercased()
    }
}

/// The relying party a ceremony runs against (webauthn.Config's RPID, RPDisplayName, RPOrigins).
public struct RelyingParty: Sendable, Equatable {
    public var id: String
    public var name: String
    public var origins: [String]

    public init(id: String, name: String, origins: [String]) {
        self.id = id
        self.name = name
        self.origins = origins
    }
}

extension String {
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        return self[..<range.lowerBound] + replacement + self[range.upperBound...]
    }
}

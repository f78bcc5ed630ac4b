import AuthHTTP
import AuthJSON
import AuthStore
import GoFormats

extension CustomOAuthProviderEndpoints {
    // MARK: Validation (custom_oauth_admin.go)

    /// `validateProviderParams`.
    static func validateRequired(_ p: Params, type: String) throws(AuthError) {
        let identifier = p.identifier ?? ""
        if identifier.isEmpty { throw invalid("identifier is required") }
        if !identifier.hasPrefix("custom:") {
            throw invalid("identifier must start with 'custom:' prefix, e.g. 'custom:\(identifier)'")
        }
        if (p.name ?? "").isEmpty { throw invalid("name is required") }
        if (p.clientID ?? "").isEmpty { throw invalid("client_id is required") }
        if (p.clientSecret ?? "").isEmpty { throw invalid("client_secret is required") }
        if type == "oidc" {
            if (p.issuer ?? "").isEmpty { throw invalid("issuer is required for OIDC providers") }
        } else {
            if (p.authorizationURL ?? "").isEmpty { throw invalid("authorization_url is required for OAuth2 providers") }
            if (p.tokenURL ?? "").isEmpty { throw invalid("token_url is required for OAuth2 providers") }
            if (p.userinfoURL ?? "").isEmpty { throw invalid("userinfo_url is required for OAuth2 providers") }
        }
    }

    /// `reservedOAuthParams`: what the server itself sends to the provider. Unlike a request's
    /// passthrough parameters, a stored `nonce` is refused too (it would pin one value forever).
    static let reservedAuthorizationParams: Set<String> = [
        "client_id", "client_secret", "redirect_uri", "response_type", "state", "code_challenge",
        "code_challenge_method", "code_verifier", "nonce",
    ]

    /// `validateAuthorizationParams`. Go walks the map in random order; the emulator walks the
    /// body's order, so the first offending key is the one reported.
    static func validateAuthorizationParams(_ params: JSONObject?) throws(AuthError) {
        guard let params else { return }
        for key in params.keys {
            if reservedAuthorizationParams.contains(key) { throw invalid("Cannot override reserved OAuth parameter: \(key)") }
            if params[key]?.stringValue == nil { throw invalid("Authorization parameter \(GoStrconv.quote(key)) must be a string") }
        }
    }

    /// `validateAttributeMapping`'s blocked targets: fields no provider may set.
    static let blockedMappingTargets: Set<String> = [
        "id", "aud", "role", "app_metadata", "created_at", "updated_at", "confirmed_at", "email_confirmed_at",
        "phone_confirmed_at", "email_verified", "phone_verified", "banned_until", "is_super_admin",
    ]

    static func validateAttributeMapping(_ mapping: JSONObject?) throws(AuthError) {
        guard let mapping else { return }
        for key in mapping.keys where blockedMappingTargets.contains(key) {
            throw invalid("Cannot map to protected system field: \(key)")
        }
    }

    /// `validateCustomClaimsAllowlist`: `strings.TrimSpace` (Unicode white space) must leave text.
    static func validateCustomClaimsAllowlist(_ list: [String]?) throws(AuthError) {
        for key in list ?? [] where GoStrings.trimSpace(key).isEmpty {
            throw invalid("custom_claims_allowlist entries must be non-empty strings")
        }
    }

    /// `utilities.ValidateOAuthURL`, offline: https, a host, not localhost, and no literal
    /// address that is loopback, private, link-local, multicast or unspecified. The real check
    /// also resolves names; the emulator cannot, and accepts a name as it is. URLs of its own
    /// fake issuers are allowed over http on loopback: they are served by this process.
    func validateURL(_ url: String) throws(AuthError) {
        let base = api.identityProviders.issuerBase
        if url.hasPrefix(base) && url.count > base.count { return }
        try CustomOAuthProviderEndpoints.validateExternalURL(url)
    }

    /// The checks of `ValidateOAuthURL` in its order, on the URL as Go's `url.Parse` reads it
    /// (`GoParsedURL`), so a text Go rejects is "Invalid URL format" as there
    /// (`https://127.0.0.1:9\@evil.example/`: `\` is no userinfo byte). Then, stricter than
    /// GoTrue, which reads the URL only with Go: a browser follows `authorization_url` and reads
    /// it by the WHATWG URL Standard (`BrowserURL`), so that reading must name the same host
    /// and port (`RedirectTarget`), and the address it names is judged too: `https://0x7f.1/`
    /// or `https://2130706433/` is a name to Go but 127.0.0.1 to a browser, and GoTrue, which
    /// resolves names, would find it loopback as well.
    static func validateExternalURL(_ url: String) throws(AuthError) {
        guard let go = GoParsedURL.parse(url) else { throw invalid("Invalid URL format") }
        guard go.scheme == "https" else { throw invalid("URL must use HTTPS") }
        let hostname = go.hostname
        if hostname.isEmpty { throw invalid("URL must have a valid hostname") }
        if RedirectPolicy.isLocalhost(hostname) { throw invalid("URL cannot point to localhost or loopback addresses") }
        // `net.LookupIP` answers an address literal (zone and all) with itself.
        let literal = hostname.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? hostname
        if let address = goAddress(literal), let problem = addressProblem(address) {
            throw invalid("URL cannot resolve to \(problem) addresses")
        }
        guard let browser = BrowserURL.parse(url), browser.scheme == "https" else { throw invalid("Invalid URL format") }
        switch browser.host {
        case .ipv4(let v):
            if let problem = addressProblem(ipv4Mapped(v)) { throw invalid("URL cannot resolve to \(problem) addresses") }
        case .ipv6(let pieces):
            if let problem = addressProblem(pieces) { throw invalid("URL cannot resolve to \(problem) addresses") }
        case .domain(let name):
            // `localhost.` is a name to `isLocalhost`; every resolver answers it with loopback.
            var trimmed = Substring(name)
            if trimmed.hasSuffix(".") { trimmed = trimmed.dropLast() }
            if RedirectPolicy.isLocalhost(String(trimmed)) { throw invalid("URL cannot resolve to loopback addresses") }
        case .none, .empty, .opaque:
            throw invalid("Invalid URL format")
        }
        guard RedirectTarget(url) != nil else { throw invalid("Invalid URL format") }
    }

    /// `net.ParseIP` / `netip.ParseAddr` of a host: IPv4 as IPv4-mapped IPv6 pieces, as Go
    /// stores it; nil for a name.
    static func goAddress(_ host: String) -> [UInt16]? {
        let bytes = Array(host.utf8)[...]
        if let v4 = IPAddress.parseGoIPv4(bytes) { return ipv4Mapped(v4) }
        guard bytes.contains(UInt8(ascii: ":")) else { return nil }
        return IPAddress.parseIPv6(bytes)
    }

    static func ipv4Mapped(_ v: UInt32) -> [UInt16] {
        [0, 0, 0, 0, 0, 0xFFFF, UInt16(v >> 16), UInt16(v & 0xFFFF)]
    }

    /// The class of an address `validateIP` refuses, in its order of checks, with Go's `net.IP`
    /// methods: an IPv4-mapped address (`::ffff:127.0.0.1`) is judged as the IPv4 address it
    /// holds (`To4`); `IsLinkLocalMulticast` (224.0.0.0/24, ff02::/16) counts as link-local
    /// before multicast; 169.254.169.254 is already link-local.
    static func addressProblem(_ pieces: [UInt16]) -> String? {
        guard pieces.count == 8 else { return nil }
        if pieces[0..<5].allSatisfy({ $0 == 0 }) && pieces[5] == 0xFFFF {
            let (a, b, c) = (UInt8(pieces[6] >> 8), UInt8(pieces[6] & 0xFF), UInt8(pieces[7] >> 8))
            if a == 127 { return "loopback" }
            if a == 10 || (a == 172 && (16...31).contains(b)) || (a == 192 && b == 168) { return "private network" }
            if (a == 169 && b == 254) || (a == 224 && b == 0 && c == 0) { return "link-local" }
            if a >= 224 && a <= 239 { return "multicast" }
            if pieces[6] == 0 && pieces[7] == 0 { return "unspecified" }
            return nil
        }
        let first = pieces[0]
        if pieces == [0, 0, 0, 0, 0, 0, 0, 1] { return "loopback" }
        if first & 0xFE00 == 0xFC00 { return "private network" }
        if first & 0xFFC0 == 0xFE80 || first == 0xFF02 { return "link-local" }
        if first & 0xFF00 == 0xFF00 { return "multicast" }
        if pieces.allSatisfy({ $0 == 0 }) { return "unspecified" }
        return nil
    }
}

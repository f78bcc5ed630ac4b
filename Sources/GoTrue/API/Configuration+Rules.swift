import AuthJWT
import AuthTemplate

/// The configuration's own rules, in one place: the normalisations the real server applies when
/// it loads a setting, and the checks that span several settings. Every source of settings
/// (flags, `GOTRUE_*` variables, `config.toml`, `PATCH /emulator/v1/config`, the embedding API)
/// goes through these, so a value means the same whichever way it arrives.
extension Configuration {
    /// The real server's `conf.ApplyDefaults` rules, in one place: a zero (Go's "unset") or
    /// out-of-range value becomes the default GoTrue uses. Every source stores values as given
    /// and this runs after them (start-up, each runtime change), so a value means the same
    /// whichever way it arrived. Idempotent.
    public mutating func applyDefaults() {
        jwt.expirySeconds = Configuration.jwtExpiry(jwt.expirySeconds)
        if jwt.adminRoles.isEmpty { jwt.adminRoles = ["service_role", "supabase_admin"] }
        if jwt.adminGroupName.isEmpty { jwt.adminGroupName = "admin" }
        if external.allowedIDTokenIssuers.isEmpty { external.allowedIDTokenIssuers = ExternalSettings.defaultIDTokenIssuers }
        // A flow state, an MFA challenge and an unused factor live at least five minutes.
        external.flowStateExpirySeconds = max(300, external.flowStateExpirySeconds)
        mfa.challengeExpirySeconds = max(300, mfa.challengeExpirySeconds)
        mfa.factorExpirySeconds = max(300, mfa.factorExpirySeconds)
        // OTP_EXP 0: one day for mail, a minute for SMS; a zero send interval: one minute.
        if mailer.otpExpirySeconds == 0 { mailer.otpExpirySeconds = 86_400 }
        if sms.otpExpirySeconds == 0 { sms.otpExpirySeconds = 60 }
        if mailer.maxFrequencySeconds == 0 { mailer.maxFrequencySeconds = 60 }
        if sms.maxFrequencySeconds == 0 { sms.maxFrequencySeconds = 60 }
        if mfa.phoneMaxFrequencySeconds == 0 { mfa.phoneMaxFrequencySeconds = 60 }
        mailer.otpLength = Configuration.otpLength(mailer.otpLength)
        sms.otpLength = Configuration.otpLength(sms.otpLength)
        mfa.phoneOTPLength = Configuration.otpLength(mfa.phoneOTPLength)
        password.minLength = Configuration.passwordMinLength(password.minLength)
        // An empty URL path is GoTrue's own `/verify`.
        for path in [\MailerURLPaths.invite, \.confirmation, \.recovery, \.emailChange] where mailer.urlPaths[keyPath: path].isEmpty {
            mailer.urlPaths[keyPath: path] = "/verify"
        }
    }

    /// The URL Auth is reached on through the gateway, as the Supabase CLI means its `[auth]
    /// external_url: the external URL when it already ends in `/auth/v1`, else that URL plus
    /// `/auth/v1`. The emulator answers at both its root and `/auth/v1`, so either form of
    /// `API_EXTERNAL_URL` names it.
    public var authURL: String {
        var base = externalURL
        while base.hasSuffix("/") { base.removeLast() }
        return base.hasSuffix(GoTrueAPI.gatewayPrefix) ? base : base + GoTrueAPI.gatewayPrefix
    }

    /// `supabase start` always passes `GOTRUE_JWT_ISSUER`: `[auth] jwt_issuer`, else the auth URL
    /// (`<API URL>/auth/v1`). Under the `cli` profile, a configuration whose issuer no source
    /// set takes the auth URL too; called again whenever the external URL is settled.
    public mutating func applyCLIIssuer() {
        guard defaultsProfile == .cli, settingSources["jwt_issuer"] == nil else { return }
        jwt.issuer = authURL
    }

    /// `supabase start` always hands GoTrue signing keys (`GOTRUE_JWT_KEYS`): the project's
    /// `signing_keys_path` file, else the CLI's built-in ES256 key (`JWTSettings.cliDefaultKey`),
    /// with `GOTRUE_JWT_VALID_METHODS=HS256,RS256,ES256`, so user tokens are ES256 with that
    /// key's `kid` and the JWKS lists it. The anon and service_role keys stay the HS256 demo
    /// keys: the CLI signs them with a key of its own only when `signing_keys_path` is set.
    /// Under the `cli` profile, a configuration no source gave keys takes the built-in one.
    public mutating func applyCLISigningKey() {
        guard defaultsProfile == .cli, settingSources["jwt_keys"] == nil, jwt.keys.isEmpty else { return }
        jwt.keys = [JWTSettings.cliDefaultKey]
        if settingSources["jwt_valid_methods"] == nil {
            jwt.validMethods = JWTSettings.methods(["HS256", "RS256", "ES256"], adding: jwt.keys)
        }
    }

    /// Whether the keys are the built-in one `applyCLISigningKey` put there.
    var hasCLIDefaultKeyOnly: Bool {
        settingSources["jwt_keys"] == nil && jwt.keys.count == 1 && jwt.keys[0].key.kid == JWTSettings.cliDefaultKeyID
    }

    /// Undoes `applyCLISigningKey` when the profile leaves `cli`: a bare GoTrue container
    /// signs with its secret (HS256) unless given keys.
    package mutating func dropCLISigningKey() {
        guard hasCLIDefaultKeyOnly else { return }
        jwt.keys = []
        if settingSources["jwt_valid_methods"] == nil { jwt.validMethods = nil }
    }

    /// `GOTRUE_JWT_EXP`: 0, Go's zero value, means the default of one hour.
    public static func jwtExpiry(_ seconds: Int) -> Int { seconds == 0 ? 3600 : seconds }

    /// `GOTRUE_PASSWORD_MIN_LENGTH`: never below GoTrue's floor of 6.
    public static func passwordMinLength(_ length: Int) -> Int { max(6, length) }

    /// `GOTRUE_MAILER_OTP_LENGTH` / `GOTRUE_SMS_OTP_LENGTH`: outside 6...10 falls back to 6.
    public static func otpLength(_ length: Int) -> Int { (6...10).contains(length) ? length : 6 }

    /// Test OTP phones are stored without `+` and spaces, as GoTrue stores users' phones.
    public static func testPhone(_ phone: String) -> String {
        var phone = Substring(phone)
        if phone.hasPrefix("+") { phone = phone.dropFirst() }
        return phone.filter { $0 != " " }
    }

    /// Sets the JWT secret and re-derives the API keys that were derived from the old one;
    /// keys given explicitly (a file's `anon_key`, `AUTH_EMULATOR_ANON_KEY`, `--anon-key`) stay.
    public mutating func setJWTSecret(_ secret: String) {
        guard secret != jwt.secret else { return }
        let old = APIKeys.standard(secret: jwt.secret)
        jwt.secret = secret
        guard apiKeys.anon == old.anon || apiKeys.serviceRole == old.serviceRole else { return }
        let new = APIKeys.standard(secret: secret)
        if apiKeys.anon == old.anon { apiKeys.anon = new.anon }
        if apiKeys.serviceRole == old.serviceRole { apiKeys.serviceRole = new.serviceRole }
    }

    /// Signing keys as `supabase start` hands them to GoTrue (`signing_keys_path`, or the
    /// emulator's `serve --signing-key`): the keys, `GOTRUE_JWT_VALID_METHODS=HS256,RS256,ES256`
    /// (plus any other algorithm of the keys) so kid-less HS256 tokens stay valid, and the anon
    /// and service_role keys signed by the first key, as the CLI derives them, unless they were
    /// set explicitly (anything but the ones derived from the JWT secret). Returns false, deriving
    /// nothing, when the first key has no private part.
    @discardableResult
    public mutating func adoptSigningKeys(_ keys: [JWK]) -> Bool {
        jwt.keys = keys
        jwt.validMethods = JWTSettings.methods(["HS256", "RS256", "ES256"], adding: keys)
        guard let first = keys.first, first.key.canSign else { return false }
        let standard = APIKeys.standard(secret: jwt.secret)
        let derived = APIKeys.derived(from: first.key)
        if apiKeys.anon == standard.anon { apiKeys.anon = derived.anon }
        if apiKeys.serviceRole == standard.serviceRole { apiKeys.serviceRole = derived.serviceRole }
        return true
    }

    /// Checks that hold across settings, run once every source has been applied (so a later
    /// source can still settle what an earlier one set up) and on every runtime change.
    /// Returns the first problem, worded for the user; nil when the configuration is usable.
    public func problem() -> String? {
        // GoTrue's ApplyDefaults refuses this combination.
        if mailer.autoconfirm && mailer.allowUnverifiedEmailSignIns {
            return "GOTRUE_MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS: cannot be enabled together with GOTRUE_MAILER_AUTOCONFIRM (email confirmations off)"
        }
        for (name, path) in HookSettings.names {
            if let problem = hooks[keyPath: path].problem() { return "GOTRUE_HOOK_\(name.uppercased())_URI: \(problem)" }
        }
        // GoTrue requires GOTRUE_SITE_URL (`required:"true"`) and builds every email link and
        // redirect from it with net/url; one that is not an absolute URL fails each of them
        // later, so it is refused here, as `APIConfiguration.Validate` refuses such an
        // API_EXTERNAL_URL (`url.ParseRequestURI`).
        if let problem = Configuration.absoluteURLProblem(siteURL) {
            // Named by where the value came from: a config.toml `env(NAME)` left unset is the
            // file's doing, not GOTRUE_SITE_URL's.
            let origin: String
            switch settingSources["site_url"] {
            case .file?: origin = "site_url (config.toml)"
            case .flag?: origin = "--site-url"
            case .runtime?: origin = "site_url (set at run time)"
            case .env?: origin = "GOTRUE_SITE_URL"
            case .default?, nil: origin = "GOTRUE_SITE_URL (site_url)"
            }
            let unset = siteURL.hasPrefix("env(") && siteURL.hasSuffix(")")
                ? " (\(siteURL) names an environment variable that is not set)" : ""
            return "\(origin): \(problem)\(unset)"
        }
        // `CustomOAuthConfiguration.Validate`: a set external URL must parse
        // (`url.ParseRequestURI`), or the real server does not start.
        if !customOAuth.externalURL.isEmpty, let problem = Configuration.absoluteURLProblem(customOAuth.externalURL) {
            return "GOTRUE_CUSTOM_OAUTH_EXTERNAL_URL: \(problem)"
        }
        // The SMS templates are parsed when the real server loads its configuration
        // (`PopulateGlobal`): one that does not parse stops the start.
        for (template, name) in [(sms.template, "GOTRUE_SMS_TEMPLATE (sms.template)"), (mfa.phoneTemplate, "GOTRUE_MFA_PHONE_TEMPLATE (mfa.phone_template)")] {
            do {
                _ = try GoTemplate(parsing: template, name: "", escaping: .text)
            } catch {
                return "\(name): \(error)"
            }
        }
        // A body set at run time must parse; one read from a file or URL that does not is
        // reported at start and replaced by the built-in body, as the real server falls back.
        for (id, source) in mailer.templates.sorted(by: { $0.key < $1.key }) where source.origin == .runtime {
            do {
                _ = try GoTemplate(parsing: source.text, name: "email.template.\(id).content")
            } catch {
                return "email.template.\(id).content: \(error)"
            }
        }
        return webAuthn.problem()
    }

    /// `problem()`, and what only a change at run time can break: the anon and service_role
    /// keys already handed out must keep verifying under the new keys (`jwt_keys: []` after
    /// `--signing-key`, or a rotation that drops the key that signed them, would turn every
    /// request made with them into a 401 the app cannot explain).
    public func problem(changingFrom old: Configuration) -> String? {
        if let problem = problem() { return problem }
        for (name, key) in [("anon", apiKeys.anon), ("service_role", apiKeys.serviceRole)]
        where old.jwt.verifies(key) && !jwt.verifies(key) {
            return "GOTRUE_JWT_KEYS (jwt_keys): the \(name) key would no longer verify; keep the key that signed it in the list (\"key_ops\": [\"verify\"])"
        }
        return nil
    }

    /// Why `url` is not an absolute URL as Go's net/url reads it (`GoParsedURL`: a scheme, then
    /// for `http`/`https` a host), or nil. A space or control character anywhere is refused too:
    /// it breaks a link for every mail client and browser.
    public static func absoluteURLProblem(_ url: String, requiresHost: Bool = false) -> String? {
        if url.isEmpty { return "required" }
        if url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            return "must be a URL without spaces or control characters"
        }
        guard let parsed = GoParsedURL.parse(url), !parsed.scheme.isEmpty, url.utf8.count > parsed.scheme.utf8.count + 1 else {
            return "must be an absolute URL such as http://localhost:3000"
        }
        if (requiresHost || parsed.scheme == "http" || parsed.scheme == "https") && parsed.hostname.isEmpty {
            return "must be an absolute URL with a host, such as http://localhost:3000"
        }
        return nil
    }
}

extension JWTSettings {
    /// Whether `token` carries a signature these settings accept (its time claims aside).
    public func verifies(_ token: String) -> Bool {
        do {
            _ = try JWT.verify(token, keys: verificationKeys, now: 0)
            return true
        } catch .invalidClaims {
            return true
        } catch {
            return false
        }
    }
}

extension WebAuthnSettings {
    /// What go-webauthn (the real server's WebAuthn library) makes of the relying party when a
    /// ceremony starts. `Config.validate` runs an RP ID through `protocol.ValidateRPID`: an IP,
    /// `localhost` or a dotted domain, without scheme, port, path, query or fragment; an origin
    /// is compared through `FullyQualifiedOrigin`, which needs `url.ParseRequestURI` to succeed
    /// and a host (or the `android:apk-key-hash:` form), so any other origin can never match a
    /// ceremony. Unset fields are derived from the site URL (see the type's comment).
    public func problem() -> String? {
        if !rpID.isEmpty {
            let ip = RateLimitSettings.isIPAddress(rpID)
            if rpID.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) || !ip && rpID.contains(where: { "/?#:@".contains($0) }) {
                return "GOTRUE_WEBAUTHN_RP_ID (webauthn.rp_id): must be a domain without scheme, port or path, such as localhost or example.com"
            }
            if !ip && rpID != "localhost" && !rpID.contains(".") {
                return "GOTRUE_WEBAUTHN_RP_ID (webauthn.rp_id): the domain component must actually be a domain (localhost, an IP or a name with a dot)"
            }
        }
        for origin in rpOrigins where !origin.hasPrefix("android:apk-key-hash:") {
            if let problem = Configuration.absoluteURLProblem(origin, requiresHost: true) {
                return "GOTRUE_WEBAUTHN_RP_ORIGINS (webauthn.rp_origins): '\(origin)' \(problem)"
            }
        }
        return nil
    }
}

extension HookSettings.Point {
    /// `ValidateExtensibilityPoint`: `https:` anywhere, `http:` only on the loopback host (or
    /// `host.docker.internal`), `pg-functions://` with a schema and function, and secrets of
    /// the Standard Webhooks form.
    public func problem() -> String? {
        if uri.isEmpty { return nil }
        guard let colon = uri.firstIndex(of: ":") else { return "only postgres hooks and HTTPS functions are supported at the moment" }
        switch uri[..<colon].lowercased() {
        case "pg-functions":
            let path = uri.split(separator: "/", omittingEmptySubsequences: false)
            // pg-functions://<db>/<schema>/<function>: the path after the host has two parts.
            if path.count < 5 { return "URI path does not contain enough parts" }
            return nil
        case "http":
            let rest = uri[uri.index(after: colon)...].drop(while: { $0 == "/" })
            var host = rest.prefix(while: { $0 != "/" && $0 != "?" && $0 != "#" })
            if let at = host.lastIndex(of: "@") { host = host[host.index(after: at)...] }
            let hostname: Substring
            if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
                hostname = host[host.index(after: host.startIndex)..<close]
            } else {
                hostname = host.split(separator: ":", maxSplits: 1).first ?? ""
            }
            guard ["localhost", "127.0.0.1", "::1", "host.docker.internal"].contains(String(hostname)) else {
                return "only localhost, 127.0.0.1, and ::1 are supported with http"
            }
            return secretsProblem()
        case "https":
            return secretsProblem()
        default:
            return "only postgres hooks and HTTPS functions are supported at the moment"
        }
    }

    /// `^v1,whsec_[A-Za-z0-9+/=]{32,88}` or the asymmetric `v1a,whpk_...:whsk_...` form.
    private func secretsProblem() -> String? {
        func base64Run(_ s: Substring) -> Int {
            s.prefix(while: { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "/" || $0 == "=") }).count
        }
        for secret in secrets {
            if secret.hasPrefix("v1,whsec_") && base64Run(secret.dropFirst(9)) >= 32 { continue }
            if secret.hasPrefix("v1a,whpk_"), let colon = secret.firstIndex(of: ":") {
                let publicPart = secret[secret.index(secret.startIndex, offsetBy: 9)..<colon]
                let secretPart = secret[secret.index(after: colon)...]
                if base64Run(publicPart) == publicPart.count, publicPart.count >= 44, secretPart.hasPrefix("whsk_"),
                   base64Run(secretPart.dropFirst(5)) == secretPart.count - 5, secretPart.count - 5 >= 44 {
                    continue
                }
            }
            return "invalid secret format"
        }
        return nil
    }
}

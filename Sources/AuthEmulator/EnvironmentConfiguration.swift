import GoTrue

/// Reads the real server's environment variables (reference §15) into options. Unknown variables
/// are ignored, as GoTrue does; a malformed value is an error naming the variable.
public enum EnvironmentConfiguration {
    public static func apply(_ environment: [String: String], to options: inout EmulatorOptions) throws(EmulatorError) {
        func value(_ names: String...) -> String? {
            for name in names { if let v = environment[name], !v.isEmpty { return v } }
            return nil
        }
        func integer(_ name: String, _ text: String, range: ClosedRange<Int>) throws(EmulatorError) -> Int {
            guard let n = Int(text.trimmingSpaces), range.contains(n) else {
                throw EmulatorError("\(name)=\(text) is not a whole number in \(range.lowerBound)...\(range.upperBound)")
            }
            return n
        }

        if let host = value("GOTRUE_API_HOST") { options.host = host }
        if let port = value("PORT", "GOTRUE_API_PORT") { options.port = try integer("PORT", port, range: 0...65535) }
        if let db = value("AUTH_EMULATOR_DB") { options.databasePath = db }

        var config = options.configuration
        let secretChanged: Bool
        if let secret = value("GOTRUE_JWT_SECRET") {
            secretChanged = secret != config.jwt.secret
            config.jwt.secret = secret
        } else {
            secretChanged = false
        }
        if let exp = value("GOTRUE_JWT_EXP") { config.jwt.expirySeconds = try integer("GOTRUE_JWT_EXP", exp, range: 1...(10 * 365 * 86_400)) }
        if let aud = value("GOTRUE_JWT_AUD") { config.jwt.audience = aud }
        if let roles = value("GOTRUE_JWT_ADMIN_ROLES") { config.jwt.adminRoles = roles.commaSeparated }
        if let group = value("GOTRUE_JWT_DEFAULT_GROUP_NAME") { config.jwt.defaultGroupName = group }
        if let issuer = value("GOTRUE_JWT_ISSUER") { config.jwt.issuer = issuer }
        if let site = value("GOTRUE_SITE_URL") { config.siteURL = site }
        if let external = value("API_EXTERNAL_URL", "GOTRUE_API_EXTERNAL_URL") { config.externalURL = external }
        if secretChanged { config.apiKeys = APIKeys.standard(secret: config.jwt.secret) }
        options.configuration = config
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }

    /// Go's `envconfig` list syntax: comma-separated, entries trimmed, empty entries dropped.
    var commaSeparated: [String] {
        split(separator: ",").map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
    }
}

import AuthCrypto

/// Password rules and storage. New hashes are salted PBKDF2-HMAC-SHA256 PHC strings (the real
/// server uses bcrypt; clients never see either); in Postgres mode, where app SQL reads
/// `encrypted_password`, they are bcrypt as GoTrue's (`Configuration.bcryptPasswordCost`). Hashing and verification are CPU-bound: callers
/// run them before taking the database write lock.
package struct Passwords {
    let configuration: Configuration
    let environment: Environment

    package init(configuration: Configuration, environment: Environment) {
        self.configuration = configuration
        self.environment = environment
    }

    /// GoTrue's bcrypt-imposed limit, kept for the same error.
    package static let maximumLength = 72

    /// `checkPasswordStrength` (password.go): the 72-byte limit first, then the policy, whose
    /// failures are collected into one 422 `weak_password`.
    func checkStrength(_ password: String) throws(AuthError) {
        if let weak = try weakness(password) { throw weak }
    }

    /// The policy failure as a value (the password grant reports it without failing).
    func weakness(_ password: String) throws(AuthError) -> AuthError? {
        let length = password.utf8.count
        if length > Passwords.maximumLength {
            throw AuthError(400, .validationFailed, "Password cannot be longer than \(Passwords.maximumLength) characters")
        }
        var messages: [String] = []
        var reasons: [String] = []
        let policy = configuration.password
        if length < policy.minLength {
            reasons.append("length")
            messages.append("Password should be at least \(policy.minLength) characters.")
        }
        // `strings.ContainsAny` compares code points, not the characters they combine into: an
        // "e" followed by a combining accent still holds an "e".
        for set in policy.requiredCharacters
        where !set.isEmpty && !password.unicodeScalars.contains(where: { set.unicodeScalars.contains($0) }) {
            reasons.append("characters")
            messages.append("Password should contain at least one character of each: \(policy.requiredCharacters.joined(separator: ", ")).")
            break
        }
        return reasons.isEmpty ? nil : .weakPassword(messages.joined(separator: " "), reasons: reasons)
    }

    func hash(_ password: String) -> String {
        if let cost = configuration.bcryptPasswordCost {
            return Bcrypt.hash(password: password, cost: cost, random: environment.random, version: .a)
        }
        return hasher.hash(password: password)
    }

    /// One hash per password, two derived at a time (fixtures).
    package func hash(_ passwords: [String]) -> [String] {
        if configuration.bcryptPasswordCost != nil { return passwords.map(hash) }
        return hasher.hash(passwords: passwords)
    }

    private var hasher: PasswordHasher {
        PasswordHasher(iterations: configuration.passwordHashIterations, random: environment.random)
    }

    /// Whether `password` matches a stored hash; unknown hash formats never match. bcrypt
    /// hashes (`$2a$`/`$2b$`/`$2y$`) are what the real server stores, so users imported through
    /// the admin API's `password_hash` or copied from a real project sign in as they would there;
    /// so do the Argon2 and Firebase scrypt hashes GoTrue also accepts (`ImportedPasswordHashes`),
    /// whose parameters can make GoTrue's comparison panic: that is its 500 here too.
    package static func verify(_ password: String, against stored: String?) throws(AuthError) -> Bool {
        guard let stored, !stored.isEmpty else { return false }
        if stored.hasPrefix("$2") { return Bcrypt.verify(password: password, against: stored) }
        if let imported = try ImportedPasswordHashes.verify(password, against: stored) { return imported }
        return PasswordHasher.verify(password: password, against: stored)
    }
}

/// Password hashes as self-describing PHC strings (the "PHC string format" of the Password
/// Hashing Competition):
///
///     $pbkdf2-sha256$i=<iterations>,l=<hash length>$<salt>$<hash>
///
/// with salt and hash in standard base64 WITHOUT padding, as PHC specifies. Because the cost
/// and length travel with each stored hash, the default cost can change without breaking
/// existing users; `needsRehash` tells when a successful sign-in should upgrade a hash.
public struct PasswordHasher: Sendable {
    /// Production cost.
    public static let defaultIterations = 100_000
    /// A deliberately weak cost for test suites that create many users. Not for real passwords.
    public static let insecureTestIterations = 1_000
    /// Costs outside 1...maximumIterations are rejected when verifying, so a stored or
    /// injected hash cannot make one sign-in burn minutes of CPU.
    public static let maximumIterations = 10_000_000

    static let identifier = "pbkdf2-sha256"
    static let saltLength = 16
    static let hashLength = 32

    public var iterations: Int
    public var random: any RandomSource

    public init(iterations: Int = PasswordHasher.defaultIterations, random: any RandomSource = SystemRandom()) {
        precondition((1...Self.maximumIterations).contains(iterations), "iterations out of range")
        self.iterations = iterations
        self.random = random
    }

    /// Hashes `password` (its UTF-8 bytes, as given) with a fresh 16-byte salt.
    public func hash(password: String) -> String {
        let salt = random.bytes(count: Self.saltLength)
        let derived = PBKDF2.deriveKey(password: Array(password.utf8), salt: salt,
                                       iterations: iterations, keyLength: Self.hashLength)
        return phc(salt: salt, key: derived)
    }

    /// `hash(password:)` for each password, each with its own fresh salt; the passwords are
    /// derived two at a time (`PBKDF2.deriveKeys`), for seeding many users at once.
    public func hash(passwords: [String]) -> [String] {
        let salts = passwords.map { _ in random.bytes(count: Self.saltLength) }
        let derived = PBKDF2.deriveKeys(passwords: passwords.map { Array($0.utf8) }, salts: salts,
                                        iterations: iterations, keyLength: Self.hashLength)
        return zip(salts, derived).map { salt, key in phc(salt: salt, key: key) }
    }

    private func phc(salt: [UInt8], key: [UInt8]) -> String {
        "$\(Self.identifier)$i=\(iterations),l=\(Self.hashLength)$"
            + "\(Base64.encode(salt, padding: false))$\(Base64.encode(key, padding: false))"
    }

    /// True when `phc` is a well-formed hash of `password`. Malformed strings, other schemes
    /// and absurd costs are simply `false`. The final comparison is constant-time.
    public static func verify(password: String, against phc: String) -> Bool {
        guard let parsed = Parsed(phc) else { return false }
        let derived = PBKDF2.deriveKey(password: Array(password.utf8), salt: parsed.salt,
                                       iterations: parsed.iterations, keyLength: parsed.hash.count)
        return constantTimeEquals(derived, parsed.hash)
    }

    /// True when `phc` is a hash `verify` would check: the format, a cost of 1 to
    /// `maximumIterations`, lengths in range. Anything else could never match a password.
    public static func isWellFormed(_ phc: String) -> Bool { Parsed(phc) != nil }

    /// True when `phc` is not a well-formed hash made with this hasher's cost and the standard
    /// salt/hash sizes, i.e. it should be replaced after the next successful verification.
    public func needsRehash(_ phc: String) -> Bool {
        guard let parsed = Parsed(phc) else { return true }
        return parsed.iterations != iterations || parsed.hash.count != Self.hashLength
            || parsed.salt.count < Self.saltLength
    }

    /// The fields of a strictly parsed PHC string.
    struct Parsed {
        let iterations: Int
        let salt: [UInt8]
        let hash: [UInt8]

        init?(_ phc: String) {
            let fields = Array(phc.utf8).split(separator: UInt8(ascii: "$"), omittingEmptySubsequences: false)
                .map { Array($0) }
            guard fields.count == 5, fields[0].isEmpty, fields[1] == Array(PasswordHasher.identifier.utf8)
            else { return nil }

            var iterations: Int?
            var length: Int?
            for parameter in fields[2].split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
                let parameter = Array(parameter)
                guard parameter.count > 2, parameter[1] == UInt8(ascii: "="),
                      let value = Self.decimal(parameter[2...])
                else { return nil }
                switch parameter[0] {
                case UInt8(ascii: "i") where iterations == nil: iterations = value
                case UInt8(ascii: "l") where length == nil: length = value
                default: return nil  // unknown or repeated parameter
                }
            }
            guard let iterations, let length,
                  (1...PasswordHasher.maximumIterations).contains(iterations),
                  (16...64).contains(length),
                  let salt = try? Base64.decode(String(decoding: fields[3], as: UTF8.self), padding: false),
                  let hash = try? Base64.decode(String(decoding: fields[4], as: UTF8.self), padding: false),
                  (8...64).contains(salt.count), hash.count == length
            else { return nil }
            self.iterations = iterations
            self.salt = salt
            self.hash = hash
        }

        /// PHC decimals: ASCII digits, no sign, no leading zero; at most 8 digits (more is
        /// beyond any accepted cost anyway, and keeps the arithmetic from overflowing).
        private static func decimal(_ digits: ArraySlice<UInt8>) -> Int? {
            guard !digits.isEmpty, digits.count <= 8,
                  digits.first != UInt8(ascii: "0") || digits.count == 1
            else { return nil }
            var value = 0
            for c in digits {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) else { return nil }
                value = value * 10 + Int(c - UInt8(ascii: "0"))
            }
            return value
        }
    }
}

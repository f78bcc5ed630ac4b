import AuthCrypto
import GoFormats

/// The password hashes other systems made that GoTrue accepts in `password_hash` besides bcrypt
/// (`internal/crypto/password.go`): Argon2i/Argon2id (`$argon2id$v=19$m=...,t=...,p=...$salt$hash`,
/// PHC form, unpadded base64) and Firebase's scrypt (`$fbscrypt$v=1,n=...,r=...,p=...,ss=...,sk=...
/// $salt$hash`, padded base64). Parsed field by field as its regular expressions and
/// `ParseArgon2Hash` / `ParseFirebaseScryptHash` read them, in their order, with their messages
/// (which GoTrue only logs). Such hashes are stored as given and never re-hashed on sign-in
/// (`User.Authenticate` upgrades bcrypt costs only).
package enum ImportedPasswordHashes {
    static let argon2Prefix = "$argon2"
    static let firebaseScryptPrefix = "$fbscrypt"

    /// Firebase scrypt's working memory is 128 * r * 2^n bytes, which GoTrue does not bound (a
    /// stored `n=40` would make it allocate terabytes). The emulator refuses over 1 GiB, the
    /// bound GoTrue puts on Argon2's: a sign-in then fails as GoTrue's failing scrypt does.
    static let scryptMemoryLimit: UInt64 = 1 << 30

    struct Failure: Error, Equatable {
        let message: String
    }

    struct Argon2Input: Equatable {
        let variant: Argon2.Variant
        let memory: UInt32
        let time: UInt32
        let threads: UInt32
        let salt: [UInt8]
        let hash: [UInt8]
    }

    struct FirebaseScryptInput: Equatable {
        let memory: UInt64
        let rounds: UInt64
        let threads: UInt64
        let saltSeparator: [UInt8]
        let signerKey: [UInt8]
        let salt: [UInt8]
        let hash: [UInt8]
    }

    // MARK: Argon2

    /// `ParseArgon2Hash`.
    static func parseArgon2(_ text: String) throws(Failure) -> Argon2Input {
        let format = Failure(message: "crypto: incorrect argon2 hash format")
        // `^[$](argon2(d|i|id))[$]v=(16|19)[$]m=([0-9]+),t=([0-9]+),p=([0-9]+)(,keyid=([^,$]+))?
        // (,data=([^$]+))?[$]([^$]*)[$](.*)$`, where `.` is any character but '\n'.
        var s = Scanner(text)
        guard s.take("$argon2") else { throw format }
        let alg: String
        if s.take("id$") { alg = "argon2id" } else if s.take("i$") { alg = "argon2i" } else if s.take("d$") { alg = "argon2d" } else {
            throw format
        }
        guard s.take("v=") else { throw format }
        let v: String
        if s.take("16$") { v = "16" } else if s.take("19$") { v = "19" } else { throw format }
        guard s.take("m="), let m = s.digits(), s.take(",t="), let t = s.digits(), s.take(",p="), let p = s.digits() else {
            throw format
        }
        let keyid = try s.optional(",keyid=", throughCommas: false, else: format)
        let data = try s.optional(",data=", throughCommas: true, else: format)
        guard s.take("$") else { throw format }
        let saltText = s.run { $0 != UInt8(ascii: "$") }
        guard s.take("$") else { throw format }
        let hashText = s.rest
        guard !hashText.utf8.contains(UInt8(ascii: "\n")) else { throw format }

        guard alg == "argon2i" || alg == "argon2id" else {
            throw Failure(message: "crypto: argon2 hash uses unsupported algorithm \"\(alg)\" only argon2i and argon2id supported")
        }
        guard v == "19" else { throw Failure(message: "crypto: argon2 hash uses unsupported version \"\(v)\" only 19 is supported") }
        guard data.isEmpty else { throw Failure(message: "crypto: argon2 hashes with the data parameter not supported") }
        guard keyid.isEmpty else { throw Failure(message: "crypto: argon2 hashes with the keyid parameter not supported") }
        let memory = try parseUint(m, bits: 32, name: "m", "crypto: argon2 hash has invalid m parameter")
        guard memory <= 1024 * 1024 else { throw Failure(message: "crypto: argon2 hash has m parameter \(memory) exceeds memory limit") }
        let time = try parseUint(t, bits: 32, name: "t", "crypto: argon2 hash has invalid t parameter")
        guard time <= 20 else { throw Failure(message: "crypto: argon2 hash has t parameter \(time) exceeds time limit") }
        let threads = try parseUint(p, bits: 8, name: "p", "crypto: argon2 hash has invalid p parameter")
        guard threads <= 16 else { throw Failure(message: "crypto: argon2 hash has p parameter \(threads) exceeds thread limit") }
        let hash: [UInt8]
        do { hash = try GoBase64.decode(hashText, padded: false) } catch {
            throw Failure(message: "crypto: argon2 hash has invalid base64 in the hash section \(error)")
        }
        guard !hash.isEmpty else { throw Failure(message: "crypto: argon2 hash is empty") }
        let salt: [UInt8]
        do { salt = try GoBase64.decode(saltText, padded: false) } catch {
            throw Failure(message: "crypto: argon2 hash has invalid base64 in the salt section \(error)")
        }
        guard !salt.isEmpty else { throw Failure(message: "crypto: argon2 salt is empty") }
        return Argon2Input(variant: alg == "argon2i" ? .i : .id, memory: UInt32(memory), time: UInt32(time),
                           threads: UInt32(threads), salt: salt, hash: hash)
    }

    // MARK: Firebase scrypt

    /// `ParseFirebaseScryptHash`.
    static func parseFirebaseScrypt(_ text: String) throws(Failure) -> FirebaseScryptInput {
        let format = Failure(message: "crypto: incorrect scrypt hash format")
        // `^\$fbscrypt\$v=([0-9]+),n=([0-9]+),r=([0-9]+),p=([0-9]+)(?:,ss=([^,]+))?(?:,sk=([^$]+))?
        // \$([^$]+)\$(.+)$`. A '$' inside ss, or in the hash, leaves text that no base64 decodes,
        // so splitting at the first '$' fails exactly the hashes GoTrue fails.
        var s = Scanner(text)
        guard s.take("$fbscrypt$v="), let v = s.digits(), s.take(",n="), let n = s.digits(), s.take(",r="), let r = s.digits(),
              s.take(",p="), let p = s.digits()
        else { throw format }
        let ss = try s.optional(",ss=", throughCommas: false, else: format)
        let sk = try s.optional(",sk=", throughCommas: true, else: format)
        guard s.take("$") else { throw format }
        let saltText = s.run { $0 != UInt8(ascii: "$") }
        guard !saltText.isEmpty, s.take("$") else { throw format }
        let hashText = s.rest
        guard !hashText.isEmpty, !hashText.utf8.contains(UInt8(ascii: "\n")) else { throw format }

        guard v == "1" else {
            throw Failure(message: "crypto: Firebase scrypt hash uses unsupported version \"\(v)\" only version 1 is supported")
        }
        let memoryPower = try parseUint(n, bits: 32, name: "n", "crypto: Firebase scrypt hash has invalid n parameter")
        guard memoryPower != 0 else { throw Failure(message: "crypto: Firebase scrypt hash has invalid n=0") }
        let rounds = try parseUint(r, bits: 64, name: "r", "crypto: Firebase scrypt hash has invalid r parameter")
        guard rounds != 0 else { throw Failure(message: "crypto: Firebase scrypt hash has invalid r=0") }
        let threads = try parseUint(p, bits: 8, name: "p", "crypto: Firebase scrypt hash has invalid p parameter")
        guard threads != 0 else { throw Failure(message: "crypto: Firebase scrypt hash has invalid p=0") }
        func decode(_ text: String, _ what: String) throws(Failure) -> [UInt8] {
            do { return try GoBase64.decode(text, padded: true) } catch { throw Failure(message: what + "\(error)") }
        }
        let hash = try decode(hashText, "crypto: Firebase scrypt hash has invalid base64 in the hash section ")
        let salt = try decode(saltText, "crypto: Firebase scrypt salt has invalid base64 in the hash section ")
        let signerKey = try decode(sk, "")
        let saltSeparator = try decode(ss, "")
        // `uint64(1) << n`: Go's shift past the width is 0, which scrypt then refuses.
        let memory: UInt64 = memoryPower < 64 ? 1 << memoryPower : 0
        return FirebaseScryptInput(memory: memory, rounds: rounds, threads: threads, saltSeparator: saltSeparator,
                                   signerKey: signerKey, salt: salt, hash: hash)
    }

    /// Why `hash`, an Argon2 or Firebase scrypt hash by its prefix, would not be accepted; nil
    /// when it would be, or when it is of another format.
    package static func problem(_ hash: String) -> String? {
        do throws(Failure) {
            if hash.hasPrefix(argon2Prefix) { _ = try parseArgon2(hash) }
            if hash.hasPrefix(firebaseScryptPrefix) { _ = try parseFirebaseScrypt(hash) }
            return nil
        } catch {
            return error.message
        }
    }

    // MARK: Verification

    /// `CompareHashAndPassword` for the two formats: false when the hash does not parse or the
    /// password does not match. What makes GoTrue panic (Argon2 with t=0 or p=0, scrypt
    /// parameters `scrypt.Key` refuses, through `must`) is the recovered panic's 500, as there.
    static func verify(_ password: String, against stored: String) throws(AuthError) -> Bool? {
        if stored.hasPrefix(argon2Prefix) {
            guard let input = try? parseArgon2(stored) else { return false }
            do {
                let derived = try Argon2.hash(input.variant, password: Array(password.utf8), salt: input.salt,
                                              iterations: input.time, memoryKiB: input.memory, parallelism: input.threads,
                                              tagLength: input.hash.count)
                return constantTimeEquals(derived, input.hash)
            } catch {
                logError("password verification: \(error) (GoTrue panics here: 500)")
                throw AuthError.internalServerError
            }
        }
        if stored.hasPrefix(firebaseScryptPrefix) {
            guard let input = try? parseFirebaseScrypt(stored) else { return false }
            do {
                let key = try Scrypt.deriveKey(password: Array(password.utf8), salt: input.salt + input.saltSeparator,
                                               n: input.memory, r: input.rounds, p: input.threads, keyLength: 32,
                                               memoryLimit: scryptMemoryLimit)
                // AES-256-CTR with an all-zero counter block over the signer key.
                let derived = AES(key: key)!.ctr(input.signerKey, iv: [UInt8](repeating: 0, count: 16))
                return constantTimeEquals(derived, input.hash)
            } catch {
                logError("password verification: \(error) (GoTrue panics here, or cannot allocate the memory: 500)")
                throw AuthError.internalServerError
            }
        }
        return nil
    }

    // MARK: Reading

    /// `strconv.ParseUint(text, 10, bits)` on the digits the expression matched: only a value
    /// out of range can fail.
    private static func parseUint(_ digits: String, bits: Int, name: String, _ prefix: String) throws(Failure) -> UInt64 {
        var value: UInt64 = 0
        let limit: UInt64 = bits == 64 ? .max : (1 << UInt64(bits)) - 1
        for byte in digits.utf8 {
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !o1, !o2, sum <= limit else {
                throw Failure(message: "\(prefix) \"\(digits)\" strconv.ParseUint: parsing \"\(digits)\": value out of range")
            }
            value = sum
        }
        return value
    }

    /// A cursor over the hash's bytes (all the syntax is ASCII).
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ text: String) { bytes = Array(text.utf8) }

        mutating func take(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            let matches = literal.withUTF8Buffer { Array($0) == Array(bytes[index..<(index + count)]) }
            if matches { index += count }
            return matches
        }

        /// `[0-9]+`.
        mutating func digits() -> String? {
            let text = run { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            return text.isEmpty ? nil : text
        }

        /// An optional `(prefix(value))?` group: "" when `prefix` is not next, else the value,
        /// a non-empty run up to the next '$' (and, unless `throughCommas`, the next ',').
        mutating func optional(_ prefix: StaticString, throughCommas: Bool, else failure: Failure) throws(Failure) -> String {
            guard take(prefix) else { return "" }
            let value = run { $0 != UInt8(ascii: "$") && (throughCommas || $0 != UInt8(ascii: ",")) }
            guard !value.isEmpty else { throw failure }
            return value
        }

        mutating func run(while accept: (UInt8) -> Bool) -> String {
            let start = index
            while index < bytes.count, accept(bytes[index]) { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        var rest: String { String(decoding: bytes[index...], as: UTF8.self) }
    }
}

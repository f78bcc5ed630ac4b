/// bcrypt (Provos & Mazières, "A Future-Adaptable Password Scheme", USENIX 1999), in the modular
/// crypt form OpenBSD defined and every library exchanges:
///
///     $2b$10$<22 characters of salt><31 characters of hash>
///
/// Supabase Auth (GoTrue) stores bcrypt hashes, so users exported from a real project (or
/// imported through the admin API's `password_hash`) carry `$2a$`/`$2b$`/`$2y$` strings. This
/// module verifies them and can make new ones; the emulator's own new hashes stay PBKDF2.
///
/// Versions (OpenBSD `bcrypt.c`, crypt_blowfish's `$2y$`):
/// - `$2a$`: the key length is `strlen + 1` kept in a `u_int8_t`, so it wraps for passwords of
///   255 bytes or more (the bug `$2b$` fixed). Reproduced as OpenBSD does.
/// - `$2b$` and `$2y$` (crypt_blowfish's name for the corrected algorithm): the key is at most
///   72 bytes. Only the first 72 bytes of a password ever count (the P-array has 18 words).
/// The key is the password's UTF-8 bytes followed by a NUL, as the C string it is in OpenBSD.
public enum Bcrypt {
    public enum Version: String, Sendable, CaseIterable {
        case a = "2a"
        case b = "2b"
        case y = "2y"
    }

    /// `BCRYPT_MINLOGROUNDS` and the largest cost the format can express.
    public static let minimumCost = 4
    public static let maximumCost = 31
    /// Bytes of a password that take part in the hash.
    public static let maximumPasswordLength = 72
    static let saltLength = 16
    /// The hash keeps 23 of the 24 bytes of the encrypted magic text (OpenBSD's historic choice).
    static let hashLength = 23
    static let encodedSaltLength = 22
    static let encodedHashLength = 31
    /// "OrpheanBeholderScryDoubt", the 192-bit text encrypted 64 times.
    static let magic: [UInt8] = Array("OrpheanBeholderScryDoubt".utf8)

    /// Hashes `password` with a fresh 16-byte salt from `random`.
    public static func hash(password: String, cost: Int = 10, random: any RandomSource = SystemRandom(),
                            version: Version = .b) -> String {
        hash(password: Array(password.utf8), salt: random.bytes(count: saltLength), cost: cost, version: version)
    }

    /// The deterministic core: `salt` must be 16 bytes, `cost` in 4...31.
    public static func hash(password: [UInt8], salt: [UInt8], cost: Int, version: Version) -> String {
        precondition(salt.count == saltLength, "bcrypt salt must be 16 bytes")
        precondition((minimumCost...maximumCost).contains(cost), "bcrypt cost out of range")
        let digest = raw(password: password, salt: salt, cost: cost, version: version)
        let costText = cost < 10 ? "0\(cost)" : "\(cost)"
        return "$\(version.rawValue)$\(costText)$" + RadixBase64.encode(salt) + RadixBase64.encode(digest)
    }

    /// True when `hash` is a well-formed bcrypt string and `password` matches it. Malformed
    /// strings never match. The final comparison is constant-time.
    public static func verify(password: String, against hash: String) -> Bool {
        guard let parsed = Parsed(hash) else { return false }
        let digest = raw(password: Array(password.utf8), salt: parsed.salt, cost: parsed.cost, version: parsed.version)
        return constantTimeEquals(Array(RadixBase64.encode(digest).utf8), parsed.encodedHash)
    }

    /// Whether `hash` is a well-formed bcrypt string of a supported version.
    public static func isWellFormed(_ hash: String) -> Bool { Parsed(hash) != nil }

    /// The cost of a well-formed hash.
    public static func cost(of hash: String) -> Int? { Parsed(hash)?.cost }

    /// The fields of a strictly parsed hash: `$2x$NN$` then exactly 53 characters of the bcrypt
    /// alphabet. The salt decodes leniently in its last character (its low 4 bits carry no
    /// data), as both OpenBSD and Go decode it.
    struct Parsed {
        let version: Version
        let cost: Int
        let salt: [UInt8]
        let encodedHash: [UInt8]

        init?(_ text: String) {
            let bytes = Array(text.utf8)
            guard bytes.count == 60, bytes[0] == UInt8(ascii: "$"), bytes[3] == UInt8(ascii: "$"),
                  bytes[6] == UInt8(ascii: "$"),
                  let version = Version(rawValue: String(decoding: bytes[1...2], as: UTF8.self)),
                  let tens = Self.digit(bytes[4]), let ones = Self.digit(bytes[5])
            else { return nil }
            let cost = tens * 10 + ones
            guard (Bcrypt.minimumCost...Bcrypt.maximumCost).contains(cost),
                  let salt = RadixBase64.decode(bytes[7..<29], count: Bcrypt.saltLength),
                  RadixBase64.decode(bytes[29...], count: Bcrypt.hashLength) != nil
            else { return nil }
            self.version = version
            self.cost = cost
            self.salt = salt
            self.encodedHash = Array(bytes[29...])
        }

        private static func digit(_ b: UInt8) -> Int? {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) ? Int(b - UInt8(ascii: "0")) : nil
        }
    }

    /// The key bytes as OpenBSD's `bcrypt_hashpass` builds them from the C string.
    static func key(_ password: [UInt8], version: Version) -> [UInt8] {
        var key = password
        key.append(0)
        switch version {
        case .a:
            // `key_len = (u_int8_t)(strlen(key) + 1)`: wraps modulo 256. A length of 0 reads the
            // first byte over and over in `Blowfish_stream2word`, the same as a length of 1.
            let length = max(1, (password.count + 1) & 0xFF)
            return Array(key.prefix(length))
        case .b, .y:
            return Array(key.prefix(maximumPasswordLength + 1))
        }
    }

    /// EksBlowfishSetup followed by 64 encryptions of the magic text; 23 bytes.
    static func raw(password: [UInt8], salt: [UInt8], cost: Int, version: Version) -> [UInt8] {
        var cipher = Blowfish()
        let keyWords = Blowfish.streamWords(key(password, version: version), count: 18)
        let saltWords = Blowfish.streamWords(salt, count: 4)
        var text = Blowfish.streamWords(magic, count: 6)
        cipher.state.withUnsafeMutableBufferPointer { buffer in
            let state = buffer.baseAddress!
            Blowfish.expand(state, key: keyWords, salt: saltWords)
            let rounds = UInt64(1) << UInt64(cost)
            var round: UInt64 = 0
            while round < rounds {
                Blowfish.expand(state, key: keyWords, salt: nil)
                Blowfish.expand(state, key: saltWords, salt: nil)
                round += 1
            }
            for _ in 0..<64 {
                for block in 0..<3 {
                    (text[2 * block], text[2 * block + 1]) = Blowfish.encrypt(state, text[2 * block], text[2 * block + 1])
                }
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(24)
        for word in text {
            out.append(UInt8(truncatingIfNeeded: word >> 24))
            out.append(UInt8(truncatingIfNeeded: word >> 16))
            out.append(UInt8(truncatingIfNeeded: word >> 8))
            out.append(UInt8(truncatingIfNeeded: word))
        }
        return Array(out.prefix(hashLength))
    }
}

/// The Blowfish state bcrypt's expensive key schedule works on: P1...P18 then the four S-boxes,
/// in one array so the hot loops index a single pointer.
struct Blowfish {
    var state: [UInt32] = Blowfish.initialState

    /// OpenBSD's `Blowfish_stream2word` applied `count` times from the start of `data`: big-endian
    /// words read cyclically. bcrypt restarts the stream at every key expansion, so the words
    /// are the same each time and are computed once.
    static func streamWords(_ data: [UInt8], count: Int) -> [UInt32] {
        var words: [UInt32] = []
        words.reserveCapacity(count)
        var j = 0
        for _ in 0..<count {
            var word: UInt32 = 0
            for _ in 0..<4 {
                if j >= data.count { j = 0 }
                word = (word << 8) | UInt32(data.isEmpty ? 0 : data[j])
                j += 1
            }
            words.append(word)
        }
        return words
    }

    @inline(__always)
    static func f(_ s: UnsafeMutablePointer<UInt32>, _ x: UInt32) -> UInt32 {
        let a = s[18 + Int(x >> 24)]
        let b = s[274 + Int((x >> 16) & 0xFF)]
        let c = s[530 + Int((x >> 8) & 0xFF)]
        let d = s[786 + Int(x & 0xFF)]
        return ((a &+ b) ^ c) &+ d
    }

    /// One 64-bit block through the 16 Feistel rounds (Schneier 1993, "Encryption").
    @inline(__always)
    static func encrypt(_ s: UnsafeMutablePointer<UInt32>, _ left: UInt32, _ right: UInt32) -> (UInt32, UInt32) {
        var l = left, r = right
        var i = 0
        while i < 16 {
            l ^= s[i]
            r ^= f(s, l)
            r ^= s[i + 1]
            l ^= f(s, r)
            i += 2
        }
        return (r ^ s[17], l ^ s[16])
    }

    /// `Blowfish_expandstate` (with a salt) / `Blowfish_expand0state` (salt nil): XOR the key
    /// into P, then replace P and the S-boxes by successive encryptions of a running block, which
    /// takes in the salt words cyclically when there is a salt.
    static func expand(_ s: UnsafeMutablePointer<UInt32>, key: [UInt32], salt: [UInt32]?) {
        key.withUnsafeBufferPointer { key in
            for i in 0..<18 { s[i] ^= key[i % key.count] }
        }
        var l: UInt32 = 0, r: UInt32 = 0
        if let salt {
            salt.withUnsafeBufferPointer { salt in
                var j = 0
                var i = 0
                while i < 1042 {
                    l ^= salt[j]
                    r ^= salt[(j + 1) & 3]
                    j = (j + 2) & 3
                    (l, r) = encrypt(s, l, r)
                    s[i] = l
                    s[i + 1] = r
                    i += 2
                }
            }
        } else {
            var i = 0
            while i < 1042 {
                (l, r) = encrypt(s, l, r)
                s[i] = l
                s[i + 1] = r
                i += 2
            }
        }
    }
}

/// bcrypt's own base64: the standard bit packing with the alphabet `./A-Za-z0-9` and no
/// padding (OpenBSD `encode_base64`).
enum RadixBase64 {
    static let alphabet: [UInt8] = Array("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
    static let table: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        return t
    }()

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var i = 0
        while i < bytes.count {
            let b0 = bytes[i]
            let b1: UInt8 = i + 1 < bytes.count ? bytes[i + 1] : 0
            let b2: UInt8 = i + 2 < bytes.count ? bytes[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            if i + 1 < bytes.count { out.append(alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)]) }
            if i + 2 < bytes.count { out.append(alphabet[Int(b2 & 0x3F)]) }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes exactly `count` bytes from the characters given (which must be exactly as many as
    /// `count` bytes need); nil on a character outside the alphabet. Spare low bits of the last
    /// character are ignored.
    static func decode(_ chars: ArraySlice<UInt8>, count: Int) -> [UInt8]? {
        guard chars.count == (count * 4 + 2) / 3 else { return nil }
        var values: [UInt8] = []
        values.reserveCapacity(chars.count)
        for c in chars {
            let v = table[Int(c)]
            guard v != 0xFF else { return nil }
            values.append(v)
        }
        var out: [UInt8] = []
        out.reserveCapacity(count)
        var i = 0
        while out.count < count {
            let v0 = values[i], v1 = values[i + 1]
            out.append(v0 << 2 | v1 >> 4)
            if out.count == count { break }
            let v2 = values[i + 2]
            out.append((v1 & 0x0F) << 4 | v2 >> 2)
            if out.count == count { break }
            let v3 = values[i + 3]
            out.append((v2 & 0x03) << 6 | v3)
            i += 4
        }
        return out
    }
}

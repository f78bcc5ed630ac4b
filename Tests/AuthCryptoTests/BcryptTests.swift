import PythonTestSupport
import Testing
@testable import AuthCrypto

@Suite struct BcryptTests {
    /// Known answers. The `$2a$05$` vectors with "U*U"-style passwords, the empty password and the
    /// 72-byte cut-off are the OpenBSD / John the Ripper bcrypt test vectors, as distributed with
    /// Solar Designer's crypt_blowfish (`wrapper.c` tests[]); the `/OK.fbVrR/bpIqNJ5ianF.` ones with
    /// 8-bit passwords come from the same list and pin the unsigned handling of bytes >= 0x80 that
    /// `$2y$` names. Each was also checked against libxcrypt's crypt(3).
    static let vectors: [(password: [UInt8], hash: String)] = [
        (Array("U*U".utf8), "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"),
        (Array("U*U*".utf8), "$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK"),
        (Array("U*U*U".utf8), "$2a$05$XXXXXXXXXXXXXXXXXXXXXOAcXxm9kjPGEMsLznoKqmqw7tc8WCx4a"),
        (Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789chars after 72 are ignored".utf8),
         "$2a$05$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui"),
        ([], "$2a$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy"),
        ([0xA3], "$2y$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq"),
        ([0xA3], "$2a$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq"),
        ([0xFF, 0xA3, 0x33, 0x34, 0x35], "$2y$05$/OK.fbVrR/bpIqNJ5ianF.nRht2l/HRhr6zmCp9vYUvvsqynflf9e"),
        ([0xA3, 0x61, 0x62], "$2a$05$/OK.fbVrR/bpIqNJ5ianF.6IflQkJytoRVc1yuaNtHfiuq.FRlSIS"),
    ]

    /// The emulator's own cost-10 fixture, used by the admin API tests and the Python client
    /// tests: "correct-horse-1" under the salt "SupabaseAuthEmulatorSO", as computed by
    /// libxcrypt's crypt(3) (`crypt("correct-horse-1", "$2a$10$SupabaseAuthEmulatorSa")`).
    static let fixtureCost10 = "$2a$10$SupabaseAuthEmulatorSOYgM2f571OneeZUdDilPkLhhvCn6K4Ki"
    static let fixture2b = "$2b$04$SupabaseAuthEmulatorSOQiqAE7pRgGSaE/GJYJ3h/uBp00NYV2G"

    @Test func blowfishInitialStateIsPi() {
        // Schneier 1993: P1 starts the hex expansion of pi's fractional part; spot values.
        let s = Blowfish.initialState
        #expect(s.count == 18 + 4 * 256)
        #expect(s[0] == 0x243F_6A88 && s[1] == 0x85A3_08D3 && s[17] == 0x8979_FB1B)
        #expect(s[18] == 0xD131_0BA6)   // S1[0]
        #expect(s[1041] == 0x3AC3_72E6) // S4[255]
    }

    @Test func knownAnswers() throws {
        for (password, expected) in Self.vectors {
            let parsed = try #require(Bcrypt.Parsed(expected))
            let recomputed = Bcrypt.hash(password: password, salt: parsed.salt, cost: parsed.cost, version: parsed.version)
            #expect(recomputed == expected, "\(password)")
        }
        for (password, hash) in Self.vectors.prefix(5) {
            let text = String(decoding: password, as: UTF8.self)
            #expect(Bcrypt.verify(password: text, against: hash))
            #expect(!Bcrypt.verify(password: "x" + text, against: hash))
        }
    }

    @Test func fixtures() {
        #expect(Bcrypt.verify(password: "correct-horse-1", against: Self.fixtureCost10))
        #expect(!Bcrypt.verify(password: "correct-horse-2", against: Self.fixtureCost10))
        #expect(Bcrypt.verify(password: "correct-horse-1", against: Self.fixture2b))
        #expect(Bcrypt.cost(of: Self.fixtureCost10) == 10)
        // The same hash under each version prefix: the versions differ only for long passwords.
        #expect(Bcrypt.verify(password: "correct-horse-1", against: "$2y$" + Self.fixture2b.dropFirst(4)))
        #expect(Bcrypt.verify(password: "correct-horse-1", against: "$2a$" + Self.fixture2b.dropFirst(4)))
    }

    @Test func roundTripAndSaltEncoding() {
        let random = SeededRandom(seed: 42)
        for version in Bcrypt.Version.allCases {
            let hash = Bcrypt.hash(password: "pässwörd", cost: 4, random: random, version: version)
            #expect(hash.hasPrefix("$\(version.rawValue)$04$"))
            #expect(hash.utf8.count == 60)
            #expect(Bcrypt.verify(password: "pässwörd", against: hash))
            #expect(!Bcrypt.verify(password: "passwörd", against: hash))
        }
        let a = Bcrypt.hash(password: "pw", cost: 4, random: random)
        let b = Bcrypt.hash(password: "pw", cost: 4, random: random)
        #expect(a != b)
        // A salt whose last character has spare low bits set still decodes (lenient, as OpenBSD
        // and Go), and the stored hash is what is compared.
        #expect(Bcrypt.verify(password: "correct-horse-1",
                              against: "$2a$10$SupabaseAuthEmulatorSaYgM2f571OneeZUdDilPkLhhvCn6K4Ki"))
    }

    @Test func only72BytesCount() {
        let random = SeededRandom(seed: 9)
        let base = String(repeating: "a", count: 72)
        for version in Bcrypt.Version.allCases {
            let hash = Bcrypt.hash(password: base, cost: 4, random: random, version: version)
            #expect(Bcrypt.verify(password: base + "anything", against: hash))
            #expect(!Bcrypt.verify(password: String(base.dropLast()), against: hash))
        }
    }

    @Test func twoAWrapsItsKeyLengthAsOpenBSD() throws {
        // OpenBSD keeps `$2a$` key lengths in a u_int8_t: a 260-byte password has key length
        // (260 + 1) mod 256 = 5, so only its first 5 bytes count. `$2b$` caps at 72 instead.
        let salt = Array(repeating: UInt8(0x5A), count: 16)
        var p = Array(repeating: UInt8(ascii: "x"), count: 260)
        var q = p
        q[10] = UInt8(ascii: "y")
        #expect(Bcrypt.hash(password: p, salt: salt, cost: 4, version: .a) == Bcrypt.hash(password: q, salt: salt, cost: 4, version: .a))
        let pb = Bcrypt.hash(password: p, salt: salt, cost: 4, version: .b)
        let qb = Bcrypt.hash(password: q, salt: salt, cost: 4, version: .b)
        #expect(pb.dropFirst(7) != qb.dropFirst(7))
        // Below 255 bytes `$2a$` and `$2b$` agree.
        p = Array(p.prefix(100))
        #expect(Bcrypt.hash(password: p, salt: salt, cost: 4, version: .a).dropFirst(4)
                == Bcrypt.hash(password: p, salt: salt, cost: 4, version: .b).dropFirst(4))
    }

    @Test func malformedHashesNeverMatch() {
        let good = Self.fixture2b
        let tail = String(good.dropFirst(7))
        var bad: [String] = ["", "$2b$04$", String(good.dropLast()), good + "a"]
        for prefix in ["$2x$04$", "$2c$04$", "$3b$04$", "$2b$03$", "$2b$32$", "$2b$04x", "x2b$04$"] {
            bad.append(prefix + tail)
        }
        bad.append("$2b$4$S" + tail)
        bad.append("$2b$04$" + tail.replacingFirst("S", with: "!"))
        bad.append("$2b$04$" + tail.replacingFirst("S", with: "+"))
        bad.append("$pbkdf2-sha256$i=1000,l=32$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g")
        for hash in bad {
            #expect(!Bcrypt.isWellFormed(hash), "\(hash)")
            #expect(!Bcrypt.verify(password: "correct-horse-1", against: hash), "\(hash)")
        }
        #expect(Bcrypt.isWellFormed(good))
    }

    @Test func radixBase64() {
        // 16 bytes -> 22 characters, 23 bytes -> 31 characters; round trip.
        let salt: [UInt8] = Array(0..<16)
        let encoded = RadixBase64.encode(salt)
        #expect(encoded.utf8.count == 22)
        #expect(RadixBase64.decode(ArraySlice(encoded.utf8), count: 16) == salt)
        let all: [UInt8] = (0..<23).map { UInt8(255 - $0 * 7) }
        let e2 = RadixBase64.encode(all)
        #expect(e2.utf8.count == 31)
        #expect(RadixBase64.decode(ArraySlice(e2.utf8), count: 23) == all)
        #expect(RadixBase64.encode([0, 0, 0]) == "....")
        #expect(RadixBase64.encode([0xFF, 0xFF, 0xFF]) == "9999")
    }

    /// Differential check against libxcrypt's crypt(3) (an independent implementation, Solar
    /// Designer's crypt_blowfish) through Python's ctypes: seeded random passwords, salts, costs
    /// 4-6 and every version. Where the platform's crypt(3) has no bcrypt (macOS), the script says
    /// so and the check is skipped unless CI requires it.
    @Test(.enabled(if: Python.shouldRun, "needs Python 3 (set AUTH_EMULATOR_PYTHON or put python3 on PATH)"))
    func matchesLibxcrypt() throws {
        let script = """
            import sys, ctypes, ctypes.util
            name = ctypes.util.find_library("crypt")
            lib = ctypes.CDLL(name) if name else None
            if lib is not None:
                lib.crypt.restype = ctypes.c_char_p
                lib.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
                probe = b"$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"
                if lib.crypt(b"U*U", probe) != probe:
                    lib = None
            if lib is None:
                print("unsupported")
                sys.exit(0)
            for line in sys.stdin:
                password, setting = line.split()
                out = lib.crypt(bytes.fromhex(password[1:]), setting.encode())
                print(out.decode() if out else "error")
            """
        let random = SeededRandom(seed: 0xB0C7)
        var g = random.generator
        var cases: [(password: [UInt8], hash: String)] = []
        for index in 0..<48 {
            // crypt(3) takes a C string: no NUL inside. Lengths straddle the 72-byte limit.
            let length = index < 6 ? [0, 1, 71, 72, 73, 200][index] : Int.random(in: 0...90, using: &g)
            let password = (0..<length).map { _ in UInt8.random(in: 1...255, using: &g) }
            let version = Bcrypt.Version.allCases[index % 3]
            let cost = 4 + index % 3
            cases.append((password, Bcrypt.hash(password: password, salt: random.bytes(count: 16), cost: cost, version: version)))
        }
        // Each password travels as "h" + hex, so an empty one is still a field.
        let input = cases.map { "h\(Hex.encode($0.password)) \($0.hash)" }.joined(separator: "\n") + "\n"
        let output = try Python.run(script: script, input: input)
        if output.hasPrefix("unsupported") {
            #expect(!Python.isCI, "CI needs a crypt(3) with bcrypt (libxcrypt)")
            return
        }
        let results = output.split(separator: "\n").map(String.init)
        try #require(results.count == cases.count)
        for (c, result) in zip(cases, results) {
            #expect(result == c.hash, "password of \(c.password.count) bytes")
        }
    }

    /// The default cost (GoTrue's 10) round-trips: a fresh hash names its cost and verifies
    /// the password it was made from (`fixtures` checks a wrong one fails at this cost). How long
    /// a cost-10 verification takes is measured in bench/, not here.
    @Test func defaultCostRoundTrips() {
        let hash = Bcrypt.hash(password: "correct-horse-1", random: SeededRandom(seed: 10))
        #expect(hash.hasPrefix("$2b$10$"))
        #expect(Bcrypt.cost(of: hash) == 10)
        #expect(Bcrypt.verify(password: "correct-horse-1", against: hash))
    }
}

private extension String {
    func replacingFirst(_ target: Character, with replacement: Character) -> String {
        guard let index = firstIndex(of: target) else { return String(self) }
        var copy = String(self)
        let offset = distance(from: startIndex, to: index)
        let at = copy.index(copy.startIndex, offsetBy: offset)
        copy.replaceSubrange(at...at, with: String(replacement))
        return copy
    }
}

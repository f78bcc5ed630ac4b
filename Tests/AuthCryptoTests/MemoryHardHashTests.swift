import Testing
@testable import AuthCrypto

/// BLAKE2b, Argon2, scrypt and AES: the primitives behind imported Argon2 and Firebase scrypt
/// password hashes. Vectors from the RFCs and FIPS 197; the rest were computed with Python's
/// hashlib (OpenSSL's BLAKE2b and scrypt), argon2-cffi (the reference C implementation of
/// Argon2) and the `cryptography` package (OpenSSL's AES-CTR).
struct MemoryHardHashTests {
    @Test func blake2bMatchesRFC7693AndOpenSSL() {
        // RFC 7693 appendix A: BLAKE2b-512("abc").
        #expect(Hex.encode(BLAKE2b.hash([utf8("abc")])) == "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
            + "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923")
        #expect(Hex.encode(BLAKE2b.hash([])) == "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419"
            + "d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce")
        #expect(Hex.encode(BLAKE2b.hash([utf8("abc")], byteCount: 1)) == "6b")
        let bytes = (0..<256).map { UInt8($0) }
        // Exactly one block (not compressed until the end), two blocks, and parts split
        // across block boundaries.
        #expect(Hex.encode(BLAKE2b.hash([Array(bytes[0..<128])])) == "2319e3789c47e2daa5fe807f61bec2a1a6537fa03f19ff32e87eecbfd64b7e0e"
            + "8ccff439ac333b040f19b0c4ddd11a61e24ac1fe0f10a039806c5dcc0da3d115")
        #expect(Hex.encode(BLAKE2b.hash([bytes], byteCount: 32)) == "39a7eb9fedc19aabc83425c6755dd90e6f9d0c804964a1f4aaeea3b9fb599835")
        #expect(Hex.encode(BLAKE2b.hash([Array(bytes[0..<7]), Array(bytes[7..<130]), Array(bytes[130..<200])], byteCount: 40))
            == "0d6020047f746b46056df146bd9e5df0d399536eca82e4327f66f20bcf2823ea91ff6e28a2c44935")
    }

    /// RFC 9106 section 5: 32-byte password of 0x01, 16-byte salt of 0x02, secret of 0x03,
    /// associated data of 0x04, m = 32, t = 3, p = 4, 32-byte tag.
    @Test(arguments: [
        (Argon2.Variant.d, "512b391b6f1162975371d30919734294f868e3be3984f3c1a13a4db9fabe4acb"),
        (.i, "c814d9d1dc7f37aa13f0d77f2494bda1c8de6b016dd388d29952a4c4672b6ce8"),
        (.id, "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659"),
    ])
    func argon2MatchesRFC9106(variant: Argon2.Variant, tag: String) throws {
        let result = try Argon2.hash(
            variant, password: [UInt8](repeating: 1, count: 32), salt: [UInt8](repeating: 2, count: 16),
            secret: [UInt8](repeating: 3, count: 8), associatedData: [UInt8](repeating: 4, count: 12),
            iterations: 3, memoryKiB: 32, parallelism: 4, tagLength: 32)
        #expect(Hex.encode(result) == tag)
    }

    struct Argon2Case: Sendable, CustomTestStringConvertible {
        let variant: Argon2.Variant
        let password: String
        let salt: String
        let t: UInt32, m: UInt32, p: UInt32
        let tag: String
        var testDescription: String { "\(variant) t=\(t) m=\(m) p=\(p) len=\(tag.count / 2)" }
    }

    /// Cases for what the RFC's vector leaves out: several passes over many segments, lanes
    /// that do not divide m, m rounded up to 8p, tags over 64 bytes, an empty password.
    @Test(arguments: [
        Argon2Case(variant: .i, password: "password", salt: "somesalt", t: 2, m: 4096, p: 1,
                   tag: "42ec042625f1e308f0cec36a6537de0d25bb9ea8576e35cacab567a7cfe0071c"),
        Argon2Case(variant: .id, password: "correct horse", salt: "saltsaltsalt", t: 3, m: 40, p: 4,
                   tag: "e6d362fe832fbb427a5e8137a025dc22bfe8f9654bf177284bbe2820f21db7f75f7107277dc9aa71"),
        Argon2Case(variant: .id, password: "pw", salt: "0123456789abcdef", t: 1, m: 16, p: 2,
                   tag: "3b6b4296698e6f94c0fdbd7b70d7f534917edcba4886873e837f38f9a4466419ec37a4dc2cc13519aff59cecaa1c0423"
                       + "7c44a4d632c3dcfbff2ac19e427ebbfaaa1055782d0d85bac476e8118517b85d97e33945db7f6fdd50ccef6890357072370fad07"),
        Argon2Case(variant: .i, password: String(repeating: "x", count: 70), salt: "saltsalt", t: 4, m: 1000, p: 3,
                   tag: "bcd6c7e6b169affc32bf17c78c78846d"),
        Argon2Case(variant: .id, password: "", salt: "saltsalt", t: 2, m: 300, p: 1,
                   tag: "3c54ffc8894a78337bdfce593314459bbd6c323778e783ed74b3349a4d5369bf68e6ac4806da1a0e4965e7fc6d1a5e3f"
                       + "b97e03d591f1c62a4f83483855a27d23"),
    ])
    func argon2MatchesTheReferenceImplementation(_ c: Argon2Case) throws {
        let result = try Argon2.hash(c.variant, password: utf8(c.password), salt: utf8(c.salt), iterations: c.t,
                                     memoryKiB: c.m, parallelism: c.p, tagLength: c.tag.count / 2)
        #expect(Hex.encode(result) == c.tag)
    }

    @Test func argon2RefusesZeroPassesAndLanes() {
        #expect(throws: Argon2.Failure.invalidParameters("argon2: number of rounds too small")) {
            try Argon2.hash(.id, password: [], salt: utf8("saltsalt"), iterations: 0, memoryKiB: 16, parallelism: 1, tagLength: 16)
        }
        #expect(throws: Argon2.Failure.invalidParameters("argon2: parallelism degree too low")) {
            try Argon2.hash(.id, password: [], salt: utf8("saltsalt"), iterations: 1, memoryKiB: 16, parallelism: 0, tagLength: 16)
        }
    }

    @Test func scryptMatchesRFC7914() throws {
        // Section 12's first two vectors.
        #expect(Hex.encode(try Scrypt.deriveKey(password: [], salt: [], n: 16, r: 1, p: 1, keyLength: 64, memoryLimit: 1 << 30))
            == "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17"
            + "e8d3e0fb2e0d3628cf35e20c38d18906")
        #expect(Hex.encode(try Scrypt.deriveKey(password: utf8("password"), salt: utf8("NaCl"), n: 1024, r: 8, p: 16,
                                                keyLength: 64, memoryLimit: 1 << 30))
            == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830da"
            + "c727afb94a83ee6d8360cbdfa2cc0640")
    }

    @Test func scryptRefusesWhatGoRefusesAndWhatIsOverTheMemoryLimit() {
        #expect(throws: Scrypt.Failure.invalidParameters("scrypt: N must be > 1 and a power of 2")) {
            try Scrypt.deriveKey(password: [], salt: [], n: 1, r: 1, p: 1, keyLength: 32, memoryLimit: 1 << 30)
        }
        #expect(throws: Scrypt.Failure.invalidParameters("scrypt: N must be > 1 and a power of 2")) {
            try Scrypt.deriveKey(password: [], salt: [], n: 48, r: 1, p: 1, keyLength: 32, memoryLimit: 1 << 30)
        }
        #expect(throws: Scrypt.Failure.invalidParameters("scrypt: parameters are too large")) {
            try Scrypt.deriveKey(password: [], salt: [], n: 16, r: 1 << 20, p: 1 << 10, keyLength: 32, memoryLimit: 1 << 30)
        }
        #expect(throws: Scrypt.Failure.outOfMemory) {
            try Scrypt.deriveKey(password: [], salt: [], n: 1 << 21, r: 8, p: 1, keyLength: 32, memoryLimit: 1 << 30)
        }
    }

    @Test func aesMatchesFIPS197AndCTRCarriesAcrossTheCounterBlock() {
        // FIPS 197 appendix C.1 and C.3.
        let plaintext = unhex("00112233445566778899aabbccddeeff")
        #expect(Hex.encode(AES(key: unhex("000102030405060708090a0b0c0d0e0f"))!.encrypt(block: plaintext))
            == "69c4e0d86a7b0430d8cdb78070b4c55a")
        #expect(Hex.encode(AES(key: (0..<24).map { UInt8($0) })!.encrypt(block: plaintext)) == "dda97ca4864cdfe06eaf70a0ec0d7191")
        #expect(Hex.encode(AES(key: (0..<32).map { UInt8($0) })!.encrypt(block: plaintext)) == "8ea2b7ca516745bfeafc49904b496089")
        #expect(AES(key: [UInt8](repeating: 0, count: 20)) == nil)
        // 50 bytes from a counter about to carry into its third-lowest byte.
        let stream = AES(key: (0..<32).map { UInt8($0) })!.ctr((0..<50).map { UInt8($0) }, iv: unhex("000000000000000000000000fffffffe"))
        #expect(Hex.encode(stream) == "fd9ea1fa2827eda6926161b228fbe87ba9d3618b04deb740b1e7700b90734881443c3819a49be9d1d8daa5bc48d0e1b9064f")
    }
}

import PythonTestSupport
import Testing
@testable import AuthCrypto

/// One test vector of RFC 8032 section 7.1: the 32-byte secret key (seed), the public key, the
/// message and the signature, all as printed in the RFC.
struct Ed25519Vector: Sendable, CustomTestStringConvertible {
    let name: String
    let secretKey: String
    let publicKey: String
    let message: [UInt8]
    let signature: String
    var testDescription: String { name }
}

enum RFC8032 {
    /// The 1023-byte message of TEST 1024.
    static let message1024 = unhex([
        "08b8b2b733424243760fe426a4b54908632110a66c2f6591eabd3345e3e4eb98",
        "fa6e264bf09efe12ee50f8f54e9f77b1e355f6c50544e23fb1433ddf73be84d8",
        "79de7c0046dc4996d9e773f4bc9efe5738829adb26c81b37c93a1b270b20329d",
        "658675fc6ea534e0810a4432826bf58c941efb65d57a338bbd2e26640f89ffbc",
        "1a858efcb8550ee3a5e1998bd177e93a7363c344fe6b199ee5d02e82d522c4fe",
        "ba15452f80288a821a579116ec6dad2b3b310da903401aa62100ab5d1a36553e",
        "06203b33890cc9b832f79ef80560ccb9a39ce767967ed628c6ad573cb116dbef",
        "efd75499da96bd68a8a97b928a8bbc103b6621fcde2beca1231d206be6cd9ec7",
        "aff6f6c94fcd7204ed3455c68c83f4a41da4af2b74ef5c53f1d8ac70bdcb7ed1",
        "85ce81bd84359d44254d95629e9855a94a7c1958d1f8ada5d0532ed8a5aa3fb2",
        "d17ba70eb6248e594e1a2297acbbb39d502f1a8c6eb6f1ce22b3de1a1f40cc24",
        "554119a831a9aad6079cad88425de6bde1a9187ebb6092cf67bf2b13fd65f270",
        "88d78b7e883c8759d2c4f5c65adb7553878ad575f9fad878e80a0c9ba63bcbcc",
        "2732e69485bbc9c90bfbd62481d9089beccf80cfe2df16a2cf65bd92dd597b07",
        "07e0917af48bbb75fed413d238f5555a7a569d80c3414a8d0859dc65a46128ba",
        "b27af87a71314f318c782b23ebfe808b82b0ce26401d2e22f04d83d1255dc51a",
        "ddd3b75a2b1ae0784504df543af8969be3ea7082ff7fc9888c144da2af58429e",
        "c96031dbcad3dad9af0dcbaaaf268cb8fcffead94f3c7ca495e056a9b47acdb7",
        "51fb73e666c6c655ade8297297d07ad1ba5e43f1bca32301651339e22904cc8c",
        "42f58c30c04aafdb038dda0847dd988dcda6f3bfd15c4b4c4525004aa06eeff8",
        "ca61783aacec57fb3d1f92b0fe2fd1a85f6724517b65e614ad6808d6f6ee34df",
        "f7310fdc82aebfd904b01e1dc54b2927094b2db68d6f903b68401adebf5a7e08",
        "d78ff4ef5d63653a65040cf9bfd4aca7984a74d37145986780fc0b16ac451649",
        "de6188a7dbdf191f64b5fc5e2ab47b57f7f7276cd419c17a3ca8e1b939ae49e4",
        "88acba6b965610b5480109c8b17b80e1b7b750dfc7598d5d5011fd2dcc5600a3",
        "2ef5b52a1ecc820e308aa342721aac0943bf6686b64b2579376504ccc493d97e",
        "6aed3fb0f9cd71a43dd497f01f17c0e2cb3797aa2a2f256656168e6c496afc5f",
        "b93246f6b1116398a346f1a641f3b041e989f7914f90cc2c7fff357876e506b5",
        "0d334ba77c225bc307ba537152f3f1610e4eafe595f6d9d90d11faa933a15ef1",
        "369546868a7f3a45a96768d40fd9d03412c091c6315cf4fde7cb68606937380d",
        "b2eaaa707b4c4185c32eddcdd306705e4dc1ffc872eeee475a64dfac86aba41c",
        "0618983f8741c5ef68d3a101e8a3b8cac60c905c15fc910840b94c00a0b9d0"
    ].joined())

    /// RFC 8032 section 7.1: TEST 1, TEST 2, TEST 3, TEST 1024 and TEST SHA(abc).
    static let vectors: [Ed25519Vector] = [
        Ed25519Vector(
            name: "TEST 1",
            secretKey: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
            publicKey: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
            message: [],
            signature: "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
                + "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
        Ed25519Vector(
            name: "TEST 2",
            secretKey: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
            publicKey: "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
            message: unhex("72"),
            signature: "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
                + "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
        Ed25519Vector(
            name: "TEST 3",
            secretKey: "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
            publicKey: "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
            message: unhex("af82"),
            signature: "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac"
                + "18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"),
        Ed25519Vector(
            name: "TEST 1024",
            secretKey: "f5e5767cf153319517630f226876b86c8160cc583bc013744c6bf255f5cc0ee5",
            publicKey: "278117fc144c72340f67d0f2316e8386ceffbf2b2428c9c51fef7c597f1d426e",
            message: message1024,
            signature: "0aab4c900501b3e24d7cdf4663326a3a87df5e4843b2cbdb67cbf6e460fec350"
                + "aa5371b1508f9f4528ecea23c436d94b5e8fcd4f681e30a6ac00a9704a188a03"),
        Ed25519Vector(
            name: "TEST SHA(abc)",
            secretKey: "833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42",
            publicKey: "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
            // The message is the 64-byte SHA-512 digest of "abc" (FIPS 180-4 example).
            message: unhex("ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"),
            signature: "dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b589"
                + "09351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704"),
    ]

    static func key(_ vector: Ed25519Vector) -> Ed25519PrivateKey { try! Ed25519PrivateKey(seed: unhex(vector.secretKey)) }
}

/// Little-endian byte strings used by the edge cases below.
enum Ed25519Encodings {
    /// The group order L (RFC 8032 section 5.1), little-endian.
    static let order = unhex("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")

    /// `first`, thirty 0xff bytes, then `last`: the encodings of y values near 2^255.
    static func nearTop(_ first: UInt8, _ last: UInt8) -> [UInt8] { [first] + [UInt8](repeating: 0xff, count: 30) + [last] }

    /// A small y value (below 256) with the sign bit set or clear.
    static func small(_ y: UInt8, sign: Bool = false) -> [UInt8] {
        [y] + [UInt8](repeating: 0, count: 30) + [sign ? 0x80 : 0x00]
    }

    /// a + b for 32-byte little-endian values, modulo 2^256.
    static func add(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32), carry = 0
        for i in 0..<32 {
            let sum = Int(a[i]) + Int(b[i]) + carry
            out[i] = UInt8(truncatingIfNeeded: sum)
            carry = sum >> 8
        }
        return out
    }
}

/// A public key encoding and what `Ed25519PublicKey(rawRepresentation:)` must make of it.
struct PublicKeyEncodingCase: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    /// nil: accepted.
    let error: Ed25519KeyError?
    var testDescription: String { name }
}

/// A signature check and its expected verdict.
struct SignatureCase: Sendable, CustomTestStringConvertible {
    let name: String
    let publicKey: [UInt8]
    let message: [UInt8]
    let signature: [UInt8]
    let valid: Bool
    var testDescription: String { name }
}

enum Ed25519EdgeCases {
    typealias E = Ed25519Encodings

    /// RFC 8032 section 5.1.3 decoding rules. p = 2^255 - 19 encodes as ed ff .. ff 7f.
    static let publicKeys: [PublicKeyEncodingCase] = [
        PublicKeyEncodingCase(name: "TEST 1 key", bytes: unhex(RFC8032.vectors[0].publicKey), error: nil),
        PublicKeyEncodingCase(
            name: "TEST 1 key with the sign bit flipped (-A)",
            bytes: Array(unhex(RFC8032.vectors[0].publicKey).dropLast()) + [unhex(RFC8032.vectors[0].publicKey)[31] ^ 0x80],
            error: nil),
        PublicKeyEncodingCase(name: "identity (0, 1), small order", bytes: E.small(1), error: nil),
        PublicKeyEncodingCase(name: "y = 0: x = sqrt(-1), order 4", bytes: E.small(0), error: nil),
        PublicKeyEncodingCase(name: "y = -1: x = 0, order 2", bytes: E.nearTop(0xec, 0x7f), error: nil),
        PublicKeyEncodingCase(name: "identity with the sign bit (x = 0, x_0 = 1)", bytes: E.small(1, sign: true),
                              error: .invalidPointEncoding),
        PublicKeyEncodingCase(name: "y = -1 with the sign bit (x = 0, x_0 = 1)", bytes: E.nearTop(0xec, 0xff),
                              error: .invalidPointEncoding),
        PublicKeyEncodingCase(name: "y = 2: no x on the curve", bytes: E.small(2), error: .invalidPointEncoding),
        PublicKeyEncodingCase(name: "y = 2 with the sign bit", bytes: E.small(2, sign: true), error: .invalidPointEncoding),
        PublicKeyEncodingCase(name: "y = p (non-canonical 0)", bytes: E.nearTop(0xed, 0x7f), error: .invalidPointEncoding),
        PublicKeyEncodingCase(name: "y = p + 1 (non-canonical identity)", bytes: E.nearTop(0xee, 0x7f),
                              error: .invalidPointEncoding),
        PublicKeyEncodingCase(name: "y = p + 1 with the sign bit", bytes: E.nearTop(0xee, 0xff), error: .invalidPointEncoding),
        PublicKeyEncodingCase(name: "y = 2^255 - 1", bytes: E.nearTop(0xff, 0x7f), error: .invalidPointEncoding),
        PublicKeyEncodingCase(name: "all ones", bytes: E.nearTop(0xff, 0xff), error: .invalidPointEncoding),
        PublicKeyEncodingCase(name: "31 bytes", bytes: Array(unhex(RFC8032.vectors[0].publicKey).dropLast()),
                              error: .invalidLength),
        PublicKeyEncodingCase(name: "33 bytes", bytes: unhex(RFC8032.vectors[0].publicKey) + [0], error: .invalidLength),
        PublicKeyEncodingCase(name: "empty", bytes: [], error: .invalidLength),
        PublicKeyEncodingCase(name: "64 bytes (key pair)", bytes: unhex(RFC8032.vectors[0].secretKey + RFC8032.vectors[0].publicKey),
                              error: .invalidLength),
    ]

    /// Verification edge cases around RFC 8032 TEST 2 (message 0x72) and around signatures made
    /// with chosen nonces by the internal `signature(for:nonce:commitment:)`.
    static let signatures: [SignatureCase] = {
        let vector = RFC8032.vectors[1]
        let key = RFC8032.key(vector)
        let a = key.publicKey.rawRepresentation, m = vector.message
        let good = unhex(vector.signature)
        let r = Array(good[0..<32]), s = Array(good[32..<64])
        let identity = E.small(1), zero = [UInt8](repeating: 0, count: 32)
        func valid(_ name: String, _ signature: [UInt8]) -> SignatureCase {
            SignatureCase(name: name, publicKey: a, message: m, signature: signature, valid: true)
        }
        func invalid(_ name: String, _ signature: [UInt8], key: [UInt8]? = nil) -> SignatureCase {
            SignatureCase(name: name, publicKey: key ?? a, message: m, signature: signature, valid: false)
        }
        return [
            valid("RFC 8032 TEST 2", good),
            // S must be below L (RFC 8032 5.1.7 step 1); S + L would pass a verifier that reduces S.
            invalid("S + L (non-canonical S)", r + E.add(s, E.order)),
            invalid("S = L", r + E.order),
            invalid("S = 2^256 - 1", r + [UInt8](repeating: 0xff, count: 32)),
            invalid("S with bit 255 set", r + Array(s.dropLast()) + [s[31] | 0x80]),
            invalid("S = 0", r + zero),
            invalid("R not on the curve (y = 2)", E.small(2) + s),
            invalid("R with the sign bit flipped", Array(r.dropLast()) + [r[31] ^ 0x80] + s),
            invalid("R = y = p (non-canonical)", E.nearTop(0xed, 0x7f) + s),
            invalid("R and S swapped", s + r),
            invalid("all zeros", zero + zero),
            invalid("TEST 2 signature under the TEST 1 key", good, key: unhex(RFC8032.vectors[0].publicKey)),
            invalid("63 bytes", Array(good.dropLast())),
            invalid("65 bytes", good + [0]),
            invalid("empty", []),
            invalid("128 bytes (signature twice)", good + good),
            // r = 0 gives R = identity; S = k s then satisfies [S]B = R + [k]A for the canonical
            // encoding of R. Re-encoding R non-canonically changes k, and a verifier that decodes
            // R loosely and compares points would accept the result; RFC 8032 does not.
            valid("R = identity (r = 0), canonical", key.signature(for: m, nonce: zero, commitment: identity)),
            invalid("R = identity encoded as y = p + 1", key.signature(for: m, nonce: zero, commitment: E.nearTop(0xee, 0x7f))),
            invalid("R = identity with the sign bit", key.signature(for: m, nonce: zero, commitment: E.small(1, sign: true))),
            // The identity public key (valid per RFC 8032, small order): [k]A vanishes, so R = B,
            // S = 1 verifies for every message. Applications must only trust keys they chose.
            SignatureCase(name: "identity public key, R = B, S = 1", publicKey: identity, message: m,
                          signature: [0x58] + [UInt8](repeating: 0x66, count: 31) + E.small(1), valid: true),
            // Built for this suite with an independent implementation: seed 00 01 .. 1f, R = [r]B + T
            // for a point T of order 8, S = r + k s. The cofactored equation [8][S]B = [8]R + [8][k]A
            // holds, the cofactorless one does not; OpenSSL rejects it as well.
            SignatureCase(
                name: "R with an order-8 component (cofactored check only)",
                publicKey: unhex("03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8"),
                message: utf8("cofactorless verification"),
                signature: unhex("e06e2eeae57a573f46fe28c33427d46e8b748f69fdca374ec7b4eaec1deeab05"
                    + "619b47e587abdfa789f4f04df0983793d803189ed829b04a137c03c76b1bbb0a"),
                valid: false),
        ]
    }()
}

@Suite struct Ed25519KnownAnswerTests {
    @Test(arguments: RFC8032.vectors)
    func rfc8032Vector(_ v: Ed25519Vector) throws {
        let key = try Ed25519PrivateKey(seed: unhex(v.secretKey))
        #expect(key.seed.hexString == v.secretKey)
        #expect(key.publicKey.rawRepresentation.hexString == v.publicKey)
        let signature = key.signature(for: v.message)
        #expect(signature.hexString == v.signature)
        let publicKey = try Ed25519PublicKey(rawRepresentation: unhex(v.publicKey))
        #expect(publicKey == key.publicKey)
        #expect(publicKey.isValidSignature(unhex(v.signature), for: v.message))
    }

    @Test func sha512OfAbcIsTheMessageOfTheLastVector() {
        #expect(SHA512.hash(data: utf8("abc")) == RFC8032.vectors[4].message)
        #expect(RFC8032.message1024.count == 1023)
    }
}

@Suite struct Ed25519EdgeCaseTests {
    @Test(arguments: Ed25519EdgeCases.publicKeys)
    func publicKeyEncoding(_ c: PublicKeyEncodingCase) {
        do {
            let key = try Ed25519PublicKey(rawRepresentation: c.bytes)
            #expect(c.error == nil, "accepted")
            #expect(key.rawRepresentation == c.bytes)
        } catch {
            #expect(error == c.error)
        }
    }

    @Test(arguments: Ed25519EdgeCases.signatures)
    func signatureVerdict(_ c: SignatureCase) throws {
        let key = try Ed25519PublicKey(rawRepresentation: c.publicKey)
        #expect(key.isValidSignature(c.signature, for: c.message) == c.valid)
    }

    @Test func seedLengthIsChecked() {
        for length in [0, 31, 33, 64] {
            #expect(throws: Ed25519KeyError.invalidLength) { try Ed25519PrivateKey(seed: [UInt8](repeating: 7, count: length)) }
        }
        #expect(throws: Never.self) { try Ed25519PrivateKey(seed: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: Never.self) { try Ed25519PrivateKey(seed: [UInt8](repeating: 0xff, count: 32)) }
    }

    @Test func errorsDescribeThemselves() {
        #expect(Ed25519KeyError.invalidLength.description.contains("32 bytes"))
        #expect(Ed25519KeyError.invalidPointEncoding.description.contains("point"))
    }

    /// Every single-bit change of a signature must be caught.
    @Test func everyFlippedSignatureBitIsRejected() throws {
        let v = RFC8032.vectors[2]
        let key = try Ed25519PublicKey(rawRepresentation: unhex(v.publicKey))
        let signature = unhex(v.signature)
        var accepted: [Int] = []
        for bit in 0..<512 {
            var tampered = signature
            tampered[bit / 8] ^= 1 << (bit % 8)
            if key.isValidSignature(tampered, for: v.message) { accepted.append(bit) }
        }
        #expect(accepted == [])
    }

    @Test func everyFlippedMessageBitIsRejected() throws {
        let v = RFC8032.vectors[2]
        let key = try Ed25519PublicKey(rawRepresentation: unhex(v.publicKey))
        let signature = unhex(v.signature)
        for bit in 0..<(8 * v.message.count) {
            var tampered = v.message
            tampered[bit / 8] ^= 1 << (bit % 8)
            #expect(!key.isValidSignature(signature, for: tampered), "bit \(bit)")
        }
        #expect(!key.isValidSignature(signature, for: v.message + [0]))
        #expect(!key.isValidSignature(signature, for: Array(v.message.dropLast())))
        #expect(!key.isValidSignature(signature, for: []))
    }

    /// A flipped public key bit gives either an invalid encoding or a different key.
    @Test func everyFlippedKeyBitIsRejected() throws {
        let v = RFC8032.vectors[2]
        let encoding = unhex(v.publicKey), signature = unhex(v.signature)
        var undecodable = 0
        for bit in 0..<256 {
            var tampered = encoding
            tampered[bit / 8] ^= 1 << (bit % 8)
            do {
                let key = try Ed25519PublicKey(rawRepresentation: tampered)
                #expect(!key.isValidSignature(signature, for: v.message), "bit \(bit)")
            } catch {
                #expect(error == .invalidPointEncoding)
                undecodable += 1
            }
        }
        // About half of all y values have no x on the curve.
        #expect(undecodable > 64 && undecodable < 192)
    }
}

@Suite struct Ed25519KeyTests {
    @Test func generationIsDeterministicForASeed() throws {
        let first = Ed25519PrivateKey.generate(random: SeededRandom(seed: 8032))
        let again = Ed25519PrivateKey.generate(random: SeededRandom(seed: 8032))
        #expect(first.seed == SeededRandom(seed: 8032).bytes(count: 32))
        #expect(first.seed == again.seed)
        #expect(first.publicKey == again.publicKey)
        #expect(try Ed25519PrivateKey(seed: first.seed).publicKey == first.publicKey)
        let other = Ed25519PrivateKey.generate(random: SeededRandom(seed: 8033))
        #expect(other.publicKey != first.publicKey)
    }

    @Test func generatedKeysSignAndVerify() throws {
        let key = Ed25519PrivateKey.generate(random: SystemRandom())
        let message = utf8("round trip")
        let signature = key.signature(for: message)
        #expect(signature.count == 64)
        #expect(key.signature(for: message) == signature, "deterministic")
        #expect(key.publicKey.isValidSignature(signature, for: message))
        let rebuilt = try Ed25519PublicKey(rawRepresentation: key.publicKey.rawRepresentation)
        #expect(rebuilt == key.publicKey)
        #expect(rebuilt.isValidSignature(signature, for: message))
        #expect(!RFC8032.key(RFC8032.vectors[0]).publicKey.isValidSignature(signature, for: message))
    }

    /// Keys are value types used from many requests at once; the base-point tables are built on
    /// first use, possibly from several threads.
    @Test func concurrentUse() async {
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<8 {
                group.addTask {
                    let key = Ed25519PrivateKey.generate(random: SeededRandom(seed: UInt64(100 + index)))
                    let message = [UInt8](repeating: UInt8(index), count: index * 40)
                    return key.publicKey.isValidSignature(key.signature(for: message), for: message)
                }
            }
            var all: [Bool] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results == [Bool](repeating: true, count: 8))
    }
}

/// Cross-checks against Python's `cryptography` (OpenSSL): the same public key from the same
/// seed, identical signatures (Ed25519 is deterministic), our signatures accepted by OpenSSL,
/// OpenSSL's accepted by us, and tampered signatures rejected by both.
@Suite struct Ed25519PythonTests {
    static let script = """
        import sys
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
        from cryptography.hazmat.primitives import serialization
        from cryptography.exceptions import InvalidSignature
        raw = (serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        for line in sys.stdin:
            seed, message, ours = (bytes.fromhex(x) for x in line.strip().split(","))
            key = Ed25519PrivateKey.from_private_bytes(seed)
            public = key.public_key()
            try:
                public.verify(ours, message)
                verdict = "valid"
            except InvalidSignature:
                verdict = "invalid"
            print(public.public_bytes(*raw).hex(), key.sign(message).hex(), verdict)
        """

    struct Case {
        let key: Ed25519PrivateKey
        let message: [UInt8]
        let signature: [UInt8]
        let tampered: Bool
    }

    @Test(.enabled(if: Python.shouldRun, "needs Python 3 with cryptography (set AUTH_EMULATOR_PYTHON or put python3 on PATH)"))
    func matchesPythonCryptography() throws {
        let random = SeededRandom(seed: 0xed25519)
        var g = random.generator
        var lengths = [0, 1, 32, 64, 111, 112, 128, 1000]
        while lengths.count < 48 { lengths.append(Int.random(in: 0...300, using: &g)) }
        let cases = lengths.enumerated().map { index, length in
            let key = Ed25519PrivateKey.generate(random: random)
            let message = random.bytes(count: length)
            var signature = key.signature(for: message)
            let tampered = index % 4 == 3
            if tampered { signature[Int.random(in: 0..<64, using: &g)] ^= 1 << UInt8.random(in: 0..<8, using: &g) }
            return Case(key: key, message: message, signature: signature, tampered: tampered)
        }
        let input = cases.map { "\(Hex.encode($0.key.seed)),\(Hex.encode($0.message)),\(Hex.encode($0.signature))" }
            .joined(separator: "\n") + "\n"
        let lines = try Python.run(script: Self.script, input: input).split(separator: "\n")
        try #require(lines.count == cases.count)
        for (c, line) in zip(cases, lines) {
            let fields = line.split(separator: " ").map(String.init)
            try #require(fields.count == 3)
            let label = "message \(c.message.count) bytes\(c.tampered ? ", tampered" : "")"
            #expect(c.key.publicKey.rawRepresentation.hexString == fields[0], "\(label)")
            #expect(fields[2] == (c.tampered ? "invalid" : "valid"), "\(label)")
            #expect(c.key.publicKey.isValidSignature(c.signature, for: c.message) == !c.tampered, "\(label)")
            let theirs = unhex(fields[1])
            if !c.tampered { #expect(theirs == c.signature, "\(label)") }
            let theirKey = try Ed25519PublicKey(rawRepresentation: unhex(fields[0]))
            #expect(theirKey.isValidSignature(theirs, for: c.message), "\(label)")
        }
    }

    static let edgeScript = """
        import sys
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
        from cryptography.exceptions import InvalidSignature
        for line in sys.stdin:
            key, message, signature = (bytes.fromhex(x) for x in line.strip().split(","))
            try:
                Ed25519PublicKey.from_public_bytes(key).verify(signature, message)
                print("valid")
            except (InvalidSignature, ValueError):
                print("invalid")
        """

    /// OpenSSL agrees with every verdict of the signature edge-case table.
    @Test(.enabled(if: Python.shouldRun, "needs Python 3 with cryptography (set AUTH_EMULATOR_PYTHON or put python3 on PATH)"))
    func edgeCaseVerdictsMatchPythonCryptography() throws {
        let cases = Ed25519EdgeCases.signatures
        let input = cases.map { "\(Hex.encode($0.publicKey)),\(Hex.encode($0.message)),\(Hex.encode($0.signature))" }
            .joined(separator: "\n") + "\n"
        let lines = try Python.run(script: Self.edgeScript, input: input).split(separator: "\n")
        try #require(lines.count == cases.count)
        for (c, line) in zip(cases, lines) {
            #expect(line == (c.valid ? "valid" : "invalid"), "\(c.name)")
        }
    }
}

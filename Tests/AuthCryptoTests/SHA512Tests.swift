import PythonTestSupport
import Testing
@testable import AuthCrypto

/// SHA-512 example vectors from NIST's "Cryptographic Standards and Guidelines: Examples with
/// Intermediate Values" for FIPS 180-4 (SHA512.pdf): the one-block message "abc" and the
/// two-block 896-bit message; plus the empty message and one million 'a' (the long-message
/// example of FIPS 180-2 appendix C.3).
struct SHA512Vector: Sendable, CustomTestStringConvertible {
    let name: String
    let message: [UInt8]
    let digest: String
    var testDescription: String { name }
}

let sha512Vectors: [SHA512Vector] = [
    SHA512Vector(
        name: "abc", message: utf8("abc"),
        digest: "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
            + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"),
    SHA512Vector(
        name: "896-bit",
        message: utf8("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
            + "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
        digest: "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018"
            + "501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"),
    SHA512Vector(
        name: "empty", message: [],
        digest: "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
            + "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"),
    SHA512Vector(
        name: "million-a", message: [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000),
        digest: "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973eb"
            + "de0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b"),
]

/// Chunkings that straddle the 128-byte block and the 112-byte padding boundary differently.
let sha512Chunkings: [[Int]] = [[1], [3, 125], [111], [112, 1], [127, 2], [128], [129], [7, 255, 1], [1000]]

/// RFC 4231 section 4, test cases 1-7, HMAC-SHA-512 (keys and data in HMACTests.swift).
let hmacSHA512Expected = [
    "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cde"
        + "daa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854",
    "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea250554"
        + "9758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737",
    "fa73b0089d56a284efb0f0756c890be9b1b5dbdd8ee81a3655f83e33b2279d39"
        + "bf3e848279a722c806b485a47e67c807b946a337bee8942674278859e13292fb",
    "b0ba465637458c6990e5a8c5f61d4af7e576d97ff94b872de76f8050361ee3db"
        + "a91ca5c11aa25eb4d679275cc5788063a5f19741120c4f2de2adebeb10a298dd",
    "415fad6271580a531d4179bc891d87a6",
    "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f352"
        + "6b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598",
    "e37b6a775dc87dbaa4dfa9f96e5e3ffddebd71f8867289865df5a32d20cdc944"
        + "b6022cac3c4982b10d5eeb55c3e4de15134676fb6de0446065c97440fa8c6a58",
]

@Suite struct SHA512Tests {
    @Test(arguments: sha512Vectors)
    func oneShotAndIncremental(_ v: SHA512Vector) {
        #expect(SHA512.hash(data: v.message).hexString == v.digest)
        // The million-byte message skips the tiniest chunkings, which only slow debug builds down.
        let chunkings = v.message.count > 100_000 ? [[128], [7, 255, 1], [1000]] : sha512Chunkings
        for chunks in chunkings {
            var h = SHA512()
            feed(&h, v.message, chunks: chunks)
            #expect(h.finalize().hexString == v.digest, "chunks \(chunks)")
        }
    }

    @Test func sizes() {
        #expect(SHA512.byteCount == 64)
        #expect(SHA512.blockByteCount == 128)
        #expect(SHA512.hash(data: utf8("abc")).count == 64)
    }

    @Test func finalizeDoesNotConsumeState() {
        var h = SHA512()
        h.update(data: utf8("ab"))
        let partial = h.finalize()
        h.update(data: utf8("c"))
        #expect(partial == SHA512.hash(data: utf8("ab")))
        #expect(h.finalize().hexString == sha512Vectors[0].digest)
    }

    @Test func nonContiguousSequencesAreHashed() {
        let lazy = utf8("abc").lazy.map { $0 }
        #expect(SHA512.hash(data: lazy).hexString == sha512Vectors[0].digest)
    }

    @Test(arguments: rfc4231(hmacSHA512Expected))
    func hmacRFC4231(_ v: MACVector) {
        let mac = HMAC<SHA512>.authenticationCode(for: v.data, using: SymmetricKey(data: v.key))
        #expect(mac.count == 64)
        if let n = v.truncatedTo {
            #expect(Array(mac.prefix(n)).hexString == v.expected)
        } else {
            #expect(mac.hexString == v.expected)
            #expect(HMAC<SHA512>.isValidAuthenticationCode(unhex(v.expected), authenticating: v.data,
                                                            using: SymmetricKey(data: v.key)))
        }
    }

    static let pythonScript = """
        import sys, hashlib, hmac
        for line in sys.stdin:
            data, key = (bytes.fromhex(x) for x in line.strip().split(","))
            print(hashlib.sha512(data).hexdigest(), hmac.new(key, data, "sha512").hexdigest())
        """

    /// Seeded random messages of every length around the 112/128-byte padding and block
    /// boundaries plus random lengths up to 600 bytes, and keys around the 128-byte HMAC block.
    @Test(.enabled(if: Python.shouldRun, "needs Python 3 (set AUTH_EMULATOR_PYTHON or put python3 on PATH)"))
    func matchesPythonHashlib() throws {
        let random = SeededRandom(seed: 0x5a512)
        var g = random.generator
        var lengths = Array(0...3) + Array(109...132) + Array(236...260) + [1000, 4096, 4097]
        while lengths.count < 200 { lengths.append(Int.random(in: 0...600, using: &g)) }
        let keyLengths = [0, 1, 64, 127, 128, 129, 200]
        let cases = lengths.enumerated().map { index, length in
            (data: random.bytes(count: length),
             key: random.bytes(count: keyLengths[index % keyLengths.count]))
        }
        let input = cases.map { "\(Hex.encode($0.data)),\(Hex.encode($0.key))" }.joined(separator: "\n") + "\n"
        let lines = try Python.run(script: Self.pythonScript, input: input).split(separator: "\n")
        try #require(lines.count == cases.count)
        for (c, line) in zip(cases, lines) {
            let expected = line.split(separator: " ").map(String.init)
            try #require(expected.count == 2)
            let label = "data \(c.data.count) bytes, key \(c.key.count) bytes"
            #expect(SHA512.hash(data: c.data).hexString == expected[0], "\(label)")
            let mac = HMAC<SHA512>.authenticationCode(for: c.data, using: SymmetricKey(data: c.key))
            #expect(mac.hexString == expected[1], "\(label)")
        }
    }
}

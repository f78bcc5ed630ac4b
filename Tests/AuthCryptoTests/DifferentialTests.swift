import PythonTestSupport
import Testing
@testable import AuthCrypto

/// Cross-checks SHA-1/224/256, HMAC over each, and PBKDF2-HMAC-SHA256 against Python's
/// hashlib/hmac (OpenSSL) on a few hundred seeded random inputs, including every length around
/// the 55/56/63/64/65-byte padding and block boundaries, keys around the HMAC block size, and
/// both SHA-256 implementations.
@Suite struct DifferentialTests {
    static let script = """
        import sys, hashlib, hmac
        for line in sys.stdin:
            data, key, iterations, length = line.strip().split(",")
            data = bytes.fromhex(data); key = bytes.fromhex(key)
            out = [hashlib.new(n, data).hexdigest() for n in ("sha1", "sha224", "sha256")]
            out += [hmac.new(key, data, n).hexdigest() for n in ("sha1", "sha224", "sha256")]
            out.append(hashlib.pbkdf2_hmac("sha256", key, data, int(iterations), int(length)).hex())
            print(" ".join(out))
        """

    struct Case {
        let data: [UInt8]
        let key: [UInt8]
        let iterations: Int
        let length: Int
    }

    static func cases() -> [Case] {
        let random = SeededRandom(seed: 0x5eed)
        var g = random.generator
        let interesting = [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4109]
        var lengths = interesting
        while lengths.count < 300 { lengths.append(Int.random(in: 0...300, using: &g)) }
        let keyLengths = [0, 1, 32, 63, 64, 65, 128, 200]
        return lengths.enumerated().map { index, length in
            let keyLength = index < keyLengths.count ? keyLengths[index] : Int.random(in: 0...150, using: &g)
            return Case(data: random.bytes(count: length), key: random.bytes(count: keyLength),
                        iterations: Int.random(in: 1...40, using: &g), length: Int.random(in: 1...80, using: &g))
        }
    }

    @Test(.enabled(if: Python.shouldRun, "needs Python 3 (set AUTH_EMULATOR_PYTHON or put python3 on PATH)"))
    func matchesPythonHashlib() throws {
        let cases = Self.cases()
        let input = cases.map { "\(Hex.encode($0.data)),\(Hex.encode($0.key)),\($0.iterations),\($0.length)" }
            .joined(separator: "\n") + "\n"
        let lines = try Python.run(script: Self.script, input: input).split(separator: "\n")
        try #require(lines.count == cases.count)
        for (c, line) in zip(cases, lines) {
            let expected = line.split(separator: " ").map(String.init)
            try #require(expected.count == 7)
            let label = "data \(c.data.count) bytes, key \(c.key.count) bytes"
            let key = SymmetricKey(data: c.key)
            #expect(SHA1.hash(data: c.data).hexString == expected[0], "\(label)")
            #expect(HMAC<SHA1>.authenticationCode(for: c.data, using: key).hexString == expected[3], "\(label)")
            #expect(HMAC<SHA224>.authenticationCode(for: c.data, using: key).hexString == expected[4], "\(label)")
            #expect(HMAC<SHA256>.authenticationCode(for: c.data, using: key).hexString == expected[5], "\(label)")
            for implementation in implementations {
                #expect(SHA224.hash(data: c.data, implementation: implementation).hexString == expected[1], "\(label)")
                #expect(SHA256.hash(data: c.data, implementation: implementation).hexString == expected[2], "\(label)")
                // PBKDF2 with the key as password and the data as salt.
                let derived = PBKDF2.deriveKey(password: c.key, salt: c.data, iterations: c.iterations,
                                               keyLength: c.length, implementation: implementation)
                #expect(derived.hexString == expected[6], "\(label) c=\(c.iterations) dkLen=\(c.length)")
            }
        }
    }
}

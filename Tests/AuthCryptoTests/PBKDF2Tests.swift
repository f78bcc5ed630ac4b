import Testing
@testable import AuthCrypto

struct KDFVector: Sendable, CustomTestStringConvertible {
    let source: String
    let password: [UInt8]
    let salt: [UInt8]
    let iterations: Int
    let expected: String
    var testDescription: String { "\(source) c=\(iterations) dkLen=\(expected.count / 2)" }
}

/// PBKDF2-HMAC-SHA256 vectors: the SHA-256 analogue of RFC 6070's set, as widely published
/// (e.g. the "PBKDF2-HMAC-SHA256 test vectors" answer on Stack Overflow, question 5130513,
/// and used by OpenSSL/Go/Python test suites), and RFC 7914 section 11.
let kdfVectors: [KDFVector] = [
    KDFVector(source: "RFC 6070-style", password: utf8("password"), salt: utf8("salt"), iterations: 1,
              expected: "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b"),
    KDFVector(source: "RFC 6070-style", password: utf8("password"), salt: utf8("salt"), iterations: 2,
              expected: "ae4d0c95af6b46d32d0adff928f06dd02a303f8ef3c251dfd6e2d85a95474c43"),
    KDFVector(source: "RFC 6070-style", password: utf8("password"), salt: utf8("salt"), iterations: 4096,
              expected: "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a"),
    KDFVector(source: "RFC 6070-style", password: utf8("passwordPASSWORDpassword"),
              salt: utf8("saltSALTsaltSALTsaltSALTsaltSALTsalt"), iterations: 4096,
              expected: "348c89dbcbd32b2f32d814b8116e84cf2b17347ebc1800181c4e2a1fb8dd53e1c635518c7dac47e9"),
    KDFVector(source: "RFC 6070-style", password: utf8("pass\0word"), salt: utf8("sa\0lt"), iterations: 4096,
              expected: "89b69d0516f829893c696226650a8687"),
    KDFVector(source: "RFC 7914 s11", password: utf8("passwd"), salt: utf8("salt"), iterations: 1,
              expected: """
                  55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc\
                  49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783
                  """),
    KDFVector(source: "RFC 7914 s11", password: utf8("Password"), salt: utf8("NaCl"), iterations: 80000,
              expected: """
                  4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56\
                  a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d
                  """),
]

@Suite struct PBKDF2Tests {
    @Test(arguments: kdfVectors, implementations)
    func knownAnswers(_ v: KDFVector, _ implementation: SHA256Implementation) {
        let derived = PBKDF2.deriveKey(password: v.password, salt: v.salt, iterations: v.iterations,
                                       keyLength: v.expected.count / 2, implementation: implementation)
        #expect(derived.hexString == v.expected)
    }

    @Test func publicEntryPoint() {
        let v = kdfVectors[2]
        #expect(PBKDF2.deriveKey(password: v.password, salt: v.salt, iterations: v.iterations, keyLength: 32)
            .hexString == v.expected)
    }

    @Test func longPasswordIsHashedFirstAndOutputsArePrefixes() {
        // RFC 2104: a key longer than the block is replaced by its hash; both paths must agree.
        let password = [UInt8](repeating: 0x70, count: 200)
        let a = PBKDF2.deriveKey(password: password, salt: utf8("s"), iterations: 3, keyLength: 70,
                                 implementation: .automatic)
        let b = PBKDF2.deriveKey(password: password, salt: utf8("s"), iterations: 3, keyLength: 70,
                                 implementation: .portable)
        #expect(a == b)
        #expect(a.count == 70)
        // T_1 || T_2 || ...: a shorter request is a prefix of a longer one (RFC 8018 section 5.2).
        #expect(PBKDF2.deriveKey(password: password, salt: utf8("s"), iterations: 3, keyLength: 33)
            == Array(a.prefix(33)))
    }

    /// Two chains interleaved give each pair the bytes of two separate derivations: every known
    /// answer (one block and several, one iteration and thousands) in every position of a
    /// batch, with an odd count so the last password takes the single path.
    @Test(arguments: implementations)
    func batchesDeriveWhatSingleCallsDerive(_ implementation: SHA256Implementation) {
        for length in [16, 32, 40, 64] {
            for iterations in [1, 2, 4096] {
                let vectors = kdfVectors
                let batch = PBKDF2.deriveKeys(passwords: vectors.map(\.password), salts: vectors.map(\.salt),
                                              iterations: iterations, keyLength: length, implementation: implementation)
                #expect(batch.count == vectors.count)
                for (v, key) in zip(vectors, batch) {
                    #expect(key == PBKDF2.deriveKey(password: v.password, salt: v.salt, iterations: iterations,
                                                    keyLength: length, implementation: .portable),
                            "\(v.testDescription) at c=\(iterations) dkLen=\(length)")
                }
            }
        }
        // The published answers through the batch path.
        for v in kdfVectors {
            let pair = PBKDF2.deriveKeys(passwords: [v.password, utf8("other")], salts: [v.salt, v.salt],
                                         iterations: v.iterations, keyLength: v.expected.count / 2,
                                         implementation: implementation)
            #expect(pair[0].hexString == v.expected)
        }
        #expect(PBKDF2.deriveKeys(passwords: [], salts: [], iterations: 10, keyLength: 32).isEmpty)
    }
}

import Testing
@testable import AuthCrypto

/// RFC 4231 section 4 test cases 1-7 for HMAC-SHA-224 and HMAC-SHA-256, and RFC 2202 section 3
/// test cases 1-7 for HMAC-SHA-1.
struct MACVector: Sendable, CustomTestStringConvertible {
    let testCase: Int
    let key: [UInt8]
    let data: [UInt8]
    let expected: String
    /// RFC 4231 case 5 / RFC 2202 case 5 compare only a truncated prefix.
    var truncatedTo: Int? = nil
    var testDescription: String { "case \(testCase)" }
}

let rfc4231Keys: [[UInt8]] = [
    [UInt8](repeating: 0x0b, count: 20),
    utf8("Jefe"),
    [UInt8](repeating: 0xaa, count: 20),
    Array(0x01...0x19),
    [UInt8](repeating: 0x0c, count: 20),
    [UInt8](repeating: 0xaa, count: 131),
    [UInt8](repeating: 0xaa, count: 131),
]

let rfc4231Data: [[UInt8]] = [
    utf8("Hi There"),
    utf8("what do ya want for nothing?"),
    [UInt8](repeating: 0xdd, count: 50),
    [UInt8](repeating: 0xcd, count: 50),
    utf8("Test With Truncation"),
    utf8("Test Using Larger Than Block-Size Key - Hash Key First"),
    utf8("This is a test using a larger than block-size key and a larger than block-size data."
        + " The key needs to be hashed before being used by the HMAC algorithm."),
]

let hmacSHA224Expected = [
    "896fb1128abbdf196832107cd49df33f47b4b1169912ba4f53684b22",
    "a30e01098bc6dbbf45690f3a7e9e6d0f8bbea2a39e6148008fd05e44",
    "7fb3cb3588c6c1f6ffa9694d7d6ad2649365b0c1f65d69d1ec8333ea",
    "6c11506874013cac6a2abc1bb382627cec6a90d86efc012de7afec5a",
    "0e2aea68a90c8d37c988bcdb9fca6fa8",
    "95e9a0db962095adaebe9b2d6f0dbce2d499f112f2d2b7273fa6870e",
    "3a854166ac5d9f023f54d517d0b39dbd946770db9c2b95c9f6f565d1",
]

let hmacSHA256Expected = [
    "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
    "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
    "a3b6167473100ee06e0c796c2955552b",
    "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
    "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
]

func rfc4231(_ expected: [String]) -> [MACVector] {
    (0..<7).map { i in
        MACVector(testCase: i + 1, key: rfc4231Keys[i], data: rfc4231Data[i], expected: expected[i],
                  truncatedTo: i == 4 ? 16 : nil)
    }
}

let rfc2202: [MACVector] = [
    MACVector(testCase: 1, key: [UInt8](repeating: 0x0b, count: 20), data: utf8("Hi There"),
              expected: "b617318655057264e28bc0b6fb378c8ef146be00"),
    MACVector(testCase: 2, key: utf8("Jefe"), data: utf8("what do ya want for nothing?"),
              expected: "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
    MACVector(testCase: 3, key: [UInt8](repeating: 0xaa, count: 20), data: [UInt8](repeating: 0xdd, count: 50),
              expected: "125d7342b9ac11cd91a39af48aa17b4f63f175d3"),
    MACVector(testCase: 4, key: Array(0x01...0x19), data: [UInt8](repeating: 0xcd, count: 50),
              expected: "4c9007f4026250c6bc8414f9bf50c86c2d7235da"),
    MACVector(testCase: 5, key: [UInt8](repeating: 0x0c, count: 20), data: utf8("Test With Truncation"),
              expected: "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04"),
    MACVector(testCase: 6, key: [UInt8](repeating: 0xaa, count: 80),
              data: utf8("Test Using Larger Than Block-Size Key - Hash Key First"),
              expected: "aa4ae5e15272d00e95705637ce8a3b55ed402112"),
    MACVector(testCase: 7, key: [UInt8](repeating: 0xaa, count: 80),
              data: utf8("Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data"),
              expected: "e8e99d0f45237d786d6bbaa7965c7808bbff1a91"),
]

func check<H: HashFunction>(_ type: H.Type, _ v: MACVector) {
    let key = SymmetricKey(data: v.key)
    var mac = HMAC<H>.authenticationCode(for: v.data, using: key)
    if let truncatedTo = v.truncatedTo { mac = Array(mac.prefix(truncatedTo)) }
    #expect(mac.hexString == v.expected)

    // Incremental, one byte then the rest.
    var incremental = HMAC<H>(key: key)
    incremental.update(data: v.data.prefix(1))
    incremental.update(data: v.data.dropFirst())
    #expect(incremental.finalize().prefix(mac.count).hexString == v.expected)

    if v.truncatedTo == nil {
        #expect(HMAC<H>.isValidAuthenticationCode(unhex(v.expected), authenticating: v.data, using: key))
        var tampered = unhex(v.expected)
        tampered[tampered.count - 1] ^= 1
        #expect(!HMAC<H>.isValidAuthenticationCode(tampered, authenticating: v.data, using: key))
        #expect(!HMAC<H>.isValidAuthenticationCode(tampered.dropLast(), authenticating: v.data, using: key))
    }
}

@Suite struct HMACTests {
    @Test(arguments: rfc4231(hmacSHA224Expected))
    func hmacSHA224(_ v: MACVector) { check(SHA224.self, v) }

    @Test(arguments: rfc4231(hmacSHA256Expected))
    func hmacSHA256(_ v: MACVector) { check(SHA256.self, v) }

    @Test(arguments: rfc2202)
    func hmacSHA1(_ v: MACVector) { check(SHA1.self, v) }

    @Test func hmacSHA256PortablePath() {
        for v in rfc4231(hmacSHA256Expected) {
            var mac = HMAC<SHA256>(keyBytes: v.key, hash: SHA256(implementation: .portable))
            mac.update(data: v.data)
            #expect(mac.finalize().prefix(v.truncatedTo ?? 32).hexString == v.expected, "case \(v.testCase)")
        }
    }
}

@Suite struct ConstantTimeTests {
    @Test func comparesContentAndLength() {
        #expect(constantTimeEquals([UInt8](), [UInt8]()))
        #expect(constantTimeEquals([1, 2, 3] as [UInt8], [1, 2, 3] as [UInt8]))
        #expect(!constantTimeEquals([1, 2, 3] as [UInt8], [1, 2, 4] as [UInt8]))
        #expect(!constantTimeEquals([0, 2, 3] as [UInt8], [1, 2, 3] as [UInt8]))
        #expect(!constantTimeEquals([1, 2, 3] as [UInt8], [1, 2] as [UInt8]))
        #expect(!constantTimeEquals([] as [UInt8], [0] as [UInt8]))
        #expect(constantTimeEquals("abc".utf8, [0x61, 0x62, 0x63] as [UInt8]))
    }
}

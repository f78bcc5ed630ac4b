import Testing
@testable import AuthCrypto

@Suite struct Base32Tests {
    // RFC 4648 section 10.
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "MY======"), ("fo", "MZXQ===="), ("foo", "MZXW6==="), ("foob", "MZXW6YQ="),
        ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI======"),
    ]

    @Test func rfc4648Vectors() throws {
        for (plain, encoded) in Self.vectors {
            #expect(Base32.encode(Array(plain.utf8)) == encoded)
            #expect(try Base32.decode(encoded) == Array(plain.utf8))
            let bare = String(encoded.filter { $0 != "=" })
            #expect(Base32.encode(Array(plain.utf8), padding: false) == bare)
            #expect(try Base32.decode(bare.lowercased()) == Array(plain.utf8))
        }
    }

    @Test func rejectsWhatNoEncoderWrites() {
        #expect(throws: DecodingError.self) { try Base32.decode("MZXW1") }  // '1' is not in the alphabet
        #expect(throws: DecodingError.self) { try Base32.decode("M") }      // 5 bits: no whole byte
        #expect(throws: DecodingError.self) { try Base32.decode("MZX") }
    }
}

@Suite struct OneTimePasswordTests {
    static let secret = Array("12345678901234567890".utf8)

    // RFC 4226 Appendix D: HOTP values for counters 0-9 with the ASCII secret above.
    @Test func rfc4226AppendixD() {
        let expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        for (counter, code) in expected.enumerated() {
            #expect(OneTimePassword.hotp(secret: Self.secret, counter: UInt64(counter)) == code)
        }
    }

    // RFC 6238 Appendix B, SHA-1 column (8 digits).
    @Test func rfc6238AppendixB() {
        let expected: [(Int64, String)] = [
            (59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"),
            (1_234_567_890, "89005924"), (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
        ]
        for (time, code) in expected {
            #expect(OneTimePassword.totp(secret: Self.secret, unixSeconds: time, digits: 8) == code)
        }
    }

    @Test func validationAllowsOneStepEitherSide() {
        let now: Int64 = 1_111_111_111
        let code = OneTimePassword.totp(secret: Self.secret, unixSeconds: now)
        #expect(OneTimePassword.validateTOTP(code, secret: Self.secret, unixSeconds: now))
        #expect(OneTimePassword.validateTOTP(" \(code)\n", secret: Self.secret, unixSeconds: now + 30))
        #expect(OneTimePassword.validateTOTP(code, secret: Self.secret, unixSeconds: now - 30))
        #expect(!OneTimePassword.validateTOTP(code, secret: Self.secret, unixSeconds: now + 60))
        #expect(!OneTimePassword.validateTOTP(code, secret: Self.secret, unixSeconds: now - 60))
        #expect(!OneTimePassword.validateTOTP(String(code.dropLast()), secret: Self.secret, unixSeconds: now))
    }
}

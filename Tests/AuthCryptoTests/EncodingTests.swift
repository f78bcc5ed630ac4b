import Testing
@testable import AuthCrypto

/// RFC 4648 section 10 test vectors.
let rfc4648: [(String, String, String)] = [
    // (input, BASE64, BASE16)
    ("", "", ""),
    ("f", "Zg==", "66"),
    ("fo", "Zm8=", "666F"),
    ("foo", "Zm9v", "666F6F"),
    ("foob", "Zm9vYg==", "666F6F62"),
    ("fooba", "Zm9vYmE=", "666F6F6261"),
    ("foobar", "Zm9vYmFy", "666F6F626172"),
]

@Suite struct EncodingTests {
    @Test func base64RFC4648() throws {
        for (input, base64, _) in rfc4648 {
            #expect(Base64.encode(utf8(input)) == base64)
            #expect(try Base64.decode(base64) == utf8(input))
            let unpadded = String(base64.filter { $0 != "=" })
            #expect(Base64.encode(utf8(input), padding: false) == unpadded)
            #expect(try Base64.decode(unpadded, padding: false) == utf8(input))
        }
    }

    @Test func base16RFC4648() throws {
        for (input, _, base16) in rfc4648 {
            #expect(Hex.encode(utf8(input)) == base16.lowercased())
            #expect(try Hex.decode(base16) == utf8(input))
            #expect(try Hex.decode(base16.lowercased()) == utf8(input))
        }
    }

    @Test func base64URLUsesURLAlphabetWithoutPadding() throws {
        // RFC 4648 section 5: 62 and 63 are '-' and '_'.
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        #expect(Base64.encode([0xfb, 0xff]) == "+/8=")
        #expect(try Base64URL.decode("-_8") == [0xfb, 0xff])
        for (input, base64, _) in rfc4648 {
            let url = String(base64.filter { $0 != "=" })
            #expect(Base64URL.encode(utf8(input)) == url)
            #expect(try Base64URL.decode(url) == utf8(input))
        }
    }

    @Test func base64URLStrictRejections() {
        // Padding, standard-alphabet symbols, whitespace, dangling symbol, non-canonical bits.
        let bad: [(String, Int)] = [
            ("Zg==", 2), ("Zm8=", 3), ("+/8", 0), ("ab/c", 2), ("Zm 9v", 2), ("Zm9v\n", 4),
            ("Z", 0), ("Zm9vY", 4), ("Zh", 1), ("Zm9", 2), ("Zm.v", 2), ("é", 0),
        ]
        for (text, offset) in bad {
            #expect(throws: DecodingError(offset: offset), "\(text)") { try Base64URL.decode(text) }
        }
    }

    @Test func base64StrictRejections() {
        let bad = ["Zg", "Zg=", "Zg===", "Z===", "Zm9v=", "Zh==", "Zm9=", "Zm=v", "=Zm9", "Zm9v Zm9v", "-_8="]
        for text in bad {
            #expect(throws: DecodingError.self, "\(text)") { try Base64.decode(text) }
        }
        #expect(throws: DecodingError.self) { try Base64.decode("Zg==", padding: false) }
    }

    @Test func hexRejections() {
        #expect(throws: DecodingError(offset: 2)) { try Hex.decode("abc") }
        #expect(throws: DecodingError(offset: 1)) { try Hex.decode("0g") }
        #expect(throws: DecodingError(offset: 0)) { try Hex.decode(" 0") }
        #expect([0x00, 0xff, 0x10].hexString == "00ff10")
    }

    /// The appending form writes after what the buffer holds the same symbols the `String`
    /// form returns, for every remainder of three and past a reallocation.
    @Test func appendingEncoderMatchesTheStringForm() {
        for length in 0..<70 {
            let data = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 91 &+ 250) }
            for prefix in [[], Array("ab.".utf8)] {
                var out = prefix
                data.withUnsafeBufferPointer { Base64URL.encode($0, appendingTo: &out) }
                #expect(out == prefix + Array(Base64URL.encode(data).utf8), "\(length)")
            }
        }
    }

    @Test func roundTripsAllLengths() throws {
        for length in 0..<70 {
            let data = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(try Base64URL.decode(Base64URL.encode(data)) == data)
            #expect(try Base64.decode(Base64.encode(data)) == data)
            #expect(try Base64.decode(Base64.encode(data, padding: false), padding: false) == data)
            #expect(try Hex.decode(Hex.encode(data)) == data)
        }
    }
}

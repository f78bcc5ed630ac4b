import Testing
@testable import AuthJSON

@Suite struct UTF8BytesTests {
    /// Equal exactly when the bytes are: every length from 0 to 24 (the word loop and its
    /// tail), with one byte changed at each position.
    @Test func equalExactlyWhenTheBytesAre() {
        for length in 0...24 {
            let base = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
            let text = String(decoding: base, as: UTF8.self)
            #expect(UTF8Bytes.equal(text, String(decoding: base, as: UTF8.self)))
            #expect(!UTF8Bytes.equal(text, text + "a"))
            for position in 0..<length {
                var changed = base
                changed[position] ^= 0x20
                #expect(!UTF8Bytes.equal(text, String(decoding: changed, as: UTF8.self)), "\(length) \(position)")
            }
        }
    }

    /// Canonically equivalent spellings, equal to `String ==`, are different bytes.
    @Test func equivalentSpellingsDiffer() {
        let pairs = [("K", "\u{212A}"), ("\u{E9}e\u{301}", "e\u{301}\u{E9}"), ("\u{E9}", "e\u{301}")]
        for (a, b) in pairs {
            #expect(a == b)
            #expect(!UTF8Bytes.equal(a, b))
            #expect(UTF8Bytes.equal(a, a) && UTF8Bytes.equal(b, b))
        }
    }

    /// Objects keep keys Go tells apart: "é" spelled two ways is two keys.
    @Test func objectKeysAreBytes() throws {
        let object = try #require(try JSON(parsing: "{\"\u{E9}\":1,\"e\u{301}\":2}").objectValue)
        #expect(object.count == 2)
        #expect(object["\u{E9}"] == 1 && object["e\u{301}"] == 2)
    }
}

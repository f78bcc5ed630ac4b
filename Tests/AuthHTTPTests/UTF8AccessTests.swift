import AuthPlatform
import Foundation
import Testing

/// `String.withUTF8Bytes` hands out exactly the string's UTF-8, for empty, small (stored inline),
/// large, non-ASCII and substring-built strings, and for strings that came through Foundation.
@Suite struct UTF8AccessTests {
    @Test func bytesAreTheStringsUTF8() {
        let large = String(repeating: "abcdefgh", count: 40)
        let strings = [
            "", "a", "fifteen-bytes!!", "sixteen-bytes!!!", large, "Renée", "Rene\u{301}e", "😀 \u{2028}",
            String(large.dropFirst(3).prefix(17)), NSString(string: "bridged text, long enough").description,
        ]
        for string in strings {
            #expect(string.withUTF8Bytes { Array($0) } == Array(string.utf8), "\(string)")
        }
    }

    @Test func errorsPassThrough() {
        struct Stop: Error {}
        #expect(throws: Stop.self) { try "text".withUTF8Bytes { _ in throw Stop() } }
    }
}

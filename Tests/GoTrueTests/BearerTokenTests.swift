import AuthHTTP
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// `HTTPRequest.bearerToken` against the real server's `^(?i)bearer (\S+)$` (RE2: `\s` is
/// `[\t\n\f\r ]`, so a vertical tab is part of a token).
@Suite struct BearerTokenTests {
    func token(_ authorization: String?) -> String? {
        var headers = HTTPHeaders()
        if let authorization { headers["Authorization"] = authorization }
        return HTTPRequest(method: "GET", target: "/user", headers: headers).bearerToken
    }

    static let whitespace: Set<UInt8> = [0x09, 0x0A, 0x0C, 0x0D, 0x20]

    @Test func schemeInAnyCaseThenOneToken() {
        #expect(token("Bearer abc.def-_") == "abc.def-_")
        #expect(token("bearer abc") == "abc")
        #expect(token("BeArEr abc") == "abc")
        #expect(token("Bearer é-token") == "é-token")
        #expect(token(nil) == nil)
        #expect(token("Bearer ") == nil)
        #expect(token("Bearer") == nil)
        #expect(token("Basic abc") == nil)
        #expect(token("Bearer  abc") == nil)
        #expect(token("Bearer abc ") == nil)
        #expect(token("Bearerxabc") == nil)
        #expect(token("Bearer a\u{0B}b") == "a\u{0B}b")
    }

    /// Every ASCII byte at every position of tokens long enough for whole words and a tail.
    @Test func everyByteAtEveryPosition() {
        for length in [1, 7, 8, 9, 16, 23, 24, 25] {
            for position in 0..<length {
                for byte in UInt8(0)..<0x80 {
                    var bytes = Array(repeating: UInt8(ascii: "x"), count: length)
                    bytes[position] = byte
                    let text = String(decoding: bytes, as: UTF8.self)
                    let expected = Self.whitespace.contains(byte) ? nil : text
                    #expect(token("Bearer " + text) == expected, "byte \(byte) at \(position) of \(length)")
                }
            }
        }
    }

    /// Every byte value at every position of tokens up to three sixteen-byte steps long (short
    /// ones gathered into one vector, the last step overlapping), non-UTF-8 included.
    @Test func containsSpaceOnRawBytes() {
        for length in [0, 1, 2, 3, 4, 8, 15, 16, 17, 31, 32, 33, 48] {
            for position in 0..<max(length, 1) where length > 0 {
                for byte in UInt8.min...UInt8.max {
                    var bytes = Array(repeating: UInt8(0x7A), count: length)
                    bytes[position] = byte
                    let found = bytes.withUnsafeBufferPointer { HTTPRequest.containsSpace($0) }
                    #expect(found == Self.whitespace.contains(byte), "byte \(byte) at \(position) of \(length)")
                }
            }
            let plain = Array(repeating: UInt8(0xFF), count: length)
            #expect(!plain.withUnsafeBufferPointer { HTTPRequest.containsSpace($0) })
        }
    }
}

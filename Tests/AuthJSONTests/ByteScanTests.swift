import Testing
import AuthPlatform
@testable import AuthJSON

/// The sixteen-byte scans agree with byte loops at every position of every length up to three
/// vectors, and the parser built on them reads the same strings as before.
@Suite struct ByteScanTests {
    @Test func asciiCheckFindsAHighByteAnywhere() {
        #expect([UInt8]().withUnsafeBufferPointer { ByteScan.isASCII($0) })
        for length in 1...48 {
            #expect([UInt8](repeating: 0x7f, count: length).withUnsafeBufferPointer { ByteScan.isASCII($0) })
            for position in 0..<length {
                for value: UInt8 in [0x80, 0xc3, 0xff] {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = value
                    if bytes.withUnsafeBufferPointer({ ByteScan.isASCII($0) }) {
                        Issue.record("\(value) at \(position) of \(length) missed")
                        return
                    }
                }
            }
        }
    }

    /// The scan stops at the first quote, backslash or control character of the whole chunks
    /// from its start, else where they end: fewer than sixteen bytes are left to the byte loop.
    @Test func stringRunStopsAtTheFirstSpecialByte() {
        for length in 0...48 {
            for start in 0...length {
                for position in start..<max(start, length) {
                    for value in 0...255 {
                        var bytes = [UInt8](repeating: 0xe9, count: length)
                        bytes[position] = UInt8(value)
                        let special = value < 0x20 || value == 0x22 || value == 0x5c
                        let stop = bytes.withUnsafeBufferPointer { ByteScan.skipStringRun($0, from: start) }
                        // The end of the whole chunks from `start`: the scan stops there at the
                        // latest, and earlier exactly at a special byte inside them.
                        let covered = start + (length - start) / 16 * 16
                        let expected = special && position < covered ? position : covered
                        if stop != expected {
                            Issue.record("\(value) at \(position) of \(length) from \(start): \(stop), not \(expected)")
                            return
                        }
                    }
                }
            }
        }
    }

    @Test func stringsWithEscapesAndNonASCIIAtEveryPositionParseAsBefore() throws {
        let insertions: [(json: String, value: String)] = [
            (#"\""#, "\""), (#"\\"#, "\\"), (#"\n"#, "\n"), (#"\u00e9"#, "é"), ("é", "é"),
            ("\u{2028}", "\u{2028}"), ("😀", "😀"), (#"\ud83d\ude00"#, "😀"),
        ]
        for length in 0...40 {
            for position in 0...length {
                let before = String(repeating: "a", count: position)
                let after = String(repeating: "b", count: length - position)
                for insertion in insertions {
                    let parsed = try JSON(parsing: "\"\(before)\(insertion.json)\(after)\"")
                    #expect(parsed == .string(before + insertion.value + after))
                }
                // A raw control character is an error wherever it is.
                #expect(throws: JSONError.self) { try JSON(parsing: "\"\(before)\u{1}\(after)\"") }
                // So is a string the input ends inside.
                #expect(throws: JSONError.self) { try JSON(parsing: "\"\(before)\(after)") }
            }
        }
    }

    /// Strings nested past the materialized depth are only checked (`skipString`), through the
    /// same scan: escapes and non-ASCII at every position pass, a raw control character, a bad
    /// escape or a missing closing quote fails, wherever it is.
    @Test func skippedStringsAreCheckedAtEveryPosition() throws {
        func decode(_ string: String) throws(JSONError) -> GoDecodedDocument {
            try JSON.goDecode(Array("{\"a\":[[\"\(string)\"]],\"b\":1}".utf8), materializedDepth: 1)
        }
        for length in 0...40 {
            for position in 0...length {
                let before = String(repeating: "a", count: position)
                let after = String(repeating: "b", count: length - position)
                for insertion in [#"\""#, #"\\"#, #"\u00e9"#, "é", "\u{2028}", "😀"] {
                    let document = try decode(before + insertion + after)
                    #expect(document.truncatedKeys == ["a"] && document.value["b"] == 1)
                }
                #expect(throws: JSONError.self) { try decode(before + "\u{1}" + after) }
                #expect(throws: JSONError.self) { try decode(before + #"\x"# + after) }
                #expect(throws: JSONError.self) {
                    try JSON.goDecode(Array("{\"a\":[[\"\(before)\(after)".utf8), materializedDepth: 1)
                }
            }
        }
    }
}

import Testing
@testable import AuthJSON

/// The writer copies strings with nothing to escape in one piece and formats integral numbers
/// directly; both shortcuts must produce exactly what the general paths (Go's `encoding/json`
/// rules, see JSONSerialization.swift) produce.
@Suite struct JSONWriterTests {
    /// Go's string escaping, written out per Unicode scalar as the reference.
    static func goQuoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{8}": out += "\\b"
            case "\u{c}": out += "\\f"
            case "<", ">", "&", "\u{2028}", "\u{2029}":
                out += Self.unicodeEscape(scalar)
            case _ where scalar.value < 0x20:
                out += Self.unicodeEscape(scalar)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    private static func unicodeEscape(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16)
        return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
    }

    @Test func stringsMatchTheReferenceEscaping() {
        // Scalars around every special case, including UTF-8 sequences starting with 0xE2.
        let alphabet: [Unicode.Scalar] = [
            "a", "Z", "0", " ", "/", "'", "\"", "\\", "<", ">", "&", "\n", "\r", "\t", "\u{0}", "\u{8}", "\u{c}",
            "\u{1f}", "\u{7f}", "é", "€", "\u{2027}", "\u{2028}", "\u{2029}", "\u{202a}", "\u{2000}", "😀",
        ]
        var generator = SystemRandomNumberGenerator()
        for length in 0..<24 {
            for _ in 0..<40 {
                var s = ""
                for _ in 0..<length { s.unicodeScalars.append(alphabet.randomElement(using: &generator)!) }
                #expect(JSON.string(s).serialized() == Self.goQuoted(s), "\(Array(s.unicodeScalars))")
            }
        }
    }

    @Test func escapesLateInALongStringAreFound() {
        let prefix = String(repeating: "abcdefgh", count: 64)
        for tail in ["<", "\u{2028}", "\"", "\u{1}", "€"] {
            #expect(JSON.string(prefix + tail).serialized() == Self.goQuoted(prefix + tail))
        }
        // A bridged or sliced string takes the same path as a native one.
        let sliced = String(Substring(prefix + "&x").dropFirst(3))
        #expect(JSON.string(sliced).serialized() == Self.goQuoted(sliced))
    }

    /// Integral values near 2^53, where the direct path ends (expected digits: Go's
    /// strconv.FormatFloat(f, 'f', -1, 64) on the same float64).
    @Test(arguments: [
        (9_007_199_254_740_991, "9007199254740991"), (-9_007_199_254_740_991, "-9007199254740991"),
        (9_007_199_254_740_992, "9007199254740992"), (-9_007_199_254_740_992, "-9007199254740992"),
        (9_007_199_254_740_994, "9007199254740994"), (18_014_398_509_481_984, "18014398509481984"),
        (-1_767_225_600, "-1767225600"), (2, "2"), (-0.5, "-0.5"), (4_503_599_627_370_495.5, "4503599627370495.5"),
    ] as [(Double, String)])
    func integralNumbers(_ value: Double, _ expected: String) {
        #expect(JSON.number(value).serialized() == expected)
    }

    @Test func objectsKeepOrderUnlessSorted() {
        let object: JSONObject = ["b": 1, "a": ["d": 1, "c": 2], "B": "x"]
        #expect(object.serialized() == #"{"b":1,"a":{"d":1,"c":2},"B":"x"}"#)
        #expect(object.serialized(sortedKeys: true) == #"{"B":"x","a":{"c":2,"d":1},"b":1}"#)
        #expect(JSONObject().serialized() == "{}")
    }
}

@Suite struct JSONPlainScanTests {
    /// The vector scan agrees with a byte-by-byte one for every byte value at every position
    /// of every length up to three vectors, whatever plain byte fills the rest (an escaped byte
    /// missed would be written raw; a plain one flagged would only cost the slow path).
    @Test func everyByteAtEveryPositionIsClassifiedAsByteByByte() {
        let special: Set<UInt8> = [0x22, 0x5c, 0x3c, 0x3e, 0x26, 0xe2]
        for filler: UInt8 in [UInt8(ascii: "a"), 0x20, 0x7f, 0xff, 0xe3] {
            #expect([UInt8](repeating: filler, count: 49).withUnsafeBufferPointer { JSONWriter.isPlain($0) })
            // Every length with the usual filler; the short paths and the vector seams with the rest.
            let lengths = filler == UInt8(ascii: "a") ? Array(1...48) : [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33]
            for length in lengths {
                for position in 0..<length {
                    for value in 0...255 {
                        var bytes = [UInt8](repeating: filler, count: length)
                        bytes[position] = UInt8(value)
                        let expected = !(value < 0x20 || special.contains(UInt8(value)))
                        let actual = bytes.withUnsafeBufferPointer { JSONWriter.isPlain($0) }
                        if actual != expected {
                            Issue.record("byte \(value) at \(position) of \(length) among \(filler): \(actual)")
                            return
                        }
                    }
                }
            }
        }
        #expect([UInt8]().withUnsafeBufferPointer { JSONWriter.isPlain($0) })
        // High bytes next to a special one: a borrow must not hide it.
        let mixed: [UInt8] = [0xff, 0x80, 0x1f, 0xff, 0x00, 0x7f, 0x20, 0x21]
        #expect(!mixed.withUnsafeBufferPointer { JSONWriter.isPlain($0) })
        let clean: [UInt8] = [0xff, 0x80, 0x7f, 0x20, 0x21, 0xc3, 0xa9, 0x41]
        #expect(clean.withUnsafeBufferPointer { JSONWriter.isPlain($0) })
    }
}

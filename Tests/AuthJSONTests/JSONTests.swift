import Testing
@testable import AuthJSON

func parse(_ text: String) throws -> JSON { try JSON(parsing: text) }

@Suite struct JSONParsingTests {
    @Test func parsesAllValueKinds() throws {
        let value = try parse(#" { "a" : 1 , "b" : [true, false, null], "c" : "x", "d" : {} , "e":[] } "#)
        #expect(value == ["a": 1, "b": [true, false, nil], "c": "x", "d": [:], "e": []])
        #expect(value["a"]?.int64Value == 1)
        #expect(value["b"]?[0]?.boolValue == true)
        #expect(value["b"]?[2]?.isNull == true)
        #expect(value["c"]?.stringValue == "x")
        #expect(value["d"]?.objectValue?.isEmpty == true)
        #expect(value["e"]?.arrayValue?.isEmpty == true)
        #expect(value["missing"] == nil)
        #expect(value.objectValue?.keys == ["a", "b", "c", "d", "e"])
    }

    @Test func stringEscapes() throws {
        // RFC 8259 section 7: the two-character escapes and \u escapes.
        #expect(try parse(#""\"\\\/\b\f\n\r\t\u0041\u00e9\u20AC""#) == .string("\"\\/\u{8}\u{c}\n\r\tAé€"))
        #expect(try parse(#""\u0000""#) == .string("\u{0}"))
        #expect(try parse("\"é😀\"") == .string("é😀"))
    }

    @Test func surrogates() throws {
        #expect(try parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(try parse(#""\uD83D\uDE00""#) == .string("😀"))
        // Unpaired surrogates become U+FFFD, as in Go's encoding/json.
        #expect(try parse(#""\ud83d""#) == .string("\u{FFFD}"))
        #expect(try parse(#""\ud83dx""#) == .string("\u{FFFD}x"))
        #expect(try parse(#""\ude00\ud83d""#) == .string("\u{FFFD}\u{FFFD}"))
        #expect(try parse(#""\ud83d\u0041""#) == .string("\u{FFFD}A"))
        #expect(try parse(#""\ud83d\ud83d\ude00""#) == .string("\u{FFFD}😀"))
    }

    @Test func invalidUTF8IsReplacedPerByte() throws {
        #expect(try JSON(parsing: [0x22, 0xff, 0x22]) == .string("\u{FFFD}"))
        // A truncated 3-byte sequence: Go's DecodeRune yields one U+FFFD per byte.
        #expect(try JSON(parsing: [0x22, 0xe2, 0x82, 0x22]) == .string("\u{FFFD}\u{FFFD}"))
        // Encoded surrogate (ED A0 80) and overlong NUL (C0 80) are invalid too.
        #expect(try JSON(parsing: [0x22, 0xed, 0xa0, 0x80, 0x41, 0x22]) == .string("\u{FFFD}\u{FFFD}\u{FFFD}A"))
        #expect(try JSON(parsing: [0x22, 0xc0, 0x80, 0x5c, 0x6e, 0x22]) == .string("\u{FFFD}\u{FFFD}\n"))
    }

    @Test func numbers() throws {
        #expect(try parse("0") == .number(0))
        #expect(try parse("-0").doubleValue?.sign == .minus)
        #expect(try parse("1.5") == 1.5)
        #expect(try parse("1e3") == 1000)
        #expect(try parse("1E+3") == 1000)
        #expect(try parse("-1.25e-3") == -0.00125)
        #expect(try parse("123456789012345678901234567890") == .number(1.2345678901234568e29))
        #expect(try parse("1e-400") == 0)  // underflow rounds to zero, as strconv does
        #expect(try parse("9007199254740993") == .number(9_007_199_254_740_992))  // nearest double
        #expect(try parse("1700000000").int64Value == 1_700_000_000)
        #expect(try parse("1.5").int64Value == nil)
        #expect(try parse("1e19").int64Value == nil)
        #expect(try parse("-9223372036854775808").int64Value == Int64.min)
    }

    @Test func duplicateKeysLastWinsFirstPosition() throws {
        let value = try parse(#"{"a":1,"b":2,"a":3}"#)
        #expect(value.objectValue?.keys == ["a", "b"])
        #expect(value["a"] == 3)
        #expect(value.serialized() == #"{"a":3,"b":2}"#)
    }

    @Test(arguments: [
        "", " ", "01", "-01", "-", "1.", ".5", "+1", "1e", "1e+", "0x10", "[1,]", #"{"a":1,}"#, "{a:1}",
        "'x'", "[1 2]", "nul", "truex", "True", "\"\t\"", "\"\n\"", #""\x""#, #""\u12""#, #""\u12G4""#,
        "1e400", "-1e400", "NaN", "Infinity", "[", "]", #"{"a"}"#, #"{"a":}"#, "\u{FEFF}{}", "{} {}",
        "/*c*/{}", "[1]x", "\"abc", #"{"a":1"#, "\u{A0}1",
    ])
    func rejects(_ text: String) {
        #expect(throws: JSONError.self) { try JSON(parsing: text) }
    }

    @Test func errorsCarryPositions() {
        #expect(throws: JSONError(offset: 3, message: "invalid character 'x' after top-level value")) {
            try JSON(parsing: "[1]x")
        }
        #expect(throws: JSONError(offset: 1, message: "invalid character '1' after top-level value")) {
            try JSON(parsing: "01")
        }
        #expect(throws: JSONError(offset: 4, message: "unexpected end of JSON input")) {
            try JSON(parsing: "[1, ")
        }
    }

    @Test func depthLimit() throws {
        let limit = JSON.defaultMaximumDepth
        let ok = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        #expect(throws: Never.self) { try JSON(parsing: ok) }
        let deep = String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1)
        #expect(throws: JSONError.self) { try JSON(parsing: deep) }
        let objects = String(repeating: #"{"a":"#, count: limit + 1) + "1" + String(repeating: "}", count: limit + 1)
        #expect(throws: JSONError.self) { try JSON(parsing: objects) }
        #expect(throws: JSONError.self) { try JSON(parsing: "[[[1]]]", maximumDepth: 2) }
        #expect(try JSON(parsing: "[[1]]", maximumDepth: 2) == [[1]])
        // Far beyond the limit must fail cleanly, not overflow the stack.
        #expect(throws: JSONError.self) { try JSON(parsing: String(repeating: "[", count: 200_000)) }
    }
}

@Suite struct JSONObjectTests {
    @Test func keepsInsertionOrderAndEdits() {
        var object: JSONObject = ["z": 1, "a": 2]
        object["m"] = "x"
        #expect(object.keys == ["z", "a", "m"])
        object["z"] = 9  // replace in place
        #expect(object.keys == ["z", "a", "m"])
        #expect(object.removeValue(forKey: "a") == 2)
        #expect(object.keys == ["z", "m"])
        #expect(object["m"] == "x")
        object["z"] = nil
        #expect(object.keys == ["m"])
        #expect(object.count == 1 && object.contains(key: "m") && !object.contains(key: "z"))
        object["n"] = .null  // an explicit null is a value, not a removal
        #expect(object.keys == ["m", "n"])
        #expect(object.serialized() == #"{"m":"x","n":null}"#)
    }

    @Test func keysCompareByBytes() {
        var object = JSONObject()
        object["é"] = 1  // U+00E9
        object["e\u{301}"] = 2  // e + COMBINING ACUTE: a different Go map key
        #expect(object.count == 2)
        #expect(object["é"] == 1 && object["e\u{301}"] == 2)
    }

    @Test func equalityIsOrderInsensitive() throws {
        #expect(try parse(#"{"a":1,"b":2}"#) == parse(#"{"b":2,"a":1}"#))
        #expect(try parse(#"{"a":1}"#) != parse(#"{"a":1,"b":2}"#))
        #expect(try parse(#"{"a":1}"#) != parse(#"{"a":"1"}"#))
    }

    @Test func sortedRecursively() throws {
        let value = try parse(#"{"b":{"y":1,"x":2},"a":[{"d":1,"c":2}],"B":0}"#)
        #expect(value.sortedRecursively().serialized() == #"{"B":0,"a":[{"c":2,"d":1}],"b":{"x":2,"y":1}}"#)
        #expect(value.serialized(sortedKeys: true) == #"{"B":0,"a":[{"c":2,"d":1}],"b":{"x":2,"y":1}}"#)
        #expect(value.serialized() == #"{"b":{"y":1,"x":2},"a":[{"d":1,"c":2}],"B":0}"#)
    }

    /// In-order keys are not re-sorted, but what they hold still is; an object sorted past the
    /// size at which lookups use a hash index still finds every key.
    @Test func sortedRecursivelyInOrderAndLarge() throws {
        let flat = try parse(#"{"a":1,"b":"x","c":null}"#)
        #expect(flat.sortedRecursively().serialized() == #"{"a":1,"b":"x","c":null}"#)
        let inOrder = try parse(#"{"a":{"z":1,"y":2},"b":[{"q":1,"p":2}]}"#)
        #expect(inOrder.sortedRecursively().serialized() == #"{"a":{"y":2,"z":1},"b":[{"p":2,"q":1}]}"#)
        let keys: [String] = (0..<40).map { (i: Int) -> String in
            let n = 39 - i
            return n < 10 ? "k0\(n)" : "k\(n)"
        }
        var large = JSONObject()
        for (i, key) in keys.enumerated() { large[key] = .number(Double(i)) }
        let sorted = large.sortedRecursively()
        #expect(sorted.keys == keys.sorted())
        for (i, key) in keys.enumerated() { #expect(sorted[key] == .number(Double(i))) }
        var grown = sorted
        grown["k99"] = .bool(true)
        grown["k00"] = .null
        #expect(grown["k99"] == .bool(true) && grown["k00"] == .null && grown.count == 41)
    }
}

@Suite struct JSONSerializationTests {
    /// Expected outputs are what Go's json.Marshal (Go 1.22+) writes for the same string.
    @Test(arguments: [
        ("plain", #""plain""#),
        ("<a href=\"x\">&</a>", #""\u003ca href=\"x\"\u003e\u0026\u003c/a\u003e""#),
        ("\u{0}\u{1}\u{1f}\u{7f}", "\"\\u0000\\u0001\\u001f\u{7f}\""),
        ("\u{8}\u{c}\n\r\t", #""\b\f\n\r\t""#),
        ("\u{b}\u{1b}", #""\u000b\u001b""#),
        ("\u{2028}x\u{2029}", #""\u2028x\u2029""#),
        ("\u{2027}\u{202a}€", "\"\u{2027}\u{202a}€\""),
        ("é😀/'", "\"é😀/'\""),
        ("back\\slash", #""back\\slash""#),
    ])
    func strings(_ input: String, _ expected: String) throws {
        #expect(JSON.string(input).serialized() == expected)
        #expect(try JSON(parsing: expected) == .string(input))
    }

    /// Go's float64 formatting in encoding/json (floatEncoder): 'f' inside [1e-6, 1e21),
    /// else 'e' with "e-0X" trimmed to "e-X".
    @Test(arguments: [
        (0.0, "0"), (-0.0, "-0"), (1, "1"), (-1, "-1"), (3600, "3600"), (1.5, "1.5"), (0.1, "0.1"),
        (0.3, "0.3"), (1.0 / 3.0, "0.3333333333333333"), (123.456, "123.456"), (100, "100"),
        (1e20, "100000000000000000000"), (1e21, "1e+21"), (1.23456789e23, "1.23456789e+23"),
        (1e-6, "0.000001"), (0.000001234, "0.000001234"), (9.99e-7, "9.99e-7"), (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"), (1.2e-10, "1.2e-10"), (Double.leastNonzeroMagnitude, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"), (1e100, "1e+100"),
        (1_700_000_000, "1700000000"), (9_007_199_254_740_992, "9007199254740992"),
        (1.2345678901234567e19, "12345678901234567000"), (9_223_372_036_854_775_808, "9223372036854776000"),
        (-2.5e-8, "-2.5e-8"), (9.999999999999999e20, "999999999999999900000"),
    ] as [(Double, String)])
    func numbers(_ value: Double, _ expected: String) {
        #expect(JSON.number(value).serialized() == expected)
    }

    @Test func nonFiniteNumbersBecomeNull() {
        #expect(JSON.number(Double.nan).serialized() == "null")
        #expect(JSON.number(-Double.infinity).serialized() == "null")
    }

    @Test func compactDocument() throws {
        let object: JSONObject = [
            "aud": "authenticated", "exp": .number(Int64(1_700_003_600)), "amr": [["method": "password", "timestamp": 1700000000]],
            "app_metadata": ["provider": "email", "providers": ["email"]], "is_anonymous": false, "x": nil, "f": 2.5,
        ]
        let expected = #"{"aud":"authenticated","exp":1700003600,"amr":[{"method":"password","timestamp":1700000000}],"#
            + #""app_metadata":{"provider":"email","providers":["email"]},"is_anonymous":false,"x":null,"f":2.5}"#
        #expect(object.serialized() == expected)
        #expect(try JSON(parsing: expected) == .object(object))
        #expect(try JSON(parsing: expected).serialized() == expected)
    }

    @Test func roundTripsItsOwnOutput() throws {
        let text = #"{"s":"\u003c\u2028\"\\\n","n":[0,-0,1e-7,1e+21,0.5,-12.75],"o":{"k":[true,null]}}"#
        #expect(try JSON(parsing: text).serialized() == text)
    }
}

import GoJSONFixtures
import Testing
@testable import AuthJSON

/// `CanonicalJSON.isSortedObject` lets a response copy stored text instead of parsing it: every
/// text it accepts must come back byte for byte from the parse path (parse, sort, write).
@Suite struct CanonicalJSONTests {
    static func accepts(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBufferPointer { CanonicalJSON.isSortedObject($0) }
    }

    /// What a response would carry for `text` without the copy.
    static func parsePath(_ text: String) -> String? {
        guard let object = (try? JSON(parsing: text))?.objectValue else { return nil }
        return JSON.object(object.sortedRecursively()).serialized()
    }

    @Test func acceptedTextsComeBackFromTheParsePath() {
        let accepted = [
            "{}", #"{"a":1}"#, #"{"a":[],"b":{},"c":[{}]}"#, #"{"":0,"a":-7,"b":999999999999999,"c":-999999999999999}"#,
            #"{"a":true,"b":false,"c":null,"d":"x y/z"}"#, #"{"A":1,"B":2,"a":3}"#, #"{"a":1,"ab":2,"b":3}"#,
            #"{"email":"a@example.com","email_verified":false,"phone_verified":false,"sub":"8d1f3c6e"}"#,
            #"{"n":{"a":[1,[2,[3]],{"b":{"c":null}}]}}"#,
        ]
        for text in accepted {
            #expect(Self.accepts(text), "\(text)")
            #expect(Self.parsePath(text) == text, "\(text)")
        }
    }

    /// Outside the subset: whitespace, unsorted or repeated keys, escapes, what the writer
    /// escapes, non-ASCII, numbers the writer spells differently (or that are not exact), bad
    /// syntax, other top-level values, deep nesting.
    @Test func rejectedTexts() {
        let deep = String(repeating: #"{"a":"#, count: 17) + "1" + String(repeating: "}", count: 17)
        let deepArrays = "{\"a\":" + String(repeating: "[", count: 16) + String(repeating: "]", count: 16) + "}"
        let rejected = [
            "", "{", "}", "[]", "1", #""a""#, "{ }", #"{"a": 1}"#, #"{"a":1} "#, " {}", #"{"b":1,"a":2}"#, #"{"a":1,"a":2}"#,
            #"{"a":"\n"}"#, #"{"a":"\u0041"}"#, #"{"a":"<"}"#, #"{"a":">"}"#, #"{"a":"&"}"#, #"{"a":"é"}"#,
            "{\"a\":\"\u{7f}\"}", "{\"a\":\"\u{2028}\"}", "{\"a\":\"\t\"}", #"{"a":1.5}"#, #"{"a":1.0}"#, #"{"a":1e3}"#,
            #"{"a":-0}"#, #"{"a":01}"#, #"{"a":1000000000000000}"#, #"{"a":+1}"#, #"{"a":-}"#, #"{"a":tru}"#,
            #"{"a":nul}"#, #"{"a":1,}"#, #"{"a":[1,]}"#, #"{"a"}"#, #"{"a":1}}"#, #"{"a":1}x"#, #"{a:1}"#, deep, deepArrays,
        ]
        for text in rejected { #expect(!Self.accepts(text), "\(text)") }
        // Objects and arrays share one scan: each must end with its own bracket, and an array
        // holds no keys.
        for text in [#"{"a":1]"#, #"{"a":[1}}"#, #"{"a":[1,2}]}"#, #"{"a":{"b":1]}"#, #"{"a":["b":1]}"#, #"{"a":[}"#] {
            #expect(!Self.accepts(text), "\(text)")
        }
        // The limits themselves are inside.
        let atLimit = String(repeating: #"{"a":"#, count: 15) + "1" + String(repeating: "}", count: 16)
        #expect(Self.accepts("{\"a\":" + atLimit + "}") == false)
        #expect(Self.accepts(String(repeating: #"{"a":"#, count: 15) + "{}" + String(repeating: "}", count: 15)))
    }

    /// Strings of every length up to 48, as values and as keys, with one byte outside the subset
    /// at every position: the sixteen-byte steps, the byte-by-byte tail and the boundary
    /// between them all refuse it.
    @Test func longStringsAreCheckedAtEveryPosition() {
        let specials: [UInt8] = [0x00, 0x1f, 0x7f, 0x80, 0xc3, 0xe2, 0xff] + Array(#""\<>&"#.utf8)
        func accepts(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBufferPointer { CanonicalJSON.isSortedObject($0) } }
        for length in 1...48 {
            let plain = [UInt8](repeating: UInt8(ascii: "a"), count: length)
            let asValue = { (content: [UInt8]) in Array(#"{"k":""#.utf8) + content + Array(#""}"#.utf8) }
            let asKey = { (content: [UInt8]) in Array(#"{""#.utf8) + content + Array(#"":0}"#.utf8) }
            #expect(accepts(asValue(plain)) && accepts(asKey(plain)), "\(length)")
            for at in 0..<length {
                for special in specials {
                    var content = plain
                    content[at] = special
                    #expect(!accepts(asValue(content)) && !accepts(asKey(content)), "\(length) \(at) \(special)")
                }
            }
        }
    }

    static let keys = ["", "a", "b", "ab", "B", "email", "sub", "é", "a b", "<", "z\"", "\\"]
    static let numbers: [Double] = [0, -0.0, 1, -1, 7, 3600, 999_999_999_999_999, 1e15, 1.5, 1e21, 1e-7, 0.1]
    static let strings = ["", "x", "Renée", "a<b", "line\nbreak", "\u{2028}", "tab\t", "quote\"", "/", "😀", "\u{7f}"]

    static func tree(_ g: inout SeededGenerator, depth: Int) -> JSON {
        switch g.next(depth > 4 ? 5 : 7) {
        case 0: return .null
        case 1: return .bool(g.next(2) == 0)
        case 2: return .number(numbers[g.next(numbers.count)])
        case 3, 4: return .string(strings[g.next(strings.count)])
        case 5: return .array((0..<g.next(3)).map { _ in tree(&g, depth: depth + 1) })
        default: return .object(object(&g, depth: depth + 1))
        }
    }

    static func object(_ g: inout SeededGenerator, depth: Int) -> JSONObject {
        var object = JSONObject()
        for _ in 0..<g.next(4) {
            let key = keys[g.next(keys.count)]
            let member = tree(&g, depth: depth)
            if !object.contains(key: key) { object.append(key, member) }
        }
        return object
    }

    /// Texts as the store writes them (sorted keys) and as others might (object order), then
    /// damaged one byte at a time: whatever the check accepts, the parse path gives back.
    @Test func everyAcceptedTextSurvivesTheParsePath() {
        var g = SeededGenerator(state: 0x0123_4567_89ab_cdef)
        let noise: [UInt8] = Array(" {}[]:,\"\\-01.e9an<é".utf8)
        var acceptedCount = 0
        var total = 0
        for _ in 0..<4_000 {
            let object = Self.object(&g, depth: 0)
            var bytes = object.serializedBytes(sortedKeys: g.next(3) != 0)
            for round in 0..<3 {
                total += 1
                let text = String(decoding: bytes, as: UTF8.self)
                let accepted = bytes.withUnsafeBufferPointer { CanonicalJSON.isSortedObject($0) }
                if accepted {
                    acceptedCount += 1
                    #expect(Array(text.utf8) == bytes && Self.parsePath(text) == text, "\(text)")
                }
                guard !bytes.isEmpty, round < 2 else { continue }
                let at = g.next(bytes.count)
                switch g.next(3) {
                case 0: bytes[at] = noise[g.next(noise.count)]
                case 1: bytes.remove(at: at)
                default: bytes.insert(noise[g.next(noise.count)], at: at)
                }
            }
        }
        // Not vacuous: a good share of undamaged sorted texts are in the subset.
        #expect(acceptedCount > total / 10)
    }
}

import GoJSONFixtures
import Testing
@testable import AuthJSON

/// Both outputs of `JSONOutput` must give what the tree path gives: the byte writer the same
/// bytes as `serializedBytes()`, the tree builder the same tree in the same key order.
@Suite struct JSONOutputTests {

    static let pieces = ["a", "id", "é", "\"", "\\", "<", "&", "\n", "\u{0}", "\u{1f}", "\u{2028}", "😀", "2024-05-01T10:11:12Z", " "]

    static func string(_ g: inout SeededGenerator) -> String {
        (0..<g.next(6)).map { _ in pieces[g.next(pieces.count)] }.joined()
    }

    static func tree(_ g: inout SeededGenerator, depth: Int) -> JSON {
        switch g.next(depth > 3 ? 5 : 7) {
        case 0: return .null
        case 1: return .bool(g.next(2) == 0)
        case 2: return .number([0, -0.0, 1, -7, 3600, 1.5, 1e21, 1e-7][g.next(8)])
        case 3, 4: return .string(string(&g))
        case 5: return .array((0..<g.next(4)).map { _ in tree(&g, depth: depth + 1) })
        default:
            var object = JSONObject()
            for _ in 0..<g.next(5) {
                let key = string(&g)
                let member = tree(&g, depth: depth + 1)
                if !object.contains(key: key) { object.append(key, member) }
            }
            return .object(object)
        }
    }

    /// Writes `value` through the protocol's calls, choosing among the ways each part can be
    /// written (containers opened and closed or handed over whole, strings as `String` or bytes).
    static func replay<Output: JSONOutput>(_ value: JSON, _ g: inout SeededGenerator, to o: inout Output) {
        switch value {
        case .array(let elements) where g.next(4) != 0:
            o.beginArray()
            for element in elements { replay(element, &g, to: &o) }
            o.endArray()
        case .object(let object) where g.next(4) != 0:
            o.beginObject()
            for (key, member) in object {
                o.key(key)
                replay(member, &g, to: &o)
            }
            o.endObject()
        case .string(let text) where g.next(3) == 0:
            var text = text
            text.withUTF8 { o.string(utf8: $0) }
        case .string(let text) where g.next(2) == 0:
            o.string(text)
        case .bool(let flag) where g.next(2) == 0:
            o.bool(flag)
        case .null where g.next(2) == 0:
            o.null()
        default:
            o.value(value)
        }
    }

    @Test func bothOutputsMatchTheTreePath() {
        var g = SeededGenerator(state: 0x9e37_79b9_7f4a_7c15)
        for _ in 0..<3_000 {
            let value = Self.tree(&g, depth: 0)
            var writer = JSONByteWriter()
            Self.replay(value, &g, to: &writer)
            #expect(writer.bytes == value.serializedBytes(), "\(value.serialized())")
            var builder = JSONTreeBuilder()
            Self.replay(value, &g, to: &builder)
            #expect(builder.result == value)
            #expect(builder.result?.serialized() == value.serialized())
        }
    }

    /// The separators of nested containers, spelled out: one flag serves every depth.
    @Test func separatorsAcrossDepths() {
        var writer = JSONByteWriter()
        writer.beginObject()
        writer.key("a")
        writer.beginArray()
        writer.beginObject()
        writer.endObject()
        writer.beginArray()
        writer.endArray()
        writer.null()
        writer.endArray()
        writer.member("b", true)
        writer.key("c")
        writer.beginObject()
        writer.member("d", "x")
        writer.member("e", JSON.number(1))
        writer.endObject()
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"a":[{},[],null],"b":true,"c":{"d":"x","e":1}}"#)
    }

    /// Bytes that are not UTF-8 read as `String(decoding:)` repairs them, on both outputs:
    /// with something to escape, with nothing to escape (a lone 0xFF, a cut sequence), and
    /// valid non-ASCII beside them.
    @Test func invalidUTF8IsRepairedAlike() {
        let inputs: [[UInt8]] = [[0x61, 0xff, 0x3c, 0xe2, 0x80], [0x61, 0xff], [0xc3], Array("é".utf8) + [0x80],
                                 Array("Renée".utf8), Array(repeating: 0xfe, count: 20)]
        for bytes in inputs {
            var writer = JSONByteWriter()
            var builder = JSONTreeBuilder()
            bytes.withUnsafeBufferPointer {
                writer.string(utf8: $0)
                builder.string(utf8: $0)
            }
            #expect(builder.result == .string(String(decoding: bytes, as: UTF8.self)))
            #expect(writer.bytes == builder.result!.serializedBytes(), "\(bytes)")
        }
    }
}

/// A string as Go's `encoding/json` writes it (`appendString`, Go 1.22 and later): quoted, `"`
/// and `\` escaped, `\n` `\r` `\t` `\b` `\f` as two-character escapes, other control characters
/// as `\u00XX` in lowercase hex, U+2028 and U+2029 as `\u2028` / `\u2029` (they end lines in
/// JavaScript source), everything else verbatim. With `escapeHTML` (json.Marshal's default) `<`,
/// `>` and `&` become `\u003c`, `\u003e`, `\u0026`; without it (an Encoder after
/// `SetEscapeHTML(false)`) they stay, which is what a person reading the JSON wants to see.
/// A Swift string is valid UTF-8, so Go's U+FFFD for invalid bytes never arises.
package enum GoJSON {
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    package static func quote(_ string: String, escapeHTML: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(string.utf8.count + 2)
        appendString(string, escapeHTML: escapeHTML, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    package static func appendString(_ string: String, escapeHTML: Bool, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var utf8 = string.utf8.makeIterator()
        var pending: [UInt8] = []  // lookahead for U+2028/U+2029 (E2 80 A8/A9)
        while let byte = pending.isEmpty ? utf8.next() : pending.removeFirst() {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), byte])
            case 0x0a: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0d: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0c: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x00..<0x20: appendEscapedU(UInt32(byte), to: &out)
            case UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"):
                if escapeHTML { appendEscapedU(UInt32(byte), to: &out) } else { out.append(byte) }
            case 0xe2:
                let b1 = utf8.next(), b2 = b1 == nil ? nil : utf8.next()
                if b1 == 0x80, let b2, b2 == 0xa8 || b2 == 0xa9 {
                    appendEscapedU(b2 == 0xa8 ? 0x2028 : 0x2029, to: &out)
                } else {
                    out.append(byte)
                    if let b1 { pending.append(b1) }
                    if let b2 { pending.append(b2) }
                }
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func appendEscapedU(_ value: UInt32, to out: inout [UInt8]) {
        out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u")])
        for shift in stride(from: 12, through: 0, by: -4) {
            out.append(hexDigits[Int((value >> UInt32(shift)) & 0xf)])
        }
    }
}

import AuthJSON
import GoFormats

extension Escapers {
    // MARK: text/template's builtins

    /// text/template's JSEscapeString.
    static func textJSEscape(_ s: String) -> String {
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        let b = Array(s.utf8)
        var out: [UInt8] = []
        var i = 0
        while i < b.count {
            let c = b[i]
            if c < 0x80 {
                switch c {
                case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
                case UInt8(ascii: "'"): out.append(contentsOf: "\\'".utf8)
                case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
                case UInt8(ascii: "<"): out.append(contentsOf: "\\u003C".utf8)
                case UInt8(ascii: ">"): out.append(contentsOf: "\\u003E".utf8)
                case UInt8(ascii: "&"): out.append(contentsOf: "\\u0026".utf8)
                case UInt8(ascii: "="): out.append(contentsOf: "\\u003D".utf8)
                default:
                    if c < 0x20 {
                        out.append(contentsOf: "\\u00".utf8)
                        out.append(hex[Int(c >> 4)])
                        out.append(hex[Int(c & 0xF)])
                    } else {
                        out.append(c)
                    }
                }
                i += 1
                continue
            }
            let (r, w) = GoUTF8.decodeRune(b, i)
            if GoStrconv.isPrint(r) {
                out.append(contentsOf: b[i..<(i + w)])
            } else {
                var h = String(r, radix: 16, uppercase: true)
                while h.utf8.count < 4 { h = "0" + h }
                out.append(contentsOf: "\\u\(h)".utf8)
            }
            i += w
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// HTML escaping as Go's `html.EscapeString` and `text/template`'s `HTMLEscapeString` write it.
/// Byte by byte, as Go reads strings: a quote followed by a combining mark is one Swift Character
/// that is not a quote, and would pass unescaped if compared by Character.
package enum GoHTML {
    /// `html.EscapeString`: `<`, `>`, `&`, `'` and `"` become `&lt;`, `&gt;`, `&amp;`, `&#39;`
    /// and `&#34;`; `html/template` escapes text and attribute values the same way.
    package static func escapeString(_ text: String) -> String {
        escape(text, nul: false)
    }

    /// `template.HTMLEscapeString`: as `escapeString`, and a NUL byte becomes U+FFFD.
    package static func templateEscapeString(_ text: String) -> String {
        escape(text, nul: true)
    }

    private static func escape(_ text: String, nul: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for c in text.utf8 {
            switch c {
            case 0 where nul: out.append(contentsOf: "\u{FFFD}".utf8)
            case UInt8(ascii: "\""): out.append(contentsOf: "&#34;".utf8)
            case UInt8(ascii: "'"): out.append(contentsOf: "&#39;".utf8)
            case UInt8(ascii: "&"): out.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): out.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): out.append(contentsOf: "&gt;".utf8)
            default: out.append(c)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Go's `net/url` escaping (`url.QueryEscape`, `url.PathEscape` and the escaping of a URL's path
/// and fragment), as GoTrue's links and the templates' `urlquery` show it.
package enum GoURL {
    /// `url.QueryEscape`: everything but `A-Za-z0-9-_.~` percent-encoded (upper-case hex), space
    /// as `+`.
    package static func queryEscape(_ text: String) -> String {
        escape(text, keeping: [], spaceAsPlus: true)
    }

    /// `url.PathEscape` (`encodePathSegment`): unreserved characters and `$&+:=@` kept, `/`, `;`,
    /// `,`, `?` and everything else percent-encoded, space as `%20`.
    package static func pathEscape(_ text: String) -> String {
        escape(text, keeping: Array("$&+:=@".utf8))
    }

    /// `URL.EscapedPath` (`encodePath`): as `pathEscape`, but `/`, `;` and `,` are kept too.
    package static func escapePath(_ text: String) -> String {
        escape(text, keeping: Array("$&+:=@/;,".utf8))
    }

    /// `URL.EscapedFragment` of a fragment set as decoded text (`encodeFragment`): reserved
    /// characters `$&+,/:;=?@` and `!()*` kept, `%` and everything else percent-encoded.
    /// `u.Fragment = hq.Encode()` then `u.String()` therefore encodes the query text twice: a
    /// `%3A` reaches the browser as `%253A`.
    package static func escapeFragment(_ text: String) -> String {
        escape(text, keeping: Array("$&+,/:;=?@!()*".utf8))
    }

    /// Go's `escape`: unreserved bytes kept, `kept` ones too, a space as `+` in query mode,
    /// everything else `%XX` (upper-case hex).
    private static func escape(_ text: String, keeping kept: [UInt8], spaceAsPlus: Bool = false) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                 UInt8(ascii: "~"):
                out.append(b)
            case UInt8(ascii: " ") where spaceAsPlus:
                out.append(UInt8(ascii: "+"))
            case _ where kept.contains(b):
                out.append(b)
            default:
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(b >> 4)])
                out.append(hex[Int(b & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

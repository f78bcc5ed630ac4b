/// Character references decoded as Go's html.UnescapeString decodes them, for the one use
/// html/template makes of it: following the context inside an attribute value that an action
/// interrupts (`<a onclick="f(&quot;{{.}}&quot;)">` is JavaScript with quotes). Numeric
/// references are decoded fully; of the named ones, those standing for ASCII punctuation and
/// the few common others, which are the ones that can move a context. A reference that is
/// not recognized stays as it is.
enum HTMLEntities {
    private static let named: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}", "sol": "/", "num": "#",
        "quest": "?", "colon": ":", "semi": ";", "equals": "=", "lpar": "(", "rpar": ")", "lsqb": "[", "rsqb": "]",
        "lbrack": "[", "rbrack": "]", "lcub": "{", "rcub": "}", "lbrace": "{", "rbrace": "}", "excl": "!", "percnt": "%",
        "plus": "+", "comma": ",", "period": ".", "dollar": "$", "ast": "*", "bsol": "\\", "grave": "`", "Hat": "^",
        "lowbar": "_", "verbar": "|", "vert": "|", "commat": "@", "newline": "\n", "Tab": "\t", "copy": "©", "reg": "®",
    ]

    /// Windows-1252's characters for the C1 range, as HTML5 maps &#128; to &#159;.
    private static let replacementTable: [UInt32] = [
        0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D,
        0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A,
        0x0153, 0x009D, 0x017E, 0x0178,
    ]

    static func unescape(_ s: [UInt8]) -> [UInt8] {
        guard s.contains(UInt8(ascii: "&")) else { return s }
        var out: [UInt8] = []
        out.reserveCapacity(s.count)
        var i = 0
        while i < s.count {
            guard s[i] == UInt8(ascii: "&") else {
                out.append(s[i])
                i += 1
                continue
            }
            if let (decoded, length) = reference(s, i) {
                out.append(contentsOf: decoded)
                i += length
            } else {
                out.append(s[i])
                i += 1
            }
        }
        return out
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

    private static func isAlnum(_ c: UInt8) -> Bool {
        isDigit(c) || (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
    }

    /// The reference starting at `start` (an '&'): its text and its length in the input.
    private static func reference(_ s: [UInt8], _ start: Int) -> ([UInt8], Int)? {
        var i = start + 1
        guard i < s.count else { return nil }
        if s[i] == UInt8(ascii: "#") {
            i += 1
            var hex = false
            if i < s.count && (s[i] | 0x20) == UInt8(ascii: "x") {
                hex = true
                i += 1
            }
            let digitsStart = i
            var value: UInt32 = 0
            while i < s.count {
                let c = s[i]
                let d: UInt32
                if isDigit(c) {
                    d = UInt32(c - UInt8(ascii: "0"))
                } else if hex && (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "f") {
                    d = UInt32((c | 0x20) - UInt8(ascii: "a") + 10)
                } else {
                    break
                }
                value = value > 0x10FFFF ? value : value * (hex ? 16 : 10) + d
                i += 1
            }
            if i == digitsStart { return nil }
            if i < s.count && s[i] == UInt8(ascii: ";") { i += 1 }
            if value >= 0x80 && value <= 0x9F {
                value = replacementTable[Int(value - 0x80)]
            } else if value == 0 || value > 0x10FFFF || (0xD800...0xDFFF).contains(value) {
                value = 0xFFFD
            }
            let scalar = Unicode.Scalar(value) ?? "\u{FFFD}"
            return (Array(String(scalar).utf8), i - start)
        }
        var j = i
        while j < s.count && isAlnum(s[j]) { j += 1 }
        guard j > i else { return nil }
        let name = String(decoding: s[i..<j], as: UTF8.self)
        guard let decoded = named[name] else { return nil }
        if j < s.count && s[j] == UInt8(ascii: ";") { j += 1 }
        return (Array(decoded.utf8), j - start)
    }
}

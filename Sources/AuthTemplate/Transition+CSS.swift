import GoFormats

extension Transition {
    // MARK: CSS

    static func endsWithCSSKeyword(_ b: Bytes, _ kw: String) -> Bool {
        let k = Array(kw.utf8)
        let i = b.count - k.count
        if i < 0 { return false }
        if i != 0 {
            let (r, _) = GoUTF8.decodeLastRune(Array(sub(b, 0, i)), i)
            if Escapers.isCSSNmchar(r) { return false }
        }
        return sub(b, i).map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 32 : $0 } == k
    }

    static func tCSS(_ c: Context, _ s: Bytes) -> (Context, Int) {
        var c = c
        var k = 0
        while true {
            guard let i = indexAny(s, Array("(\"'/".utf8), from: k) else { return (c, s.count) }
            switch at(s, i) {
            case UInt8(ascii: "("):
                // `url(` opens a URL.
                var p = sub(s, 0, i)
                while let last = p.last, Escapers.isCSSSpace(last) { p = p.dropLast() }
                if endsWithCSSKeyword(p, "url") {
                    var j = i + 1
                    while j < s.count && Escapers.isCSSSpace(at(s, j)) { j += 1 }
                    if j != s.count && at(s, j) == UInt8(ascii: "\"") {
                        c.state = .stateCSSDqURL
                        j += 1
                    } else if j != s.count && at(s, j) == UInt8(ascii: "'") {
                        c.state = .stateCSSSqURL
                        j += 1
                    } else {
                        c.state = .stateCSSURL
                    }
                    return (c, j)
                }
            case UInt8(ascii: "/"):
                if i + 1 < s.count {
                    switch at(s, i + 1) {
                    case UInt8(ascii: "/"):
                        c.state = .stateCSSLineCmt
                        return (c, i + 2)
                    case UInt8(ascii: "*"):
                        c.state = .stateCSSBlockCmt
                        return (c, i + 2)
                    default:
                        break
                    }
                }
            case UInt8(ascii: "\""):
                c.state = .stateCSSDqStr
                return (c, i + 1)
            default:  // '\''
                c.state = .stateCSSSqStr
                return (c, i + 1)
            }
            k = i + 1
        }
    }

    static func tCSSStr(_ c: Context, _ s: Bytes) -> (Context, Int) {
        var c = c
        let endAndEsc: [UInt8]
        switch c.state {
        case .stateCSSDqStr, .stateCSSDqURL: endAndEsc = Array("\\\"".utf8)
        case .stateCSSSqStr, .stateCSSSqURL: endAndEsc = Array("\\'".utf8)
        default: endAndEsc = Array("\\\t\n\u{0C}\r )".utf8)  // stateCSSURL
        }
        var k = 0
        while true {
            guard var i = indexAny(s, endAndEsc, from: k) else {
                let (c1, nread) = tURL(c, Escapers.decodeCSS(Array(sub(s, k)))[...])
                return (c1, k + nread)
            }
            if at(s, i) == UInt8(ascii: "\\") {
                i += 1
                if i == s.count {
                    return (
                        Context.error(EscapeError(node: nil, line: 0, description: "unfinished escape sequence in CSS string: \(quoted(s))")),
                        s.count
                    )
                }
            } else {
                c.state = .stateCSS
                return (c, i + 1)
            }
            c = tURL(c, Escapers.decodeCSS(Array(sub(s, 0, i + 1)))[...]).0
            k = i + 1
        }
    }
}

import GoFormats

extension Transition {
    // MARK: JavaScript

    static func tJS(_ c: Context, _ s: Bytes) -> (Context, Int) {
        var c = c
        guard var i = indexAny(s, jsSpecials) else {
            c.jsCtx = nextJSCtx(s, c.jsCtx)
            return (c, s.count)
        }
        c.jsCtx = nextJSCtx(sub(s, 0, i), c.jsCtx)
        switch at(s, i) {
        case UInt8(ascii: "\""):
            c.state = .stateJSDqStr
            c.jsCtx = .jsCtxRegexp
        case UInt8(ascii: "'"):
            c.state = .stateJSSqStr
            c.jsCtx = .jsCtxRegexp
        case UInt8(ascii: "`"):
            c.state = .stateJSTmplLit
            c.jsCtx = .jsCtxRegexp
        case UInt8(ascii: "/"):
            if i + 1 < s.count && at(s, i + 1) == UInt8(ascii: "/") {
                c.state = .stateJSLineCmt
                i += 1
            } else if i + 1 < s.count && at(s, i + 1) == UInt8(ascii: "*") {
                c.state = .stateJSBlockCmt
                i += 1
            } else if c.jsCtx == .jsCtxRegexp {
                c.state = .stateJSRegexp
            } else if c.jsCtx == .jsCtxDivOp {
                c.jsCtx = .jsCtxRegexp
            } else {
                return (
                    Context.error(EscapeError(node: nil, line: 0, description: "'/' could start a division or regexp: \(quoted32(sub(s, i)))")),
                    s.count
                )
            }
        // JavaScript's HTML-like comments (`<!--` and `-->`) and a hashbang line (`#!`) run to
        // the end of the line, as `//` does. Otherwise these bytes are passed over, and Go does
        // not let them change whether a '/' would start a regexp.
        case UInt8(ascii: "<"):
            if i + 3 < s.count && at(s, i + 1) == UInt8(ascii: "!") && at(s, i + 2) == UInt8(ascii: "-")
                && at(s, i + 3) == UInt8(ascii: "-")
            {
                c.state = .stateJSHTMLOpenCmt
                i += 3
            }
        case UInt8(ascii: "-"):
            if i + 2 < s.count && at(s, i + 1) == UInt8(ascii: "-") && at(s, i + 2) == UInt8(ascii: ">") {
                c.state = .stateJSHTMLCloseCmt
                i += 2
            }
        case UInt8(ascii: "#"):
            if i + 1 < s.count && at(s, i + 1) == UInt8(ascii: "!") {
                c.state = .stateJSLineCmt
                i += 1
            }
        case UInt8(ascii: "{"):
            // Braces are counted only inside a template literal's `${`, to find its end.
            if let last = c.jsBraceDepth.indices.last { c.jsBraceDepth[last] += 1 }
            c.jsCtx = nextJSCtx(sub(s, i, i + 1), c.jsCtx)
        default:  // '}'
            if let last = c.jsBraceDepth.indices.last {
                c.jsBraceDepth[last] -= 1
                if c.jsBraceDepth[last] < 0 {
                    // The `}` that closes `${`: back in the template literal.
                    c.jsBraceDepth.removeLast()
                    c.state = .stateJSTmplLit
                    return (c, i + 1)
                }
            }
            c.jsCtx = nextJSCtx(sub(s, i, i + 1), c.jsCtx)
        }
        return (c, i + 1)
    }

    private static let jsSpecials: [UInt8] = Array("\"`'/{}<-#".utf8)

    /// A backslash at the end of a JS string, template literal or regexp (Go's
    /// `ErrPartialEscape`).
    private static func unfinishedJSEscape(_ s: Bytes) -> Context {
        Context.error(EscapeError(node: nil, line: 0, description: "unfinished escape sequence in JS string: \(quoted(s))"))
    }

    /// A JavaScript template literal: it ends at a backquote; `${` starts an expression, which
    /// is JavaScript up to its closing brace.
    static func tJSTmpl(_ c: Context, _ s: Bytes) -> (Context, Int) {
        var c = c
        var k = 0
        while let found = indexAny(s, tmplLitSpecials, from: k) {
            var i = found
            switch at(s, i) {
            case UInt8(ascii: "\\"):
                i += 1
                if i == s.count {
                    return (unfinishedJSEscape(s), s.count)
                }
            case UInt8(ascii: "$"):
                if i + 1 < s.count && at(s, i + 1) == UInt8(ascii: "{") {
                    c.jsBraceDepth.append(0)
                    c.state = .stateJS
                    return (c, i + 2)
                }
            default:  // '`'
                c.state = .stateJS
                return (c, i + 1)
            }
            k = i + 1
        }
        return (c, s.count)
    }

    private static let tmplLitSpecials: [UInt8] = Array("`\\$".utf8)

    static func tJSDelimited(_ c: Context, _ s: Bytes) -> (Context, Int) {
        var c = c
        var specials: [UInt8] = Array("\\\"".utf8)
        switch c.state {
        case .stateJSSqStr: specials = Array("\\'".utf8)
        case .stateJSRegexp: specials = Array("\\/[]".utf8)
        default: break
        }
        var k = 0
        var inCharset = false
        while true {
            guard var i = indexAny(s, specials, from: k) else { break }
            switch at(s, i) {
            case UInt8(ascii: "\\"):
                i += 1
                if i == s.count {
                    return (unfinishedJSEscape(s), s.count)
                }
            case UInt8(ascii: "["):
                inCharset = true
            case UInt8(ascii: "]"):
                inCharset = false
            case UInt8(ascii: "/") where i > 0 && isScriptEndTag(s, i - 1):
                // The '/' of "</script" does not end a regexp; the escaper writes its '<' as \x3C.
                i += 1
            default:
                // The closing quote or slash.
                if !inCharset {
                    c.state = .stateJS
                    c.jsCtx = .jsCtxDivOp
                    return (c, i + 1)
                }
            }
            k = i + 1
        }
        if inCharset {
            // A regexp character set left open at the end of the text is refused.
            return (Context.error(EscapeError(node: nil, line: 0, description: "unfinished JS regexp charset: \(quoted(s))")), s.count)
        }
        return (c, s.count)
    }

    /// Whether "</script" (in any case) starts at `i`.
    private static func isScriptEndTag(_ s: Bytes, _ i: Int) -> Bool {
        let tag: [UInt8] = Array("</script".utf8)
        guard i + tag.count <= s.count else { return false }
        for k in 0..<tag.count {
            var x = at(s, i + k)
            if x >= 0x41 && x <= 0x5A { x += 32 }
            if x != tag[k] { return false }
        }
        return true
    }

    static func tBlockCmt(_ c: Context, _ s: Bytes) -> (Context, Int) {
        guard let i = index(s, of: Array("*/".utf8)) else { return (c, s.count) }
        var c = c
        c.state = c.state == .stateJSBlockCmt ? .stateJS : .stateCSS
        return (c, i + 2)
    }

    static func tLineCmt(_ c: Context, _ s: Bytes) -> (Context, Int) {
        var c = c
        let endState: HTMLState
        let found: Int?
        if c.state != .stateCSSLineCmt {
            endState = .stateJS
            // \n, \r and the line and paragraph separators end a JS line comment.
            var hit: Int?
            var i = 0
            while i < s.count {
                let b = at(s, i)
                if b == 0x0A || b == 0x0D { hit = i; break }
                if b == 0xE2 && i + 2 < s.count && at(s, i + 1) == 0x80 && (at(s, i + 2) == 0xA8 || at(s, i + 2) == 0xA9) {
                    hit = i
                    break
                }
                i += 1
            }
            found = hit
        } else {
            endState = .stateCSS
            found = indexAny(s, [0x0A, 0x0C, 0x0D])
        }
        guard let i = found else { return (c, s.count) }
        c.state = endState
        // The line terminator is not consumed: it is part of the JS or CSS that follows.
        return (c, i)
    }

    /// nextJSCtx: whether a '/' after `s` would start a regular expression or divide.
    static func nextJSCtx(_ s: Bytes, _ preceding: JSCtx) -> JSCtx {
        // Trim JavaScript's white space (the \s class: ASCII spaces, NBSP, the Unicode spaces,
        // the line separators and the BOM).
        var end = s.count
        while end > 0 {
            let b = at(s, end - 1)
            if b < 0x80 {
                guard b == 0x09 || b == 0x0A || b == 0x0B || b == 0x0C || b == 0x0D || b == 0x20 else { break }
                end -= 1
                continue
            }
            let (r, w) = GoUTF8.decodeLastRune(Array(sub(s, 0, end)), end)
            guard isJSWhitespace(r) else { break }
            end -= w
        }
        if end == 0 { return preceding }
        let c = at(s, end - 1)
        let n = end
        switch c {
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            // An odd run of '+' or '-' ends in an operator, which a regexp may follow;
            // '++' and '--' end an expression.
            var start = n - 1
            while start > 0 && at(s, start - 1) == c { start -= 1 }
            return (n - start) & 1 == 1 ? .jsCtxRegexp : .jsCtxDivOp
        case UInt8(ascii: "."):
            // A digit and a dot: a number.
            if n != 1 && at(s, n - 2) >= UInt8(ascii: "0") && at(s, n - 2) <= UInt8(ascii: "9") { return .jsCtxDivOp }
            return .jsCtxRegexp
        case UInt8(ascii: ","), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "="), UInt8(ascii: "*"), UInt8(ascii: "%"),
            UInt8(ascii: "&"), UInt8(ascii: "|"), UInt8(ascii: "^"), UInt8(ascii: "?"), UInt8(ascii: "!"), UInt8(ascii: "~"),
            UInt8(ascii: "("), UInt8(ascii: "["), UInt8(ascii: ":"), UInt8(ascii: ";"), UInt8(ascii: "{"), UInt8(ascii: "}"):
            return .jsCtxRegexp
        default:
            // A keyword such as `return` may precede a regexp; any other word, a number or a
            // closing bracket precedes a division.
            var j = n
            while j > 0 && Escapers.isJSIdentPart(at(s, j - 1)) { j -= 1 }
            let word = String(decoding: sub(s, j, n), as: UTF8.self)
            if regexpPrecederKeywords.contains(word) { return .jsCtxRegexp }
            return .jsCtxDivOp
        }
    }

    private static func isJSWhitespace(_ r: UInt32) -> Bool {
        switch r {
        case 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF: return true
        default: return false
        }
    }

    private static let regexpPrecederKeywords: Set<String> = [
        "break", "case", "continue", "delete", "do", "else", "finally", "in", "instanceof", "return", "throw", "try",
        "typeof", "void",
    ]

    /// isJSType: whether a script element's type attribute makes its content JavaScript (as
    /// browsers read an empty or blank type).
    static func isJSType(_ mimeType: String) -> Bool {
        var t = mimeType
        if let semicolon = t.firstIndex(of: ";") { t = String(t[..<semicolon]) }
        t = Escapers.asciiLowercased(t)
        t = GoStrings.trimSpace(t)
        switch t {
        case "", "application/ecmascript", "application/javascript", "application/json", "application/ld+json",
            "application/x-ecmascript", "application/x-javascript", "module", "text/ecmascript", "text/javascript",
            "text/javascript1.0", "text/javascript1.1", "text/javascript1.2", "text/javascript1.3", "text/javascript1.4",
            "text/javascript1.5", "text/jscript", "text/livescript", "text/x-ecmascript", "text/x-javascript":
            return true
        default:
            return false
        }
    }
}

import GoFormats

/// html/template's context transitions (transition.go, and js.go's nextJSCtx): each function
/// reads a prefix of a text node in one state and says which context follows and how many
/// bytes it consumed.
enum Transition {
    typealias Bytes = ArraySlice<UInt8>

    static func run(_ c: Context, _ s: Bytes) -> (Context, Int) {
        switch c.state {
        case .stateText: return tText(c, s)
        case .stateTag: return tTag(c, s)
        case .stateAttrName: return tAttrName(c, s)
        case .stateAfterName: return tAfterName(c, s)
        case .stateBeforeValue: return tBeforeValue(c, s)
        case .stateHTMLCmt: return tHTMLCmt(c, s)
        case .stateRCDATA: return tSpecialTagEnd(c, s)
        case .stateAttr: return (c, s.count)
        case .stateURL, .stateSrcset: return tURL(c, s)
        case .stateMetaContent: return tMetaContent(c, s)
        case .stateMetaContentURL: return tMetaContentURL(c, s)
        case .stateJS: return tJS(c, s)
        case .stateJSDqStr, .stateJSSqStr, .stateJSRegexp: return tJSDelimited(c, s)
        case .stateJSTmplLit: return tJSTmpl(c, s)
        case .stateJSBlockCmt, .stateCSSBlockCmt: return tBlockCmt(c, s)
        case .stateJSLineCmt, .stateJSHTMLOpenCmt, .stateJSHTMLCloseCmt, .stateCSSLineCmt: return tLineCmt(c, s)
        case .stateCSS: return tCSS(c, s)
        case .stateCSSDqStr, .stateCSSSqStr, .stateCSSDqURL, .stateCSSSqURL, .stateCSSURL: return tCSSStr(c, s)
        case .stateError, .stateDead: return (c, s.count)
        }
    }

    // MARK: Helpers on byte slices (indexes relative to the slice's start)

    static func at(_ s: Bytes, _ i: Int) -> UInt8 { s[s.startIndex + i] }

    static func index(_ s: Bytes, of needle: [UInt8], from: Int = 0) -> Int? {
        guard needle.count <= s.count else { return nil }
        var i = from
        while i + needle.count <= s.count {
            var match = true
            for k in 0..<needle.count where at(s, i + k) != needle[k] {
                match = false
                break
            }
            if match { return i }
            i += 1
        }
        return nil
    }

    static func indexAny(_ s: Bytes, _ chars: [UInt8], from: Int = 0) -> Int? {
        var i = from
        while i < s.count {
            if chars.contains(at(s, i)) { return i }
            i += 1
        }
        return nil
    }

    static func sub(_ s: Bytes, _ from: Int, _ to: Int? = nil) -> Bytes {
        s[(s.startIndex + from)..<(s.startIndex + (to ?? s.count))]
    }

    static func eatWhiteSpace(_ s: Bytes, _ i: Int) -> Int {
        var j = i
        while j < s.count {
            switch at(s, j) {
            case 0x20, 0x09, 0x0A, 0x0C, 0x0D: j += 1
            default: return j
            }
        }
        return s.count
    }

    static func quoted(_ s: Bytes) -> String {
        GoStrconv.quote(String(decoding: s, as: UTF8.self))
    }

    /// %.32q: the first 32 runes, quoted.
    static func quoted32(_ s: Bytes) -> String {
        let text = String(decoding: s, as: UTF8.self)
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: text.unicodeScalars.prefix(32))
        return GoStrconv.quote(String(scalars))
    }

    // MARK: HTML

    private static let commentStart: [UInt8] = Array("<!--".utf8)
    private static let commentEnd: [UInt8] = Array("-->".utf8)

    static func tText(_ c: Context, _ s: Bytes) -> (Context, Int) {
        var k = 0
        while true {
            guard let i = s[(s.startIndex + k)...].firstIndex(of: UInt8(ascii: "<")).map({ $0 - s.startIndex }), i + 1 != s.count
            else {
                return (c, s.count)
            }
            if i + 4 <= s.count && Array(sub(s, i, i + 4)) == commentStart {
                return (Context(state: .stateHTMLCmt), i + 4)
            }
            var j = i + 1
            var end = false
            if at(s, j) == UInt8(ascii: "/") {
                if j + 1 == s.count { return (c, s.count) }
                end = true
                j += 1
            }
            let (after, element) = eatTagName(s, j)
            if after != j {
                return (Context(state: .stateTag, element: end ? .elementNone : element), after)
            }
            k = after
        }
    }

    private static let elementContentType: [Element: HTMLState] = [
        .elementNone: .stateText, .elementScript: .stateJS, .elementStyle: .stateCSS, .elementTextarea: .stateRCDATA,
        .elementTitle: .stateRCDATA, .elementMeta: .stateText,
    ]

    static func tTag(_ c: Context, _ s: Bytes) -> (Context, Int) {
        let i = eatWhiteSpace(s, 0)
        if i == s.count { return (c, s.count) }
        if at(s, i) == UInt8(ascii: ">") {
            // A meta element has no end tag: after its start tag comes plain text.
            if c.element == .elementMeta { return (Context(state: .stateText, element: .elementNone), i + 1) }
            return (Context(state: elementContentType[c.element]!, element: c.element), i + 1)
        }
        let j: Int
        switch eatAttrName(s, i) {
        case .failure(let err): return (Context.error(err.error), s.count)
        case .success(let end): j = end
        }
        if i == j {
            return (
                Context.error(EscapeError(node: nil, line: 0, description: "expected space, attr name, or end of tag, but got \(quoted(sub(s, i)))")),
                s.count
            )
        }
        let attrName = Escapers.asciiLowercased(String(decoding: sub(s, i, j), as: UTF8.self))
        var attr: Attr = .attrNone
        if c.element == .elementScript && attrName == "type" {
            attr = .attrScriptType
        } else if c.element == .elementMeta && attrName == "content" {
            // A meta element's content may hold a URL (`0; url=...` for http-equiv="refresh").
            attr = .attrMetaContent
        } else {
            switch attrType(attrName) {
            case .url: attr = .attrURL
            case .css: attr = .attrStyle
            case .js: attr = .attrScript
            case .srcset: attr = .attrSrcset
            default: break
            }
        }
        let state: HTMLState = j == s.count ? .stateAttrName : .stateAfterName
        return (Context(state: state, attr: attr, element: c.element), j)
    }

    static func tAttrName(_ c: Context, _ s: Bytes) -> (Context, Int) {
        switch eatAttrName(s, 0) {
        case .failure(let err):
            return (Context.error(err.error), s.count)
        case .success(let i):
            var c = c
            if i != s.count { c.state = .stateAfterName }
            return (c, i)
        }
    }

    static func tAfterName(_ c: Context, _ s: Bytes) -> (Context, Int) {
        var c = c
        let i = eatWhiteSpace(s, 0)
        if i == s.count { return (c, s.count) }
        if at(s, i) != UInt8(ascii: "=") {
            // A '>' or another attribute: this one has no value.
            c.state = .stateTag
            return (c, i)
        }
        c.state = .stateBeforeValue
        // Past the '='.
        return (c, i + 1)
    }

    static func attrStartState(_ attr: Attr) -> HTMLState {
        switch attr {
        case .attrNone, .attrScriptType: return .stateAttr
        case .attrScript: return .stateJS
        case .attrStyle: return .stateCSS
        case .attrURL: return .stateURL
        case .attrSrcset: return .stateSrcset
        case .attrMetaContent: return .stateMetaContent
        }
    }

    static func tBeforeValue(_ c: Context, _ s: Bytes) -> (Context, Int) {
        var i = eatWhiteSpace(s, 0)
        if i == s.count { return (c, s.count) }
        var delim: Delim = .delimSpaceOrTagEnd
        switch at(s, i) {
        case UInt8(ascii: "'"):
            delim = .delimSingleQuote
            i += 1
        case UInt8(ascii: "\""):
            delim = .delimDoubleQuote
            i += 1
        default:
            break
        }
        var c = c
        c.state = attrStartState(c.attr)
        c.delim = delim
        return (c, i)
    }

    static func tHTMLCmt(_ c: Context, _ s: Bytes) -> (Context, Int) {
        if let i = index(s, of: commentEnd) { return (Context(), i + 3) }
        return (c, s.count)
    }

    private static let specialTagEndMarkers: [Element: [UInt8]] = [
        .elementScript: Array("script".utf8), .elementStyle: Array("style".utf8),
        .elementTextarea: Array("textarea".utf8), .elementTitle: Array("title".utf8),
        // Go looks for an empty end tag name (`</` and a separator) while inside a meta tag.
        .elementMeta: [],
    ]

    /// The end of a script, style, textarea or title element's content.
    static func tSpecialTagEnd(_ c: Context, _ s: Bytes) -> (Context, Int) {
        if c.element != .elementNone {
            // "</script" inside a script's string, regexp or comment does not end the script:
            // the escaper writes its '<' as \x3C (or drops the comment).
            if c.element == .elementScript && (c.state.isInScriptLiteral || c.state.isComment) { return (c, s.count) }
            if let tag = specialTagEndMarkers[c.element], let i = indexTagEnd(s, tag) { return (Context(), i) }
        }
        return (c, s.count)
    }

    /// indexTagEnd: where "</tag" followed by '>', a space or '/' starts, the name compared
    /// without case.
    static func indexTagEnd(_ s: Bytes, _ tag: [UInt8]) -> Int? {
        var res = 0
        var rest = s
        let prefix: [UInt8] = Array("</".utf8)
        while !rest.isEmpty {
            guard let i = index(rest, of: prefix) else { return nil }
            rest = sub(rest, i + 2)
            if tag.count <= rest.count
                && zip(tag, sub(rest, 0, tag.count)).allSatisfy({ $0 == ($1 >= 0x41 && $1 <= 0x5A ? $1 + 32 : $1) })
            {
                rest = sub(rest, tag.count)
                if let first = rest.first, [UInt8(ascii: ">"), 0x20, 0x09, 0x0A, 0x0C, UInt8(ascii: "/")].contains(first) {
                    return res + i
                }
                res += tag.count
            }
            res += i + 2
        }
        return nil
    }

    static func tURL(_ c: Context, _ s: Bytes) -> (Context, Int) {
        var c = c
        if s.contains(UInt8(ascii: "#")) || s.contains(UInt8(ascii: "?")) {
            c.urlPart = .urlPartQueryOrFrag
        } else if s.count != eatWhiteSpace(s, 0) && c.urlPart == .urlPartNone {
            // Leading spaces do not start the URL.
            c.urlPart = .urlPartPreQuery
        }
        return (c, s.count)
    }

    // MARK: Meta content

    /// A meta element's content attribute: "url", optional spaces and '=' start a URL.
    static func tMetaContent(_ c: Context, _ s: Bytes) -> (Context, Int) {
        var c = c
        var i = 0
        // Go wants a byte after "url" before it looks further.
        while i + 3 < s.count {
            if (at(s, i) | 0x20) == UInt8(ascii: "u") && (at(s, i + 1) | 0x20) == UInt8(ascii: "r")
                && (at(s, i + 2) | 0x20) == UInt8(ascii: "l")
            {
                let j = eatWhiteSpace(s, i + 3)
                if j < s.count && at(s, j) == UInt8(ascii: "=") {
                    c.state = .stateMetaContentURL
                    return (c, j + 1)
                }
            }
            i += 1
        }
        return (c, s.count)
    }

    /// The URL of a meta content attribute runs to the next ';'.
    static func tMetaContentURL(_ c: Context, _ s: Bytes) -> (Context, Int) {
        guard let i = s.firstIndex(of: UInt8(ascii: ";")) else { return (c, s.count) }
        var c = c
        c.state = .stateMetaContent
        return (c, i - s.startIndex + 1)
    }

    // MARK: Names

    static func eatAttrName(_ s: Bytes, _ i: Int) -> Result<Int, EscapeErrorBox> {
        var j = i
        while j < s.count {
            switch at(s, j) {
            case 0x20, 0x09, 0x0A, 0x0C, 0x0D, UInt8(ascii: "="), UInt8(ascii: ">"):
                return .success(j)
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "<"):
                // Quotes or '<' in an attribute name mean broken markup.
                return .failure(EscapeErrorBox(EscapeError(node: nil, line: 0, description: "\(quoted(sub(s, j, j + 1))) in attribute name: \(quoted32(s))")))
            default:
                j += 1
            }
        }
        return .success(s.count)
    }

    private static let elementNameMap: [String: Element] = [
        "script": .elementScript, "style": .elementStyle, "textarea": .elementTextarea, "title": .elementTitle,
        "meta": .elementMeta,
    ]

    private static func isASCIIAlpha(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z")) || (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z"))
    }

    private static func isASCIIAlphaNum(_ c: UInt8) -> Bool {
        isASCIIAlpha(c) || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9"))
    }

    static func eatTagName(_ s: Bytes, _ i: Int) -> (Int, Element) {
        if i == s.count || !isASCIIAlpha(at(s, i)) { return (i, .elementNone) }
        var j = i + 1
        while j < s.count {
            let x = at(s, j)
            if isASCIIAlphaNum(x) {
                j += 1
                continue
            }
            // A '-' or ':' joins two alphanumerics (custom elements, namespaces).
            if (x == UInt8(ascii: ":") || x == UInt8(ascii: "-")) && j + 1 < s.count && isASCIIAlphaNum(at(s, j + 1)) {
                j += 2
                continue
            }
            break
        }
        let name = Escapers.asciiLowercased(String(decoding: sub(s, i, j), as: UTF8.self))
        return (j, elementNameMap[name] ?? .elementNone)
    }
}

/// EscapeError as a Swift Error, for Result.
struct EscapeErrorBox: Error {
    let error: EscapeError
    init(_ error: EscapeError) { self.error = error }
}

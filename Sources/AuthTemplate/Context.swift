/// html/template's parsing context (context.go): where in an HTML document the text so far
/// leaves the parser, which decides how an action's value is escaped. The names are Go's, as
/// its errors print them (`{stateURL delimDoubleQuote urlPartPreQuery jsCtxRegexp attrURL
/// elementNone <nil>}`).
enum HTMLState: String, Sendable {
    case stateText, stateTag, stateAttrName, stateAfterName, stateBeforeValue, stateHTMLCmt, stateRCDATA, stateAttr,
        stateURL, stateSrcset, stateJS, stateJSDqStr, stateJSSqStr, stateJSTmplLit, stateJSRegexp, stateJSBlockCmt,
        stateJSLineCmt, stateJSHTMLOpenCmt, stateJSHTMLCloseCmt, stateCSS, stateCSSDqStr, stateCSSSqStr, stateCSSDqURL,
        stateCSSSqURL, stateCSSURL, stateCSSBlockCmt, stateCSSLineCmt, stateError, stateMetaContent, stateMetaContentURL,
        stateDead

    /// A comment, whose text the escaper leaves out of the output. `<!--` and `-->` start
    /// comments to the end of the line in JavaScript too.
    var isComment: Bool {
        switch self {
        case .stateHTMLCmt, .stateJSBlockCmt, .stateJSLineCmt, .stateJSHTMLOpenCmt, .stateJSHTMLCloseCmt, .stateCSSBlockCmt,
            .stateCSSLineCmt:
            return true
        default: return false
        }
    }

    /// A JavaScript string, template literal or regexp, where `<!--`, `<script` and `</script`
    /// would confuse the HTML parser and are written with `\x3C` instead of `<`.
    var isInScriptLiteral: Bool {
        switch self {
        case .stateJSDqStr, .stateJSSqStr, .stateJSTmplLit, .stateJSRegexp: return true
        default: return false
        }
    }

    var isInTag: Bool {
        switch self {
        case .stateTag, .stateAttrName, .stateAfterName, .stateBeforeValue, .stateAttr: return true
        default: return false
        }
    }
}

enum Delim: String, Sendable {
    case delimNone, delimDoubleQuote, delimSingleQuote, delimSpaceOrTagEnd
}

enum URLPart: String, Sendable {
    case urlPartNone, urlPartPreQuery, urlPartQueryOrFrag, urlPartUnknown
}

enum JSCtx: String, Sendable {
    case jsCtxRegexp, jsCtxDivOp, jsCtxUnknown
}

enum Element: String, Sendable {
    case elementNone, elementScript, elementStyle, elementTextarea, elementTitle, elementMeta
}

enum Attr: String, Sendable {
    case attrNone, attrScript, attrScriptType, attrStyle, attrURL, attrSrcset, attrMetaContent
}

/// An html/template error before the template's name is known (html/template's Error).
struct EscapeError: Sendable {
    var node: NodeRefPosition?
    var line: Int
    var description: String
}

/// A node's position for an escaping error's location.
struct NodeRefPosition: Sendable {
    let pos: Int
}

struct Context: Sendable {
    var state: HTMLState = .stateText
    var delim: Delim = .delimNone
    var urlPart: URLPart = .urlPartNone
    var jsCtx: JSCtx = .jsCtxRegexp
    /// For each `${` of a JavaScript template literal the text is inside, how many braces are
    /// open in it: the `}` that closes it returns to the literal.
    var jsBraceDepth: [Int] = []
    var attr: Attr = .attrNone
    var element: Element = .elementNone
    var err: EscapeError? = nil
    /// The {{break}} or {{continue}} a range context was recorded at.
    var breakNode: (pos: Int, line: Int)? = nil

    static func error(_ err: EscapeError) -> Context {
        Context(state: .stateError, err: err)
    }

    func eq(_ d: Context) -> Bool {
        state == d.state && delim == d.delim && urlPart == d.urlPart && jsCtx == d.jsCtx && jsBraceDepth == d.jsBraceDepth
            && attr == d.attr && element == d.element && (err == nil) == (d.err == nil)
    }

    var goDescription: String {
        let e = err.map(\.description) ?? "<nil>"
        // The brace depths print as Go prints an []int: "[]", "[0 1]".
        let depth = "[" + jsBraceDepth.map(String.init).joined(separator: " ") + "]"
        return "{\(state.rawValue) \(delim.rawValue) \(urlPart.rawValue) \(jsCtx.rawValue) \(depth) \(attr.rawValue) \(element.rawValue) \(e)}"
    }
}

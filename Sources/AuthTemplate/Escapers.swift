import AuthJSON
import GoFormats

/// The escaping functions: text/template's `html`, `js` and `urlquery` builtins (funcs.go) and
/// the filters and escapers html/template appends to pipelines (html.go, url.go, js.go,
/// css.go), byte for byte. Template data are never html/template's typed content (HTML, URL,
/// ...), so each escaper's plain-text branch is the one that applies.
enum Escapers {
    /// html/template's failsafe: what a filter writes instead of an unsafe value.
    static let filterFailsafe = "ZgotmplZ"

    static func call(_ function: Functions.Function, _ args: [Value]) -> String {
        switch function {
        case .evalArgs:
            if args.count == 1, case .string(let s) = args[0] { return s }
            return GoFormat.sprint(args)
        case .commentEscaper:
            return ""
        case .jsValEscaper:
            return jsValEscaper(args)
        default:
            break
        }
        let s = stringify(args)
        switch function {
        case .attrEscaper, .rcdataEscaper, .htmlEscaper:
            return htmlReplacer(s, htmlReplacementTable, badRunes: true)
        case .nospaceEscaper:
            // An empty unquoted value would let the next attribute become this one's value.
            if s.isEmpty { return filterFailsafe }
            return htmlReplacer(s, htmlNospaceReplacementTable, badRunes: false)
        case .htmlNameFilter: return htmlNameFilter(s)
        case .urlFilter: return isSafeURL(s) ? s : "#" + filterFailsafe
        case .urlEscaper: return processURL(s, normalize: false)
        case .urlNormalizer: return processURL(s, normalize: true)
        case .srcsetEscaper: return srcsetEscaper(s)
        case .jsStrEscaper: return replace(s, jsStrReplacementTable)
        case .jsTmplLitEscaper: return replace(s, jsTmplLitReplacementTable)
        case .jsRegexpEscaper:
            let escaped = replace(s, jsRegexpReplacementTable)
            return escaped.isEmpty ? "(?:)" : escaped
        case .cssEscaper: return cssEscaper(s)
        case .cssValueFilter: return cssValueFilter(s)
        default: return s
        }
    }

    /// stringify: a single string as it is; otherwise fmt.Sprint of the arguments, leaving out
    /// nil ones (so a missing value escapes to "").
    static func stringify(_ args: [Value]) -> String {
        if args.count == 1, case .string(let s) = args[0] { return s }
        return GoFormat.sprint(args.filter(\.isValid))
    }

    // MARK: HTML

    static func table(_ pairs: [(UInt8, String)]) -> [String?] {
        var t = [String?](repeating: nil, count: Int(pairs.map(\.0).max()!) + 1)
        for (c, s) in pairs { t[Int(c)] = s }
        return t
    }

    static let htmlReplacementTable = table([
        (0, "\u{FFFD}"), (UInt8(ascii: "\""), "&#34;"), (UInt8(ascii: "&"), "&amp;"), (UInt8(ascii: "'"), "&#39;"),
        (UInt8(ascii: "+"), "&#43;"), (UInt8(ascii: "<"), "&lt;"), (UInt8(ascii: ">"), "&gt;"),
    ])

    static let htmlNospaceReplacementTable = table([
        (0, "&#xfffd;"), (UInt8(ascii: "\t"), "&#9;"), (UInt8(ascii: "\n"), "&#10;"), (0x0B, "&#11;"), (0x0C, "&#12;"),
        (UInt8(ascii: "\r"), "&#13;"), (UInt8(ascii: " "), "&#32;"), (UInt8(ascii: "\""), "&#34;"), (UInt8(ascii: "&"), "&amp;"),
        (UInt8(ascii: "'"), "&#39;"), (UInt8(ascii: "+"), "&#43;"), (UInt8(ascii: "<"), "&lt;"), (UInt8(ascii: "="), "&#61;"),
        (UInt8(ascii: ">"), "&gt;"), (UInt8(ascii: "`"), "&#96;"),
    ])

    /// htmlReplacer: the table's replacements; without `badRunes`, also the noncharacters
    /// U+FDD0...U+FDEF and U+FFF0...U+FFFF (U+FFFD among them) as hex references.
    static func htmlReplacer(_ s: String, _ table: [String?], badRunes: Bool) -> String {
        // Most values need nothing replaced: return them without copying. (The noncharacters
        // all start with the byte 0xEF.)
        let clean = s.utf8.allSatisfy { c in
            (Int(c) >= table.count || table[Int(c)] == nil) && (badRunes || c != 0xEF)
        }
        if clean { return s }
        return rewriteRunes(s) { r, _ in
            if Int(r) < table.count { return table[Int(r)] }
            if !badRunes && ((0xFDD0...0xFDEF).contains(r) || (0xFFF0...0xFFFF).contains(r)) {
                return "&#x\(String(r, radix: 16));"
            }
            return nil
        }
    }

    /// The loop the replacers share: each rune for which `replacement` (given the rune and the
    /// bytes after it) names a string is swapped for it; the input comes back as it is, without
    /// a copy, when nothing was swapped.
    static func rewriteRunes(_ s: String, _ replacement: (UInt32, ArraySlice<UInt8>) -> String?) -> String {
        let bytes = Array(s.utf8)
        var out: [UInt8] = []
        var written = 0
        var i = 0
        while i < bytes.count {
            let (r, w) = GoUTF8.decodeRune(bytes, i)
            if let repl = replacement(r, bytes[(i + w)...]) {
                out.append(contentsOf: bytes[written..<i])
                out.append(contentsOf: repl.utf8)
                written = i + w
            }
            i += w
        }
        if written == 0 { return s }
        out.append(contentsOf: bytes[written...])
        return String(decoding: out, as: UTF8.self)
    }

    private static func htmlNameFilter(_ s: String) -> String {
        if s.isEmpty { return filterFailsafe }
        let lower = asciiLowercased(s)
        if attrType(lower) != .plain { return filterFailsafe }
        for c in lower.unicodeScalars {
            switch c {
            case "0"..."9", "a"..."z": continue
            default: return filterFailsafe
            }
        }
        return lower
    }

    /// strings.ToLower for the ASCII letters that matter here; other letters are lowered by
    /// Unicode rules as Go's does.
    static func asciiLowercased(_ s: String) -> String {
        if s.utf8.allSatisfy({ $0 < 0x80 }) {
            return String(decoding: s.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 32 : $0 }, as: UTF8.self)
        }
        return s.lowercased()
    }

    // MARK: URLs

    /// Only http, https and mailto may appear as a URL's scheme (a colon before any slash).
    static func isSafeURL(_ s: String) -> Bool {
        let bytes = Array(s.utf8)
        if let colon = bytes.firstIndex(of: UInt8(ascii: ":")), !bytes[..<colon].contains(UInt8(ascii: "/")) {
            let scheme = asciiLowercased(String(decoding: bytes[..<colon], as: UTF8.self))
            if scheme != "http" && scheme != "https" && scheme != "mailto" { return false }
        }
        return true
    }

    static func isHex(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "f"))
            || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "F"))
    }

    /// processURLOnto: percent-encodes what is not allowed in a URL; normalizing keeps the
    /// reserved characters and existing escapes, escaping encodes those too (a query value).
    static func processURL(_ s: String, normalize: Bool) -> String {
        if s.utf8.allSatisfy({ keptInURL($0, normalize: normalize) }) { return s }
        var out: [UInt8] = []
        appendProcessedURL(Array(s.utf8)[...], normalize: normalize, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static let lowerHex: [UInt8] = Array("0123456789abcdef".utf8)

    /// A byte that needs no escape in a URL (never '%', which depends on what follows).
    private static func keptInURL(_ c: UInt8, normalize: Bool) -> Bool {
        switch c {
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: ","), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: "?"),
            UInt8(ascii: "@"), UInt8(ascii: "["), UInt8(ascii: "]"):
            return normalize
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
                || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9"))
        }
    }

    static func appendProcessedURL(_ s: ArraySlice<UInt8>, normalize: Bool, to out: inout [UInt8]) {
        let hex = lowerHex
        var i = s.startIndex
        while i < s.endIndex {
            let c = s[i]
            var keep = false
            switch c {
            case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "*"), UInt8(ascii: "+"),
                UInt8(ascii: ","), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: "?"),
                UInt8(ascii: "@"), UInt8(ascii: "["), UInt8(ascii: "]"):
                keep = normalize
            case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                keep = true
            case UInt8(ascii: "%"):
                keep = normalize && i + 2 < s.endIndex && isHex(s[i + 1]) && isHex(s[i + 2])
            default:
                keep = (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
                    || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9"))
            }
            if keep {
                out.append(c)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(c >> 4)])
                out.append(hex[Int(c & 0xF)])
            }
            i += 1
        }
    }

    private static func isHTMLSpace(_ c: UInt8) -> Bool {
        c == 0x09 || c == 0x0A || c == 0x0C || c == 0x0D || c == 0x20
    }

    private static func isHTMLSpaceOrASCIIAlnum(_ c: UInt8) -> Bool {
        isHTMLSpace(c) || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z"))
            || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
    }

    /// A srcset value: each comma-separated candidate's URL filtered and normalized, its
    /// descriptor kept only when it is spaces and ASCII letters and digits.
    private static func srcsetEscaper(_ s: String) -> String {
        let b = Array(s.utf8)
        var out: [UInt8] = []
        var written = 0
        for i in 0..<b.count where b[i] == UInt8(ascii: ",") {
            filterSrcsetElement(b, written, i, &out)
            out.append(UInt8(ascii: ","))
            written = i + 1
        }
        filterSrcsetElement(b, written, b.count, &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static func filterSrcsetElement(_ s: [UInt8], _ left: Int, _ right: Int, _ out: inout [UInt8]) {
        var start = left
        while start < right && isHTMLSpace(s[start]) { start += 1 }
        var end = right
        for i in start..<right where isHTMLSpace(s[i]) {
            end = i
            break
        }
        let url = String(decoding: s[start..<end], as: UTF8.self)
        if isSafeURL(url) {
            if s[end..<right].allSatisfy(isHTMLSpaceOrASCIIAlnum) {
                out.append(contentsOf: s[left..<start])
                appendProcessedURL(s[start..<end], normalize: true, to: &out)
                out.append(contentsOf: s[end..<right])
                return
            }
        }
        out.append(UInt8(ascii: "#"))
        out.append(contentsOf: filterFailsafe.utf8)
    }

    // MARK: JavaScript

    private static func jsValEscaper(_ args: [Value]) -> String {
        let value: Value
        if args.count == 1 {
            value = args[0]
        } else {
            value = .string(GoFormat.sprint(args))
        }
        guard let json = marshalable(value) else {
            // json.Marshal's error, inside a comment.
            let message = "json: unsupported type: \(unsupportedType(value))"
            return " /* \(message) */null "
        }
        // encoding/json's HTML-safe output: <, >, & and U+2028/U+2029 already escaped.
        let b = json.serializedBytes(sortedKeys: true)
        guard let first = b.first, let last = b.last else { return " null " }
        if isJSIdentPart(first) || isJSIdentPart(last) {
            return " " + String(decoding: b, as: UTF8.self) + " "
        }
        return String(decoding: b, as: UTF8.self)
    }

    private static func marshalable(_ value: Value) -> JSON? {
        switch value {
        case .invalid: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .number(Double(i))
        case .uint8(let u): return .number(Double(u))
        case .float(let f): return .number(f)
        case .complex: return nil
        case .string(let s): return .string(s)
        case .map(let m): return .object(m)
        case .slice(let s): return .array(Array(s.elements))
        case .element(let json): return json
        }
    }

    private static func unsupportedType(_ value: Value) -> String { value.typeName }

    static func isJSIdentPart(_ c: UInt8) -> Bool {
        c == UInt8(ascii: "$") || c == UInt8(ascii: "_") || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9"))
            || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z")) || (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z"))
    }

    private static let lowUnicodeReplacementTable: [String] = (0..<0x20).map { (c: Int) -> String in
        switch c {
        case 0x09: return "\\t"
        case 0x0A: return "\\n"
        case 0x0C: return "\\f"
        case 0x0D: return "\\r"
        default:
            let h = String(c, radix: 16)
            return "\\u00" + (h.count == 1 ? "0" + h : h)
        }
    }

    static let jsStrReplacementTable = table([
        (0, "\\u0000"), (UInt8(ascii: "\t"), "\\t"), (UInt8(ascii: "\n"), "\\n"), (0x0B, "\\u000b"), (0x0C, "\\f"),
        (UInt8(ascii: "\r"), "\\r"), (UInt8(ascii: "\""), "\\u0022"), (UInt8(ascii: "`"), "\\u0060"), (UInt8(ascii: "&"), "\\u0026"),
        (UInt8(ascii: "'"), "\\u0027"), (UInt8(ascii: "+"), "\\u002b"), (UInt8(ascii: "/"), "\\/"), (UInt8(ascii: "<"), "\\u003c"),
        (UInt8(ascii: ">"), "\\u003e"), (UInt8(ascii: "\\"), "\\\\"),
    ])

    /// jsStrReplacementTable and the characters special in a template literal: `$`, `{`, `}`.
    static let jsTmplLitReplacementTable = table([
        (0, "\\u0000"), (UInt8(ascii: "\t"), "\\t"), (UInt8(ascii: "\n"), "\\n"), (0x0B, "\\u000b"), (0x0C, "\\f"),
        (UInt8(ascii: "\r"), "\\r"), (UInt8(ascii: "\""), "\\u0022"), (UInt8(ascii: "`"), "\\u0060"), (UInt8(ascii: "&"), "\\u0026"),
        (UInt8(ascii: "'"), "\\u0027"), (UInt8(ascii: "+"), "\\u002b"), (UInt8(ascii: "/"), "\\/"), (UInt8(ascii: "<"), "\\u003c"),
        (UInt8(ascii: ">"), "\\u003e"), (UInt8(ascii: "\\"), "\\\\"), (UInt8(ascii: "$"), "\\u0024"), (UInt8(ascii: "{"), "\\u007b"),
        (UInt8(ascii: "}"), "\\u007d"),
    ])

    static let jsRegexpReplacementTable = table([
        (0, "\\u0000"), (UInt8(ascii: "\t"), "\\t"), (UInt8(ascii: "\n"), "\\n"), (0x0B, "\\u000b"), (0x0C, "\\f"),
        (UInt8(ascii: "\r"), "\\r"), (UInt8(ascii: "\""), "\\u0022"), (UInt8(ascii: "$"), "\\$"), (UInt8(ascii: "&"), "\\u0026"),
        (UInt8(ascii: "'"), "\\u0027"), (UInt8(ascii: "("), "\\("), (UInt8(ascii: ")"), "\\)"), (UInt8(ascii: "*"), "\\*"),
        (UInt8(ascii: "+"), "\\u002b"), (UInt8(ascii: "-"), "\\-"), (UInt8(ascii: "."), "\\."), (UInt8(ascii: "/"), "\\/"),
        (UInt8(ascii: "<"), "\\u003c"), (UInt8(ascii: ">"), "\\u003e"), (UInt8(ascii: "?"), "\\?"), (UInt8(ascii: "["), "\\["),
        (UInt8(ascii: "\\"), "\\\\"), (UInt8(ascii: "]"), "\\]"), (UInt8(ascii: "^"), "\\^"), (UInt8(ascii: "{"), "\\{"),
        (UInt8(ascii: "|"), "\\|"), (UInt8(ascii: "}"), "\\}"),
    ])

    /// js.go's replace: control characters first, then the table, then U+2028 and U+2029.
    private static func replace(_ s: String, _ table: [String?]) -> String {
        // U+2028 and U+2029 start with the byte 0xE2.
        let clean = s.utf8.allSatisfy { c in c >= 0x20 && (Int(c) >= table.count || table[Int(c)] == nil) && c != 0xE2 }
        if clean { return s }
        return rewriteRunes(s) { r, _ in
            if r < 0x20 { return lowUnicodeReplacementTable[Int(r)] }
            if Int(r) < table.count, let t = table[Int(r)] { return t }
            if r == 0x2028 { return "\\u2028" }
            if r == 0x2029 { return "\\u2029" }
            return nil
        }
    }
}

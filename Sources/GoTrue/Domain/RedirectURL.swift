import AuthHTTP
import AuthJSON
import AuthStore

/// A redirect URL taken apart the way `url.Parse` / `URL.String` treat the parts the verify
/// redirects touch: the query (decoded, re-encodable) and the fragment.
package struct RedirectURL {
    var base: String
    package var rawQuery: String
    var query: [QueryItem]
    var fragment: String

    package init(_ text: String) {
        var rest = Substring(text)
        fragment = ""
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        rawQuery = ""
        if let question = rest.firstIndex(of: "?") {
            rawQuery = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        }
        base = String(rest)
        query = RedirectURL.parseQuery(rawQuery)
    }

    /// `q.Set`: replaces every value of `name`.
    mutating func set(_ name: String, _ value: String) {
        query.removeAll { $0.name == name }
        query.append(QueryItem(name: name, value: value))
    }

    package var string: String {
        base + (rawQuery.isEmpty ? "" : "?" + rawQuery) + (fragment.isEmpty ? "" : "#" + fragment)
    }

    /// `url.ParseQuery`, keeping the pairs that decode (`+` is a space).
    package static func parseQuery(_ raw: String) -> [QueryItem] {
        var items: [QueryItem] = []
        for pair in raw.split(separator: "&", omittingEmptySubsequences: true) where !pair.contains(";") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = unescape(parts[0]), let value = parts.count > 1 ? unescape(parts[1]) : "" else { continue }
            items.append(QueryItem(name: name, value: value))
        }
        return items
    }

    /// Whether `url.ParseQuery` reads `raw` without an error: no `;` in a pair and every `%`
    /// escape valid (it keeps the good pairs either way, as `parseQuery` does).
    package static func parsesCleanly(_ raw: String) -> Bool {
        for pair in raw.split(separator: "&", omittingEmptySubsequences: true) {
            if pair.contains(";") { return false }
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if unescape(parts[0]) == nil || (parts.count > 1 && unescape(parts[1]) == nil) { return false }
        }
        return true
    }

    private static func unescape(_ text: Substring) -> String? {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let b = bytes.popFirst() {
            switch b {
            case UInt8(ascii: "+"): out.append(0x20)
            case UInt8(ascii: "%"):
                guard bytes.count >= 2, let high = GoParsedURL.hexValue(bytes[bytes.startIndex]),
                      let low = GoParsedURL.hexValue(bytes[bytes.startIndex + 1]) else { return nil }
                out.append(high << 4 | low)
                bytes = bytes.dropFirst(2)
            default: out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

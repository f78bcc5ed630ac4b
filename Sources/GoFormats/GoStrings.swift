/// Go's `strings.TrimSpace` and `strings.Trim`, code point by code point as Go reads them (not
/// by Swift `Character`: "\r\n" is one Character but two spaces to Go, and a space followed by
/// a combining mark is a Character that is no space but still starts with one).
package enum GoStrings {
    /// `unicode.IsSpace`: '\t', '\n', '\v', '\f', '\r', ' ', U+0085, U+00A0 and the other
    /// White_Space code points (U+1680, U+2000...U+200A, U+2028, U+2029, U+202F, U+205F, U+3000).
    @inline(__always)
    package static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x80 { return scalar.value == 0x20 || (0x09...0x0D).contains(scalar.value) }
        return scalar.properties.isWhitespace
    }

    /// `strings.TrimSpace`: without leading and trailing white space (`unicode.IsSpace`).
    package static func trimSpace(_ text: some StringProtocol) -> String {
        trim(text, where: isSpace)
    }

    /// `strings.Trim(s, cutset)`: without the leading and trailing code points found in `cutset`.
    package static func trim(_ text: some StringProtocol, _ cutset: String) -> String {
        let set = Array(cutset.unicodeScalars)
        return trim(text) { set.contains($0) }
    }

    private static func trim(_ text: some StringProtocol, where drop: (Unicode.Scalar) -> Bool) -> String {
        let scalars = text.unicodeScalars
        var start = scalars.startIndex
        var end = scalars.endIndex
        while start < end, drop(scalars[start]) { start = scalars.index(after: start) }
        while end > start {
            let before = scalars.index(before: end)
            guard drop(scalars[before]) else { break }
            end = before
        }
        return String(String.UnicodeScalarView(scalars[start..<end]))
    }
}

/// A captured mail's HTML read the way a browser's tokenizer reads it (HTML Living Standard
/// §13.2.5), as far as the outbox needs: text, start tags with their attributes, end tags.
/// Comments, doctypes, processing instructions and the content of elements whose text is not
/// markup (`<script>`, `<style>`, `<textarea>`, ...) produce no tags, so an `href="..."` that
/// a reader sees as text, or that sits in a comment or in another attribute's value, is never
/// taken for a link.
///
/// One pass over the bytes with no recursion: the time is linear in the body's length, which
/// the template renderer already bounds.
enum HTMLTokens {
    enum Token: Equatable {
        /// Text with its character references decoded.
        case text(String)
        /// A start tag: its name in ASCII lower case and its attributes in order, each name in
        /// lower case and each value decoded; a repeated attribute keeps its first value, as the
        /// tokenizer drops the later ones (§13.2.5.33).
        case startTag(name: String, attributes: [(name: String, value: String)])
        case endTag(name: String)

        static func == (a: Token, b: Token) -> Bool {
            switch (a, b) {
            case (.text(let x), .text(let y)): return x == y
            case (.endTag(let x), .endTag(let y)): return x == y
            case (.startTag(let n1, let a1), .startTag(let n2, let a2)):
                return n1 == n2 && a1.map(\.name) == a2.map(\.name) && a1.map(\.value) == a2.map(\.value)
            default: return false
            }
        }
    }

    /// Elements whose content the tree builder switches the tokenizer to RAWTEXT or script
    /// data for (§13.2.6.4.7 "in body": no tags inside; their text is not shown, or is code).
    static let rawTextElements: Set<String> = ["script", "style", "xmp", "iframe", "noembed", "noframes"]
    /// Elements whose content is RCDATA: no tags inside, character references decoded. A title is
    /// not part of the body a reader sees, so its text is dropped; a textarea's is kept.
    static let rcdataElements: Set<String> = ["textarea", "title"]

    static func tokens(_ html: String) -> [Token] {
        let b = Array(html.utf8)
        var tokens: [Token] = []
        var i = 0
        var textStart = 0

        func text(_ from: Int, _ to: Int) {
            guard from < to else { return }
            let decoded = decodeCharacterReferences(b[from..<to], inAttribute: false)
            if !decoded.isEmpty { tokens.append(.text(decoded)) }
        }
        /// The index just after the next ">" from `from`, or the end (a bogus comment, §13.2.5.41).
        func afterBogusComment(_ from: Int) -> Int {
            var j = from
            while j < b.count, b[j] != UInt8(ascii: ">") { j += 1 }
            return min(j + 1, b.count)
        }

        while i < b.count {
            guard b[i] == UInt8(ascii: "<"), i + 1 < b.count else {
                i += 1
                continue
            }
            let next = b[i + 1]
            if isAlpha(next) {
                // Tag open state: a start tag.
                text(textStart, i)
                guard let (tag, end) = readTag(b, from: i + 1) else {
                    // EOF in a tag: the tag is dropped, nothing after it remains (§13.2.5.32).
                    textStart = b.count
                    i = b.count
                    break
                }
                tokens.append(.startTag(name: tag.name, attributes: tag.attributes))
                i = end
                textStart = end
                if tag.name == "plaintext" {
                    // Everything after `<plaintext>` is text (§13.2.5.5).
                    text(i, b.count)
                    textStart = b.count
                    i = b.count
                } else if rawTextElements.contains(tag.name) || rcdataElements.contains(tag.name) {
                    let close = closingTag(b, name: tag.name, from: i)
                    if tag.name == "textarea" { text(i, close) }
                    i = close
                    textStart = close
                }
            } else if next == UInt8(ascii: "/") {
                // End tag open state (§13.2.5.7).
                guard i + 2 < b.count else {
                    i = b.count
                    break
                }
                text(textStart, i)
                if isAlpha(b[i + 2]) {
                    guard let (tag, end) = readTag(b, from: i + 2) else {
                        textStart = b.count
                        i = b.count
                        break
                    }
                    tokens.append(.endTag(name: tag.name))
                    i = end
                } else if b[i + 2] == UInt8(ascii: ">") {
                    i += 3  // "</>" is ignored
                } else {
                    i = afterBogusComment(i + 2)
                }
                textStart = i
            } else if next == UInt8(ascii: "!") {
                // Markup declaration open state (§13.2.5.42): a comment, else a bogus comment
                // (a doctype, or CDATA, which is a bogus comment in HTML content).
                text(textStart, i)
                if i + 3 < b.count, b[i + 2] == UInt8(ascii: "-"), b[i + 3] == UInt8(ascii: "-") {
                    i = afterComment(b, from: i + 4)
                } else {
                    i = afterBogusComment(i + 2)
                }
                textStart = i
            } else if next == UInt8(ascii: "?") {
                text(textStart, i)
                i = afterBogusComment(i + 1)
                textStart = i
            } else {
                i += 1  // "<" followed by anything else is text
            }
        }
        text(textStart, b.count)
        return tokens
    }

    /// The `href` a browser would follow from an `<a>` or `<area>` tag, as the URL parser reads
    /// an attribute value (WHATWG URL §4.4: leading and trailing C0 controls and spaces are
    /// stripped, tabs and newlines removed); nil for another tag or no href.
    static func link(_ token: Token) -> String? {
        guard case .startTag(let name, let attributes) = token, name == "a" || name == "area",
              let href = attributes.first(where: { $0.name == "href" })?.value else { return nil }
        var scalars = href.unicodeScalars
        while let first = scalars.first, first.value <= 0x20 { scalars.removeFirst() }
        while let last = scalars.last, last.value <= 0x20 { scalars.removeLast() }
        scalars.removeAll { $0 == "\t" || $0 == "\n" || $0 == "\r" }
        return String(scalars)
    }

    // MARK: Tags

    private struct Tag {
        var name: String
        var attributes: [(name: String, value: String)]
    }

    /// Reads a tag from its name's first byte to its ">" (§13.2.5.8 to §13.2.5.40). Returns the
    /// tag and the index after ">", or nil when the input ends inside the tag.
    private static func readTag(_ b: [UInt8], from start: Int) -> (Tag, Int)? {
        var i = start
        while i < b.count, !isSpace(b[i]), b[i] != UInt8(ascii: "/"), b[i] != UInt8(ascii: ">") { i += 1 }
        var tag = Tag(name: lowered(b[start..<i]), attributes: [])
        var names: Set<String> = []
        func add(_ name: String, _ value: String) {
            if names.insert(name).inserted { tag.attributes.append((name, value)) }
        }
        while i < b.count {
            // Before attribute name state; "/" is the self-closing start tag state, which goes
            // back here unless ">" follows.
            if isSpace(b[i]) || b[i] == UInt8(ascii: "/") {
                i += 1
                continue
            }
            if b[i] == UInt8(ascii: ">") { return (tag, i + 1) }
            // Attribute name state: a leading "=" is part of the name (§13.2.5.32).
            let nameStart = i
            i += 1
            while i < b.count, !isSpace(b[i]), b[i] != UInt8(ascii: "/"), b[i] != UInt8(ascii: ">"), b[i] != UInt8(ascii: "=") {
                i += 1
            }
            let name = lowered(b[nameStart..<i])
            // After attribute name state.
            while i < b.count, isSpace(b[i]) { i += 1 }
            guard i < b.count, b[i] == UInt8(ascii: "=") else {
                add(name, "")
                continue
            }
            // Before attribute value state.
            i += 1
            while i < b.count, isSpace(b[i]) { i += 1 }
            guard i < b.count else { return nil }
            if b[i] == UInt8(ascii: "\"") || b[i] == UInt8(ascii: "'") {
                let quote = b[i]
                let valueStart = i + 1
                var end = valueStart
                while end < b.count, b[end] != quote { end += 1 }
                guard end < b.count else { return nil }
                add(name, decodeCharacterReferences(b[valueStart..<end], inAttribute: true))
                i = end + 1
            } else if b[i] == UInt8(ascii: ">") {
                add(name, "")  // missing-attribute-value: the tag ends here
            } else {
                let valueStart = i
                while i < b.count, !isSpace(b[i]), b[i] != UInt8(ascii: ">") { i += 1 }
                add(name, decodeCharacterReferences(b[valueStart..<i], inAttribute: true))
            }
        }
        return nil
    }

    /// The index of the "<" of the first `</name` followed by white space, "/" or ">" (an
    /// appropriate end tag, §13.2.5.11), or the end.
    private static func closingTag(_ b: [UInt8], name: String, from start: Int) -> Int {
        let n = Array(name.utf8)
        var i = start
        while i + 2 + n.count <= b.count {
            if b[i] == UInt8(ascii: "<"), b[i + 1] == UInt8(ascii: "/"), lowered(b[(i + 2)..<(i + 2 + n.count)]) == name {
                let after = i + 2 + n.count
                if after == b.count || isSpace(b[after]) || b[after] == UInt8(ascii: "/") || b[after] == UInt8(ascii: ">") {
                    return i
                }
            }
            i += 1
        }
        return b.count
    }

    /// The index after a comment that began after "<!--" at `start` (§13.2.5.43 to §13.2.5.52):
    /// "<!-->" and "<!--->" end at once; otherwise the first "-->" or "--!>" ends it; at the end
    /// of the input, the comment runs to the end.
    private static func afterComment(_ b: [UInt8], from start: Int) -> Int {
        if start < b.count, b[start] == UInt8(ascii: ">") { return start + 1 }
        if start + 1 < b.count, b[start] == UInt8(ascii: "-"), b[start + 1] == UInt8(ascii: ">") { return start + 2 }
        var i = start
        while i + 2 < b.count {
            if b[i] == UInt8(ascii: "-"), b[i + 1] == UInt8(ascii: "-") {
                if b[i + 2] == UInt8(ascii: ">") { return i + 3 }
                if b[i + 2] == UInt8(ascii: "!"), i + 3 < b.count, b[i + 3] == UInt8(ascii: ">") { return i + 4 }
            }
            i += 1
        }
        return b.count
    }

    // MARK: Character references

    /// Named references with and without ";" that the outbox decodes: those template escaping
    /// produces, each also in its legacy form without ";" where HTML has one (§13.5).
    private static let named: [String: String] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}"]
    private static let legacyNames: Set<String> = ["amp", "lt", "gt", "quot", "nbsp"]
    /// §13.2.5.80: numeric references to C1 controls mean the windows-1252 characters.
    private static let windows1252: [UInt32: UInt32] = [
        0x80: 0x20AC, 0x82: 0x201A, 0x83: 0x0192, 0x84: 0x201E, 0x85: 0x2026, 0x86: 0x2020, 0x87: 0x2021,
        0x88: 0x02C6, 0x89: 0x2030, 0x8A: 0x0160, 0x8B: 0x2039, 0x8C: 0x0152, 0x8E: 0x017D, 0x91: 0x2018,
        0x92: 0x2019, 0x93: 0x201C, 0x94: 0x201D, 0x95: 0x2022, 0x96: 0x2013, 0x97: 0x2014, 0x98: 0x02DC,
        0x99: 0x2122, 0x9A: 0x0161, 0x9B: 0x203A, 0x9C: 0x0153, 0x9E: 0x017E, 0x9F: 0x0178,
    ]

    /// Decodes character references as the tokenizer does (§13.2.5.72 to §13.2.5.80): numeric
    /// ones with or without ";" (zero, surrogates and values past U+10FFFF become U+FFFD), the
    /// named ones above; in an attribute value, a legacy name without ";" followed by "=" or an
    /// alphanumeric stays as written (`?a=1&amp=2`, `&lt1`), as browsers keep it.
    static func decodeCharacterReferences(_ text: ArraySlice<UInt8>, inAttribute: Bool) -> String {
        guard text.contains(UInt8(ascii: "&")) else { return String(decoding: text, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var i = text.startIndex
        let end = text.endIndex
        func append(_ value: UInt32) {
            var v = windows1252[value] ?? value
            if v == 0 || v > 0x10FFFF || (0xD800...0xDFFF).contains(v) { v = 0xFFFD }
            out.append(contentsOf: Array(String(Character(Unicode.Scalar(v)!)).utf8))
        }
        while i < end {
            guard text[i] == UInt8(ascii: "&"), i + 1 < end else {
                out.append(text[i])
                i += 1
                continue
            }
            if text[i + 1] == UInt8(ascii: "#") {
                var j = i + 2
                let hex = j < end && (text[j] == UInt8(ascii: "x") || text[j] == UInt8(ascii: "X"))
                if hex { j += 1 }
                let digitsStart = j
                var value: UInt32 = 0
                while j < end, let digit = hex ? hexValue(text[j]) : decimalValue(text[j]) {
                    value = min(value &* (hex ? 16 : 10) &+ digit, 0x110000)  // saturates past U+10FFFF
                    j += 1
                }
                guard j > digitsStart else {
                    out.append(text[i])  // "&#" without digits is text
                    i += 1
                    continue
                }
                if j < end, text[j] == UInt8(ascii: ";") { j += 1 }
                append(value)
                i = j
                continue
            }
            var j = i + 1
            while j < end, j - i <= 8, isAlphanumeric(text[j]) { j += 1 }
            let name = String(decoding: text[(i + 1)..<j], as: UTF8.self)
            if j < end, text[j] == UInt8(ascii: ";"), let decoded = named[name] {
                out.append(contentsOf: Array(decoded.utf8))
                i = j + 1
                continue
            }
            // The longest legacy name that prefixes what follows "&" (`&ampx` reads `&` `x`).
            if let legacy = legacyNames.filter({ name.hasPrefix($0) }).max(by: { $0.count < $1.count }) {
                let after = i + 1 + legacy.utf8.count
                let blocked = inAttribute && after < end && (isAlphanumeric(text[after]) || text[after] == UInt8(ascii: "="))
                if !blocked {
                    out.append(contentsOf: Array(named[legacy]!.utf8))
                    i = after
                    continue
                }
            }
            out.append(text[i])
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Bytes

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0C || byte == 0x0D
    }

    private static func isAlpha(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        isAlpha(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    private static func decimalValue(_ byte: UInt8) -> UInt32? {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") ? UInt32(byte - UInt8(ascii: "0")) : nil
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        if let d = decimalValue(byte) { return d }
        let lower = byte | 0x20
        return lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "f") ? UInt32(lower - UInt8(ascii: "a") + 10) : nil
    }

    /// ASCII lower case only, as the tokenizer lowers tag and attribute names.
    private static func lowered(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}

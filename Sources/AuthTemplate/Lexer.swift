import GoFormats

/// The tokenizer of Go's text/template/parse (lex.go), state for state: the parser's error
/// messages name tokens as Go's lexer cuts them, and the line of an error is the line Go's
/// lexer had reached, so both follow it exactly. Go runs its lexer on a goroutine feeding the
/// parser; the parser stops at the first error token either way, so here the tokens are
/// produced on demand by the same states.

enum ItemType: Int, Sendable {
    case error, bool, char, charConstant, comment, complex, assign, declare, eof, field, identifier,
        leftDelim, leftParen, number, pipe, rawString, rightDelim, rightParen, space, string, text,
        variable
    // Keywords come after `keyword`, as in Go, so `String()` can tell them apart.
    case keyword, block, breakKeyword, continueKeyword, dot, define, elseKeyword, end, ifKeyword, nilKeyword,
        range, template, with

    var isKeyword: Bool { rawValue > ItemType.keyword.rawValue }
}

struct Item: Sendable {
    var type: ItemType
    var pos: Int
    var val: String
    var line: Int
}

extension Item: CustomStringConvertible {
    /// Go's item.String(), which "unexpected %s in %s" quotes.
    var description: String {
        switch type {
        case .eof: return "EOF"
        case .error: return val
        default:
            if type.isKeyword { return "<\(val)>" }
            let scalars = Array(val.unicodeScalars)
            if scalars.count > 10 {
                // %.10q: the first ten runes, quoted.
                var prefix = String.UnicodeScalarView()
                prefix.append(contentsOf: scalars[0..<10])
                return GoStrconv.quote(String(prefix)) + "..."
            }
            return GoStrconv.quote(val)
        }
    }
}

private let keywords: [String: ItemType] = [
    ".": .dot, "block": .block, "break": .breakKeyword, "continue": .continueKeyword, "define": .define,
    "else": .elseKeyword, "end": .end, "if": .ifKeyword, "range": .range, "nil": .nilKeyword,
    "template": .template, "with": .with,
]

private let eof: UInt32 = 0xFFFF_FFFF

struct Lexer {
    private enum State { case text, leftDelim, comment, rightDelim, insideAction, space, identifier, field, variable,
        char, number, quote, rawQuote, done }

    let input: [UInt8]
    private var state: State = .text
    private var pos = 0
    private var start = 0
    private var atEOF = false
    private var parenDepth = 0
    private var line = 1
    private var startLine = 1
    private var pending: [Item] = []
    private var pendingIndex = 0

    private static let leftDelim: [UInt8] = Array("{{".utf8)
    private static let rightDelim: [UInt8] = Array("}}".utf8)
    private static let trimMarkerLength = 2

    init(_ input: [UInt8]) {
        self.input = input
    }

    /// The next token; after `eof` or an error, `eof` again (Go closes the channel).
    mutating func nextItem() -> Item {
        while pendingIndex == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            if state == .done { return Item(type: .eof, pos: pos, val: "", line: line) }
            step()
        }
        let item = pending[pendingIndex]
        pendingIndex += 1
        return item
    }

    // MARK: Reading runes

    private mutating func next() -> UInt32 {
        if pos >= input.count {
            atEOF = true
            return eof
        }
        let (r, w) = GoUTF8.decodeRune(input, pos)
        pos += w
        if r == 0x0A { line += 1 }
        return r
    }

    private mutating func peek() -> UInt32 {
        let r = next()
        backup()
        return r
    }

    private mutating func backup() {
        if !atEOF && pos > 0 {
            let (r, w) = GoUTF8.decodeLastRune(input, pos)
            pos -= w
            if r == 0x0A { line -= 1 }
        }
    }

    private func text(_ from: Int, _ to: Int) -> String {
        String(decoding: input[from..<to], as: UTF8.self)
    }

    private mutating func emit(_ type: ItemType) {
        pending.append(Item(type: type, pos: start, val: text(start, pos), line: startLine))
        start = pos
        startLine = line
    }

    private mutating func ignore() {
        line += count(newlinesIn: start, pos)
        start = pos
        startLine = line
    }

    private func count(newlinesIn from: Int, _ to: Int) -> Int {
        var n = 0
        if from < to {
            for i in from..<to where input[i] == UInt8(ascii: "\n") { n += 1 }
        }
        return n
    }

    private mutating func accept(_ valid: String) -> Bool {
        let r = next()
        if r != eof, valid.unicodeScalars.contains(where: { $0.value == r }) { return true }
        backup()
        return false
    }

    private mutating func acceptRun(_ valid: String) {
        while true {
            let r = next()
            if r == eof || !valid.unicodeScalars.contains(where: { $0.value == r }) { break }
        }
        backup()
    }

    private mutating func errorf(_ message: String) {
        pending.append(Item(type: .error, pos: start, val: message, line: startLine))
        state = .done
    }

    private func hasPrefix(_ prefix: [UInt8], at offset: Int) -> Bool {
        guard offset >= 0, offset + prefix.count <= input.count else { return false }
        for i in 0..<prefix.count where input[offset + i] != prefix[i] { return false }
        return true
    }

    private static func isSpace(_ r: UInt32) -> Bool {
        r == 0x20 || r == 0x09 || r == 0x0D || r == 0x0A
    }

    private func hasLeftTrimMarker(at offset: Int) -> Bool {
        offset + 2 <= input.count && input[offset] == UInt8(ascii: "-") && Lexer.isSpace(UInt32(input[offset + 1]))
    }

    private func hasRightTrimMarker(at offset: Int) -> Bool {
        offset >= 0 && offset + 2 <= input.count && Lexer.isSpace(UInt32(input[offset])) && input[offset + 1] == UInt8(ascii: "-")
    }

    private func atRightDelim() -> (delim: Bool, trimSpaces: Bool) {
        if hasRightTrimMarker(at: pos) && hasPrefix(Lexer.rightDelim, at: pos + Lexer.trimMarkerLength) {
            return (true, true)
        }
        if hasPrefix(Lexer.rightDelim, at: pos) { return (true, false) }
        return (false, false)
    }

    // MARK: States

    private mutating func step() {
        switch state {
        case .text: lexText()
        case .leftDelim: lexLeftDelim()
        case .comment: lexComment()
        case .rightDelim: lexRightDelim()
        case .insideAction: lexInsideAction()
        case .space: lexSpace()
        case .identifier: lexIdentifier()
        case .field: lexFieldOrVariable(.field)
        case .variable: lexVariable()
        case .char: lexQuoted(until: UInt32(ascii: "'"), .charConstant, unterminated: "unterminated character constant")
        case .number: lexNumber()
        case .quote: lexQuoted(until: UInt32(ascii: "\""), .string, unterminated: "unterminated quoted string")
        case .rawQuote: lexRawQuote()
        case .done: break
        }
    }

    private mutating func lexText() {
        if let x = firstIndex(of: Lexer.leftDelim, from: pos) {
            let ldn = Lexer.leftDelim.count
            pos = x
            var trimLength = 0
            if hasLeftTrimMarker(at: pos + ldn) {
                var i = pos
                while i > start, Lexer.isSpace(UInt32(input[i - 1])) { i -= 1 }
                trimLength = pos - i
            }
            pos -= trimLength
            if pos > start {
                line += count(newlinesIn: start, pos)
                emit(.text)
            }
            pos += trimLength
            ignore()
            state = .leftDelim
            return
        }
        pos = input.count
        if pos > start {
            line += count(newlinesIn: start, pos)
            emit(.text)
        }
        emit(.eof)
        state = .done
    }

    private func firstIndex(of needle: [UInt8], from: Int) -> Int? {
        guard needle.count <= input.count else { return nil }
        var i = from
        while i + needle.count <= input.count {
            if input[i] == needle[0] && hasPrefix(needle, at: i) { return i }
            i += 1
        }
        return nil
    }

    private mutating func lexLeftDelim() {
        pos += Lexer.leftDelim.count
        let trimSpace = hasLeftTrimMarker(at: pos)
        let afterMarker = trimSpace ? Lexer.trimMarkerLength : 0
        if hasPrefix(Array("/*".utf8), at: pos + afterMarker) {
            pos += afterMarker
            ignore()
            state = .comment
            return
        }
        emit(.leftDelim)
        pos += afterMarker
        ignore()
        parenDepth = 0
        state = .insideAction
    }

    private mutating func lexComment() {
        pos += 2
        guard let i = firstIndex(of: Array("*/".utf8), from: pos) else {
            errorf("unclosed comment")
            return
        }
        pos = i + 2
        let (delim, trimSpace) = atRightDelim()
        if !delim {
            errorf("comment ends before closing delimiter")
            return
        }
        if trimSpace { pos += Lexer.trimMarkerLength }
        pos += Lexer.rightDelim.count
        if trimSpace {
            while pos < input.count, Lexer.isSpace(UInt32(input[pos])) { pos += 1 }
        }
        ignore()
        state = .text
    }

    private mutating func lexRightDelim() {
        let trimSpace = hasRightTrimMarker(at: pos)
        if trimSpace {
            pos += Lexer.trimMarkerLength
            ignore()
        }
        pos += Lexer.rightDelim.count
        emit(.rightDelim)
        if trimSpace {
            while pos < input.count, Lexer.isSpace(UInt32(input[pos])) { pos += 1 }
            ignore()
        }
        state = .text
    }

    private mutating func lexInsideAction() {
        let (delim, _) = atRightDelim()
        if delim {
            if parenDepth == 0 {
                state = .rightDelim
                return
            }
            errorf("unclosed left paren")
            return
        }
        let r = next()
        switch r {
        case eof:
            errorf("unclosed action")
        case _ where Lexer.isSpace(r):
            backup()  // The space may start a ' -}}'.
            state = .space
        case UInt32(ascii: "="):
            emit(.assign)
        case UInt32(ascii: ":"):
            if next() != UInt32(ascii: "=") {
                errorf("expected :=")
                return
            }
            emit(.declare)
        case UInt32(ascii: "|"):
            emit(.pipe)
        case UInt32(ascii: "\""):
            state = .quote
        case UInt32(ascii: "`"):
            state = .rawQuote
        case UInt32(ascii: "$"):
            state = .variable
        case UInt32(ascii: "'"):
            state = .char
        case UInt32(ascii: "."):
            // A '.' followed by a digit starts a number.
            if pos < input.count {
                let c = input[pos]
                if c < UInt8(ascii: "0") || c > UInt8(ascii: "9") {
                    state = .field
                    return
                }
            }
            backup()
            state = .number
        case UInt32(ascii: "+"), UInt32(ascii: "-"), UInt32(ascii: "0")...UInt32(ascii: "9"):
            backup()
            state = .number
        case _ where GoUnicode.isAlphaNumeric(r):
            backup()
            state = .identifier
        case UInt32(ascii: "("):
            emit(.leftParen)
            parenDepth += 1
        case UInt32(ascii: ")"):
            parenDepth -= 1
            if parenDepth < 0 {
                // Reported by the lexer, before the parser sees the parenthesis.
                errorf("unexpected right paren")
            } else {
                emit(.rightParen)
            }
        case _ where r <= 0x7F && GoStrconv.isPrint(r):
            emit(.char)
        default:
            errorf("unrecognized character in action: \(GoUnicode.unicodeVerbose(r))")
        }
    }

    private mutating func lexSpace() {
        var numSpaces = 0
        while true {
            let r = peek()
            if !Lexer.isSpace(r) { break }
            _ = next()
            numSpaces += 1
        }
        // ' -}}' closes the action: the space before the minus belongs to the delimiter.
        if hasRightTrimMarker(at: pos - 1) && hasPrefix(Lexer.rightDelim, at: pos - 1 + Lexer.trimMarkerLength) {
            backup()  // Back to the space.
            if numSpaces == 1 {
                state = .rightDelim
                return
            }
        }
        emit(.space)
        state = .insideAction
    }

    private mutating func lexIdentifier() {
        while true {
            let r = next()
            if r != eof && GoUnicode.isAlphaNumeric(r) { continue }
            backup()
            let word = text(start, pos)
            if !atTerminator() {
                errorf("bad character \(GoUnicode.unicodeVerbose(r))")
                return
            }
            if let keyword = keywords[word], keyword.isKeyword {
                // break and continue are keywords unless a function of that name is defined;
                // none is here, as with no Funcs in GoTrue.
                emit(keyword)
            } else if word.utf8.first == UInt8(ascii: ".") {
                emit(.field)
            } else if word == "true" || word == "false" {
                emit(.bool)
            } else {
                emit(.identifier)
            }
            break
        }
        state = .insideAction
    }

    private mutating func lexVariable() {
        if atTerminator() {  // A lone '$'.
            emit(.variable)
            state = .insideAction
            return
        }
        lexFieldOrVariable(.variable)
    }

    private mutating func lexFieldOrVariable(_ type: ItemType) {
        if atTerminator() {  // A lone '.' or '$'.
            emit(type == .variable ? .variable : .dot)
            state = .insideAction
            return
        }
        var r: UInt32
        while true {
            r = next()
            if r == eof || !GoUnicode.isAlphaNumeric(r) {
                backup()
                break
            }
        }
        if !atTerminator() {
            errorf("bad character \(GoUnicode.unicodeVerbose(r))")
            return
        }
        emit(type)
        state = .insideAction
    }

    private mutating func atTerminator() -> Bool {
        let r = peek()
        if Lexer.isSpace(r) { return true }
        switch r {
        case eof, UInt32(ascii: "."), UInt32(ascii: ","), UInt32(ascii: "|"), UInt32(ascii: ":"), UInt32(ascii: ")"),
            UInt32(ascii: "("):
            return true
        default:
            return hasPrefix(Lexer.rightDelim, at: pos)
        }
    }

    private mutating func lexNumber() {
        if !scanNumber() {
            errorf("bad number syntax: \(GoStrconv.quote(text(start, pos)))")
            return
        }
        let sign = peek()
        if sign == UInt32(ascii: "+") || sign == UInt32(ascii: "-") {
            // A sign after a number makes a complex constant, which ends in 'i'.
            if !scanNumber() || input[pos - 1] != UInt8(ascii: "i") {
                errorf("bad number syntax: \(GoStrconv.quote(text(start, pos)))")
                return
            }
            emit(.complex)
        } else {
            emit(.number)
        }
        state = .insideAction
    }

    private mutating func scanNumber() -> Bool {
        _ = accept("+-")
        var digits = "0123456789_"
        if accept("0") {
            if accept("xX") {
                digits = "0123456789abcdefABCDEF_"
            } else if accept("oO") {
                digits = "01234567_"
            } else if accept("bB") {
                digits = "01_"
            }
        }
        acceptRun(digits)
        if accept(".") { acceptRun(digits) }
        if digits.count == 10 + 1 && accept("eE") {
            _ = accept("+-")
            acceptRun("0123456789_")
        }
        if digits.count == 16 + 6 + 1 && accept("pP") {
            _ = accept("+-")
            acceptRun("0123456789_")
        }
        _ = accept("i")
        let r = peek()
        if r != eof && GoUnicode.isAlphaNumeric(r) {
            _ = next()
            return false
        }
        return true
    }

    /// A character constant (`'`) or an interpreted string (`"`), up to its closing `quote`: a
    /// backslash escapes the character after it, and neither may hold a newline or reach the end
    /// of the input (Go's lexChar and lexQuote, one loop with its own quote, item and error).
    private mutating func lexQuoted(until quote: UInt32, _ type: ItemType, unterminated: String) {
        loop: while true {
            switch next() {
            case UInt32(ascii: "\\"):
                let r = next()
                if r != eof && r != 0x0A { continue loop }
                errorf(unterminated)
                return
            case eof, 0x0A:
                errorf(unterminated)
                return
            case quote:
                break loop
            default:
                continue loop
            }
        }
        emit(type)
        state = .insideAction
    }

    private mutating func lexRawQuote() {
        loop: while true {
            switch next() {
            case eof:
                errorf("unterminated raw quoted string")
                return
            case UInt32(ascii: "`"):
                break loop
            default:
                continue loop
            }
        }
        emit(.rawString)
        state = .insideAction
    }
}

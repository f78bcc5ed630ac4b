import AuthJSON
import GoFormats

/// Go's fmt for the values a template handles (print.go, format.go): Sprint, Sprintln and
/// Sprintf with their flags, widths, precisions, argument indexes and error forms
/// (`%!d(string=x)`, `%!s(MISSING)`, `%!(EXTRA ...)`). Printing an action's value is
/// fmt.Fprint, so `%v` of a float64 here is every number a template prints.
struct GoFormat {
    private var buf: [UInt8] = []
    // fmt.fmtFlags
    private var widPresent = false
    private var precPresent = false
    private var minus = false
    private var plus = false
    private var sharp = false
    private var space = false
    private var zero = false
    private var plusV = false
    private var sharpV = false
    private var wid = 0
    private var prec = 0
    /// The operand being printed, for badVerb's `%!d(TYPE=VALUE)`.
    private var arg: Value = .invalid
    private var goodArgNum = true
    private var reordered = false

    private static let ldigits: [UInt8] = Array("0123456789abcdefx".utf8)
    private static let udigits: [UInt8] = Array("0123456789ABCDEFX".utf8)

    // MARK: Entry points

    static func sprint(_ args: [Value]) -> String {
        var p = GoFormat()
        p.doPrint(args)
        return String(decoding: p.buf, as: UTF8.self)
    }

    static func print(_ args: [Value], to out: inout [UInt8]) {
        // The common case, a string, needs no formatter.
        if args.count == 1, case .string(let s) = args[0] {
            out.append(contentsOf: s.utf8)
            return
        }
        var p = GoFormat()
        p.doPrint(args)
        out.append(contentsOf: p.buf)
    }

    static func sprintln(_ args: [Value]) -> String {
        var p = GoFormat()
        for (i, a) in args.enumerated() {
            if p.overLimit { break }
            if i > 0 { p.buf.append(UInt8(ascii: " ")) }
            p.printArg(a, UInt32(ascii: "v"))
        }
        p.buf.append(UInt8(ascii: "\n"))
        return String(decoding: p.buf, as: UTF8.self)
    }

    static func sprintf(_ format: String, _ args: [Value]) -> String {
        var p = GoFormat()
        p.doPrintf(Array(format.utf8), args)
        return String(decoding: p.buf, as: UTF8.self)
    }

    /// Whether the text so far is past the render limit (`ExecState.maxOutputBytes`): then the
    /// formatting stops early, since the caller refuses the result anyway. Go formats it all;
    /// one `printf` of a few hundred `%9999999d` would otherwise build gigabytes.
    private var overLimit: Bool { buf.count > ExecState.maxOutputBytes }

    private mutating func clearFlags() {
        widPresent = false
        precPresent = false
        minus = false
        plus = false
        sharp = false
        space = false
        zero = false
        plusV = false
        sharpV = false
        wid = 0
        prec = 0
    }

    private mutating func doPrint(_ args: [Value]) {
        var prevString = false
        for (i, a) in args.enumerated() {
            if overLimit { break }
            var isString = false
            if case .string = a { isString = true }
            // A space between two operands when neither is a string.
            if i > 0 && !isString && !prevString { buf.append(UInt8(ascii: " ")) }
            printArg(a, UInt32(ascii: "v"))
            prevString = isString
        }
    }

    // MARK: Printf

    private static func parsenum(_ s: [UInt8], _ start: Int, _ end: Int) -> (num: Int, isnum: Bool, newi: Int) {
        if start >= end { return (0, false, end) }
        var num = 0
        var isnum = false
        var newi = start
        while newi < end && s[newi] >= UInt8(ascii: "0") && s[newi] <= UInt8(ascii: "9") {
            if num > 1_000_000 || num < -1_000_000 { return (0, false, end) }  // Overflow.
            num = num * 10 + Int(s[newi] - UInt8(ascii: "0"))
            isnum = true
            newi += 1
        }
        return (num, isnum, newi)
    }

    private mutating func argNumber(_ argNum: Int, _ format: [UInt8], _ i: Int, _ numArgs: Int) -> (Int, Int, Bool) {
        if format.count <= i || format[i] != UInt8(ascii: "[") { return (argNum, i, false) }
        reordered = true
        // parseArgNumber: "[n]" with n from 1.
        var index = 0
        var width = 1
        var ok = false
        if format.count - i >= 3 {
            var j = i + 1
            while j < format.count {
                if format[j] == UInt8(ascii: "]") {
                    let (n, isnum, newi) = GoFormat.parsenum(format, i + 1, j)
                    if !isnum || newi != j {
                        width = j - i + 1
                    } else {
                        index = n - 1
                        width = j - i + 1
                        ok = true
                    }
                    break
                }
                j += 1
            }
        }
        if ok && index >= 0 && index < numArgs { return (index, i + width, true) }
        goodArgNum = false
        return (argNum, i + width, ok)
    }

    private static func intFromArg(_ a: [Value], _ argNum: Int) -> (num: Int, isInt: Bool, newArgNum: Int) {
        guard argNum < a.count else { return (0, false, argNum) }
        var num = 0
        var isInt = false
        switch a[argNum] {
        case .int(let i):
            num = i
            isInt = true
        case .uint8(let u):
            num = Int(u)
            isInt = true
        default:
            break
        }
        if num > 1_000_000 || num < -1_000_000 { return (0, false, argNum + 1) }
        return (num, isInt, argNum + 1)
    }

    private mutating func doPrintf(_ format: [UInt8], _ a: [Value]) {
        let end = format.count
        var argNum = 0
        var afterIndex = false
        reordered = false
        var i = 0
        formatLoop: while i < end {
            if overLimit { return }
            goodArgNum = true
            let lasti = i
            while i < end && format[i] != UInt8(ascii: "%") { i += 1 }
            if i > lasti { buf.append(contentsOf: format[lasti..<i]) }
            if i >= end { break }
            i += 1  // Past the '%'.
            clearFlags()
            simpleFormat: while i < end {
                let c = format[i]
                switch c {
                case UInt8(ascii: "#"): sharp = true
                case UInt8(ascii: "0"): zero = !minus  // '-' wins over '0'.
                case UInt8(ascii: "+"): plus = true
                case UInt8(ascii: "-"):
                    minus = true
                    zero = false
                case UInt8(ascii: " "): space = true
                default:
                    // A lower-case verb right after the flags: no width, precision or index to read.
                    if c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z") && argNum < a.count {
                        if c == UInt8(ascii: "v") {
                            sharpV = sharp
                            sharp = false
                            plusV = plus
                            plus = false
                        }
                        printArg(a[argNum], UInt32(c))
                        argNum += 1
                        i += 1
                        continue formatLoop
                    }
                    break simpleFormat
                }
                i += 1
            }

            (argNum, i, afterIndex) = argNumber(argNum, format, i, a.count)
            if i < end && format[i] == UInt8(ascii: "*") {
                i += 1
                (wid, widPresent, argNum) = GoFormat.intFromArg(a, argNum)
                if !widPresent { buf.append(contentsOf: Array("%!(BADWIDTH)".utf8)) }
                if wid < 0 {
                    wid = -wid
                    minus = true
                    zero = false
                }
                afterIndex = false
            } else {
                (wid, widPresent, i) = GoFormat.parsenum(format, i, end)
                if afterIndex && widPresent { goodArgNum = false }
            }

            if i + 1 < end && format[i] == UInt8(ascii: ".") {
                i += 1
                if afterIndex { goodArgNum = false }
                (argNum, i, afterIndex) = argNumber(argNum, format, i, a.count)
                if i < end && format[i] == UInt8(ascii: "*") {
                    i += 1
                    (prec, precPresent, argNum) = GoFormat.intFromArg(a, argNum)
                    if prec < 0 {
                        prec = 0
                        precPresent = false
                    }
                    if !precPresent { buf.append(contentsOf: Array("%!(BADPREC)".utf8)) }
                    afterIndex = false
                } else {
                    (prec, precPresent, i) = GoFormat.parsenum(format, i, end)
                    if !precPresent {
                        prec = 0
                        precPresent = true
                    }
                }
            }

            if !afterIndex { (argNum, i, afterIndex) = argNumber(argNum, format, i, a.count) }

            if i >= end {
                buf.append(contentsOf: Array("%!(NOVERB)".utf8))
                break
            }

            var verb = UInt32(format[i])
            var size = 1
            if format[i] >= 0x80 { (verb, size) = GoUTF8.decodeRune(format, i) }
            i += size

            if verb == UInt32(ascii: "%") {
                buf.append(UInt8(ascii: "%"))  // %% takes no operand.
            } else if !goodArgNum {
                buf.append(contentsOf: Array("%!".utf8))
                appendRune(verb)
                buf.append(contentsOf: Array("(BADINDEX)".utf8))
            } else if argNum >= a.count {
                buf.append(contentsOf: Array("%!".utf8))
                appendRune(verb)
                buf.append(contentsOf: Array("(MISSING)".utf8))
            } else {
                if verb == UInt32(ascii: "v") {
                    sharpV = sharp
                    sharp = false
                    plusV = plus
                    plus = false
                }
                printArg(a[argNum], verb)
                argNum += 1
            }
        }

        // Arguments left over, unless they were addressed out of order.
        if !reordered && argNum < a.count {
            clearFlags()
            buf.append(contentsOf: Array("%!(EXTRA ".utf8))
            for (k, extra) in a[argNum...].enumerated() {
                if overLimit { return }
                if k > 0 { buf.append(contentsOf: Array(", ".utf8)) }
                if !extra.isValid {
                    buf.append(contentsOf: Array("<nil>".utf8))
                } else {
                    buf.append(contentsOf: Array(extra.typeName.utf8))
                    buf.append(UInt8(ascii: "="))
                    printArg(extra, UInt32(ascii: "v"))
                }
            }
            buf.append(UInt8(ascii: ")"))
        }
    }

    private mutating func appendRune(_ r: UInt32) {
        let scalar = Unicode.Scalar(r) ?? "\u{FFFD}"
        buf.append(contentsOf: Array(String(scalar).utf8))
    }

    // MARK: Operands

    private mutating func printArg(_ value: Value, _ verb: UInt32) {
        arg = value
        switch value {
        case .invalid:
            switch verb {
            case UInt32(ascii: "T"), UInt32(ascii: "v"): padString(Array("<nil>".utf8))
            default: badVerb(verb)
            }
            return
        default:
            break
        }
        if verb == UInt32(ascii: "T") {
            fmtS(Array(value.typeName.utf8))
            return
        }
        printValue(value, verb, depth: 0)
    }

    private mutating func printValue(_ value: Value, _ verb: UInt32, depth: Int) {
        if depth > 0 { arg = value }
        switch value {
        case .invalid:
            if depth == 0 {
                buf.append(contentsOf: Array("<invalid reflect.Value>".utf8))
            } else if verb == UInt32(ascii: "v") {
                buf.append(contentsOf: Array("<nil>".utf8))
            } else {
                badVerb(verb)
            }
        case .bool(let b):
            switch verb {
            case UInt32(ascii: "t"), UInt32(ascii: "v"): padString(Array((b ? "true" : "false").utf8))
            default: badVerb(verb)
            }
        case .int(let i):
            printInteger(UInt64(bitPattern: Int64(i)), signed: true, verb)
        case .uint8(let u):
            printInteger(UInt64(u), signed: false, verb)
        case .float(let f):
            switch verb {
            case UInt32(ascii: "v"): fmtFloat(f, UInt8(ascii: "g"), -1)
            case UInt32(ascii: "b"), UInt32(ascii: "g"), UInt32(ascii: "G"), UInt32(ascii: "x"), UInt32(ascii: "X"):
                fmtFloat(f, UInt8(verb), -1)
            case UInt32(ascii: "f"), UInt32(ascii: "e"), UInt32(ascii: "E"): fmtFloat(f, UInt8(verb), 6)
            case UInt32(ascii: "F"): fmtFloat(f, UInt8(ascii: "f"), 6)
            default: badVerb(verb)
            }
        case .complex(let re, let im):
            switch verb {
            case UInt32(ascii: "v"), UInt32(ascii: "b"), UInt32(ascii: "g"), UInt32(ascii: "G"), UInt32(ascii: "x"),
                UInt32(ascii: "X"), UInt32(ascii: "f"), UInt32(ascii: "F"), UInt32(ascii: "e"), UInt32(ascii: "E"):
                let oldPlus = plus
                buf.append(UInt8(ascii: "("))
                let v: UInt8 = verb == UInt32(ascii: "v") ? UInt8(ascii: "g") : (verb == UInt32(ascii: "F") ? UInt8(ascii: "f") : UInt8(verb))
                let p = (verb == UInt32(ascii: "f") || verb == UInt32(ascii: "F") || verb == UInt32(ascii: "e") || verb == UInt32(ascii: "E")) ? 6 : -1
                fmtFloat(re, v, p)
                plus = true
                fmtFloat(im, v, p)
                buf.append(contentsOf: Array("i)".utf8))
                plus = oldPlus
            default:
                badVerb(verb)
            }
        case .string(let s):
            printString(Array(s.utf8), verb)
        case .map(let object):
            if sharpV {
                buf.append(contentsOf: Array("map[string]interface {}{".utf8))
            } else {
                buf.append(contentsOf: Array("map[".utf8))
            }
            let sorted = object.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (i, member) in sorted.enumerated() {
                if i > 0 { buf.append(contentsOf: Array((sharpV ? ", " : " ").utf8)) }
                printValue(.string(member.key), verb, depth: depth + 1)
                buf.append(UInt8(ascii: ":"))
                printValue(.element(member.value), verb, depth: depth + 1)
            }
            buf.append(UInt8(ascii: sharpV ? "}" : "]"))
        case .slice(let s):
            if sharpV {
                buf.append(contentsOf: Array("[]interface {}{".utf8))
            } else {
                buf.append(UInt8(ascii: "["))
            }
            for i in 0..<s.count {
                if i > 0 { buf.append(contentsOf: Array((sharpV ? ", " : " ").utf8)) }
                printValue(.element(s[i]), verb, depth: depth + 1)
            }
            buf.append(UInt8(ascii: sharpV ? "}" : "]"))
        case .element(let json):
            if case .null = json {
                buf.append(contentsOf: Array((sharpV ? "interface {}(nil)" : "<nil>").utf8))
            } else {
                printValue(Value(concrete: json), verb, depth: depth + 1)
            }
        }
    }

    private mutating func badVerb(_ verb: UInt32) {
        buf.append(contentsOf: Array("%!".utf8))
        appendRune(verb)
        buf.append(UInt8(ascii: "("))
        switch arg {
        case .invalid:
            buf.append(contentsOf: Array("<nil>".utf8))
        default:
            buf.append(contentsOf: Array(arg.typeName.utf8))
            buf.append(UInt8(ascii: "="))
            printArg(arg, UInt32(ascii: "v"))
        }
        buf.append(UInt8(ascii: ")"))
    }

    // MARK: Padding

    private mutating func writePadding(_ n: Int) {
        guard n > 0 else { return }
        buf.append(contentsOf: repeatElement(zero ? UInt8(ascii: "0") : UInt8(ascii: " "), count: n))
    }

    private static func runeCount(_ b: ArraySlice<UInt8>) -> Int {
        // Every byte that does not continue a sequence starts a rune (invalid bytes count one
        // each, as utf8.RuneCount counts them, up to rare malformed sequences).
        var n = 0
        for c in b where c & 0xC0 != 0x80 { n += 1 }
        return n
    }

    private mutating func pad(_ b: ArraySlice<UInt8>) {
        if !widPresent || wid == 0 {
            buf.append(contentsOf: b)
            return
        }
        let width = wid - GoFormat.runeCount(b)
        if !minus {
            writePadding(width)
            buf.append(contentsOf: b)
        } else {
            buf.append(contentsOf: b)
            writePadding(width)
        }
    }

    private mutating func padString(_ s: [UInt8]) { pad(s[...]) }

    // MARK: Integers

    private mutating func printInteger(_ v: UInt64, signed: Bool, _ verb: UInt32) {
        switch verb {
        case UInt32(ascii: "v"):
            if sharpV && !signed {
                fmt0x64(v, leading0x: true)
            } else {
                fmtInteger(v, base: 10, signed: signed, verb: verb, digits: GoFormat.ldigits)
            }
        case UInt32(ascii: "d"): fmtInteger(v, base: 10, signed: signed, verb: verb, digits: GoFormat.ldigits)
        case UInt32(ascii: "b"): fmtInteger(v, base: 2, signed: signed, verb: verb, digits: GoFormat.ldigits)
        case UInt32(ascii: "o"), UInt32(ascii: "O"): fmtInteger(v, base: 8, signed: signed, verb: verb, digits: GoFormat.ldigits)
        case UInt32(ascii: "x"): fmtInteger(v, base: 16, signed: signed, verb: verb, digits: GoFormat.ldigits)
        case UInt32(ascii: "X"): fmtInteger(v, base: 16, signed: signed, verb: verb, digits: GoFormat.udigits)
        case UInt32(ascii: "c"):
            let r = v > 0x10FFFF ? 0xFFFD : UInt32(v)
            let scalar = Unicode.Scalar(r) ?? "\u{FFFD}"
            pad(Array(String(scalar).utf8)[...])
        case UInt32(ascii: "q"):
            let r = v > 0x10FFFF ? 0xFFFD : UInt32(v)
            pad(Array(GoStrconv.quoteRune(r, asciiOnly: plus).utf8)[...])
        case UInt32(ascii: "U"):
            var s = GoUnicode.unicodePlain(UInt32(truncatingIfNeeded: v))
            if sharp && v <= 0x10FFFF && GoStrconv.isPrint(UInt32(v)), let scalar = Unicode.Scalar(UInt32(v)) {
                s += " '" + String(scalar) + "'"
            }
            let oldZero = zero
            zero = false
            pad(Array(s.utf8)[...])
            zero = oldZero
        default:
            badVerb(verb)
        }
    }

    private mutating func fmt0x64(_ v: UInt64, leading0x: Bool) {
        let oldSharp = sharp
        sharp = leading0x
        fmtInteger(v, base: 16, signed: false, verb: UInt32(ascii: "v"), digits: GoFormat.ldigits)
        sharp = oldSharp
    }

    private mutating func fmtInteger(_ value: UInt64, base: UInt64, signed: Bool, verb: UInt32, digits: [UInt8]) {
        var u = value
        let negative = signed && Int64(bitPattern: u) < 0
        if negative { u = 0 &- u }
        var precision = 0
        if precPresent {
            precision = prec
            // %.0d of zero prints only the padding.
            if precision == 0 && u == 0 {
                let oldZero = zero
                zero = false
                writePadding(wid)
                zero = oldZero
                return
            }
        } else if zero && widPresent {
            precision = wid
            if negative || plus || space { precision -= 1 }  // The sign takes a place.
        }
        var out: [UInt8] = []
        repeat {
            out.append(digits[Int(u % base)])
            u /= base
        } while u > 0
        while out.count < precision { out.append(UInt8(ascii: "0")) }
        if sharp {
            switch base {
            case 2:
                out.append(UInt8(ascii: "b"))
                out.append(UInt8(ascii: "0"))
            case 8:
                if out.last != UInt8(ascii: "0") { out.append(UInt8(ascii: "0")) }
            case 16:
                out.append(digits[16])
                out.append(UInt8(ascii: "0"))
            default: break
            }
        }
        if verb == UInt32(ascii: "O") {
            out.append(UInt8(ascii: "o"))
            out.append(UInt8(ascii: "0"))
        }
        if negative {
            out.append(UInt8(ascii: "-"))
        } else if plus {
            out.append(UInt8(ascii: "+"))
        } else if space {
            out.append(UInt8(ascii: " "))
        }
        // Zero padding was handled as precision above, or is ignored with a precision.
        let oldZero = zero
        zero = false
        pad(out.reversed()[...])
        zero = oldZero
    }

    // MARK: Strings

    private mutating func printString(_ s: [UInt8], _ verb: UInt32) {
        switch verb {
        case UInt32(ascii: "v"):
            if sharpV { fmtQ(s) } else { fmtS(s) }
        case UInt32(ascii: "s"): fmtS(s)
        case UInt32(ascii: "x"): fmtSx(s, GoFormat.ldigits)
        case UInt32(ascii: "X"): fmtSx(s, GoFormat.udigits)
        case UInt32(ascii: "q"): fmtQ(s)
        default: badVerb(verb)
        }
    }

    /// The string cut to `prec` runes when a precision is given.
    private func truncate(_ s: [UInt8]) -> [UInt8] {
        guard precPresent else { return s }
        var n = prec
        var i = 0
        while i < s.count {
            n -= 1
            if n < 0 { return Array(s[..<i]) }
            i += GoUTF8.decodeRune(s, i).1
        }
        return s
    }

    private mutating func fmtS(_ s: [UInt8]) { padString(truncate(s)) }

    private mutating func fmtQ(_ s: [UInt8]) {
        let t = truncate(s)
        let text = String(decoding: t, as: UTF8.self)
        if sharp && !t.contains(UInt8(ascii: "`")) && t.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) })
            && String(validating: t, as: UTF8.self) != nil && !text.unicodeScalars.contains("\u{FEFF}")
        {
            padString(Array(("`" + text + "`").utf8))
            return
        }
        var out: [UInt8] = [UInt8(ascii: "\"")]
        GoStrconv.appendQuoted(t, quote: UInt8(ascii: "\""), asciiOnly: plus, to: &out)
        out.append(UInt8(ascii: "\""))
        padString(out)
    }

    private mutating func fmtSx(_ s: [UInt8], _ digits: [UInt8]) {
        var length = s.count
        if precPresent && prec < length { length = prec }
        var width = 2 * length
        if width > 0 {
            if space {
                if sharp { width *= 2 }
                width += length - 1
            } else if sharp {
                width += 2
            }
        } else {
            if widPresent { writePadding(wid) }
            return
        }
        if widPresent && wid > width && !minus { writePadding(wid - width) }
        if sharp {
            buf.append(UInt8(ascii: "0"))
            buf.append(digits[16])
        }
        for i in 0..<length {
            if space && i > 0 {
                buf.append(UInt8(ascii: " "))
                if sharp {
                    buf.append(UInt8(ascii: "0"))
                    buf.append(digits[16])
                }
            }
            buf.append(digits[Int(s[i] >> 4)])
            buf.append(digits[Int(s[i] & 0xF)])
        }
        if widPresent && wid > width && minus { writePadding(wid - width) }
    }

    // MARK: Floats

    private mutating func fmtFloat(_ v: Double, _ verb: UInt8, _ precision: Int) {
        var p = precision
        if precPresent { p = prec }
        guard let formatted = GoFloatFormat.format(v, verb, p) else {
            // Hexadecimal and binary float forms are not reproduced.
            badVerb(UInt32(verb))
            return
        }
        var num: [UInt8] = [UInt8(ascii: "+")]
        num.append(contentsOf: formatted.utf8)
        if num[1] == UInt8(ascii: "-") || num[1] == UInt8(ascii: "+") {
            num.removeFirst()
        }
        if space && num[0] == UInt8(ascii: "+") && !plus { num[0] = UInt8(ascii: " ") }
        // Infinities and NaN (not produced by JSON data) pad with spaces.
        if num[1] == UInt8(ascii: "I") || num[1] == UInt8(ascii: "N") {
            let oldZero = zero
            zero = false
            if num[1] == UInt8(ascii: "N") && !space && !plus { num.removeFirst() }
            pad(num[...])
            zero = oldZero
            return
        }
        if sharp && verb != UInt8(ascii: "b") {
            var digits = 0
            if verb == UInt8(ascii: "v") || verb == UInt8(ascii: "g") || verb == UInt8(ascii: "G") || verb == UInt8(ascii: "x") {
                digits = p
                if digits == -1 { digits = 6 }
            }
            var tail: [UInt8] = []
            var hasDecimalPoint = false
            var sawNonzeroDigit = false
            var i = 1
            while i < num.count {
                let c = num[i]
                if c == UInt8(ascii: ".") {
                    hasDecimalPoint = true
                } else if c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
                    tail = Array(num[i...])
                    num.removeSubrange(i...)
                    break
                } else {
                    if c != UInt8(ascii: "0") { sawNonzeroDigit = true }
                    if sawNonzeroDigit { digits -= 1 }
                }
                i += 1
            }
            if !hasDecimalPoint {
                if num.count == 2 && num[1] == UInt8(ascii: "0") { digits -= 1 }
                num.append(UInt8(ascii: "."))
            }
            while digits > 0 {
                num.append(UInt8(ascii: "0"))
                digits -= 1
            }
            num.append(contentsOf: tail)
        }
        if plus || num[0] != UInt8(ascii: "+") {
            // With a sign, zero padding goes between the sign and the digits.
            if zero && widPresent && wid > num.count {
                buf.append(num[0])
                writePadding(wid - num.count)
                buf.append(contentsOf: num[1...])
                return
            }
            pad(num[...])
            return
        }
        pad(num[1...])
    }
}

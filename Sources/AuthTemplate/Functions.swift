import AuthJSON
import GoFormats

/// The functions a pipeline can call: text/template's builtins (funcs.go) and the escapers
/// html/template adds to pipelines (escape.go's funcMap), with Go's parameter types and
/// error texts.
enum Functions {
    struct Signature {
        let params: [ParamType]
        let variadic: Bool
    }

    struct CallError: Error {
        let message: String
    }

    fileprivate static let valueAndMore = Signature(params: [.value, .value], variadic: true)
    fileprivate static let twoValues = Signature(params: [.value, .value], variadic: false)
    fileprivate static let oneValue = Signature(params: [.value], variadic: false)
    fileprivate static let anyArgs = Signature(params: [.any], variadic: true)
    fileprivate static let escaper = Signature(params: [.any], variadic: true)

    /// Every function a pipeline can name, found with one dictionary lookup per call.
    enum Function: String, CaseIterable, Sendable {
        case and, or, not, len, index, slice, eq, ne, lt, le, gt, ge, print, printf, println, html, js, urlquery, call
        case attrEscaper = "_html_template_attrescaper"
        case commentEscaper = "_html_template_commentescaper"
        case cssEscaper = "_html_template_cssescaper"
        case cssValueFilter = "_html_template_cssvaluefilter"
        case htmlNameFilter = "_html_template_htmlnamefilter"
        case htmlEscaper = "_html_template_htmlescaper"
        case jsRegexpEscaper = "_html_template_jsregexpescaper"
        case jsStrEscaper = "_html_template_jsstrescaper"
        case jsTmplLitEscaper = "_html_template_jstmpllitescaper"
        case jsValEscaper = "_html_template_jsvalescaper"
        case nospaceEscaper = "_html_template_nospaceescaper"
        case rcdataEscaper = "_html_template_rcdataescaper"
        case srcsetEscaper = "_html_template_srcsetescaper"
        case urlEscaper = "_html_template_urlescaper"
        case urlFilter = "_html_template_urlfilter"
        case urlNormalizer = "_html_template_urlnormalizer"
        case evalArgs = "_eval_args_"

        static let byName: [String: Function] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })

        var signature: Signature {
            switch self {
            case .and, .or, .index, .slice, .eq, .call: return Functions.valueAndMore
            case .ne, .lt, .le, .gt, .ge: return Functions.twoValues
            case .not, .len: return Functions.oneValue
            case .print, .println, .html, .js, .urlquery: return Functions.anyArgs
            case .printf: return Functions.printfArgs
            default: return Functions.escaper
            }
        }
    }

    fileprivate static let printfArgs = Signature(params: [.string, .any], variadic: true)

    static func call(_ function: Function, _ args: [Value]) -> Result<Value, CallError> {
        switch function {
        case .not: return .success(.bool(!args[0].indirectInterface.truth))
        case .len: return length(args[0])
        case .index: return index(args[0], args.dropFirst())
        case .slice: return slice(args[0], args.dropFirst())
        case .eq: return eq(args[0], args.dropFirst()).map { .bool($0) }
        case .ne: return eq(args[0], args[1...]).map { .bool(!$0) }
        case .lt: return lt(args[0], args[1]).map { .bool($0) }
        case .le: return le(args[0], args[1]).map { .bool($0) }
        case .gt: return le(args[0], args[1]).map { .bool(!$0) }
        case .ge: return lt(args[0], args[1]).map { .bool(!$0) }
        case .print: return .success(.string(GoFormat.sprint(args)))
        case .println: return .success(.string(GoFormat.sprintln(args)))
        case .printf:
            guard case .string(let format) = args[0] else { return .failure(CallError(message: "format is not a string")) }
            return .success(.string(GoFormat.sprintf(format, Array(args.dropFirst()))))
        case .html: return .success(.string(GoHTML.templateEscapeString(evalArgs(args))))
        case .js: return .success(.string(Escapers.textJSEscape(evalArgs(args))))
        case .urlquery: return .success(.string(GoURL.queryEscape(evalArgs(args))))
        case .call:
            // The executor calls call(calleeName:_:) itself, knowing what the callee was written as.
            return call(calleeName: "", args[0])
        case .and, .or:
            return .success(args.last ?? .invalid)  // The executor evaluates these itself.
        default:
            return .success(.string(Escapers.call(function, args)))
        }
    }

    /// The call builtin: nothing a template's data holds is a function, so it always fails.
    /// Go names the callee as the template wrote it.
    static func call(calleeName: String, _ fn: Value) -> Result<Value, CallError> {
        let fn = fn.indirectInterface
        if !fn.isValid { return .failure(CallError(message: "call of nil")) }
        return .failure(CallError(message: "non-function \(calleeName) of type \(fn.typeName)"))
    }

    /// text/template's evalArgs: one string as it is; otherwise fmt.Sprint of the arguments,
    /// a missing value printed as "<no value>".
    static func evalArgs(_ args: [Value]) -> String {
        if args.count == 1, case .string(let s) = args[0] { return s }
        return GoFormat.sprint(args.map { $0.isValid ? $0 : .string("<no value>") })
    }

    // MARK: len, index, slice

    private static func length(_ item: Value) -> Result<Value, CallError> {
        let (value, isNil) = item.indirect
        if isNil { return .failure(CallError(message: "len of nil pointer")) }
        switch value {
        case .string(let s): return .success(.int(s.utf8.count))
        case .map(let m): return .success(.int(m.count))
        case .slice(let s): return .success(.int(s.count))
        case .invalid:
            // Go asks the zero Value for its type to word the error, which panics; the call
            // recovers the panic and reports it.
            return .failure(CallError(message: "reflect: call of reflect.Value.Type on zero Value"))
        default: return .failure(CallError(message: "len of type \(value.typeName)"))
        }
    }

    private static func indexArg(_ index: Value, cap: Int) -> Result<Int, CallError> {
        let x: Int
        switch index {
        case .int(let i): x = i
        case .uint8(let u): x = Int(u)
        case .invalid: return .failure(CallError(message: "cannot index slice/array with nil"))
        default: return .failure(CallError(message: "cannot index slice/array with type \(index.typeName)"))
        }
        if x < 0 || x > cap { return .failure(CallError(message: "index out of range: \(x)")) }
        return .success(x)
    }

    /// `indexArg` with the length as the cap, then `reflect.Value.Index`'s own bound: an index
    /// equal to the length passes `indexArg` (slicing allows it) and panics there.
    private static func elementIndex(_ index: Value, count: Int, kind: String) -> Result<Int, CallError> {
        indexArg(index, cap: count).flatMap { x in
            x == count ? .failure(CallError(message: "reflect: \(kind) index out of range")) : .success(x)
        }
    }

    private static func index(_ item: Value, _ indexes: ArraySlice<Value>) -> Result<Value, CallError> {
        var item = item.indirectInterface
        if !item.isValid { return .failure(CallError(message: "index of untyped nil")) }
        for index in indexes {
            let index = index.indirectInterface
            let (value, isNil) = item.indirect
            if isNil { return .failure(CallError(message: "index of nil pointer")) }
            switch value {
            case .slice(let s):
                switch elementIndex(index, count: s.count, kind: "slice") {
                case .failure(let e): return .failure(e)
                case .success(let x): item = .element(s[x])
                }
            case .string(let str):
                let bytes = Array(str.utf8)
                switch elementIndex(index, count: bytes.count, kind: "string") {
                case .failure(let e): return .failure(e)
                case .success(let x): item = .uint8(bytes[x])
                }
            case .map(let m):
                // The key must be a string (the map's key type).
                switch index {
                case .string(let key):
                    item = .element(m[key] ?? .null)
                case .invalid:
                    return .failure(CallError(message: "value is nil; should be of type string"))
                default:
                    return .failure(CallError(message: "value has type \(index.typeName); should be string"))
                }
            default:
                return .failure(CallError(message: "can't index item of type \(value.typeName)"))
            }
        }
        return .success(item)
    }

    private static func slice(_ item: Value, _ indexes: ArraySlice<Value>) -> Result<Value, CallError> {
        let item = item.indirectInterface
        if !item.isValid { return .failure(CallError(message: "slice of untyped nil")) }
        if indexes.count > 3 { return .failure(CallError(message: "too many slice indexes: \(indexes.count)")) }
        let cap: Int
        let length: Int
        switch item {
        case .string(let s):
            if indexes.count == 3 { return .failure(CallError(message: "cannot 3-index slice a string")) }
            cap = s.utf8.count
            length = cap
        case .slice(let s):
            cap = s.cap
            length = s.count
        default:
            return .failure(CallError(message: "can't slice item of type \(item.typeName)"))
        }
        var idx = [0, length, cap]
        for (i, index) in indexes.enumerated() {
            switch indexArg(index.indirectInterface, cap: cap) {
            case .failure(let e): return .failure(e)
            case .success(let x): idx[i] = x
            }
        }
        if idx[0] > idx[1] { return .failure(CallError(message: "invalid slice index: \(idx[0]) > \(idx[1])")) }
        if indexes.count == 3 && idx[1] > idx[2] {
            return .failure(CallError(message: "invalid slice index: \(idx[1]) > \(idx[2])"))
        }
        switch item {
        case .string(let s):
            let bytes = Array(s.utf8)
            return .success(.string(String(decoding: bytes[idx[0]..<idx[1]], as: UTF8.self)))
        case .slice(let s):
            return .success(.slice(s.sliced(idx[0], idx[1], indexes.count == 3 ? idx[2] : cap)))
        default:
            return .failure(CallError(message: "can't slice item of type \(item.typeName)"))
        }
    }

    // MARK: Comparison

    private enum Kind { case invalid, bool, complex, int, float, string, uint }

    private static func basicKind(_ v: Value) -> Kind {
        switch v {
        case .bool: return .bool
        case .int: return .int
        case .uint8: return .uint
        case .float: return .float
        case .complex: return .complex
        case .string: return .string
        default: return .invalid
        }
    }

    private static let badComparisonType = CallError(message: "invalid type for comparison")
    private static func badComparison(_ a: Value, _ b: Value) -> CallError {
        CallError(message: "incompatible types for comparison: \(a.typeName) and \(b.typeName)")
    }

    private static func intValue(_ v: Value) -> Int {
        if case .int(let i) = v { return i }
        return 0
    }

    private static func uintValue(_ v: Value) -> UInt64 {
        if case .uint8(let u) = v { return UInt64(u) }
        return 0
    }

    private static func eq(_ arg1: Value, _ arg2: ArraySlice<Value>) -> Result<Bool, CallError> {
        let a = arg1.indirectInterface
        if arg2.isEmpty { return .failure(CallError(message: "missing argument for comparison")) }
        let k1 = basicKind(a)
        for arg in arg2 {
            let b = arg.indirectInterface
            let k2 = basicKind(b)
            var truth = false
            if k1 != k2 {
                // Special case: an int and a uint compare by value.
                if k1 == .int && k2 == .uint {
                    truth = intValue(a) >= 0 && UInt64(intValue(a)) == uintValue(b)
                } else if k1 == .uint && k2 == .int {
                    truth = intValue(b) >= 0 && uintValue(a) == UInt64(intValue(b))
                } else if a.isValid && b.isValid {
                    return .failure(badComparison(a, b))
                }
            } else {
                switch (a, b) {
                case (.bool(let x), .bool(let y)): truth = x == y
                case (.complex(let xr, let xi), .complex(let yr, let yi)): truth = xr == yr && xi == yi
                case (.float(let x), .float(let y)): truth = x == y
                case (.int(let x), .int(let y)): truth = x == y
                case (.string(let x), .string(let y)): truth = UTF8Bytes.equal(x, y)
                case (.uint8(let x), .uint8(let y)): truth = x == y
                default:
                    if a.isValid && b.isValid && !sameKind(a, b) {
                        return .failure(CallError(message: "non-comparable types \(GoFormat.sprint([a])): \(a.typeName), \(b.typeName): \(GoFormat.sprint([b]))"))
                    }
                    if !a.isValid || !b.isValid {
                        truth = a.isValid == b.isValid
                    } else {
                        // Maps and slices are not comparable.
                        return .failure(CallError(message: "non-comparable type \(GoFormat.sprint([b])): \(b.typeName)"))
                    }
                }
            }
            if truth { return .success(true) }
        }
        return .success(false)
    }

    private static func sameKind(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.map, .map), (.slice, .slice): return true
        default: return false
        }
    }

    private static func lt(_ arg1: Value, _ arg2: Value) -> Result<Bool, CallError> {
        let a = arg1.indirectInterface
        let k1 = basicKind(a)
        if k1 == .invalid { return .failure(badComparisonType) }
        let b = arg2.indirectInterface
        let k2 = basicKind(b)
        if k2 == .invalid { return .failure(badComparisonType) }
        if k1 != k2 {
            if k1 == .int && k2 == .uint { return .success(intValue(a) < 0 || UInt64(intValue(a)) < uintValue(b)) }
            if k1 == .uint && k2 == .int { return .success(intValue(b) >= 0 && uintValue(a) < UInt64(intValue(b))) }
            return .failure(badComparison(a, b))
        }
        switch (a, b) {
        case (.float(let x), .float(let y)): return .success(x < y)
        case (.int(let x), .int(let y)): return .success(x < y)
        case (.string(let x), .string(let y)): return .success(x.utf8.lexicographicallyPrecedes(y.utf8))
        case (.uint8(let x), .uint8(let y)): return .success(x < y)
        default: return .failure(badComparisonType)
        }
    }

    private static func le(_ arg1: Value, _ arg2: Value) -> Result<Bool, CallError> {
        switch lt(arg1, arg2) {
        case .failure(let e): return .failure(e)
        case .success(true): return .success(true)
        case .success(false): return eq(arg1, [arg2])
        }
    }
}

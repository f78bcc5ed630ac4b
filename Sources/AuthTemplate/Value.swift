import AuthJSON

/// A value during execution, standing for the `reflect.Value` Go's executor holds.
///
/// Data come from `json.Unmarshal` into `interface{}`, so a container's elements have the
/// static type `interface{}`: Go's executor sees a map member or a slice element as a value
/// of interface kind (`.element`), and unwraps it to its dynamic value only at the end of each
/// pipeline command. The difference shows in error messages ("can't evaluate field x in type
/// interface {}" for `.Email.x`, "... in type string" for `$e.x` after `$e := .Email`), so it is
/// kept. Constants and builtins add `int` (untyped integer constants, `len`), `uint8` (`index`
/// of a string) and `complex128` (imaginary constants).
enum Value: Sendable {
    /// The zero reflect.Value: a missing map key, nil data (printed "<no value>").
    case invalid
    case bool(Bool)
    case int(Int)
    case uint8(UInt8)
    case float(Double)
    case complex(Double, Double)
    case string(String)
    case map(JSONObject)
    /// A `[]interface{}` with the capacity Go's decoder gave it (see `GoSlice`).
    case slice(GoSlice)
    /// A value of static type `interface{}` holding `json` (`.null` is a nil interface).
    case element(JSON)

    /// The dynamic value of a JSON value, as `reflect.ValueOf` of what `json.Unmarshal` made.
    init(concrete json: JSON) {
        switch json {
        case .null: self = .invalid
        case .bool(let b): self = .bool(b)
        case .number(let n): self = .float(n)
        case .string(let s): self = .string(s)
        case .array(let a): self = .slice(GoSlice(decoded: a))
        case .object(let o): self = .map(o)
        }
    }

    /// The data given to Execute: `reflect.ValueOf(data)`.
    init(rootData json: JSON) {
        self.init(concrete: json)
    }

    var isValid: Bool {
        if case .invalid = self { return false }
        return true
    }

    /// Go's `reflect.Type.String()` of the value.
    var typeName: String {
        switch self {
        case .invalid: return "<invalid reflect.Value>"
        case .bool: return "bool"
        case .int: return "int"
        case .uint8: return "uint8"
        case .float: return "float64"
        case .complex: return "complex128"
        case .string: return "string"
        case .map: return "map[string]interface {}"
        case .slice: return "[]interface {}"
        case .element: return "interface {}"
        }
    }

    /// indirectInterface: the dynamic value of an interface; other values as they are.
    var indirectInterface: Value {
        if case .element(let json) = self { return Value(concrete: json) }
        return self
    }

    /// indirect: through interfaces (there are no pointers here), reporting a nil one.
    var indirect: (value: Value, isNil: Bool) {
        if case .element(let json) = self {
            if case .null = json { return (self, true) }
            return (Value(concrete: json), false)
        }
        return (self, false)
    }

    /// The value as a function parameter of type `interface{}` receives it: an interface's
    /// dynamic value, with nil as `.invalid`.
    var asAny: Value { indirectInterface }

    /// isTrue: the truth of if, with, and, or, not.
    var truth: Bool {
        switch self {
        case .invalid: return false
        case .bool(let b): return b
        case .int(let i): return i != 0
        case .uint8(let u): return u != 0
        case .float(let f): return f != 0
        case .complex(let re, let im): return re != 0 || im != 0
        case .string(let s): return !s.utf8.isEmpty
        case .map(let m): return !m.isEmpty
        case .slice(let s): return s.count > 0
        case .element(let json):
            if case .null = json { return false }
            return true
        }
    }
}

/// A `[]interface{}`: its elements and its capacity. encoding/json appends decoded elements
/// one at a time, so a slice of n elements has the capacity append's doubling gave it, and
/// Go's `slice` builtin may reach past the length up to it (the extra elements are nil).
struct GoSlice: Sendable {
    var elements: ArraySlice<JSON>
    var cap: Int

    var count: Int { elements.count }

    init(elements: ArraySlice<JSON>, cap: Int) {
        self.elements = elements
        self.cap = cap
    }

    init(decoded: [JSON]) {
        elements = decoded[...]
        var c = 0
        if !decoded.isEmpty {
            c = 1
            while c < decoded.count && c < 256 { c *= 2 }
            if c < decoded.count { c = decoded.count }
        }
        cap = c
    }

    subscript(i: Int) -> JSON {
        let index = elements.startIndex + i
        return index < elements.endIndex ? elements[index] : .null
    }

    /// s[low:high:max], every bound already checked against `cap`.
    func sliced(_ low: Int, _ high: Int, _ max: Int) -> GoSlice {
        var items: [JSON] = []
        items.reserveCapacity(high - low)
        for i in low..<high { items.append(self[i]) }
        return GoSlice(elements: items[...], cap: max - low)
    }
}

/// A JSON value (RFC 8259), used for JWT claims and for every request and response body.
///
/// Numbers are `Double`, as Go's `encoding/json` decodes them into `any`, so values round-trip
/// the way the real server's do. Objects keep their keys in insertion order (see `JSONObject`)
/// because the server must reproduce the real server's key order byte for byte.
///
/// Equality is semantic: objects compare as unordered maps (keys compared by their UTF-8
/// bytes), numbers by value. Compare serialized text to check key order.
public enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSON])
    case object(JSONObject)
}

extension JSON {
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var doubleValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The number as an `Int64` when it is integral and in range (e.g. `exp`, `3600`);
    /// nil for fractions, out-of-range values and non-numbers.
    public var int64Value: Int64? {
        guard case .number(let value) = self, value.rounded(.towardZero) == value,
              value >= -9_223_372_036_854_775_808.0, value < 9_223_372_036_854_775_808.0
        else { return nil }
        return Int64(value)
    }

    /// The number as an `Int` under the same rules as `int64Value`.
    public var intValue: Int? {
        guard let value = int64Value else { return nil }
        return Int(exactly: value)
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The kind's name as Go's `json.UnmarshalTypeError` words it ("cannot unmarshal string into ...").
    public var goKind: String {
        switch self {
        case .null: return "null"
        case .bool: return "bool"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    public var arrayValue: [JSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Member lookup on objects; nil for missing keys and non-objects.
    public subscript(key: String) -> JSON? {
        objectValue?[key]
    }

    /// Element lookup on arrays; nil when out of range or not an array.
    public subscript(index: Int) -> JSON? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }
}

extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) { self = .object(JSONObject(elements)) }
}

extension JSON {
    /// Integer convenience, e.g. `.number(Int64)` for Unix times.
    public static func number(_ value: Int64) -> JSON { .number(Double(value)) }
    public static func number(_ value: Int) -> JSON { .number(Double(value)) }
}

/// A JSON object that keeps its keys in insertion order.
///
/// Keys are compared by their UTF-8 bytes, as Go compares map keys (Swift's `String ==` would
/// treat canonically equivalent spellings such as "é" and "e\u{301}" as the same key).
/// Setting an existing key replaces its value in place; setting a new key appends it; setting
/// `nil` removes it.
public struct JSONObject: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: JSON)

    private var storage: [Element] = []
    /// Built only for objects larger than `indexThreshold`: most objects here (claims, users,
    /// request bodies) are small, and hashing every key cost more than a short scan.
    private var index: [ByteKey: Int]?
    private static let indexThreshold = 16

    public init() {}

    /// Builds an object from pairs in order; for a repeated key the last value wins and keeps
    /// the first position, as when Go decodes duplicate keys.
    public init(_ pairs: some Sequence<(String, JSON)>) {
        for (key, value) in pairs { self[key] = value }
    }

    public init(dictionaryLiteral elements: (String, JSON)...) {
        self.init(elements)
    }

    public var count: Int { storage.count }
    public var isEmpty: Bool { storage.isEmpty }

    /// The keys in order.
    public var keys: [String] { storage.map(\.key) }

    /// The values in key order.
    public var values: [JSON] { storage.map(\.value) }

    /// The position of `key`, comparing UTF-8 bytes.
    private func position(of key: String) -> Int? {
        if let index { return index[ByteKey(key)] }
        // Byte equality (not String's canonical equivalence): keys are compared as Go compares
        // them. `UTF8Bytes.equal` compares lengths first (stored for native strings), so most
        // keys are passed over without touching their bytes.
        return storage.indices.first { UTF8Bytes.equal(storage[$0].key, key) }
    }

    /// Appends a key the caller knows is absent: for objects built field by field in a fixed
    /// order (the models' JSON), without the lookup `updateValue` makes. Lookups stay correct
    /// (past `indexThreshold` they scan until the next `updateValue` builds the index).
    public mutating func append(_ key: String, _ value: JSON) {
        assert(position(of: key) == nil, "JSONObject.append: duplicate key \(key)")
        storage.append((key, value))
        if index != nil { index![ByteKey(key)] = storage.count - 1 }
    }

    /// Room for `count` members without growing the storage as they are appended.
    public mutating func reserveCapacity(_ count: Int) {
        storage.reserveCapacity(count)
    }

    public subscript(key: String) -> JSON? {
        get { position(of: key).map { storage[$0].value } }
        set {
            if let newValue { updateValue(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    public func contains(key: String) -> Bool { position(of: key) != nil }

    /// Sets `value` for `key` (in place if present, else appended) and returns the old value.
    @discardableResult
    public mutating func updateValue(_ value: JSON, forKey key: String) -> JSON? {
        if let position = position(of: key) {
            let old = storage[position].value
            storage[position].value = value
            return old
        }
        storage.append((key, value))
        if index != nil {
            index![ByteKey(key)] = storage.count - 1
        } else if storage.count > JSONObject.indexThreshold {
            index = Self.positions(of: storage)
        }
        return nil
    }

    /// Removes `key` and returns its value; later keys keep their relative order.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSON? {
        guard let position = position(of: key) else { return nil }
        let old = storage.remove(at: position).value
        if index != nil {
            index!.removeValue(forKey: ByteKey(key))
            for i in position..<storage.count { index![ByteKey(storage[i].key)] = i }
        }
        return old
    }

    public func makeIterator() -> IndexingIterator<[Element]> { storage.makeIterator() }

    /// A copy whose keys, and those of every nested object, are sorted by UTF-8 bytes: the
    /// order Go's `encoding/json` gives a `map[string]any` (e.g. user_metadata).
    public func sortedRecursively() -> JSONObject {
        // Stored metadata is usually in order already (it was written sorted) and flat: then
        // the object is its own sorted copy, and nothing is allocated.
        var inOrder = true
        var nested = false
        for i in storage.indices {
            if i > 0, !storage[i - 1].key.utf8.lexicographicallyPrecedes(storage[i].key.utf8) { inOrder = false }
            switch storage[i].value {
            case .object, .array: nested = true
            default: break
            }
        }
        if inOrder, !nested { return self }
        // Keys are unique (every insertion goes through `updateValue` or a checked `append`), so
        // the sorted pairs are stored as they are, without a lookup per key.
        var elements = inOrder ? storage : storage.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) })
        if nested {
            for i in elements.indices { elements[i].value = elements[i].value.sortedRecursively() }
        }
        var sorted = JSONObject()
        sorted.storage = elements
        if elements.count > JSONObject.indexThreshold { sorted.index = Self.positions(of: elements) }
        return sorted
    }

    /// The hash index of `storage`'s keys, for objects past `indexThreshold`.
    private static func positions(of storage: [Element]) -> [ByteKey: Int] {
        var built: [ByteKey: Int] = [:]
        for (i, element) in storage.enumerated() { built[ByteKey(element.key)] = i }
        return built
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for (key, value) in lhs.storage {
            guard let other = rhs[key], other == value else { return false }
        }
        return true
    }
}

extension JSON {
    /// See `JSONObject.sortedRecursively()`; arrays keep their order, their objects are sorted.
    public func sortedRecursively() -> JSON {
        switch self {
        case .object(let object): return .object(object.sortedRecursively())
        case .array(let elements): return .array(elements.map { $0.sortedRecursively() })
        default: return self
        }
    }
}

/// A dictionary key that hashes and compares a string by its UTF-8 bytes.
struct ByteKey: Hashable, Sendable {
    let string: String

    init(_ string: String) {
        self.string = string
    }

    static func == (lhs: ByteKey, rhs: ByteKey) -> Bool {
        UTF8Bytes.equal(lhs.string, rhs.string)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(string.utf8.count)
        for byte in string.utf8 { hasher.combine(byte) }
    }
}

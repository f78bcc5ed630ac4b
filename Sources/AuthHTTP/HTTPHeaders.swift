import AuthPlatform

/// An ordered list of header fields.
///
/// Field names compare case-insensitively (RFC 9110 §5.1) while iteration keeps the order and
/// the spelling they were received or added with, because some consumers (signatures, logs)
/// care about both. Repeated names stay separate entries (RFC 9110 §5.3).
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral, Equatable {
    @usableFromInline
    struct Field: Sendable, Equatable {
        var name: String
        var value: String
    }

    @usableFromInline
    var fields: [Field]

    public init() {
        fields = []
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// First value for `name`; setting replaces every field of that name (nil removes them).
    public subscript(name: String) -> String? {
        get {
            for field in fields where Self.namesEqual(field.name, name) { return field.value }
            return nil
        }
        set {
            if let newValue {
                if let index = fields.firstIndex(where: { Self.namesEqual($0.name, name) }) {
                    fields[index].value = newValue
                    var later = index + 1
                    while later < fields.count {
                        if Self.namesEqual(fields[later].name, name) { fields.remove(at: later) } else { later += 1 }
                    }
                } else {
                    fields.append(Field(name: name, value: newValue))
                }
            } else {
                remove(name: name)
            }
        }
    }

    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    public func values(for name: String) -> [String] {
        fields.compactMap { Self.namesEqual($0.name, name) ? $0.value : nil }
    }

    public mutating func remove(name: String) {
        fields.removeAll { Self.namesEqual($0.name, name) }
    }

    public func contains(name: String) -> Bool {
        fields.contains { Self.namesEqual($0.name, name) }
    }

    public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }

    public struct Iterator: IteratorProtocol {
        var base: IndexingIterator<[Field]>
        public mutating func next() -> (name: String, value: String)? {
            guard let field = base.next() else { return nil }
            return (field.name, field.value)
        }
    }

    public func makeIterator() -> Iterator {
        Iterator(base: fields.makeIterator())
    }

    public var underestimatedCount: Int { fields.count }

    /// ASCII case-insensitive comparison; field names are tokens, so ASCII folding is exact.
    @inlinable
    static func namesEqual(_ a: String, _ b: String) -> Bool {
        // Lengths first: a lookup compares the name with every field's.
        guard a.utf8.count == b.utf8.count else { return false }
        return a.withUTF8Bytes { left in b.withUTF8Bytes { right in ASCII.equalsIgnoringCase(left, right) } }
    }
}

@usableFromInline
enum ASCII {
    /// The index of the first LF at or after `start`, or `buffer.count` when there is none;
    /// sixteen bytes per step (`ByteScan`), since heads are scanned twice.
    static func firstLF(in buffer: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        ByteScan.firstIndex(of: lf, in: buffer, from: start)
    }

    /// Whether a field value holds only what RFC 9110 §5.5 allows: visible characters, SP, HTAB
    /// and obs-text; no other control character and no DEL. Sixteen bytes per step
    /// (`ByteScan`): an `Authorization: Bearer` value runs to ~800 bytes, and a byte loop alone
    /// was ~2 % of a `GET /user`.
    static func isFieldValue(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        typealias Bytes = ByteScan.Bytes
        return !ByteScan.anyLane(bytes, filler: UInt8(ascii: "a")) { v in
            ((v .< Bytes(repeating: 0x20)) .& (v .!= Bytes(repeating: tab))) .| (v .== Bytes(repeating: 0x7f))
        }
    }

    @inlinable
    static func lower(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }

    @inlinable
    static func equalsIgnoringCase(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        guard left.count == right.count else { return false }
        for index in 0..<left.count where lower(left[index]) != lower(right[index]) { return false }
        return true
    }

    /// `lowercase` must already be lowercase ASCII.
    static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        for index in 0..<bytes.count where lower(bytes[index]) != expected[index] { return false }
        return true
    }

    static func equalsIgnoringCase(_ string: String, lowercase: StaticString) -> Bool {
        string.withUTF8Bytes { equalsIgnoringCase($0, lowercase: lowercase) }
    }

    /// tchar from RFC 9110 §5.6.2: the characters of tokens (methods, field names, codings).
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        tokenTable[Int(byte)]
    }

    private static let tokenTable: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for byte in UInt8(ascii: "0")...UInt8(ascii: "9") { table[Int(byte)] = true }
        for byte in UInt8(ascii: "a")...UInt8(ascii: "z") { table[Int(byte)] = true }
        for byte in UInt8(ascii: "A")...UInt8(ascii: "Z") { table[Int(byte)] = true }
        for byte in "!#$%&'*+-.^_`|~".utf8 { table[Int(byte)] = true }
        return table
    }()

    static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return Int(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return Int(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }
}

/// A destination for JSON written in document order: a model written once against this protocol
/// can become a `JSON` tree (`JSONTreeBuilder`, for the callers that inspect or extend it) or
/// go straight to bytes (`JSONByteWriter`, for the responses sent as they are).
///
/// The bytes path exists for the hot responses (`GET /user`, the refresh grant): building the
/// user's tree, serializing it and tearing it down again cost about a quarter of a `GET /user`'s
/// instructions (bench/cost). One description of each model, written against this protocol,
/// keeps both forms the same by construction.
///
/// Inside an object, `key` comes before each member's value; inside an array, values follow one
/// another. Misuse (a value without a key inside an object, unbalanced ends) is a programming
/// error and traps.
public protocol JSONOutput {
    mutating func beginObject()
    /// `beginObject()` for an object of about `count` members: a tree allocates its storage
    /// once (a page of admin users builds thousands of members).
    mutating func beginObject(reservingCapacity count: Int)
    mutating func endObject()
    mutating func beginArray()
    mutating func endArray()
    mutating func key(_ name: String)
    mutating func string(_ value: String)
    /// A string given as UTF-8 bytes (e.g. a timestamp rendered into a stack buffer), without
    /// making a `String` first when the output does not need one.
    mutating func string(utf8 bytes: UnsafeBufferPointer<UInt8>)
    mutating func bool(_ value: Bool)
    mutating func null()
    /// Any value, written as `JSONWriter` writes it with `sortedKeys` false.
    mutating func value(_ value: JSON)
    /// The member `name` with a stored JSON object text as its value, exactly as
    /// `member(name, .object(parsed.sortedRecursively()))` would write it, copied as it is
    /// when the output writes bytes and the text is already in that form
    /// (`CanonicalJSON.isSortedObject`). Returns false, having written nothing, otherwise:
    /// the caller then parses the text.
    mutating func member(_ name: String, sortedObjectText text: String) -> Bool
}

extension JSONOutput {
    public mutating func beginObject(reservingCapacity count: Int) { beginObject() }

    public mutating func member(_ name: String, _ value: String) {
        key(name)
        string(value)
    }

    public mutating func member(_ name: String, _ value: Bool) {
        key(name)
        bool(value)
    }

    public mutating func member(_ name: String, _ value: JSON) {
        key(name)
        self.value(value)
    }
}

/// Writes compact JSON bytes exactly as `JSON.serializedBytes(sortedKeys: false)` would for the
/// same tree.
public struct JSONByteWriter: JSONOutput {
    public private(set) var bytes: [UInt8] = []
    /// Whether the next key or array element needs a comma before it. One flag serves every
    /// depth: a container's start clears it and its end sets it, as a scalar value does.
    private var needsComma = false

    public init(reservingCapacity capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    /// A container's opening bracket, after a comma when a sibling precedes it; its first key or
    /// element needs none.
    @inline(__always)
    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        needsComma = false
    }

    /// A container's closing bracket: the container is a value, so what follows it needs a comma.
    @inline(__always)
    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        needsComma = true
    }

    public mutating func beginObject() { open(UInt8(ascii: "{")) }

    public mutating func endObject() { close(UInt8(ascii: "}")) }

    public mutating func beginArray() { open(UInt8(ascii: "[")) }

    public mutating func endArray() { close(UInt8(ascii: "]")) }

    public mutating func key(_ name: String) {
        separate()
        JSONWriter.writeString(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    public mutating func string(_ value: String) {
        separate()
        JSONWriter.writeString(value, to: &bytes)
        needsComma = true
    }

    public mutating func string(utf8 value: UnsafeBufferPointer<UInt8>) {
        separate()
        JSONWriter.writeString(utf8: value, to: &bytes)
        needsComma = true
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
        needsComma = true
    }

    public mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
        needsComma = true
    }

    public mutating func value(_ value: JSON) {
        separate()
        JSONWriter.write(value, sortedKeys: false, to: &bytes)
        needsComma = true
    }

    public mutating func member(_ name: String, sortedObjectText text: String) -> Bool {
        let copied = text.utf8.withContiguousStorageIfAvailable { stored -> Bool in
            guard CanonicalJSON.isSortedObject(stored) else { return false }
            key(name)
            bytes.append(contentsOf: stored)
            needsComma = true
            return true
        }
        return copied == true
    }
}

/// Builds the `JSON` tree of what is written. `result` is the finished top-level value.
///
/// Open containers sit on stacks and grow in place (`objects[last].append`): popping one to
/// append and pushing it back kept a second reference for a moment, and every member then copied
/// the whole object (an admin page of 50 users cost 53 % more instructions that way).
public struct JSONTreeBuilder: JSONOutput {
    @usableFromInline enum Kind { case object, array }

    @usableFromInline var kinds: [Kind] = []
    @usableFromInline var objects: [JSONObject] = []
    /// The key waiting for its value, per open object.
    @usableFromInline var pendingKeys: [String?] = []
    @usableFromInline var arrays: [[JSON]] = []
    @usableFromInline var finished: JSON?
    /// The finished top-level value.
    public var result: JSON? { finished }

    @inlinable public init() {}

    @inlinable
    mutating func add(_ value: JSON) {
        switch kinds.last {
        case nil:
            precondition(finished == nil, "JSONTreeBuilder: a second top-level value")
            finished = value
        case .object?:
            let top = pendingKeys.count - 1
            guard let key = pendingKeys[top] else { preconditionFailure("JSONTreeBuilder: an object member without a key") }
            pendingKeys[top] = nil
            objects[objects.count - 1].append(key, value)
        case .array?:
            arrays[arrays.count - 1].append(value)
        }
    }

    @inlinable public mutating func beginObject() { beginObject(reservingCapacity: 0) }

    @inlinable public mutating func beginObject(reservingCapacity count: Int) {
        kinds.append(.object)
        var object = JSONObject()
        if count > 0 { object.reserveCapacity(count) }
        objects.append(object)
        pendingKeys.append(nil)
    }

    @inlinable public mutating func endObject() {
        precondition(kinds.last == .object && pendingKeys.last! == nil, "JSONTreeBuilder: unbalanced endObject")
        kinds.removeLast()
        pendingKeys.removeLast()
        add(.object(objects.removeLast()))
    }

    @inlinable public mutating func beginArray() {
        kinds.append(.array)
        arrays.append([])
    }

    @inlinable public mutating func endArray() {
        precondition(kinds.last == .array, "JSONTreeBuilder: unbalanced endArray")
        kinds.removeLast()
        add(.array(arrays.removeLast()))
    }

    @inlinable public mutating func key(_ name: String) {
        precondition(kinds.last == .object && pendingKeys.last! == nil, "JSONTreeBuilder: a key outside an object")
        pendingKeys[pendingKeys.count - 1] = name
    }

    @inlinable public mutating func string(_ value: String) { add(.string(value)) }
    @inlinable public mutating func string(utf8 value: UnsafeBufferPointer<UInt8>) { add(.string(String(decoding: value, as: UTF8.self))) }
    @inlinable public mutating func bool(_ value: Bool) { add(.bool(value)) }
    @inlinable public mutating func null() { add(.null) }
    @inlinable public mutating func value(_ value: JSON) { add(value) }
    /// A tree needs the parse.
    @inlinable public mutating func member(_ name: String, sortedObjectText text: String) -> Bool { false }
}

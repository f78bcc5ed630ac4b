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

    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

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
        if JSONWriter.isPlain(value) {
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: value)
            bytes.append(UInt8(ascii: "\""))
        } else {
            JSONWriter.writeString(String(decoding: value, as: UTF8.self), to: &bytes)
        }
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
public struct JSONTreeBuilder: JSONOutput {
    private enum Container {
        case object(JSONObject, pendingKey: String?)
        case array([JSON])
    }

    private var open: [Container] = []
    public private(set) var result: JSON?

    public init() {}

    private mutating func add(_ value: JSON) {
        guard let top = open.popLast() else {
            precondition(result == nil, "JSONTreeBuilder: a second top-level value")
            result = value
            return
        }
        switch top {
        case .object(var object, let key):
            guard let key else { preconditionFailure("JSONTreeBuilder: an object member without a key") }
            object.append(key, value)
            open.append(.object(object, pendingKey: nil))
        case .array(var elements):
            elements.append(value)
            open.append(.array(elements))
        }
    }

    public mutating func beginObject() { open.append(.object(JSONObject(), pendingKey: nil)) }

    public mutating func endObject() {
        guard case .object(let object, nil)? = open.popLast() else { preconditionFailure("JSONTreeBuilder: unbalanced endObject") }
        add(.object(object))
    }

    public mutating func beginArray() { open.append(.array([])) }

    public mutating func endArray() {
        guard case .array(let elements)? = open.popLast() else { preconditionFailure("JSONTreeBuilder: unbalanced endArray") }
        add(.array(elements))
    }

    public mutating func key(_ name: String) {
        guard case .object(let object, nil)? = open.popLast() else { preconditionFailure("JSONTreeBuilder: a key outside an object") }
        open.append(.object(object, pendingKey: name))
    }

    public mutating func string(_ value: String) { add(.string(value)) }
    public mutating func string(utf8 value: UnsafeBufferPointer<UInt8>) { add(.string(String(decoding: value, as: UTF8.self))) }
    public mutating func bool(_ value: Bool) { add(.bool(value)) }
    public mutating func null() { add(.null) }
    public mutating func value(_ value: JSON) { add(value) }
    /// A tree needs the parse.
    public mutating func member(_ name: String, sortedObjectText text: String) -> Bool { false }
}

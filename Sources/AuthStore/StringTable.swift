/// A String-keyed open-addressing table for the store's two hottest lookups: a result column by
/// name (`Row.string("email")`, about 50 per `GET /user`) and a cached statement by its SQL text
/// (several per request).
///
/// `Dictionary<String, _>` hashes the whole key with SipHash on every lookup: about 400
/// instructions for a column name and 1,400 for a 200-byte statement, 15 % of a `GET /user`
/// (bench/cost/instructions.py). Here the hash reads the length and three 8-byte words of the
/// key, and a hit is confirmed by `String ==`, which compares the bytes (or nothing at all for
/// the same literal). Keys that share length and sampled words only probe further.
struct StringTable<Value> {
    private var keys: [String?]
    private var values: [Value?]
    private var mask: Int
    private(set) var count = 0

    init(capacity: Int = 8) {
        var size = 8
        while size < capacity * 2 { size <<= 1 }
        keys = Array(repeating: nil, count: size)
        values = Array(repeating: nil, count: size)
        mask = size - 1
    }

    /// The length and three 8-byte words (first, middle, last; overlapping in short keys), or
    /// the bytes themselves under 8, each mixed in with a multiply-xorshift step.
    static func hash(_ key: String) -> Int {
        if let hashed = key.utf8.withContiguousStorageIfAvailable({ sampledHash(UnsafeRawBufferPointer($0)) }) {
            return hashed
        }
        return Array(key.utf8).withUnsafeBytes { sampledHash($0) }
    }

    private static func sampledHash(_ bytes: UnsafeRawBufferPointer) -> Int {
        let count = bytes.count
        var hash = 0x9e37_79b9_7f4a_7c15 &* UInt64(count &+ 1)
        func mix(_ word: UInt64) {
            hash = (hash ^ word) &* 0xd6e8_feb8_6659_fd93
            hash ^= hash >> 32
        }
        if count >= 8 {
            mix(bytes.loadUnaligned(as: UInt64.self))
            mix(bytes.loadUnaligned(fromByteOffset: (count - 8) / 2, as: UInt64.self))
            mix(bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
        } else {
            var word: UInt64 = 0
            for (index, byte) in bytes.enumerated() { word |= UInt64(byte) << (8 * index) }
            mix(word)
        }
        return Int(truncatingIfNeeded: hash)
    }

    private func slot(of key: String) -> (slot: Int, found: Bool) {
        var slot = Self.hash(key) & mask
        while let present = keys[slot] {
            if present == key { return (slot, true) }
            slot = (slot + 1) & mask
        }
        return (slot, false)
    }

    subscript(key: String) -> Value? {
        let (slot, found) = slot(of: key)
        return found ? values[slot] : nil
    }

    /// Stores `value` for `key`, replacing any value it had. Keys stay until `removeAll`: the
    /// caches built on this only ever empty themselves whole.
    mutating func set(_ value: Value, for key: String) {
        let (slot, found) = slot(of: key)
        if !found {
            keys[slot] = key
            count += 1
        }
        values[slot] = value
        // At most half full, so probes stay short and an empty slot always exists.
        if count * 2 > keys.count { grow() }
    }

    /// Every stored value, in no particular order.
    var allValues: [Value] { values.compactMap { $0 } }

    mutating func removeAll() {
        for index in keys.indices {
            keys[index] = nil
            values[index] = nil
        }
        count = 0
    }

    private mutating func grow() {
        let oldKeys = keys, oldValues = values
        keys = Array(repeating: nil, count: oldKeys.count * 2)
        values = Array(repeating: nil, count: oldKeys.count * 2)
        mask = keys.count - 1
        count = 0
        for (key, value) in zip(oldKeys, oldValues) {
            if let key, let value { set(value, for: key) }
        }
    }
}

extension StringTable: Sendable where Value: Sendable {}

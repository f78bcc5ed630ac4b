import AuthPlatform

/// A String-keyed open-addressing table for the store's two hottest lookups: a result column by
/// name (`Row.string("email")`, about 50 per `GET /user`) and a cached statement by its SQL text
/// (several per request).
///
/// `Dictionary<String, _>` hashes the whole key with SipHash on every lookup, 15 % of a
/// `GET /user` (bench/cost/instructions.py). Here the hash is `SampledHash` (the length and three
/// 8-byte words of the key), and a hit is confirmed by `String ==`: the keys are the program's
/// own ASCII (SQL text, column names), for which that is a byte comparison (or nothing at all for
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

    /// `SampledHash`: the length and three sampled words of the key.
    static func hash(_ key: String) -> Int { SampledHash.of(key) }

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

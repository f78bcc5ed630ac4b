/// A String-keyed open-addressing table for the store's two hottest lookups: a result column by
/// name (`Row.string("email")`, about 50 per `GET /user`) and a cached statement by its SQL text
/// (several per request).
///
/// `Dictionary<String, _>` hashes the whole key with SipHash on every lookup: about 400
/// instructions for a column name and 1,400 for a 200-byte statement, 15 % of a `GET /user`
/// (bench/cost/instructions.py). Here the hash reads the length and at most 16 bytes spread
/// over the key, and a hit is confirmed by `String ==`, which compares the bytes (or nothing
/// at all for the same literal). Keys that share length and sampled bytes only probe further.
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

    /// Length and up to 16 bytes, evenly spaced, mixed FNV-1a style.
    static func hash(_ key: String) -> Int {
        if let hashed = key.utf8.withContiguousStorageIfAvailable({ sampledHash($0) }) { return hashed }
        return sampledHash(Array(key.utf8))
    }

    private static func sampledHash<C: RandomAccessCollection>(_ bytes: C) -> Int where C.Element == UInt8, C.Index == Int {
        let count = bytes.count
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(count)
        let step = max(1, count / 16)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            hash = (hash ^ UInt64(bytes[index])) &* 0x0000_0100_0000_01b3
            index += step
        }
        // The low bits pick the slot: fold the well-mixed high bits into them.
        return Int(truncatingIfNeeded: hash ^ (hash >> 29))
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
        get {
            let (slot, found) = slot(of: key)
            return found ? values[slot] : nil
        }
        set {
            let (slot, found) = slot(of: key)
            if let newValue {
                if !found {
                    keys[slot] = key
                    count += 1
                }
                values[slot] = newValue
                // At most half full, so probes stay short and an empty slot always exists.
                if count * 2 > keys.count { grow() }
            } else if found {
                remove(at: slot)
            }
        }
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
            if let key, let value { self[key] = value }
        }
    }

    /// Linear-probing deletion (Knuth, TAOCP vol. 3, 6.4 Algorithm R): later entries of the
    /// same run move up so every key stays reachable from its home slot.
    private mutating func remove(at start: Int) {
        keys[start] = nil
        values[start] = nil
        count -= 1
        var hole = start
        var slot = (start + 1) & mask
        while let key = keys[slot] {
            let home = Self.hash(key) & mask
            // Move the entry into the hole unless its home lies cyclically in (hole, slot].
            let stays = hole <= slot ? (hole < home && home <= slot) : (hole < home || home <= slot)
            if !stays {
                keys[hole] = key
                values[hole] = values[slot]
                keys[slot] = nil
                values[slot] = nil
                hole = slot
            }
            slot = (slot + 1) & mask
        }
    }
}

extension StringTable: Sendable where Value: Sendable {}

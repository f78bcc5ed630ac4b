/// A cheap hash of a String for the hot caches (AuthStore's statement and column tables,
/// GoTrue's parsed-metadata cache): the length and three 8-byte words of the UTF-8 (first,
/// middle, last; overlapping in short keys), or the bytes themselves under 8, each mixed in with
/// a multiply-xorshift step.
///
/// `Dictionary<String, _>` hashes the whole key with SipHash on every lookup: about 400
/// instructions for a column name, 1,400 for a 200-byte statement. Every user of this hash
/// confirms a hit by comparing the keys themselves, so keys that share length and sampled words
/// only cost a comparison; nothing relies on the hash to tell keys apart.
///
/// `@inlinable` so the callers in other modules get it specialized in place, as when it was
/// private to AuthStore: a cross-module call cost ~80 instructions per column lookup.
public enum SampledHash {
    @inlinable
    public static func of(_ key: String) -> Int {
        key.withUTF8Bytes { of(UnsafeRawBufferPointer($0)) }
    }

    @inlinable
    public static func of(_ bytes: UnsafeRawBufferPointer) -> Int {
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
}

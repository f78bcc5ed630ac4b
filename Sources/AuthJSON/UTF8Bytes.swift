import AuthPlatform

/// Byte equality of strings, as Go compares them (object keys, cached texts and tokens). Swift's
/// `String ==` compares by canonical equivalence (Unicode): a text with "é" as one code point
/// and one with "e" plus a combining accent are equal to it, and so are U+212A KELVIN SIGN and
/// "K", while the real server stores, returns and checks each string byte for byte.
public enum UTF8Bytes {
    @inlinable
    public static func equal(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        return a.withUTF8Bytes { left in b.withUTF8Bytes { right in equal(left, right) } }
    }

    /// The C library's `memcmp` (`Memory.equal`): vectorized, where a Swift loop of eight bytes per step cost
    /// ~1,000 instructions for the ~800-byte tokens the verified-token cache compares.
    @inlinable
    public static func equal(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        guard left.count == right.count else { return false }
        guard let l = left.baseAddress, let r = right.baseAddress else { return true }  // both empty
        return Memory.equal(l, r, count: left.count)
    }
}

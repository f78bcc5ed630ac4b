/// A cryptographic hash function with a streaming interface, in the shape of swift-crypto's
/// `HashFunction`: `SHA256.hash(data:)` one-shot, or `var h = SHA256(); h.update(data:);
/// h.finalize()`. Digests are plain byte arrays.
public protocol HashFunction: Sendable {
    /// Input block size in bytes (the HMAC key-padding width, RFC 2104 section 2).
    static var blockByteCount: Int { get }
    /// Digest size in bytes.
    static var byteCount: Int { get }

    init()

    /// Absorbs raw bytes. All other `update` overloads funnel into this one.
    mutating func update(bufferPointer: UnsafeRawBufferPointer)

    /// Returns the digest of everything absorbed so far. The value itself is not consumed, so
    /// a partially fed hash can be copied, finalised, and fed further.
    func finalize() -> [UInt8]
}

extension HashFunction {
    /// Absorbs a byte sequence (arrays, slices, `String.UTF8View`, ...).
    @inlinable
    public mutating func update(data: some Sequence<UInt8>) {
        let done: Void? = data.withContiguousStorageIfAvailable { buffer in
            self.update(bufferPointer: UnsafeRawBufferPointer(buffer))
        }
        if done == nil {
            let copy = Array(data)
            copy.withUnsafeBytes { self.update(bufferPointer: $0) }
        }
    }

    /// One-shot digest of `data`.
    @inlinable
    public static func hash(data: some Sequence<UInt8>) -> [UInt8] {
        var hasher = Self()
        hasher.update(data: data)
        return hasher.finalize()
    }
}

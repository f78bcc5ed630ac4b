/// Secret key material for HMAC, in the shape of swift-crypto's `SymmetricKey`.
public struct SymmetricKey: Sendable {
    let bytes: [UInt8]

    /// Uses `data` as the key bytes verbatim.
    public init(data: some Sequence<UInt8>) {
        bytes = Array(data)
    }

    /// A fresh random key of `size` bits (rounded up to whole bytes) from `random`.
    public init(bitCount: Int, using random: some RandomSource = SystemRandom()) {
        precondition(bitCount > 0, "key size must be positive")
        bytes = random.bytes(count: (bitCount + 7) / 8)
    }

    public var bitCount: Int { bytes.count * 8 }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
}

/// HMAC (RFC 2104) over any `HashFunction`, in the shape of swift-crypto's `HMAC<H>`.
public struct HMAC<H: HashFunction>: Sendable {
    var inner: H
    var outer: H

    public init(key: SymmetricKey) {
        self.init(keyBytes: key.bytes, hash: H())
    }

    /// RFC 2104 section 2: keys longer than the block are hashed first, then zero-padded to
    /// the block size; the inner hash starts with key XOR 0x36.., the outer with key XOR 0x5c...
    /// `hash` is a fresh hash whose copies become both halves (lets PBKDF2 pick the
    /// SHA-256 implementation).
    init(keyBytes: [UInt8], hash: H) {
        let blockSize = H.blockByteCount
        var key = keyBytes
        if key.count > blockSize {
            var h = hash
            h.update(data: key)
            key = h.finalize()
        }
        var innerPad = [UInt8](repeating: 0x36, count: blockSize)
        var outerPad = [UInt8](repeating: 0x5c, count: blockSize)
        for (i, byte) in key.enumerated() {
            innerPad[i] ^= byte
            outerPad[i] ^= byte
        }
        inner = hash
        outer = hash
        inner.update(data: innerPad)
        outer.update(data: outerPad)
    }

    public mutating func update(data: some Sequence<UInt8>) {
        inner.update(data: data)
    }

    public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
        inner.update(bufferPointer: bufferPointer)
    }

    /// The MAC of everything absorbed so far; `self` stays usable.
    public func finalize() -> [UInt8] {
        var o = outer
        o.update(data: inner.finalize())
        return o.finalize()
    }

    public static func authenticationCode(for data: some Sequence<UInt8>, using key: SymmetricKey) -> [UInt8] {
        var mac = HMAC(key: key)
        mac.update(data: data)
        return mac.finalize()
    }

    /// Recomputes the MAC and compares it with `code` in constant time.
    public static func isValidAuthenticationCode(
        _ code: some Collection<UInt8>, authenticating data: some Sequence<UInt8>, using key: SymmetricKey
    ) -> Bool {
        constantTimeEquals(authenticationCode(for: data, using: key), code)
    }
}

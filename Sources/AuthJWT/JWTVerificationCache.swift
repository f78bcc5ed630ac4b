import AuthJSON
import AuthCrypto

/// Tokens verified recently, so that presenting the same token again (a client calling
/// `GET /user` after each navigation, an ES256 signature that costs ~55 µs to check) skips the
/// signature check and the decoding.
///
/// A hit is the exact token text seen before; it still answers exactly as `JWT.verify` would
/// now: the algorithm must still be accepted by `keys` and the key `keys` selects for it must
/// still be the one that verified it (same kid, algorithm and public material), or the token
/// is verified again from scratch; the time claims are checked against `now` on every call.
/// Not thread-safe: keep one per thread. Bounded: when full it starts over.
public struct JWTVerificationCache {
    private struct Entry {
        let parsed: JWT.Parsed
        let key: JWTKey
    }

    /// A token as a key: hashed by its length and its last 16 bytes, which lie in the signature.
    /// SipHash over a whole token (~800 bytes) cost ~4,000 instructions per lookup. Only tokens
    /// whose signature verified are stored, and nobody without the key chooses their tails.
    struct Key: Hashable {
        let token: String

        /// The same bytes. A synthesized `==` would compare the strings by canonical
        /// equivalence, under which U+212A KELVIN SIGN equals "K": a token with one in place of
        /// a "K" of a cached token, which GoTrue rejects as malformed, would have been answered
        /// from the cache whenever its hash led the lookup to that token's bucket.
        static func == (lhs: Key, rhs: Key) -> Bool { UTF8Bytes.equal(lhs.token, rhs.token) }

        func hash(into hasher: inout Hasher) {
            // The UTF-8 view in place: a `var` copy for `withUTF8` cost a retain and a release.
            func combine(_ bytes: UnsafeBufferPointer<UInt8>) {
                hasher.combine(bytes.count)
                hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[max(0, bytes.count - 16)...])))
            }
            if token.utf8.withContiguousStorageIfAvailable(combine) == nil { Array(token.utf8).withUnsafeBufferPointer(combine) }
        }
    }

    private var entries: [Key: Entry] = [:]
    public let capacity: Int

    public init(capacity: Int = 256) {
        self.capacity = capacity
    }

    public var count: Int { entries.count }

    /// `JWT.verify`, answered from the cache when `token` was verified before with the key
    /// `keys` still selects for it.
    public mutating func verify(
        _ token: String, keys: JWTKeySet, now: Int64, leeway: Int64 = 0,
        options: JWTValidationOptions = JWTValidationOptions()
    ) throws(JWTError) -> JWT {
        if let entry = entries[Key(token: token)], let (_, key) = try? JWT.verificationKey(entry.parsed, keys),
           key.verifiesLike(entry.key) {
            try entry.parsed.times.check(now: now, leeway: leeway, options: options)
            return entry.parsed.token
        }
        let (parsed, key) = try JWT.verifiedWithKey(token, keys: keys, now: now, leeway: leeway, options: options)
        if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
        entries[Key(token: token)] = Entry(parsed: parsed, key: key)
        return parsed.token
    }
}

import CAuthCrypto

/// PBKDF2 with HMAC-SHA256 as the PRF (RFC 8018 section 5.2), in the shape of swift-crypto's
/// `KDF` API.
///
/// Speed matters here because it is what password sign-in costs. Per iteration the work is
/// exactly two SHA-256 compressions: the HMAC key blocks (key XOR ipad, key XOR opad) are
/// absorbed once, and every later U_j = HMAC(P, U_{j-1}) starts from those two saved states
/// with a fixed, pre-padded second block holding the 32-byte U_{j-1}. Nothing is allocated in
/// the loop. With SHA instructions the loop runs entirely in C with the states in registers.
public enum PBKDF2 {
    /// Derives `keyLength` bytes from `password` and `salt` with `iterations` rounds of
    /// HMAC-SHA256. `iterations` must be at least 1 and `keyLength` between 1 and
    /// (2^32 - 1) * 32 (RFC 8018 section 5.2 step 1).
    public static func deriveKey(password: [UInt8], salt: [UInt8], iterations: Int, keyLength: Int) -> [UInt8] {
        deriveKey(password: password, salt: salt, iterations: iterations, keyLength: keyLength,
                  implementation: .automatic)
    }

    package static func deriveKey(
        password: [UInt8], salt: [UInt8], iterations: Int, keyLength: Int,
        implementation: SHA256Implementation
    ) -> [UInt8] {
        precondition(iterations >= 1, "PBKDF2 needs at least one iteration")
        precondition(keyLength >= 1 && keyLength <= 0xffff_ffff * 32, "PBKDF2 key length out of range")

        let prf = HMAC<SHA256>(keyBytes: password, hash: SHA256(implementation: implementation))
        // The key blocks are exactly one SHA-256 block, so these are pure chaining values.
        assert(prf.inner.engine.isBlockAligned && prf.outer.engine.isBlockAligned)
        let innerState = prf.inner.engine.state
        let outerState = prf.outer.engine.state
        let hardware = implementation.usesHardware

        var output = [UInt8]()
        output.reserveCapacity(keyLength)
        var blockIndex: UInt32 = 1
        while output.count < keyLength {
            var u = firstU(prf, salt: salt, blockIndex: blockIndex)
            var t = u
            let rounds = iterations - 1
            if rounds > 0 {
                if hardware {
                    var inner = innerState, outer = outerState
                    withWords(&inner) { i in
                        withWords(&outer) { o in
                            withWords(&u) { uw in
                                withWords(&t) { tw in cauth_pbkdf2_sha256_hw(i, o, uw, tw, UInt64(rounds)) }
                            }
                        }
                    }
                } else {
                    portableLoop(inner: innerState, outer: outerState, u: &u, t: &t, rounds: rounds)
                }
            }
            let block = bigEndianBytes(t, count: 8)
            output.append(contentsOf: block.prefix(keyLength - output.count))
            blockIndex &+= 1
        }
        return output
    }

    /// Derives one key per (password, salt) pair, all with the same `iterations` and
    /// `keyLength`: for each pair the same bytes as `deriveKey`. With SHA instructions the pairs
    /// run two at a time through `cauth_pbkdf2_sha256_hw_x2`, which interleaves two chains and
    /// costs ~0.62x of running them one after the other; this is for hashing many passwords at
    /// once (fixtures), where one sign-in still needs the single chain's latency.
    public static func deriveKeys(passwords: [[UInt8]], salts: [[UInt8]], iterations: Int, keyLength: Int) -> [[UInt8]] {
        deriveKeys(passwords: passwords, salts: salts, iterations: iterations, keyLength: keyLength,
                   implementation: .automatic)
    }

    package static func deriveKeys(
        passwords: [[UInt8]], salts: [[UInt8]], iterations: Int, keyLength: Int,
        implementation: SHA256Implementation
    ) -> [[UInt8]] {
        precondition(passwords.count == salts.count, "one salt per password")
        precondition(iterations >= 1, "PBKDF2 needs at least one iteration")
        precondition(keyLength >= 1 && keyLength <= 0xffff_ffff * 32, "PBKDF2 key length out of range")
        var keys: [[UInt8]] = []
        keys.reserveCapacity(passwords.count)
        var next = 0
        if implementation.usesHardware && iterations > 1 {
            let hash = SHA256(implementation: implementation)
            while next + 1 < passwords.count {
                let prfA = HMAC<SHA256>(keyBytes: passwords[next], hash: hash)
                let prfB = HMAC<SHA256>(keyBytes: passwords[next + 1], hash: hash)
                var innerA = prfA.inner.engine.state, outerA = prfA.outer.engine.state
                var innerB = prfB.inner.engine.state, outerB = prfB.outer.engine.state
                var keyA = [UInt8](), keyB = [UInt8]()
                keyA.reserveCapacity(keyLength)
                keyB.reserveCapacity(keyLength)
                var blockIndex: UInt32 = 1
                while keyA.count < keyLength {
                    var uA = firstU(prfA, salt: salts[next], blockIndex: blockIndex), tA = uA
                    var uB = firstU(prfB, salt: salts[next + 1], blockIndex: blockIndex), tB = uB
                    withWords(&innerA) { ia in withWords(&outerA) { oa in withWords(&uA) { ua in withWords(&tA) { ta in
                        withWords(&innerB) { ib in withWords(&outerB) { ob in withWords(&uB) { ub in withWords(&tB) { tb in
                            cauth_pbkdf2_sha256_hw_x2(ia, oa, ua, ta, ib, ob, ub, tb, UInt64(iterations - 1))
                        } } } }
                    } } } }
                    keyA.append(contentsOf: bigEndianBytes(tA, count: 8).prefix(keyLength - keyA.count))
                    keyB.append(contentsOf: bigEndianBytes(tB, count: 8).prefix(keyLength - keyB.count))
                    blockIndex &+= 1
                }
                keys.append(keyA)
                keys.append(keyB)
                next += 2
            }
        }
        while next < passwords.count {
            keys.append(deriveKey(password: passwords[next], salt: salts[next], iterations: iterations,
                                  keyLength: keyLength, implementation: implementation))
            next += 1
        }
        return keys
    }

    /// U_1 = PRF(P, S || INT(i)), INT big-endian (RFC 8018 section 5.2 step 3), as digest words.
    private static func firstU(_ prf: HMAC<SHA256>, salt: [UInt8], blockIndex: UInt32) -> Words8 {
        var first = prf
        first.update(data: salt)
        first.update(data: [
            UInt8(truncatingIfNeeded: blockIndex >> 24), UInt8(truncatingIfNeeded: blockIndex >> 16),
            UInt8(truncatingIfNeeded: blockIndex >> 8), UInt8(truncatingIfNeeded: blockIndex),
        ])
        return words(fromDigest: first.finalize())
    }

    private static func words(fromDigest digest: [UInt8]) -> Words8 {
        var w: Words8 = (0, 0, 0, 0, 0, 0, 0, 0)
        withWords(&w) { p in
            for i in 0..<8 {
                p[i] = UInt32(digest[4 * i]) << 24 | UInt32(digest[4 * i + 1]) << 16
                    | UInt32(digest[4 * i + 2]) << 8 | UInt32(digest[4 * i + 3])
            }
        }
        return w
    }

    /// The pure-Swift version of `cauth_pbkdf2_sha256_hw`.
    private static func portableLoop(inner: Words8, outer: Words8, u: inout Words8, t: inout Words8, rounds: Int) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64 + 8) { scratch in
            let w = scratch.baseAddress!
            let state = w + 64
            // Words 8..15 of the second block: 0x80 terminator, zeros, and the bit length of
            // the 64-byte key block plus the 32-byte message (FIPS 180-4 section 5.1.1).
            for i in 8..<15 { w[i] = 0 }
            w[8] = 0x8000_0000
            w[15] = (64 + 32) * 8
            withWords(&u) { uw in
                withWords(&t) { tw in
                    let k = SHA256Portable.k
                    for i in 0..<8 { w[i] = uw[i] }
                    var innerCopy = inner, outerCopy = outer
                    withWords(&innerCopy) { innerWords in
                        withWords(&outerCopy) { outerWords in
                            for _ in 0..<rounds {
                                state.update(from: innerWords, count: 8)
                                SHA256Portable.rounds(state, w, k)
                                w.update(from: state, count: 8)
                                state.update(from: outerWords, count: 8)
                                SHA256Portable.rounds(state, w, k)
                                w.update(from: state, count: 8)
                                for i in 0..<8 { tw[i] ^= state[i] }
                            }
                        }
                    }
                    uw.update(from: w, count: 8)
                }
            }
        }
    }
}

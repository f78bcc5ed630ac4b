/// Compares two byte strings without an early exit on the first differing byte, so the time
/// taken does not reveal how long a matching prefix an attacker has guessed (MACs, password
/// hashes, tokens). Lengths are not secret: a length mismatch returns `false` at once.
///
/// Inlinable so callers in other modules get a specialized loop: the unspecialized generic walk
/// (a `Zip2Sequence` through witness tables) was ~12 % of a `GET /user`'s instructions.
@inlinable
public func constantTimeEquals<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for (x, y) in zip(a, b) {
        difference |= x ^ y
    }
    return difference == 0
}

/// The common case, byte arrays (MACs, hashes), compared through raw buffers.
@inlinable
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    return a.withUnsafeBufferPointer { x in
        b.withUnsafeBufferPointer { y in
            var difference: UInt8 = 0
            for index in 0..<x.count { difference |= x[index] ^ y[index] }
            return difference == 0
        }
    }
}

/// Compares two byte strings without an early exit on the first differing byte, so the time
/// taken does not reveal how long a matching prefix an attacker has guessed (MACs, password
/// hashes, tokens). Lengths are not secret: a length mismatch returns `false` at once.
public func constantTimeEquals<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for (x, y) in zip(a, b) {
        difference |= x ^ y
    }
    return difference == 0
}

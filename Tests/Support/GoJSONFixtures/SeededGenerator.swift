/// xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift generators"): the
/// same pseudo-random JSON values, users and texts on every run, for the tests that compare the
/// JSON writers' paths in AuthJSONTests and GoTrueTests.
public struct SeededGenerator {
    public var state: UInt64

    public init(state: UInt64) {
        precondition(state != 0, "xorshift needs a non-zero state")
        self.state = state
    }

    /// A value in `0..<bound`.
    public mutating func next(_ bound: Int) -> Int {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return Int((state &* 0x2545_f491_4f6c_dd1d) >> 33) % bound
    }

    /// `value` or nil, each half the time.
    public mutating func maybe<T>(_ value: T) -> T? { next(2) == 0 ? value : nil }
}

extension String {
    /// Runs `body` over the string's UTF-8 bytes, in place when its storage is contiguous (native
    /// strings always are, small ones through a stack copy). `withUTF8` needs a `var`, and
    /// copying a string into one costs a retain and a release of its storage: a few hundred
    /// per request across the header lookups, bound parameters and JSON strings.
    @inlinable
    public func withUTF8Bytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = self  // bridged storage: `withUTF8` makes it contiguous first
        return try copy.withUTF8(body)
    }
}

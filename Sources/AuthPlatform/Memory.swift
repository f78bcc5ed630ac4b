// The C library's memory comparison, for modules that import no platform module of their own
// (AuthJSON). memcmp is standard C, the same call on Linux and macOS; only its module differs.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

public enum Memory {
    /// Whether `count` bytes at `left` and `right` are equal: memcmp(3). Not constant-time, so
    /// never for secrets (AuthCrypto has the constant-time comparison).
    @inlinable
    public static func equal(_ left: UnsafeRawPointer, _ right: UnsafeRawPointer, count: Int) -> Bool {
        memcmp(left, right, count) == 0
    }
}

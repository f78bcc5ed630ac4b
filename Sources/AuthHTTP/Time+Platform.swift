// Clocks. The monotonic clock drives every timer (timeouts, response delays) so wall-clock jumps
// never fire or stall them; the wall clock only feeds the `Date` response header.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AuthPlatform

enum Clock {
    /// Nanoseconds on a monotonic clock with an arbitrary origin.
    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    /// Whole seconds since the Unix epoch.
    static func wallSeconds() -> Int {
        Int(time(nil))
    }
}

extension Duration {
    /// Non-negative whole nanoseconds, saturating, for the loop's UInt64 timeline.
    var saturatingNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        if seconds >= 9_000_000_000 { return UInt64.max / 2 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }
}

extension Threads {
    static func sleep(nanoseconds: UInt64) {
        var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}

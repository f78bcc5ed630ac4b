// The only platform-specific code of the GoTrue module: the wall clock, stderr, sleeping.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

func wallClockMicroseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1_000
}

func writeToStandardError(_ buffer: UnsafeBufferPointer<UInt8>) -> Int {
    write(2, buffer.baseAddress, buffer.count)
}

/// Blocks the calling worker thread (a hook's back-off between attempts; never the event loop).
func sleepThread(seconds: Double) {
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

/// An environment variable's value (test switches read once, such as `WriteRounds.writesTwice`).
func environmentValue(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}

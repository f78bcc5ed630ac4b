// The only platform-specific code of the GoTrue module: reading the wall clock.
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

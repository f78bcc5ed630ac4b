import GoFormats

/// A UTC instant with microsecond precision: the precision Postgres `timestamptz` keeps for the
/// real server, and the unit the store persists (INTEGER unix microseconds).
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var microseconds: Int64

    public init(microseconds: Int64) { self.microseconds = microseconds }
    public init(seconds: Int64) { self.microseconds = seconds * 1_000_000 }

    /// Whole unix seconds, rounded down (JWT `iat`/`exp`, `expires_at`).
    public var unixSeconds: Int64 {
        microseconds >= 0 ? microseconds / 1_000_000 : (microseconds - 999_999) / 1_000_000
    }

    public func adding(seconds: Int64) -> Timestamp { Timestamp(microseconds: microseconds + seconds * 1_000_000) }
    public func adding(microseconds delta: Int64) -> Timestamp { Timestamp(microseconds: microseconds + delta) }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.microseconds < b.microseconds }

    /// Go's `time.Time` JSON form (`RFC3339Nano`): `2024-05-01T10:11:12.345678Z`, trailing zeros of
    /// the fraction trimmed and the fraction omitted when zero.
    public var rfc3339: String {
        String(unsafeUninitializedCapacity: Self.rfc3339Capacity) { writeRFC3339(into: $0) }
    }

    /// At most 30 bytes: a sign and 6 year digits (Int64 microseconds reach the year 294,247),
    /// 14 for the rest of the date and the time, 8 for the fraction and `Z`.
    static let rfc3339Capacity = 40

    /// `rfc3339`'s UTF-8 in a buffer on the stack, for writers that copy it on (`JSONOutput`):
    /// no `String` is made. `body` must not keep the buffer. Not generic: its callers are in other
    /// files, which GoTrue's file-by-file optimization (Package.swift) does not let specialize it.
    func withRFC3339UTF8(_ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.rfc3339Capacity) { buffer in
            let count = writeRFC3339(into: buffer)
            body(UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// Writes `rfc3339` into `bytes` (at least `rfc3339Capacity` long); returns its length.
    private func writeRFC3339(into bytes: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let seconds = unixSeconds
        let micros = Int(microseconds - seconds * 1_000_000)
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        let (y, m, d) = GoTime.civil(days: days)
        // Written straight into the output at fixed offsets after the year: every user and
        // session JSON carries several timestamps, and building this from padded substrings was
        // ~8 % of a `GET /user` (bench/cost).
        let out = bytes.baseAddress!
        var count = 0
        if y >= 0 && y <= 9999 {
            Self.putDigits(UInt32(y), width: 4, at: out)
            count = 4
        } else {
            // A sign for years before 0, and as many digits as the year has beyond four.
            if y < 0 {
                out[0] = UInt8(ascii: "-")
                count = 1
            }
            let magnitude = UInt64(y.magnitude)
            var width = 4
            var limit: UInt64 = 10_000
            while magnitude >= limit, width < 19 {
                width += 1
                limit = limit &* 10
            }
            Self.putDigits(magnitude, width: width, at: out + count)
            count += width
        }
        let rest = out + count
        rest[0] = UInt8(ascii: "-")
        Self.putDigits(UInt32(m), width: 2, at: rest + 1)
        rest[3] = UInt8(ascii: "-")
        Self.putDigits(UInt32(d), width: 2, at: rest + 4)
        rest[6] = UInt8(ascii: "T")
        Self.putDigits(UInt32(secondOfDay / 3600), width: 2, at: rest + 7)
        rest[9] = UInt8(ascii: ":")
        Self.putDigits(UInt32(secondOfDay / 60 % 60), width: 2, at: rest + 10)
        rest[12] = UInt8(ascii: ":")
        Self.putDigits(UInt32(secondOfDay % 60), width: 2, at: rest + 13)
        count += 15
        if micros != 0 {
            // Six digits, then the trailing zeros dropped (RFC3339Nano trims them).
            out[count] = UInt8(ascii: ".")
            Self.putDigits(UInt32(micros), width: 6, at: out + count + 1)
            count += 7
            while out[count - 1] == UInt8(ascii: "0") { count -= 1 }
        }
        out[count] = UInt8(ascii: "Z")
        return count + 1
    }

    /// `value` in decimal, zero-padded to exactly `width` digits (`value` < 10^width).
    @inline(__always)
    private static func putDigits<T: FixedWidthInteger & UnsignedInteger>(_ value: T, width: Int, at out: UnsafeMutablePointer<UInt8>) {
        var rest = value
        var index = width - 1
        while index >= 0 {
            let (quotient, digit) = rest.quotientAndRemainder(dividingBy: 10)
            out[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: digit)
            rest = quotient
            index -= 1
        }
    }

    public var description: String { rfc3339 }

    /// Parses RFC 3339 (`Z` or a numeric offset; fraction up to nanoseconds, truncated to µs).
    public init?(rfc3339 text: String) {
        let b = Array(text.utf8)
        func digits(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= b.count else { return nil }
            var v = 0
            for i in start..<(start + count) {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                v = v * 10 + Int(b[i] - 0x30)
            }
            return v
        }
        guard b.count >= 20, let y = digits(0, 4), b[4] == 0x2D, let mo = digits(5, 2), b[7] == 0x2D,
              let d = digits(8, 2), b[10] == 0x54 || b[10] == 0x74, let h = digits(11, 2), b[13] == 0x3A,
              let mi = digits(14, 2), b[16] == 0x3A, let s = digits(17, 2),
              (1...12).contains(mo), d >= 1, d <= CalendarDate.daysIn(month: mo, year: y),
              h < 24, mi < 60, s < 60
        else { return nil }
        var i = 19
        var micros = 0
        if i < b.count, b[i] == 0x2E {
            i += 1
            var n = 0
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                if n < 6 { micros = micros * 10 + Int(b[i] - 0x30) }
                n += 1
                i += 1
            }
            guard n > 0 else { return nil }
            for _ in n..<max(n, 6) { micros *= 10 }
        }
        guard i < b.count else { return nil }
        var offset = 0
        if b[i] == 0x5A || b[i] == 0x7A {
            i += 1
        } else if b[i] == 0x2B || b[i] == 0x2D {
            guard let oh = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == 0x3A, let om = digits(i + 4, 2) else { return nil }
            offset = (oh * 60 + om) * 60 * (b[i] == 0x2D ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = GoTime.days(year: y, month: mo, day: d)
        let seconds = Int64(days) * 86_400 + Int64(h * 3600 + mi * 60 + s) - Int64(offset)
        self.microseconds = seconds * 1_000_000 + Int64(micros)
    }
}

extension Timestamp {
    /// Go's zero `time.Time`, 0001-01-01T00:00:00Z: what a model's time fields hold before pop
    /// stamps them on insert.
    static let goZero = Timestamp(rfc3339: "0001-01-01T00:00:00Z")!
}

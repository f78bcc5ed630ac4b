/// Go's `time.ParseDuration`, and the proleptic Gregorian calendar Go's `time` package (and
/// RFC 3339 and HTTP dates) count days in.
package enum GoTime {
    /// A duration Go refuses, with Go's error text (`time: invalid duration "x"`, ...).
    package struct DurationError: Error, Equatable {
        package let message: String
    }

    private static let units: [String: UInt64] = [
        "ns": 1, "us": 1_000, "\u{00B5}s": 1_000, "\u{03BC}s": 1_000, "ms": 1_000_000, "s": 1_000_000_000,
        "m": 60_000_000_000, "h": 3_600_000_000_000,
    ]

    /// `time.ParseDuration`: a signed sequence of decimal numbers, each with an optional fraction
    /// and a unit (`ns`, `us`, `µs`, `μs`, `ms`, `s`, `m`, `h`), e.g. `24h`, `1h30m`, `-1.5s`, or
    /// a bare `0`. Nanoseconds; more than an int64 holds is refused as Go refuses it.
    package static func parseDuration(_ text: String) -> Result<Int64, DurationError> {
        let invalid = DurationError(message: "time: invalid duration " + GoStrconv.quote(text))
        // Code points, as Go reads the string: a digit followed by a combining mark is a digit
        // and the start of a unit, not one Character that is neither.
        let s = Array(text.unicodeScalars)
        func isDigit(_ i: Int) -> Bool { i < s.count && s[i].value >= 0x30 && s[i].value <= 0x39 }
        var i = 0
        var negative = false
        if i < s.count, s[i] == "-" || s[i] == "+" {
            negative = s[i] == "-"
            i += 1
        }
        if s.count - i == 1, s[i] == "0" { return .success(0) }
        if i == s.count { return .failure(invalid) }
        var total: UInt64 = 0
        while i < s.count {
            // The integer part.
            var whole: UInt64 = 0
            var sawDigits = false
            var overflow = false
            while isDigit(i) {
                let (m, o1) = whole.multipliedReportingOverflow(by: 10)
                let (a, o2) = m.addingReportingOverflow(UInt64(s[i].value - 0x30))
                overflow = overflow || o1 || o2
                whole = a
                sawDigits = true
                i += 1
            }
            if overflow { return .failure(invalid) }
            // The fraction: digits past what 64 bits hold are read and dropped, as Go does.
            var fraction: UInt64 = 0
            var scale: Double = 1
            var sawFraction = false
            if i < s.count, s[i] == "." {
                i += 1
                while isDigit(i) {
                    if fraction < UInt64.max / 10 {
                        fraction = fraction * 10 + UInt64(s[i].value - 0x30)
                        scale *= 10
                    }
                    sawFraction = true
                    i += 1
                }
            }
            if !sawDigits && !sawFraction { return .failure(invalid) }
            // The unit: everything up to the next digit or point.
            var unitText = String.UnicodeScalarView()
            while i < s.count, s[i] != ".", !isDigit(i) {
                unitText.append(s[i])
                i += 1
            }
            if unitText.isEmpty {
                return .failure(DurationError(message: "time: missing unit in duration " + GoStrconv.quote(text)))
            }
            guard let unit = units[String(unitText)] else {
                return .failure(DurationError(
                    message: "time: unknown unit " + GoStrconv.quote(String(unitText)) + " in duration " + GoStrconv.quote(text)))
            }
            let (w, o1) = whole.multipliedReportingOverflow(by: unit)
            if o1 || w > 1 << 63 { return .failure(invalid) }
            var value = w
            if sawFraction && fraction > 0 {
                value += UInt64(Double(fraction) * (Double(unit) / scale))
                if value > 1 << 63 { return .failure(invalid) }
            }
            let (t, o2) = total.addingReportingOverflow(value)
            if o2 || t > 1 << 63 { return .failure(invalid) }
            total = t
        }
        if negative { return .success(total == 1 << 63 ? Int64.min : -Int64(total)) }
        if total > UInt64(Int64.max) { return .failure(invalid) }
        return .success(Int64(total))
    }

    /// The proleptic Gregorian date of a day counted from 1970-01-01 (day 0; negative before),
    /// by Howard Hinnant's civil-from-days algorithm over 400-year eras: every day of year 0
    /// and the years before it too, as Go's `time.Time.Date` gives them.
    package static func civil(days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        return (Int(y), Int(m), Int(d))
    }

    /// The inverse of `civil(days:)`: the day number of a proleptic Gregorian date.
    package static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = month > 2 ? month - 3 : month + 9
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

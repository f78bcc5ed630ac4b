import Testing
@testable import GoFormats

@Suite struct GoTimeTests {
    private func ns(_ text: String) -> Int64? {
        if case .success(let v) = GoTime.parseDuration(text) { return v } else { return nil }
    }

    private func message(_ text: String) -> String? {
        if case .failure(let e) = GoTime.parseDuration(text) { return e.message } else { return nil }
    }

    /// time.ParseDuration: the examples of pkg.go.dev/time#ParseDuration and Go's error texts.
    @Test func parseDuration() {
        #expect(ns("10h") == 36_000_000_000_000)
        #expect(ns("1h10m10.5s") == 4_210_500_000_000)
        #expect(ns("1µs") == 1_000)
        #expect(ns("10µs") == 10_000)
        #expect(ns("1\u{03BC}s") == 1_000)
        #expect(ns("1us") == 1_000)
        #expect(ns("24h") == 86_400_000_000_000)
        #expect(ns("1h30m") == 5_400_000_000_000)
        #expect(ns("1.5s") == 1_500_000_000)
        #expect(ns("-2m") == -120_000_000_000)
        #expect(ns("+3ms") == 3_000_000)
        #expect(ns("100ns") == 100)
        #expect(ns("0") == 0)
        #expect(ns("-0") == 0)
        #expect(ns(".5h") == 1_800_000_000_000)
        #expect(ns("1.s") == 1_000_000_000)
        #expect(ns("2562047h47m16.854775807s") == Int64.max)
        #expect(ns("-2562047h47m16.854775808s") == Int64.min)
        #expect(message("") == #"time: invalid duration """#)
        #expect(message("h") == #"time: invalid duration "h""#)
        #expect(message(".") == #"time: invalid duration ".""#)
        #expect(message("-") == #"time: invalid duration "-""#)
        #expect(message("1") == #"time: missing unit in duration "1""#)
        #expect(message("1.2.3s") == #"time: missing unit in duration "1.2.3s""#)
        #expect(message("3d") == #"time: unknown unit "d" in duration "3d""#)
        #expect(message("1h 30m") == #"time: unknown unit "h " in duration "1h 30m""#)
        #expect(message("1\u{301}s") == "time: unknown unit \"\u{301}s\" in duration \"1\u{301}s\"")
        #expect(message("9999999999h") == #"time: invalid duration "9999999999h""#)
        #expect(message("2562047h47m16.854775808s") == #"time: invalid duration "2562047h47m16.854775808s""#)
    }

    /// Day numbers from 1970-01-01 and their proleptic Gregorian dates, as Go's time.Unix(...).Date().
    @Test(arguments: [
        (0, 1970, 1, 1), (-1, 1969, 12, 31), (11_016, 2000, 2, 29), (11_017, 2000, 3, 1), (-25_508, 1900, 3, 1),
        (-719_528, 0, 1, 1), (-719_529, -1, 12, 31), (2_932_896, 9999, 12, 31), (9_131, 1995, 1, 1), (20_454, 2026, 1, 1),
    ] as [(Int64, Int, Int, Int)])
    func civil(_ days: Int64, _ year: Int, _ month: Int, _ day: Int) {
        let date = GoTime.civil(days: days)
        #expect(date.year == year && date.month == month && date.day == day)
        #expect(GoTime.days(year: year, month: month, day: day) == Int(days))
    }

    /// Every 97th day over some 4,400 years either side of 1970: the inverse gives the day back,
    /// and the dates only grow.
    @Test func civilRoundTrips() {
        var previous = GoTime.civil(days: -800_001)
        var failures = 0
        for days in stride(from: Int64(-800_000), through: 800_000, by: 97) {
            let date = GoTime.civil(days: days)
            let ok = GoTime.days(year: date.year, month: date.month, day: date.day) == Int(days)
                && (1...12).contains(date.month) && (1...31).contains(date.day)
                && (date.year, date.month, date.day) > (previous.year, previous.month, previous.day)
            if !ok { failures += 1 }
            previous = date
        }
        #expect(failures == 0)
    }
}

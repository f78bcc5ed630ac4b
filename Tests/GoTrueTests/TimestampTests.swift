import Testing
@testable import EmulatorTools
@testable import GoTrue

@Suite struct TimestampTests {
    // Go's RFC3339Nano: trailing zeros trimmed, no fraction when whole.
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00Z"),
        (1_714_558_272_345_678, "2024-05-01T10:11:12.345678Z"),
        (1_714_558_272_300_000, "2024-05-01T10:11:12.3Z"),
        (1_714_558_272_000_000, "2024-05-01T10:11:12Z"),
        (951_782_400_000_000, "2000-02-29T00:00:00Z"),
        (-1, "1969-12-31T23:59:59.999999Z"),
        (253_402_300_799_000_000, "9999-12-31T23:59:59Z"),
    ])
    func formatting(micros: Int64, text: String) {
        #expect(Timestamp(microseconds: micros).rfc3339 == text)
        #expect(Timestamp(rfc3339: text)?.microseconds == micros)
    }

    /// The end of the range, the longest text the formatter writes (RFC 3339 itself stops at
    /// year 9999, so this one does not parse back).
    @Test func theLastRepresentableTime() {
        #expect(Timestamp(microseconds: .max).rfc3339 == "294247-01-10T04:00:54.775807Z")
    }

    /// Years outside 0...9999 as Go's `appendInt(b, year, 4)` writes them: a sign, then at
    /// least four digits.
    @Test func yearsBeyondFourDigits() {
        #expect(Timestamp(seconds: -62_167_219_200).rfc3339 == "0000-01-01T00:00:00Z")
        #expect(Timestamp(seconds: -62_167_219_201).rfc3339 == "-0001-12-31T23:59:59Z")
        #expect(Timestamp(seconds: 253_402_300_800).rfc3339 == "10000-01-01T00:00:00Z")
        #expect(Timestamp(microseconds: 253_402_300_800_000_010).rfc3339 == "10000-01-01T00:00:00.00001Z")
    }

    @Test func parsingOffsetsAndRejects() {
        #expect(Timestamp(rfc3339: "2024-05-01T12:11:12+02:00") == Timestamp(rfc3339: "2024-05-01T10:11:12Z"))
        #expect(Timestamp(rfc3339: "2024-05-01T10:11:12.123456789Z")?.microseconds == 1_714_558_272_123_456)
        for bad in ["", "2024-05-01", "2024-05-01T10:11:12", "2024-02-30T00:00:00Z", "2024-05-01T24:00:00Z",
                    "2024-05-01T10:11:12.Z", "2024-05-01T10:11:12Zjunk", "2024-05-01 10:11:12Z"] {
            #expect(Timestamp(rfc3339: bad) == nil, "\(bad)")
        }
    }

    @Test func unixSecondsFloor() {
        #expect(Timestamp(microseconds: 1_999_999).unixSeconds == 1)
        #expect(Timestamp(microseconds: -1).unixSeconds == -1)
    }
}

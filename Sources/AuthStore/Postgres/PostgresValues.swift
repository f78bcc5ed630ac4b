import GoFormats

/// How values cross the libpq boundary in text format: `SQLValue` parameters rendered as
/// Postgres input text, and result text normalised by column type OID into the store's
/// `SQLValue`s, so records read Postgres rows with the same `init(row:)` as SQLite rows:
/// timestamps as Int64 unix microseconds, booleans as 0/1, uuid/text/json/enums/inet as text,
/// bytea as bytes, text[] as a JSON array.
///
/// The session settings these rely on (`PostgresConnection.sessionSetup`): DateStyle ISO,
/// TimeZone UTC, bytea_output hex, client_encoding UTF8.
enum PostgresText {
    /// Type OIDs (pg_type.dat; fixed for built-in types since they were assigned).
    enum OID {
        static let bool: UInt32 = 16
        static let bytea: UInt32 = 17
        static let int8: UInt32 = 20
        static let int2: UInt32 = 21
        static let int4: UInt32 = 23
        static let oid: UInt32 = 26
        static let float4: UInt32 = 700
        static let float8: UInt32 = 701
        static let numeric: UInt32 = 1700
        static let timestamp: UInt32 = 1114
        static let timestamptz: UInt32 = 1184
        static let boolArray: UInt32 = 1000
        static let int2Array: UInt32 = 1005
        static let int4Array: UInt32 = 1007
        static let textArray: UInt32 = 1009
        static let bpcharArray: UInt32 = 1014
        static let varcharArray: UInt32 = 1015
        static let int8Array: UInt32 = 1016
        static let uuidArray: UInt32 = 2951
    }

    // MARK: Parameters

    /// The text libpq sends for `value` (nil: SQL NULL). Postgres text cannot hold NUL, so a
    /// string containing one is refused here rather than silently cut short by the C string.
    static func parameter(_ value: SQLValue, index: Int) throws(PostgresError) -> String? {
        switch value {
        case .null: return nil
        case .integer(let number): return String(number)
        case .real(let number): return number.isFinite ? "\(number)" : (number.isNaN ? "NaN" : (number > 0 ? "Infinity" : "-Infinity"))
        case .text(let text):
            if text.utf8.contains(0) {
                throw PostgresError(sqlstate: "22021", step: "bind", message: "parameter $\(index + 1) contains a NUL character, which Postgres text cannot hold")
            }
            return text
        case .blob(let bytes): return hexBytea(bytes)
        }
    }

    /// bytea's hex input format (https://www.postgresql.org/docs/current/datatype-binary.html).
    static func hexBytea(_ bytes: [UInt8]) -> String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var text: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "x")]
        text.reserveCapacity(2 + bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    // MARK: Results

    /// One result cell, normalised by its column's type OID; `bytes` is libpq's text value.
    static func value(_ bytes: UnsafeBufferPointer<UInt8>, type: UInt32) -> SQLValue {
        switch type {
        case OID.bool:
            return .integer(bytes.first == UInt8(ascii: "t") ? 1 : 0)
        case OID.int2, OID.int4, OID.int8, OID.oid:
            return integer(bytes).map { .integer($0) } ?? .text(string(bytes))
        case OID.float4, OID.float8:
            return Double(string(bytes)).map { .real($0) } ?? .text(string(bytes))
        case OID.numeric:
            let text = string(bytes)
            if let whole = Int64(text) { return .integer(whole) }
            return Double(text).map { .real($0) } ?? .text(text)
        case OID.timestamp, OID.timestamptz:
            return timestampMicroseconds(bytes).map { .integer($0) } ?? .text(string(bytes))
        case OID.bytea:
            return unhexBytea(bytes).map { .blob($0) } ?? .text(string(bytes))
        case OID.textArray, OID.varcharArray, OID.bpcharArray, OID.uuidArray:
            return jsonArray(string(bytes), quoted: true).map { .text($0) } ?? .text(string(bytes))
        case OID.int2Array, OID.int4Array, OID.int8Array, OID.boolArray:
            return jsonArray(string(bytes), quoted: false, booleans: type == OID.boolArray).map { .text($0) } ?? .text(string(bytes))
        default:
            // text, varchar, uuid, json, jsonb, inet, enums and anything else: the text itself.
            return .text(string(bytes))
        }
    }

    static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    private static func integer(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        Int64(string(bytes))
    }

    /// bytea's hex output (`\x0a1b…`, bytea_output = hex, the default since 9.0).
    static func unhexBytea(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "\\"), bytes[1] == UInt8(ascii: "x"), bytes.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count - 2) / 2)
        var index = 2
        while index < bytes.count {
            guard let high = nibble(bytes[index]), let low = nibble(bytes[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    // MARK: Arrays

    /// A one-dimensional array literal (`{a,"b c",NULL}`, array output syntax:
    /// https://www.postgresql.org/docs/current/arrays.html#ARRAYS-IO) as a JSON array: strings
    /// when `quoted`, numbers or booleans otherwise. nil for anything else (nested arrays,
    /// explicit bounds), which the caller keeps as the literal text. Reads one level only: no
    /// recursion, so no depth to limit.
    static func jsonArray(_ literal: String, quoted: Bool, booleans: Bool = false) -> String? {
        let bytes = Array(literal.utf8)
        guard bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}") else { return nil }
        var elements: [String?] = []
        var index = 1
        let end = bytes.count - 1
        while index < end {
            var element: [UInt8] = []
            var wasQuoted = false
            if bytes[index] == UInt8(ascii: "\"") {
                wasQuoted = true
                index += 1
                while index < end, bytes[index] != UInt8(ascii: "\"") {
                    if bytes[index] == UInt8(ascii: "\\"), index + 1 < end { index += 1 }
                    element.append(bytes[index])
                    index += 1
                }
                guard index < end else { return nil }
                index += 1  // closing quote
            } else {
                while index < end, bytes[index] != UInt8(ascii: ",") {
                    if bytes[index] == UInt8(ascii: "{") { return nil }  // nested: not one-dimensional
                    element.append(bytes[index])
                    index += 1
                }
            }
            let text = String(decoding: element, as: UTF8.self)
            elements.append(!wasQuoted && text == "NULL" ? nil : text)
            if index < end {
                guard bytes[index] == UInt8(ascii: ",") else { return nil }
                index += 1
            }
        }
        let rendered = elements.map { element -> String in
            guard let element else { return "null" }
            if booleans { return element == "t" ? "true" : "false" }
            return quoted ? GoJSON.quote(element, escapeHTML: false) : element
        }
        return "[" + rendered.joined(separator: ",") + "]"
    }

    /// Postgres array input text for `elements` (`{"a","b"}`): every element quoted, quotes and
    /// backslashes escaped, nil as NULL. For text[] parameters (custom providers' lists).
    static func arrayLiteral(_ elements: [String?]) -> String {
        let rendered = elements.map { element -> String in
            guard let element else { return "NULL" }
            var out = "\""
            for character in element {
                if character == "\"" || character == "\\" { out.append("\\") }
                out.append(character)
            }
            return out + "\""
        }
        return "{" + rendered.joined(separator: ",") + "}"
    }

    // MARK: Timestamps

    /// Microseconds since 1970-01-01 00:00:00 UTC for a timestamp/timestamptz in ISO output
    /// (`2024-05-01 12:34:56.123456+00`, `…+05:30`, `0044-03-15 00:00:00+00 BC`, `infinity`).
    /// A timestamp without time zone reads as UTC: GoTrue stores UTC wall times in them.
    /// Infinities map to Int64.max/min; nil when the text is not in that form.
    static func timestampMicroseconds(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        if bytes.count >= 8, bytes[0] == UInt8(ascii: "i") { return .max }
        if bytes.count >= 9, bytes[0] == UInt8(ascii: "-"), bytes[1] == UInt8(ascii: "i") { return .min }
        var index = 0
        func digits(_ minimum: Int, _ maximum: Int) -> Int64? {
            var value: Int64 = 0
            var count = 0
            while index < bytes.count, count < maximum, bytes[index] >= 48, bytes[index] <= 57 {
                value = value * 10 + Int64(bytes[index] - 48)
                index += 1
                count += 1
            }
            return count >= minimum ? value : nil
        }
        func expect(_ character: Character) -> Bool {
            guard index < bytes.count, bytes[index] == character.asciiValue! else { return false }
            index += 1
            return true
        }
        guard var year = digits(1, 7), expect("-"), let month = digits(2, 2), expect("-"), let day = digits(2, 2),
              expect(" "), let hour = digits(2, 2), expect(":"), let minute = digits(2, 2), expect(":"),
              let second = digits(2, 2), (1...12).contains(month), (1...31).contains(day) else { return nil }
        var fraction: Int64 = 0
        if expect(".") {
            let start = index
            guard let value = digits(1, 6) else { return nil }
            fraction = value
            for _ in 0..<(6 - (index - start)) { fraction *= 10 }
        }
        var offsetSeconds: Int64 = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign: Int64 = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = digits(2, 2) else { return nil }
            var total = hours * 3600
            if expect(":") {
                guard let minutes = digits(2, 2) else { return nil }
                total += minutes * 60
                if expect(":") {
                    guard let seconds = digits(2, 2) else { return nil }
                    total += seconds
                }
            }
            offsetSeconds = sign * total
        }
        if index + 3 <= bytes.count, bytes[index] == UInt8(ascii: " "), bytes[index + 1] == UInt8(ascii: "B"), bytes[index + 2] == UInt8(ascii: "C") {
            year = 1 - year  // 1 BC is astronomical year 0
            index += 3
        }
        guard index == bytes.count else { return nil }
        let days = Int64(GoTime.days(year: Int(year), month: Int(month), day: Int(day)))
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        let (micros, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return nil }
        return micros + fraction
    }

    /// `microseconds` since the epoch as timestamptz input in UTC (`2024-05-01
    /// 12:34:56.123456+00`); Int64.max/min as `infinity`/`-infinity`. Bound to a timestamp
    /// without time zone the offset is ignored, leaving the UTC wall time GoTrue stores there.
    static func timestampText(_ microseconds: Int64) -> String {
        if microseconds == .max { return "infinity" }
        if microseconds == .min { return "-infinity" }
        let (seconds, fraction) = floorDivide(microseconds, 1_000_000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let civil = GoTime.civil(days: days)
        let (year, month, day) = (Int64(civil.year), Int64(civil.month), Int64(civil.day))
        let bc = year <= 0
        var text = pad(bc ? 1 - year : year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + " "
        text += pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if fraction != 0 {
            // As Postgres prints it: trailing zeros of the fraction dropped.
            var digits = Substring(pad(fraction, 6))
            while digits.last == "0" { digits.removeLast() }
            text += "." + digits
        }
        return text + "+00" + (bc ? " BC" : "")
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = value / divisor
        let remainder = value % divisor
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }
}

extension SQLValue {
    /// A timestamp parameter: `microseconds` since the epoch as UTC timestamptz text (nil:
    /// NULL). Postgres needs the text form; the store's records keep Int64 microseconds.
    public static func postgresTimestamp(_ microseconds: Int64?) -> SQLValue {
        microseconds.map { .text(PostgresText.timestampText($0)) } ?? .null
    }

    /// A text[] parameter (nil: NULL).
    public static func postgresTextArray(_ elements: [String]?) -> SQLValue {
        elements.map { .text(PostgresText.arrayLiteral($0)) } ?? .null
    }
}

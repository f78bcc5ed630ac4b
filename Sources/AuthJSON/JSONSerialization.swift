import AuthPlatform
import GoFormats

/// Serialization that reproduces Go's `encoding/json` (`json.Marshal`, Go 1.22 and later)
/// byte for byte, so responses match the real server's:
///
/// - Compact: no whitespace at all.
/// - Strings: `"` and `\` escaped; `\n`, `\r`, `\t`, `\b`, `\f` as two-character escapes
///   (Go 1.22 changed `\b` and `\f` from `\u0008` / `\u000c`); other control characters as
///   `\u00XX` with lowercase hex; `<`, `>`, `&` as `\u003c`, `\u003e`, `\u0026` (Go's default
///   HTML-safe escaping); U+2028 and U+2029 as `\u2028` / `\u2029`; DEL and all other
///   characters verbatim as UTF-8.
/// - Numbers as Go formats a float64: the shortest digits that round-trip, in plain decimal
///   (`strconv.FormatFloat(f, 'f', -1, 64)`) when 1e-6 <= |f| < 1e21 or f is zero, so
///   integral values print without a decimal point (`3600`, `-1`, `0`, `-0`); otherwise in
///   exponent form (`'e'`), where Go's encoder then trims a negative two-digit exponent's
///   leading zero: `1e+21`, `1.5e+300`, `1e-7`, `1.2e-10`. JSON has no NaN or infinity (Go
///   refuses to encode them); they are written as `null`, and the parser never produces them.
/// - Object keys in the object's own order, or sorted by UTF-8 bytes when `sortedKeys` is set,
///   as Go does for every `map[string]any` (e.g. user_metadata), recursively.
extension JSON {
    public func serialized(sortedKeys: Bool = false) -> String {
        String(decoding: serializedBytes(sortedKeys: sortedKeys), as: UTF8.self)
    }

    /// `reservingCapacity`: room for what the caller expects, e.g. ~2 KB for a session response,
    /// so the buffer is not reallocated and copied on its way up from the default.
    public func serializedBytes(sortedKeys: Bool = false, reservingCapacity capacity: Int = 256) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(capacity)
        JSONWriter.write(self, sortedKeys: sortedKeys, to: &out)
        return out
    }
}

extension JSONObject {
    public func serialized(sortedKeys: Bool = false) -> String {
        JSON.object(self).serialized(sortedKeys: sortedKeys)
    }

    public func serializedBytes(sortedKeys: Bool = false) -> [UInt8] {
        JSON.object(self).serializedBytes(sortedKeys: sortedKeys)
    }
}

enum JSONWriter {
    static func write(_ value: JSON, sortedKeys: Bool, to out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): out.append(contentsOf: GoFloat.format(n).utf8)
        case .string(let s): writeString(s, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(element, sortedKeys: sortedKeys, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            if sortedKeys {
                let entries = object.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
                for (i, entry) in entries.enumerated() {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    writeMember(entry.key, entry.value, sortedKeys: sortedKeys, to: &out)
                }
            } else {
                // In the object's own order, without copying its entries first.
                var first = true
                for (key, value) in object {
                    if !first { out.append(UInt8(ascii: ",")) }
                    first = false
                    writeMember(key, value, sortedKeys: sortedKeys, to: &out)
                }
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeMember(_ key: String, _ value: JSON, sortedKeys: Bool, to out: inout [UInt8]) {
        writeString(key, to: &out)
        out.append(UInt8(ascii: ":"))
        write(value, sortedKeys: sortedKeys, to: &out)
    }

    static func writeString(_ string: String, to out: inout [UInt8]) {
        // Fast path for the usual case (ids, emails, timestamps, tokens): contiguous UTF-8 with
        // nothing to escape is copied in one piece.
        // Through the UTF-8 view, not `withUTF8` on a `var` copy: that copy cost a retain and a
        // release of the string's storage per string written (~57 per `GET /user`).
        let copied = string.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard isPlain(bytes) else { return false }
            appendQuoted(bytes, to: &out)
            return true
        }
        if copied != true { writeEscaped(string, to: &out) }
    }

    /// A string given as UTF-8 bytes (`JSONByteWriter.string(utf8:)`): plain ASCII is copied in
    /// one piece; anything else goes through a `String`, which repairs invalid UTF-8 as
    /// `String(decoding:)` does for the tree path (`isPlain` alone lets invalid bytes through).
    static func writeString(utf8 bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        if isPlain(bytes) && ByteScan.isASCII(bytes) {
            appendQuoted(bytes, to: &out)
        } else {
            writeString(String(decoding: bytes, as: UTF8.self), to: &out)
        }
    }

    private static func appendQuoted(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: bytes)
        out.append(UInt8(ascii: "\""))
    }

    /// Whether no byte needs escaping: control characters, `"`, `\`, the HTML-escaped `<`, `>`,
    /// `&`, and 0xE2, which may start U+2028 / U+2029. Sixteen bytes per step; the last step
    /// overlaps bytes already checked rather than going byte by byte, and fewer than sixteen
    /// bytes are gathered into one vector padded with a plain byte (`ByteScan`).
    static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        !ByteScan.anyLane(bytes, filler: UInt8(ascii: "a"), needsEscape)
    }

    @inline(__always)
    private static func needsEscape(_ v: ByteScan.Bytes) -> SIMDMask<SIMD16<Int8>> {
        typealias Bytes = ByteScan.Bytes
        return (v .< Bytes(repeating: 0x20)) .| (v .== Bytes(repeating: 0x22)) .| (v .== Bytes(repeating: 0x5c))
            .| (v .== Bytes(repeating: 0x3c)) .| (v .== Bytes(repeating: 0x3e)) .| (v .== Bytes(repeating: 0x26))
            .| (v .== Bytes(repeating: 0xe2))
    }

    /// The slow path: Go's escapes, one byte at a time.
    private static func writeEscaped(_ string: String, to out: inout [UInt8]) {
        GoJSON.appendString(string, escapeHTML: true, to: &out)
    }
}

/// Go's float64 formatting in `encoding/json` (see the extension comment above).
enum GoFloat {
    static func format(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        // Integral values below 2^53 (times, counts, `expires_in`) are exact and their shortest
        // digits are the integer's own; -0 keeps its sign below.
        if value.magnitude < 9_007_199_254_740_992, value.rounded(.towardZero) == value, value != 0 {
            return String(Int64(value))
        }
        let negative = value.sign == .minus
        let magnitude = value.magnitude
        // Swift's description gives the shortest round-tripping digits (closest to the exact
        // value on ties), the same digits Go's strconv chooses with precision -1.
        let (digits, point) = GoStrconv.shortestDigits(magnitude)
        var out = negative ? "-" : ""
        if magnitude != 0 && (magnitude < 1e-6 || magnitude >= 1e21) {
            out.append(Character(Unicode.Scalar(digits[0])))
            if digits.count > 1 {
                out.append(".")
                out.append(String(decoding: digits[1...], as: UTF8.self))
            }
            let exponent = point - 1
            out.append(exponent < 0 ? "e-" : "e+")
            let e = exponent.magnitude
            // strconv writes at least two exponent digits; json.Marshal then drops the zero
            // of a negative two-digit exponent ("e-07" becomes "e-7"), not of a positive one.
            out.append(e < 10 && exponent > 0 ? "0\(e)" : "\(e)")
        } else if digits.isEmpty {
            out.append("0")
        } else if point <= 0 {
            out.append("0.")
            out.append(String(repeating: "0", count: -point))
            out.append(String(decoding: digits, as: UTF8.self))
        } else if point >= digits.count {
            out.append(String(decoding: digits, as: UTF8.self))
            out.append(String(repeating: "0", count: point - digits.count))
        } else {
            out.append(String(decoding: digits[..<point], as: UTF8.self))
            out.append(".")
            out.append(String(decoding: digits[point...], as: UTF8.self))
        }
        return out
    }
}

import AuthPlatform

/// Recognizes JSON text that is already in the form this module writes for it: an object whose
/// parse, sorted recursively (`sortedRecursively()`) and written (`JSONWriter`, Go's rules),
/// gives the same bytes back.
///
/// Stored metadata (`raw_user_meta_data`, `identity_data`) is written with sorted keys by the
/// server itself, so a response can usually copy it as it is instead of parsing it into a tree
/// and writing that out again: the parse was ~9 % of a `GET /user` (bench/cost) for users whose
/// texts are not in the per-thread parse cache.
///
/// The check is conservative: it accepts only a subset of the canonical form, and anything
/// outside it (whitespace, escapes, non-ASCII, fractions, exponents, `-0`, deep nesting) is
/// left to the parse path, which gives the right bytes for every input.
public enum CanonicalJSON {
    /// Deeper texts go to the parse path, which has its own limit (`defaultMaximumDepth`).
    static let maximumDepth = 16

    /// Whether `bytes` is an object in the accepted subset:
    /// - no whitespace; every object's keys strictly increasing by their bytes, as the sort
    ///   orders them (so no key repeats);
    /// - strings of printable ASCII with nothing `JSONWriter` escapes (`"`, `\`, `<`, `>`, `&`)
    ///   and so no escape sequences: their bytes are their UTF-8;
    /// - numbers that are integers of at most 15 digits without leading zeros, other than
    ///   `-0`: exact as a `Double`, and written back with the same digits;
    /// - `true`, `false`, `null`, arrays, objects.
    public static func isSortedObject(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress, bytes.count >= 2, base[0] == UInt8(ascii: "{") else { return false }
        var scanner = Scanner(base: base, end: bytes.count)
        return scanner.container(depth: 1, isObject: true) && scanner.position == bytes.count
    }

    private struct Scanner {
        let base: UnsafePointer<UInt8>
        let end: Int
        var position = 0

        init(base: UnsafePointer<UInt8>, end: Int) {
            self.base = base
            self.end = end
        }

        private var current: UInt8? { position < end ? base[position] : nil }

        mutating func value(depth: Int) -> Bool {
            switch current {
            case UInt8(ascii: "{")?: return container(depth: depth + 1, isObject: true)
            case UInt8(ascii: "[")?: return container(depth: depth + 1, isObject: false)
            case UInt8(ascii: "\"")?: return string() != nil
            case UInt8(ascii: "t")?: return literal("true")
            case UInt8(ascii: "f")?: return literal("false")
            case UInt8(ascii: "n")?: return literal("null")
            default: return integer()
            }
        }

        /// At `{` or `[`: an object, whose members are values after keys in increasing order, or
        /// an array of values.
        mutating func container(depth: Int, isObject: Bool) -> Bool {
            guard depth <= CanonicalJSON.maximumDepth else { return false }
            let bracket = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            position += 1
            if current == bracket {
                position += 1
                return true
            }
            var previous: Range<Int>?
            while true {
                if isObject {
                    guard current == UInt8(ascii: "\""), let key = string() else { return false }
                    if let previous, !precedes(previous, key) { return false }
                    previous = key
                    guard current == UInt8(ascii: ":") else { return false }
                    position += 1
                }
                guard value(depth: depth) else { return false }
                // A comma: another member or element follows.
                switch current {
                case UInt8(ascii: ",")?: position += 1
                case bracket?:
                    position += 1
                    return true
                default: return false
                }
            }
        }

        /// At `"`: the content's byte range, past the closing quote; nil outside the subset.
        mutating func string() -> Range<Int>? {
            position += 1
            let start = position
            // Sixteen bytes at a time while sixteen remain (`ByteScan`), up to the first byte
            // that ends the string or leaves the subset; the loop below decides which it is.
            typealias Bytes = ByteScan.Bytes
            let raw = UnsafeRawPointer(base)
            while position + 16 <= end {
                let v = raw.loadUnaligned(fromByteOffset: position, as: Bytes.self)
                let stop = (v .< Bytes(repeating: 0x20)) .| (v .>= Bytes(repeating: 0x7f))
                    .| (v .== Bytes(repeating: UInt8(ascii: "\""))) .| (v .== Bytes(repeating: UInt8(ascii: "\\")))
                    .| (v .== Bytes(repeating: UInt8(ascii: "<"))) .| (v .== Bytes(repeating: UInt8(ascii: ">")))
                    .| (v .== Bytes(repeating: UInt8(ascii: "&")))
                if ByteScan.any(stop) {
                    position += ByteScan.firstSet(stop)
                    break
                }
                position += 16
            }
            while position < end {
                let byte = base[position]
                if byte == UInt8(ascii: "\"") {
                    position += 1
                    return start..<(position - 1)
                }
                // Printable ASCII only; `\` (an escape) and what the writer escapes are out.
                guard byte >= 0x20, byte < 0x7f, byte != UInt8(ascii: "\\"), byte != UInt8(ascii: "<"),
                      byte != UInt8(ascii: ">"), byte != UInt8(ascii: "&")
                else { return nil }
                position += 1
            }
            return nil
        }

        /// Whether key `a` sorts strictly before key `b` (bytewise, a prefix first), as
        /// `sortedRecursively` orders keys by their UTF-8.
        func precedes(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
            let common = min(a.count, b.count)
            for offset in 0..<common {
                let x = base[a.lowerBound + offset], y = base[b.lowerBound + offset]
                if x != y { return x < y }
            }
            return a.count < b.count
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard end - position >= count else { return false }
            for offset in 0..<count where base[position + offset] != word.utf8Start[offset] { return false }
            position += count
            return true
        }

        /// `-?(0|[1-9][0-9]{0,14})`, not `-0`.
        mutating func integer() -> Bool {
            var negative = false
            if current == UInt8(ascii: "-") {
                negative = true
                position += 1
            }
            let start = position
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { position += 1 }
            let digits = position - start
            guard digits >= 1, digits <= 15 else { return false }
            if base[start] == UInt8(ascii: "0") { return digits == 1 && !negative }
            return true
        }
    }
}

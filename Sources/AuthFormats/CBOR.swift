/// The subset of CBOR (RFC 8949) that WebAuthn carries: attestation objects, attestation
/// statements and COSE keys (WebAuthn §6.5, CTAP2 §8 "canonical CBOR"). Unsigned and negative
/// integers, byte and text strings, arrays, maps, `false`, `true`, `null`.
///
/// The decoder is strict, as a verifier should be with attacker-chosen bytes: definite lengths
/// only (indefinite lengths, RFC 8949 §3.2.2, are refused), arguments in their shortest form
/// (§4.2.1 preferred serialization, which CTAP2 requires), no tags, no floats or other simple
/// values, text that is valid UTF-8 (§3.1 major type 3), no duplicate map keys (§5.6), bounded
/// nesting depth and item counts, and lengths checked against the bytes left before anything is
/// allocated.
package indirect enum CBOR: Sendable, Equatable {
    case unsigned(UInt64)
    /// Major type 1: the value is -1 - n.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    /// Pairs in encoded order (WebAuthn signs over the bytes, so order is never re-derived).
    case map([Pair])
    case bool(Bool)
    case null

    package struct Pair: Sendable, Equatable {
        package var key: CBOR
        package var value: CBOR
        package init(_ key: CBOR, _ value: CBOR) {
            self.key = key
            self.value = value
        }
    }

    /// An integer as a signed value, when it fits an `Int64`.
    package var intValue: Int64? {
        switch self {
        case .unsigned(let n): n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negative(let n): n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: nil
        }
    }

    package static func int(_ value: Int64) -> CBOR {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
    }

    package var bytesValue: [UInt8]? { if case .bytes(let b) = self { b } else { nil } }
    package var textValue: String? { if case .text(let t) = self { t } else { nil } }
    package var mapValue: [Pair]? { if case .map(let m) = self { m } else { nil } }

    /// The value under an integer key (COSE labels) or a text key (attestation objects).
    package subscript(key: CBOR) -> CBOR? {
        mapValue?.first(where: { $0.key == key })?.value
    }
    package subscript(int key: Int64) -> CBOR? { self[.int(key)] }
    package subscript(text key: String) -> CBOR? { self[.text(key)] }
}

package struct CBORError: Error, Sendable, Equatable, CustomStringConvertible {
    package let offset: Int
    package let reason: String
    package var description: String { "CBOR: \(reason) at byte \(offset)" }
}

extension CBOR {
    /// Limits: WebAuthn structures are a few hundred bytes deep in at most four levels.
    package static let maximumDepth = 16
    package static let maximumInputBytes = 64 * 1024
    package static let maximumItems = 1024

    /// Decodes exactly one item: trailing bytes are an error.
    package static func decode(_ bytes: [UInt8]) throws(CBORError) -> CBOR {
        let (value, end) = try decodePrefix(bytes)
        guard end == bytes.count else { throw CBORError(offset: end, reason: "trailing bytes after the top-level item") }
        return value
    }

    /// Decodes the first item and returns where it ends (authenticator data puts the credential
    /// public key before optional extension data, WebAuthn §6.1).
    package static func decodePrefix(_ bytes: [UInt8], from start: Int = 0) throws(CBORError) -> (CBOR, Int) {
        guard bytes.count - start <= maximumInputBytes else {
            throw CBORError(offset: start, reason: "input longer than \(maximumInputBytes) bytes")
        }
        var reader = Reader(bytes: bytes, position: start)
        let value = try reader.item(depth: 0)
        return (value, reader.position)
    }

    private struct Reader {
        package let bytes: [UInt8]
        package var position: Int
        package var items = 0

        package mutating func fail(_ reason: String) -> CBORError { CBORError(offset: position, reason: reason) }

        package mutating func byte() throws(CBORError) -> UInt8 {
            guard position < bytes.count else { throw fail("unexpected end of input") }
            defer { position += 1 }
            return bytes[position]
        }

        /// The head's argument (RFC 8949 §3): additional info 0-23 inline, 24-27 in 1-8 bytes,
        /// always in the shortest form (§4.2.1).
        package mutating func argument(_ info: UInt8) throws(CBORError) -> UInt64 {
            switch info {
            case 0..<24:
                return UInt64(info)
            case 24...27:
                let count = 1 << Int(info - 24)
                guard bytes.count - position >= count else { throw fail("unexpected end of input") }
                var value: UInt64 = 0
                for _ in 0..<count { value = value << 8 | UInt64(bytes[position]); position += 1 }
                let minimum: UInt64 = switch count { case 1: 24; case 2: 0x100; case 4: 0x1_0000; default: 0x1_0000_0000 }
                guard value >= minimum else { throw fail("argument not in its shortest form") }
                return value
            case 31:
                throw fail("indefinite length is not allowed")
            default:
                throw fail("reserved additional information \(info)")
            }
        }

        package mutating func length(_ info: UInt8) throws(CBORError) -> Int {
            let n = try argument(info)
            guard n <= UInt64(bytes.count - position) else { throw fail("length \(n) exceeds the remaining input") }
            return Int(n)
        }

        package mutating func item(depth: Int) throws(CBORError) -> CBOR {
            guard depth < CBOR.maximumDepth else { throw fail("nesting deeper than \(CBOR.maximumDepth)") }
            items += 1
            guard items <= CBOR.maximumItems else { throw fail("more than \(CBOR.maximumItems) items") }
            let head = try byte()
            let major = head >> 5, info = head & 0x1F
            switch major {
            case 0:
                return .unsigned(try argument(info))
            case 1:
                return .negative(try argument(info))
            case 2:
                let n = try length(info)
                defer { position += n }
                return .bytes(Array(bytes[position..<position + n]))
            case 3:
                let n = try length(info)
                guard let text = String(validating: bytes[position..<position + n], as: UTF8.self) else {
                    throw fail("text string is not valid UTF-8")
                }
                position += n
                return .text(text)
            case 4:
                // Every element takes at least one byte, so the count is bounded by the input.
                let n = try length(info)
                var elements: [CBOR] = []
                elements.reserveCapacity(n)
                for _ in 0..<n { elements.append(try item(depth: depth + 1)) }
                return .array(elements)
            case 5:
                let n = try argument(info)
                guard n <= UInt64(bytes.count - position) / 2 else { throw fail("map size \(n) exceeds the remaining input") }
                var pairs: [Pair] = []
                for _ in 0..<Int(n) {
                    let keyStart = position
                    let key = try item(depth: depth + 1)
                    if pairs.contains(where: { $0.key == key }) {
                        throw CBORError(offset: keyStart, reason: "duplicate map key")
                    }
                    pairs.append(Pair(key, try item(depth: depth + 1)))
                }
                return .map(pairs)
            case 6:
                throw fail("tags are not allowed")
            default:
                switch info {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                default: throw fail("simple value or float \(info) is not allowed")
                }
            }
        }
    }

    /// The preferred serialization (RFC 8949 §4.2.1) of this item, maps in their given order.
    package var encoded: [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    private static func head(_ major: UInt8, _ value: UInt64, into out: inout [UInt8]) {
        let m = major << 5
        switch value {
        case 0..<24: out.append(m | UInt8(value))
        case 24..<0x100: out += [m | 24, UInt8(value)]
        case 0x100..<0x1_0000: out += [m | 25, UInt8(value >> 8), UInt8(value & 0xFF)]
        case 0x1_0000..<0x1_0000_0000: out.append(m | 26); for s in stride(from: 24, through: 0, by: -8) { out.append(UInt8((value >> UInt64(s)) & 0xFF)) }
        default: out.append(m | 27); for s in stride(from: 56, through: 0, by: -8) { out.append(UInt8((value >> UInt64(s)) & 0xFF)) }
        }
    }

    private func encode(into out: inout [UInt8]) {
        switch self {
        case .unsigned(let n): CBOR.head(0, n, into: &out)
        case .negative(let n): CBOR.head(1, n, into: &out)
        case .bytes(let b): CBOR.head(2, UInt64(b.count), into: &out); out += b
        case .text(let t): CBOR.head(3, UInt64(t.utf8.count), into: &out); out += Array(t.utf8)
        case .array(let a): CBOR.head(4, UInt64(a.count), into: &out); for e in a { e.encode(into: &out) }
        case .map(let m):
            CBOR.head(5, UInt64(m.count), into: &out)
            for p in m { p.key.encode(into: &out); p.value.encode(into: &out) }
        case .bool(let b): out.append(b ? 0xF5 : 0xF4)
        case .null: out.append(0xF6)
        }
    }
}

/// A strict decoder (base64, base64url, hex) rejected its input; `offset` is the UTF-8 byte
/// offset where the problem was found (for a bad length or non-zero trailing bits, the last
/// data symbol), like Go's `base64.CorruptInputError`.
public struct DecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    public let offset: Int

    public init(offset: Int) {
        self.offset = offset
    }

    public var description: String { "invalid encoded data at input byte \(offset)" }
}

/// Shared base64 machinery (RFC 4648 sections 4 and 5).
enum Base64Core {
    static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    static let invalid: UInt8 = 0xff

    static func reverse(_ alphabet: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: invalid, count: 256)
        for (value, symbol) in alphabet.enumerated() { table[Int(symbol)] = UInt8(value) }
        return table
    }

    static let standardTable = reverse(standardAlphabet)
    static let urlTable = reverse(urlAlphabet)

    static func encode(_ input: some Sequence<UInt8>, alphabet: [UInt8], padding: Bool) -> String {
        let bytes = Array(input)
        let length = encodedLength(bytes.count, padding: padding)
        return bytes.withUnsafeBufferPointer { source in
            String(unsafeUninitializedCapacity: length) { out in
                encode(source, into: out, alphabet: alphabet, padding: padding)
            }
        }
    }

    static func encodedLength(_ count: Int, padding: Bool) -> Int {
        let rest = count % 3
        return count / 3 * 4 + (rest == 0 ? 0 : (padding ? 4 : rest + 1))
    }

    /// Writes the encoding of `bytes` at the start of `out` (at least `encodedLength` long);
    /// returns its length. Over raw pointers: with array indexing, a JWT's ~900 bytes of
    /// segments cost ~8,500 instructions to encode (bench/cost).
    @discardableResult
    static func encode(_ bytes: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>, alphabet: [UInt8],
                       padding: Bool) -> Int {
        let length = encodedLength(bytes.count, padding: padding)
        guard bytes.count > 0, let input = bytes.baseAddress, let output = out.baseAddress else { return 0 }
        precondition(out.count >= length, "Base64Core.encode: output too short")
        return alphabet.withUnsafeBufferPointer { table in
            let a = table.baseAddress!
            var o = 0, i = 0
            while i + 3 <= bytes.count {
                let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                output[o] = a[Int(v >> 18)]
                output[o + 1] = a[Int(v >> 12 & 63)]
                output[o + 2] = a[Int(v >> 6 & 63)]
                output[o + 3] = a[Int(v & 63)]
                i += 3
                o += 4
            }
            let rest = bytes.count - i
            if rest > 0 {
                let v = UInt32(input[i]) << 16 | (rest == 2 ? UInt32(input[i + 1]) << 8 : 0)
                output[o] = a[Int(v >> 18)]
                output[o + 1] = a[Int(v >> 12 & 63)]
                o += 2
                if rest == 2 {
                    output[o] = a[Int(v >> 6 & 63)]
                    o += 1
                }
                if padding {
                    while o < length {
                        output[o] = UInt8(ascii: "=")
                        o += 1
                    }
                }
            }
            return o
        }
    }

    /// Strict decoding: only alphabet characters; padding exactly as `padded` demands; the
    /// unused low bits of the last symbol must be zero (RFC 4648 section 3.5, canonical
    /// encoding), so every byte string has exactly one accepted encoding.
    static func decode(_ string: some StringProtocol, table: [UInt8], padded: Bool) throws(DecodingError) -> [UInt8] {
        // One copy into contiguous UTF-8, then a loop over raw bytes: iterating `string.utf8`
        // through the generic protocol was most of a JWT segment's decoding cost.
        var text = String(string)
        let result: Result<[UInt8], DecodingError> = text.withUTF8 { bytes in
            do throws(DecodingError) {
                return .success(try decode(bytes: bytes, table: table, padded: padded))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    static func decode(bytes utf8: UnsafeBufferPointer<UInt8>, table: [UInt8], padded: Bool) throws(DecodingError) -> [UInt8] {
        var dataLength = utf8.count
        if padded {
            guard utf8.count % 4 == 0 else { throw DecodingError(offset: utf8.count - utf8.count % 4) }
            if dataLength > 0, utf8[dataLength - 1] == UInt8(ascii: "=") { dataLength -= 1 }
            if dataLength > 0, utf8[dataLength - 1] == UInt8(ascii: "="), utf8.count - dataLength == 1 {
                dataLength -= 1
            }
        }

        var out = [UInt8]()
        out.reserveCapacity(dataLength / 4 * 3 + 2)
        var accumulator: UInt32 = 0
        var symbols = 0
        for offset in 0..<dataLength {
            let value = table[Int(utf8[offset])]
            if value == invalid { throw DecodingError(offset: offset) }
            accumulator = accumulator << 6 | UInt32(value)
            symbols += 1
            if symbols == 4 {
                out.append(UInt8(truncatingIfNeeded: accumulator >> 16))
                out.append(UInt8(truncatingIfNeeded: accumulator >> 8))
                out.append(UInt8(truncatingIfNeeded: accumulator))
                accumulator = 0
                symbols = 0
            }
        }
        switch symbols {
        case 1:
            // A lone symbol carries only 6 bits: not a whole byte.
            throw DecodingError(offset: dataLength - 1)
        case 2:
            if accumulator & 0xf != 0 { throw DecodingError(offset: dataLength - 1) }
            out.append(UInt8(truncatingIfNeeded: accumulator >> 4))
        case 3:
            if accumulator & 0x3 != 0 { throw DecodingError(offset: dataLength - 1) }
            out.append(UInt8(truncatingIfNeeded: accumulator >> 10))
            out.append(UInt8(truncatingIfNeeded: accumulator >> 2))
        default:
            break
        }
        return out
    }
}

/// base64url without padding (RFC 4648 section 5; RFC 7515 section 2 "Base64url Encoding"),
/// as used by JWS/JWT segments.
public enum Base64URL {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Base64Core.encode(bytes, alphabet: Base64Core.urlAlphabet, padding: false)
    }

    /// Byte arrays (JWT segments, signatures) without the generic element-by-element copy an
    /// unspecialized `some Sequence` call makes from another module.
    public static func encode(_ bytes: [UInt8]) -> String {
        Base64Core.encode(bytes, alphabet: Base64Core.urlAlphabet, padding: false)
    }

    /// Appends the encoding of `bytes` to `out`: JWS segments written one after another into the
    /// signing input, without a `String` per segment.
    public static func encode(_ bytes: UnsafeBufferPointer<UInt8>, appendingTo out: inout [UInt8]) {
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: Base64Core.encodedLength(bytes.count, padding: false)))
        _ = out.withUnsafeMutableBufferPointer { buffer in
            Base64Core.encode(bytes, into: UnsafeMutableBufferPointer(rebasing: buffer[start...]), alphabet: Base64Core.urlAlphabet,
                              padding: false)
        }
    }

    /// Strict: rejects `=` padding, characters outside the URL-safe alphabet (including `+`,
    /// `/`, whitespace), a dangling single symbol, and non-zero unused trailing bits.
    public static func decode(_ string: some StringProtocol) throws(DecodingError) -> [UInt8] {
        try Base64Core.decode(string, table: Base64Core.urlTable, padded: false)
    }

    /// The same over raw bytes (a JWT segment sliced out of the token's UTF-8).
    public static func decode(bytes: UnsafeBufferPointer<UInt8>) throws(DecodingError) -> [UInt8] {
        try Base64Core.decode(bytes: bytes, table: Base64Core.urlTable, padded: false)
    }
}

/// Standard base64 (RFC 4648 section 4).
public enum Base64 {
    /// With `=` padding by default; `padding: false` gives the PHC string form.
    public static func encode(_ bytes: some Sequence<UInt8>, padding: Bool = true) -> String {
        Base64Core.encode(bytes, alphabet: Base64Core.standardAlphabet, padding: padding)
    }

    /// Strict: with `padding: true` the length must be a multiple of 4 with at most two
    /// trailing `=`; with `padding: false` no `=` may appear. Unused trailing bits must be zero.
    public static func decode(_ string: some StringProtocol, padding: Bool = true) throws(DecodingError) -> [UInt8] {
        try Base64Core.decode(string, table: Base64Core.standardTable, padded: padding)
    }
}

/// Lowercase hexadecimal.
public enum Hex {
    static let digits = Array("0123456789abcdef".utf8)

    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let input = Array(bytes)
        return String(unsafeUninitializedCapacity: input.count * 2) { out in
            for (i, byte) in input.enumerated() {
                out[2 * i] = digits[Int(byte >> 4)]
                out[2 * i + 1] = digits[Int(byte & 0xf)]
            }
            return input.count * 2
        }
    }

    /// Accepts upper- or lowercase digits; rejects odd lengths and any other character.
    public static func decode(_ string: some StringProtocol) throws(DecodingError) -> [UInt8] {
        let utf8 = Array(string.utf8)
        guard utf8.count % 2 == 0 else { throw DecodingError(offset: utf8.count - 1) }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var high: UInt8 = 0
        for (offset, c) in utf8.enumerated() {
            let nibble: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = c - UInt8(ascii: "A") + 10
            default: throw DecodingError(offset: offset)
            }
            if offset % 2 == 0 { high = nibble } else { out.append(high << 4 | nibble) }
        }
        return out
    }
}

extension Sequence<UInt8> {
    /// Lowercase hex of these bytes, e.g. for printing digests.
    public var hexString: String { Hex.encode(self) }
}

/// Base32 (RFC 4648 section 6): the alphabet `A-Z2-7`, 5 bits per symbol, as TOTP secrets are
/// written in `otpauth://` URIs.
public enum Base32 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// With `=` padding to a multiple of 8 symbols unless `padding` is false.
    public static func encode(_ bytes: some Sequence<UInt8>, padding: Bool = true) -> String {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[Int(buffer >> UInt32(bits) & 31)])
            }
        }
        if bits > 0 { out.append(alphabet[Int(buffer << UInt32(5 - bits) & 31)]) }
        if padding { while out.count % 8 != 0 { out.append(UInt8(ascii: "=")) } }
        return String(decoding: out, as: UTF8.self)
    }

    /// Accepts upper- or lowercase symbols and optional trailing `=` padding; rejects any other
    /// character and a final group whose length no whole number of bytes produces.
    public static func decode(_ string: some StringProtocol) throws(DecodingError) -> [UInt8] {
        var symbols = Array(string.utf8)
        while symbols.last == UInt8(ascii: "=") { symbols.removeLast() }
        // Lengths mod 8 of 1, 3 and 6 leave a partial byte: never produced by an encoder.
        if [1, 3, 6].contains(symbols.count % 8) { throw DecodingError(offset: symbols.count - 1) }
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for (offset, c) in symbols.enumerated() {
            let value: UInt32
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(c - UInt8(ascii: "a"))
            case UInt8(ascii: "2")...UInt8(ascii: "7"): value = UInt32(c - UInt8(ascii: "2")) + 26
            default: throw DecodingError(offset: offset)
            }
            buffer = buffer << 5 | value
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        return out
    }
}

/// Base58 with the Bitcoin alphabet, as Solana writes addresses (public keys) and signatures:
/// the bytes read as one big-endian number written in base 58, each leading zero byte written
/// as a leading "1". The alphabet leaves out 0, O, I and l.
public enum Base58 {
    static let alphabet = Array("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz".utf8)

    static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (value, symbol) in alphabet.enumerated() { table[Int(symbol)] = Int8(value) }
        return table
    }()

    public static func encode(_ bytes: [UInt8]) -> String {
        let zeros = bytes.prefix(while: { $0 == 0 }).count
        // Base-58 digits, least significant first; repeated multiply-and-add (inputs are short).
        var digits: [UInt8] = []
        for byte in bytes[zeros...] {
            var carry = Int(byte)
            for i in digits.indices {
                carry += Int(digits[i]) << 8
                digits[i] = UInt8(carry % 58)
                carry /= 58
            }
            while carry > 0 {
                digits.append(UInt8(carry % 58))
                carry /= 58
            }
        }
        var out = [UInt8](repeating: alphabet[0], count: zeros)
        out.append(contentsOf: digits.reversed().map { alphabet[Int($0)] })
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes, or a `DecodingError` at the first symbol outside the alphabet.
    public static func decode(_ string: some StringProtocol) throws(DecodingError) -> [UInt8] {
        let symbols = Array(string.utf8)
        let ones = symbols.prefix(while: { $0 == alphabet[0] }).count
        var bytes: [UInt8] = []  // least significant first
        for (offset, symbol) in symbols.enumerated().dropFirst(ones) {
            let value = values[Int(symbol)]
            guard value >= 0 else { throw DecodingError(offset: offset) }
            var carry = Int(value)
            for i in bytes.indices {
                carry += Int(bytes[i]) * 58
                bytes[i] = UInt8(carry & 0xFF)
                carry >>= 8
            }
            while carry > 0 {
                bytes.append(UInt8(carry & 0xFF))
                carry >>= 8
            }
        }
        return [UInt8](repeating: 0, count: ones) + bytes.reversed()
    }
}

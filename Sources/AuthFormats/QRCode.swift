/// The QR Code symbol behind `totp.qr_code` of `POST /factors` (GoTrue's `enrollTOTPFactor`,
/// `internal/api/mfa.go`). The real server calls `qr.Encode(key.String(), qr.H, qr.Auto)` of
/// github.com/boombuler/barcode (pinned at 6c824513bacc in its go.mod) and draws the result with
/// goqrsvg; authenticator apps scan any valid symbol, but clients and snapshot tests compare the
/// string, so this encoder makes boombuler's choices, not merely valid ones:
/// - mode: numeric when every 3-byte group parses with Go's `strconv.Atoi`, else alphanumeric
///   when every character is in the 45-character set, else byte mode over the UTF-8 bytes with
///   no ECI header (`encodeAuto`: one mode for the whole text, never mixed segments);
/// - version: the smallest at the level whose data capacity holds mode, count and data bits;
/// - mask: the lowest penalty among masks 0–7, the first on a tie (`render`'s strict `<`), by
///   boombuler's penalty: the four rules of §7.8.3, evaluated inside the symbol only.
/// Everything else is ISO/IEC 18004:2015 as written; boombuler's format and version
/// information, alignment positions and block tables equal the standard's. Where the
/// standard leaves a choice (padding, remainder bits), boombuler takes the usual one.
package enum QRCode {
    /// Error-correction levels; their format bits are those of ISO/IEC 18004 Table C.1.
    package enum Level: Int, Sendable, CaseIterable {
        case low, medium, quartile, high

        /// The two level bits of the format information: L 01, M 00, Q 11, H 10.
        package var formatBits: Int {
            switch self {
            case .low: 0b01
            case .medium: 0b00
            case .quartile: 0b11
            case .high: 0b10
            }
        }
    }

    /// The symbol for `text` at `level` (GoTrue always asks for `.high`), or nil when the text
    /// does not fit version 40, where boombuler returns an error.
    package static func encode(_ text: String, level: Level = .high) -> QRMatrix? {
        let bytes = Array(text.utf8)
        guard let (bits, version) = DataEncoder.encode(bytes, level: level) else { return nil }
        let codewords = version.blocks.codewords(for: bits.bytes)
        return QRMatrix.render(codewords: codewords, version: version)
    }
}

// MARK: - Versions and blocks

/// One version at one level: its size and how its codewords split into Reed–Solomon blocks
/// (ISO/IEC 18004 Table 9).
package struct QRVersion: Sendable, Equatable {
    package let number: Int
    package let level: QRCode.Level

    package init?(_ number: Int, _ level: QRCode.Level) {
        guard (1...40).contains(number) else { return nil }
        self.number = number
        self.level = level
    }

    /// Modules on a side: 21 for version 1, four more per version.
    package var size: Int { 4 * number + 17 }

    /// Modules left for codewords once the function patterns are drawn: the whole square less
    /// the three finders with separators (3 × 64), the timing rows between them (2 × (size − 16)),
    /// the format information and dark module (31), the alignment patterns not covered by a
    /// finder (n² − 3 of 25 modules, less the 2(n − 2) × 5 modules they share with the timing
    /// rows) and, from version 7, the two version blocks (2 × 18). Version 1: 208 = 26 × 8.
    package var rawDataModules: Int {
        var count = size * size - 3 * 64 - 2 * (size - 16) - 31
        let n = alignmentPositions.count
        if n > 0 { count -= (n * n - 3) * 25 - 2 * (n - 2) * 5 }
        if number >= 7 { count -= 36 }
        return count
    }

    /// Whole codewords of the symbol; the few modules over are remainder bits (§7.7.3).
    package var totalCodewords: Int { rawDataModules / 8 }

    package var blocks: QRBlockLayout {
        let index = number - 1
        let (ecc, count): (Int, Int)
        switch level {
        case .low: (ecc, count) = (Self.eccPerBlockL[index], Self.blockCountL[index])
        case .medium: (ecc, count) = (Self.eccPerBlockM[index], Self.blockCountM[index])
        case .quartile: (ecc, count) = (Self.eccPerBlockQ[index], Self.blockCountQ[index])
        case .high: (ecc, count) = (Self.eccPerBlockH[index], Self.blockCountH[index])
        }
        // Table 9 gives "short" blocks first and blocks one data codeword longer after them; the
        // split follows from the total, so only the EC length and block count need storing.
        let short = count - totalCodewords % count
        let shortData = totalCodewords / count - ecc
        return QRBlockLayout(
            eccPerBlock: ecc,
            shortBlocks: short, shortBlockData: shortData,
            longBlocks: count - short, longBlockData: shortData + 1
        )
    }

    package var dataCodewords: Int { blocks.dataCodewords }

    /// Centre coordinates of the alignment patterns, the same list for rows and columns
    /// (ISO/IEC 18004 Annex E, Table E.1); empty for version 1.
    package var alignmentPositions: [Int] { Self.alignment[number - 1] }

    /// The smallest version at `level` that holds the 4-bit mode indicator, the character count
    /// and `dataBits` (boombuler's `findSmallestVersionInfo`).
    package static func smallest(level: QRCode.Level, mode: QRMode, dataBits: Int) -> QRVersion? {
        for number in 1...40 {
            let version = QRVersion(number, level)!
            if version.dataCodewords * 8 >= 4 + mode.countBits(version: number) + dataBits { return version }
        }
        return nil
    }

    // Table 9, per level: error-correction codewords per block and number of blocks, versions 1–40.
    private static let eccPerBlockL = [7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28,
                                       28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30]
    private static let blockCountL = [1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8,
                                      8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25]
    private static let eccPerBlockM = [10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
                                       26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28]
    private static let blockCountM = [1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
                                      17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49]
    private static let eccPerBlockQ = [13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30,
                                       28, 30, 30, 30, 30, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30]
    private static let blockCountQ = [1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20,
                                      23, 23, 25, 27, 29, 34, 34, 35, 38, 40, 43, 45, 48, 51, 53, 56, 59, 62, 65, 68]
    private static let eccPerBlockH = [17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28,
                                       30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30]
    private static let blockCountH = [1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25,
                                      25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81]

    // Annex E, Table E.1. boombuler computes these with a formula of its own; for every version
    // it gives this table (checked when this file was written).
    private static let alignment: [[Int]] = [
        [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34],
        [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50], [6, 30, 54], [6, 32, 58], [6, 34, 62],
        [6, 26, 46, 66], [6, 26, 48, 70], [6, 26, 50, 74], [6, 30, 54, 78], [6, 30, 56, 82], [6, 30, 58, 86],
        [6, 34, 62, 90],
        [6, 28, 50, 72, 94], [6, 26, 50, 74, 98], [6, 30, 54, 78, 102], [6, 28, 54, 80, 106],
        [6, 32, 58, 84, 110], [6, 30, 58, 86, 114], [6, 34, 62, 90, 118],
        [6, 26, 50, 74, 98, 122], [6, 30, 54, 78, 102, 126], [6, 26, 52, 78, 104, 130],
        [6, 30, 56, 82, 108, 134], [6, 34, 60, 86, 112, 138], [6, 30, 58, 86, 114, 142],
        [6, 34, 62, 90, 118, 146],
        [6, 30, 54, 78, 102, 126, 150], [6, 24, 50, 76, 102, 128, 154], [6, 28, 54, 80, 106, 132, 158],
        [6, 32, 58, 84, 110, 136, 162], [6, 26, 54, 82, 110, 138, 166], [6, 30, 58, 86, 114, 142, 170],
    ]
}

/// How a version's data codewords split into blocks: short blocks first, then blocks with one
/// more data codeword; every block carries the same number of EC codewords (§7.5.2).
package struct QRBlockLayout: Sendable, Equatable {
    package let eccPerBlock: Int
    package let shortBlocks: Int
    package let shortBlockData: Int
    package let longBlocks: Int
    package let longBlockData: Int

    package var dataCodewords: Int { shortBlocks * shortBlockData + longBlocks * longBlockData }

    /// Splits `data` (exactly `dataCodewords` bytes) into blocks, appends each block's
    /// Reed–Solomon codewords and interleaves them (§7.6): the i-th data codeword of every block
    /// in turn, long blocks contributing their extra last one, then the i-th EC codeword of every
    /// block.
    package func codewords(for data: [UInt8]) -> [UInt8] {
        precondition(data.count == dataCodewords)
        var dataBlocks: [ArraySlice<UInt8>] = []
        var start = 0
        for index in 0..<(shortBlocks + longBlocks) {
            let length = index < shortBlocks ? shortBlockData : longBlockData
            dataBlocks.append(data[start..<(start + length)])
            start += length
        }
        let eccBlocks = dataBlocks.map { ReedSolomon.remainder(of: Array($0), eccCount: eccPerBlock) }
        var result: [UInt8] = []
        result.reserveCapacity(data.count + eccPerBlock * dataBlocks.count)
        for i in 0..<max(shortBlockData, longBlockData) {
            for block in dataBlocks where i < block.count { result.append(block[block.startIndex + i]) }
        }
        for i in 0..<eccPerBlock {
            for block in eccBlocks { result.append(block[i]) }
        }
        return result
    }
}

// MARK: - Data bit stream

/// Encoding modes with their 4-bit indicators (ISO/IEC 18004 Table 2).
package enum QRMode: Int, Sendable {
    case numeric = 1
    case alphanumeric = 2
    case byte = 4

    /// Bits of the character count indicator (Table 3).
    package func countBits(version: Int) -> Int {
        switch self {
        case .numeric: version < 10 ? 10 : version < 27 ? 12 : 14
        case .alphanumeric: version < 10 ? 9 : version < 27 ? 11 : 13
        case .byte: version < 10 ? 8 : 16
        }
    }
}

/// A growing sequence of bits, most significant first.
package struct QRBitBuffer: Sendable, Equatable {
    private(set) var bytes: [UInt8] = []
    private(set) var count = 0

    /// Appends the low `width` bits of `value`, the highest of them first.
    package mutating func append(_ value: Int, bits width: Int) {
        for shift in stride(from: width - 1, through: 0, by: -1) {
            if count % 8 == 0 { bytes.append(0) }
            if (value >> shift) & 1 == 1 { bytes[count / 8] |= 0x80 >> UInt8(count % 8) }
            count += 1
        }
    }
}

/// Builds the data codewords the way boombuler's `encodeAuto` does.
package enum DataEncoder {
    /// The 45 characters of alphanumeric mode in value order (§7.4.4).
    package static let alphanumericCharacters = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:".utf8)

    /// The padded bit stream (exactly the version's data codewords) and the version chosen.
    package static func encode(_ text: [UInt8], level: QRCode.Level) -> (QRBitBuffer, QRVersion)? {
        if let result = numeric(text, level: level) { return result }
        if let result = alphanumeric(text, level: level) { return result }
        return byte(text, level: level)
    }

    /// Groups of three bytes as 10 bits, a last group of two as 7, of one as 4 (§7.4.3). Each
    /// group is read by Go's `strconv.Atoi`, which also takes a leading sign: boombuler refuses
    /// only a negative value, so "+5" and "-0" pass as numeric groups worth 5 and 0 (a reader
    /// sees "05" and "00"), their length in bytes still choosing the width. Reproduced so texts
    /// with signs get the same symbol.
    package static func numeric(_ text: [UInt8], level: QRCode.Level) -> (QRBitBuffer, QRVersion)? {
        let dataBits = text.count / 3 * 10 + [0, 4, 7][text.count % 3]
        guard let version = QRVersion.smallest(level: level, mode: .numeric, dataBits: dataBits) else { return nil }
        var bits = QRBitBuffer()
        bits.append(QRMode.numeric.rawValue, bits: 4)
        bits.append(text.count, bits: QRMode.numeric.countBits(version: version.number))
        var start = 0
        while start < text.count {
            let group = text[start..<min(start + 3, text.count)]
            guard let value = atoi(group) else { return nil }
            bits.append(value, bits: [10, 4, 7][group.count % 3])
            start += 3
        }
        pad(&bits, to: version)
        return (bits, version)
    }

    /// `strconv.Atoi` on a group of at most three bytes: an optional sign, then at least one
    /// ASCII digit; nil also for a negative value, which boombuler rejects.
    package static func atoi(_ group: ArraySlice<UInt8>) -> Int? {
        var digits = group
        var negative = false
        if let first = digits.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
            negative = first == UInt8(ascii: "-")
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let value = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        return negative && value != 0 ? nil : value
    }

    /// Pairs as 45·a + b in 11 bits, a last single character in 6 (§7.4.4). Any byte outside the
    /// set (lower case, every non-ASCII byte) sends the text on to byte mode.
    package static func alphanumeric(_ text: [UInt8], level: QRCode.Level) -> (QRBitBuffer, QRVersion)? {
        let dataBits = text.count / 2 * 11 + (text.count % 2 == 1 ? 6 : 0)
        guard let version = QRVersion.smallest(level: level, mode: .alphanumeric, dataBits: dataBits) else { return nil }
        var values: [Int] = []
        values.reserveCapacity(text.count)
        for byte in text {
            guard let value = alphanumericCharacters.firstIndex(of: byte) else { return nil }
            values.append(value)
        }
        var bits = QRBitBuffer()
        bits.append(QRMode.alphanumeric.rawValue, bits: 4)
        bits.append(text.count, bits: QRMode.alphanumeric.countBits(version: version.number))
        var index = 0
        while index + 1 < values.count {
            bits.append(values[index] * 45 + values[index + 1], bits: 11)
            index += 2
        }
        if index < values.count { bits.append(values[index], bits: 6) }
        pad(&bits, to: version)
        return (bits, version)
    }

    /// The UTF-8 bytes as they are (§7.4.5). ISO would want an ECI header for UTF-8; boombuler
    /// writes none, as most readers expect, and the count is of bytes.
    package static func byte(_ text: [UInt8], level: QRCode.Level) -> (QRBitBuffer, QRVersion)? {
        guard let version = QRVersion.smallest(level: level, mode: .byte, dataBits: text.count * 8) else { return nil }
        var bits = QRBitBuffer()
        bits.append(QRMode.byte.rawValue, bits: 4)
        bits.append(text.count, bits: QRMode.byte.countBits(version: version.number))
        for byte in text { bits.append(Int(byte), bits: 8) }
        pad(&bits, to: version)
        return (bits, version)
    }

    /// Terminator of up to four zero bits, zeros to the byte boundary, then the pad codewords
    /// 0xEC and 0x11 alternately up to the capacity (§7.4.9–§7.4.10).
    package static func pad(_ bits: inout QRBitBuffer, to version: QRVersion) {
        let capacity = version.dataCodewords * 8
        bits.append(0, bits: min(4, capacity - bits.count))
        if bits.count % 8 != 0 { bits.append(0, bits: 8 - bits.count % 8) }
        var padByte = 0xEC
        while bits.count < capacity {
            bits.append(padByte, bits: 8)
            padByte ^= 0xEC ^ 0x11
        }
    }
}

// MARK: - Reed–Solomon

/// Reed–Solomon codewords over GF(2⁸) with the QR field polynomial x⁸ + x⁴ + x³ + x² + 1 (0x11D)
/// and the generator ∏(x − αⁱ), i = 0 … n−1 (ISO/IEC 18004 §7.5.2, Annex A).
package enum ReedSolomon {
    /// αⁱ for i = 0 … 254 (α = 2): each power doubles the last and reduces by 0x11D.
    package static let powers: [UInt8] = {
        var powers = [UInt8](repeating: 0, count: 255)
        var value = 1
        for i in 0..<255 {
            powers[i] = UInt8(value)
            value <<= 1
            if value & 0x100 != 0 { value ^= 0x11D }
        }
        return powers
    }()

    /// The discrete logarithm of every non-zero element (index 0 unused).
    package static let logarithms: [UInt8] = {
        var logarithms = [UInt8](repeating: 0, count: 256)
        for (i, power) in powers.enumerated() { logarithms[Int(power)] = UInt8(i) }
        return logarithms
    }()

    package static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        if a == 0 || b == 0 { return 0 }
        return powers[(Int(logarithms[Int(a)]) + Int(logarithms[Int(b)])) % 255]
    }

    /// Coefficients of the monic generator of degree `degree`, highest power first, the leading 1
    /// left out.
    package static func generator(degree: Int) -> [UInt8] {
        var poly: [UInt8] = [1]
        for i in 0..<degree {
            // Multiply by (x − αⁱ); in characteristic 2, minus is plus.
            var next = [UInt8](repeating: 0, count: poly.count + 1)
            for (j, coefficient) in poly.enumerated() {
                next[j] ^= coefficient
                next[j + 1] ^= multiply(coefficient, powers[i])
            }
            poly = next
        }
        return Array(poly.dropFirst())
    }

    /// The remainder of data(x) · xⁿ divided by the generator of degree n: the n EC codewords.
    package static func remainder(of data: [UInt8], eccCount: Int) -> [UInt8] {
        let generator = generator(degree: eccCount)
        var remainder = [UInt8](repeating: 0, count: eccCount)
        for byte in data {
            let factor = byte ^ remainder[0]
            remainder.removeFirst()
            remainder.append(0)
            for i in 0..<eccCount { remainder[i] ^= multiply(generator[i], factor) }
        }
        return remainder
    }
}

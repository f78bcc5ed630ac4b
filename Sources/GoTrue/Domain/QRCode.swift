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
enum QRCode {
    /// Error-correction levels; their format bits are those of ISO/IEC 18004 Table C.1.
    enum Level: Int, Sendable, CaseIterable {
        case low, medium, quartile, high

        /// The two level bits of the format information: L 01, M 00, Q 11, H 10.
        var formatBits: Int {
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
    static func encode(_ text: String, level: Level = .high) -> QRMatrix? {
        let bytes = Array(text.utf8)
        guard let (bits, version) = DataEncoder.encode(bytes, level: level) else { return nil }
        let codewords = version.blocks.codewords(for: bits.bytes)
        return QRMatrix.render(codewords: codewords, version: version)
    }
}

// MARK: - Versions and blocks

/// One version at one level: its size and how its codewords split into Reed–Solomon blocks
/// (ISO/IEC 18004 Table 9).
struct QRVersion: Sendable, Equatable {
    let number: Int
    let level: QRCode.Level

    init?(_ number: Int, _ level: QRCode.Level) {
        guard (1...40).contains(number) else { return nil }
        self.number = number
        self.level = level
    }

    /// Modules on a side: 21 for version 1, four more per version.
    var size: Int { 4 * number + 17 }

    /// Modules left for codewords once the function patterns are drawn: the whole square less
    /// the three finders with separators (3 × 64), the timing rows between them (2 × (size − 16)),
    /// the format information and dark module (31), the alignment patterns not covered by a
    /// finder (n² − 3 of 25 modules, less the 2(n − 2) × 5 modules they share with the timing
    /// rows) and, from version 7, the two version blocks (2 × 18). Version 1: 208 = 26 × 8.
    var rawDataModules: Int {
        var count = size * size - 3 * 64 - 2 * (size - 16) - 31
        let n = alignmentPositions.count
        if n > 0 { count -= (n * n - 3) * 25 - 2 * (n - 2) * 5 }
        if number >= 7 { count -= 36 }
        return count
    }

    /// Whole codewords of the symbol; the few modules over are remainder bits (§7.7.3).
    var totalCodewords: Int { rawDataModules / 8 }

    var blocks: QRBlockLayout {
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

    var dataCodewords: Int { blocks.dataCodewords }

    /// Centre coordinates of the alignment patterns, the same list for rows and columns
    /// (ISO/IEC 18004 Annex E, Table E.1); empty for version 1.
    var alignmentPositions: [Int] { Self.alignment[number - 1] }

    /// The smallest version at `level` that holds the 4-bit mode indicator, the character count
    /// and `dataBits` (boombuler's `findSmallestVersionInfo`).
    static func smallest(level: QRCode.Level, mode: QRMode, dataBits: Int) -> QRVersion? {
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
struct QRBlockLayout: Sendable, Equatable {
    let eccPerBlock: Int
    let shortBlocks: Int
    let shortBlockData: Int
    let longBlocks: Int
    let longBlockData: Int

    var dataCodewords: Int { shortBlocks * shortBlockData + longBlocks * longBlockData }

    /// Splits `data` (exactly `dataCodewords` bytes) into blocks, appends each block's
    /// Reed–Solomon codewords and interleaves them (§7.6): the i-th data codeword of every block
    /// in turn, long blocks contributing their extra last one, then the i-th EC codeword of every
    /// block.
    func codewords(for data: [UInt8]) -> [UInt8] {
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
enum QRMode: Int, Sendable {
    case numeric = 1
    case alphanumeric = 2
    case byte = 4

    /// Bits of the character count indicator (Table 3).
    func countBits(version: Int) -> Int {
        switch self {
        case .numeric: version < 10 ? 10 : version < 27 ? 12 : 14
        case .alphanumeric: version < 10 ? 9 : version < 27 ? 11 : 13
        case .byte: version < 10 ? 8 : 16
        }
    }
}

/// A growing sequence of bits, most significant first.
struct QRBitBuffer: Sendable, Equatable {
    private(set) var bytes: [UInt8] = []
    private(set) var count = 0

    /// Appends the low `width` bits of `value`, the highest of them first.
    mutating func append(_ value: Int, bits width: Int) {
        for shift in stride(from: width - 1, through: 0, by: -1) {
            if count % 8 == 0 { bytes.append(0) }
            if (value >> shift) & 1 == 1 { bytes[count / 8] |= 0x80 >> UInt8(count % 8) }
            count += 1
        }
    }
}

/// Builds the data codewords the way boombuler's `encodeAuto` does.
enum DataEncoder {
    /// The 45 characters of alphanumeric mode in value order (§7.4.4).
    static let alphanumericCharacters = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:".utf8)

    /// The padded bit stream (exactly the version's data codewords) and the version chosen.
    static func encode(_ text: [UInt8], level: QRCode.Level) -> (QRBitBuffer, QRVersion)? {
        if let result = numeric(text, level: level) { return result }
        if let result = alphanumeric(text, level: level) { return result }
        return byte(text, level: level)
    }

    /// Groups of three bytes as 10 bits, a last group of two as 7, of one as 4 (§7.4.3). Each
    /// group is read by Go's `strconv.Atoi`, which also takes a leading sign: boombuler refuses
    /// only a negative value, so "+5" and "-0" pass as numeric groups worth 5 and 0 (a reader
    /// sees "05" and "00"), their length in bytes still choosing the width. Reproduced so texts
    /// with signs get the same symbol.
    static func numeric(_ text: [UInt8], level: QRCode.Level) -> (QRBitBuffer, QRVersion)? {
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
    static func atoi(_ group: ArraySlice<UInt8>) -> Int? {
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
    static func alphanumeric(_ text: [UInt8], level: QRCode.Level) -> (QRBitBuffer, QRVersion)? {
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
    static func byte(_ text: [UInt8], level: QRCode.Level) -> (QRBitBuffer, QRVersion)? {
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
    static func pad(_ bits: inout QRBitBuffer, to version: QRVersion) {
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
enum ReedSolomon {
    /// αⁱ for i = 0 … 254 (α = 2): each power doubles the last and reduces by 0x11D.
    static let powers: [UInt8] = {
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
    static let logarithms: [UInt8] = {
        var logarithms = [UInt8](repeating: 0, count: 256)
        for (i, power) in powers.enumerated() { logarithms[Int(power)] = UInt8(i) }
        return logarithms
    }()

    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        if a == 0 || b == 0 { return 0 }
        return powers[(Int(logarithms[Int(a)]) + Int(logarithms[Int(b)])) % 255]
    }

    /// Coefficients of the monic generator of degree `degree`, highest power first, the leading 1
    /// left out.
    static func generator(degree: Int) -> [UInt8] {
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
    static func remainder(of data: [UInt8], eccCount: Int) -> [UInt8] {
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

// MARK: - The symbol

/// A finished symbol: `size` × `size` modules, true for dark, without the quiet zone.
/// `x` counts columns from the left and `y` rows from the top, as boombuler's `At(x, y)`.
struct QRMatrix: Sendable, Equatable {
    let size: Int
    let version: Int
    let mask: Int
    private(set) var modules: [Bool]

    init(size: Int, version: Int, mask: Int, modules: [Bool]) {
        precondition(modules.count == size * size)
        self.size = size
        self.version = version
        self.mask = mask
        self.modules = modules
    }

    subscript(x: Int, y: Int) -> Bool {
        get { modules[y * size + x] }
        set { modules[y * size + x] = newValue }
    }

    /// Rows top to bottom, "#" dark and "." light: the shape the tests compare.
    var rows: [String] {
        (0..<size).map { y in String((0..<size).map { x in self[x, y] ? "#" : "." }) }
    }

    /// Draws the function patterns, places `codewords` and keeps the mask boombuler's `render` keeps.
    static func render(codewords: [UInt8], version: QRVersion) -> QRMatrix {
        var best = 0
        var bestPenalty = Int.max
        let candidates = maskCandidates(codewords: codewords, version: version)
        for (mask, candidate) in candidates.enumerated() {
            let penalty = candidate.penalty
            // Strictly lower: on a tie the earlier mask stays, as in boombuler's loop.
            if penalty < bestPenalty {
                best = mask
                bestPenalty = penalty
            }
        }
        return candidates[best]
    }

    /// The symbol under each of the eight masks, indexed by mask, format information included.
    static func maskCandidates(codewords: [UInt8], version: QRVersion) -> [QRMatrix] {
        let layout = FunctionLayout(version: version)
        let positions = layout.dataPositions()
        var base = layout.matrix
        for (index, (x, y)) in positions.enumerated() {
            // Modules past the codewords are the remainder bits, zero before masking (§7.7.3).
            let bit = index < codewords.count * 8 && (codewords[index / 8] >> UInt8(7 - index % 8)) & 1 == 1
            base[x, y] = bit
        }
        return (0..<8).map { mask in
            var candidate = QRMatrix(size: base.size, version: base.version, mask: mask, modules: base.modules)
            candidate.applyMask(mask, at: positions)
            candidate.drawFormatInformation(level: version.level, mask: mask)
            return candidate
        }
    }

    /// Whether mask `mask` inverts the module in column `x`, row `y` (§7.8.2, whose i is the
    /// row and j the column).
    static func maskInverts(_ mask: Int, x: Int, y: Int) -> Bool {
        switch mask {
        case 0: (y + x) % 2 == 0
        case 1: y % 2 == 0
        case 2: x % 3 == 0
        case 3: (y + x) % 3 == 0
        case 4: (y / 2 + x / 3) % 2 == 0
        case 5: (y * x) % 2 + (y * x) % 3 == 0
        case 6: ((y * x) % 2 + (y * x) % 3) % 2 == 0
        default: ((y + x) % 2 + (y * x) % 3) % 2 == 0
        }
    }

    mutating func applyMask(_ mask: Int, at positions: [(Int, Int)]) {
        for (x, y) in positions where Self.maskInverts(mask, x: x, y: y) { self[x, y].toggle() }
    }

    /// The 15-bit format information: level and mask, BCH(15,5) with generator 0x537, XOR 0x5412
    /// (§7.9.1, Annex C).
    static func formatInformation(level: QRCode.Level, mask: Int) -> Int {
        let data = level.formatBits << 3 | mask
        return bch(data, generator: 0x537, degree: 10) ^ 0x5412
    }

    /// The 18-bit version information: BCH(18,6) with generator 0x1F25 (§7.10, Annex D).
    static func versionInformation(_ version: Int) -> Int {
        bch(version, generator: 0x1F25, degree: 12)
    }

    /// `data` followed by the remainder of data · x^degree divided by `generator`.
    private static func bch(_ data: Int, generator: Int, degree: Int) -> Int {
        var remainder = data << degree
        let generatorBits = Int.bitWidth - generator.leadingZeroBitCount
        while Int.bitWidth - remainder.leadingZeroBitCount >= generatorBits {
            remainder ^= generator << (Int.bitWidth - remainder.leadingZeroBitCount - generatorBits)
        }
        return data << degree | remainder
    }

    /// Format bit 14 (the most significant) first: row 8 from the left, skipping the timing
    /// column, then column 8 upwards; the copy runs up column 8 from the bottom for bits 14–8
    /// and along row 8 to the right edge for bits 7–0 (§7.9.1).
    mutating func drawFormatInformation(level: QRCode.Level, mask: Int) {
        let info = Self.formatInformation(level: level, mask: mask)
        for i in 0..<15 {
            let dark = (info >> (14 - i)) & 1 == 1
            let first: (Int, Int) = switch i {
            case 0...5: (i, 8)
            case 6: (7, 8)
            case 7: (8, 8)
            case 8: (8, 7)
            default: (8, 14 - i)
            }
            self[first.0, first.1] = dark
            let second = i < 7 ? (8, size - 1 - i) : (size - 15 + i, 8)
            self[second.0, second.1] = dark
        }
    }

    // MARK: Penalty

    /// boombuler's `calcPenalty`: the four rules of §7.8.3 with N1 = 3, N2 = 3, N3 = 40, N4 = 10,
    /// over the symbol without its quiet zone, format information included.
    var penalty: Int { penaltyRuns + penaltyBlocks + penaltyFinderLike + penaltyBalance }

    /// Rule 1: a run of n ≥ 5 same-coloured modules in a row or column costs n − 2.
    var penaltyRuns: Int {
        var result = 0
        for line in 0..<size {
            // Rows step by 1 through the storage, columns by `size`.
            for (start, stride) in [(line * size, 1), (line, size)] {
                var colour = false
                var run = 0
                for i in 0..<size {
                    let dark = modules[start + i * stride]
                    if dark == colour {
                        run += 1
                    } else {
                        if run >= 5 { result += run - 2 }
                        colour = dark
                        run = 1
                    }
                }
                if run >= 5 { result += run - 2 }
            }
        }
        return result
    }

    /// Rule 2: 3 for every 2 × 2 square of one colour, overlapping squares each counted.
    var penaltyBlocks: Int {
        var result = 0
        for y in 0..<(size - 1) {
            for x in 0..<(size - 1) {
                let index = y * size + x
                let dark = modules[index]
                if modules[index + 1] == dark && modules[index + size] == dark && modules[index + size + 1] == dark {
                    result += 3
                }
            }
        }
        return result
    }

    /// Rule 3: 40 for every 1011101 with four light modules on one side, in a row or a column.
    /// boombuler looks only inside the symbol: the quiet zone does not count as light, so a
    /// pattern touching the edge with fewer than four light modules beyond it costs nothing.
    var penaltyFinderLike: Int {
        let before: [Bool] = [true, false, true, true, true, false, true, false, false, false, false]
        let after: [Bool] = [false, false, false, false, true, false, true, true, true, false, true]
        var result = 0
        guard size >= before.count else { return 0 }
        for offset in 0...(size - before.count) {
            for line in 0..<size {
                for (start, stride) in [(line * size + offset, 1), (offset * size + line, size)] {
                    var matchesBefore = true
                    var matchesAfter = true
                    for i in 0..<before.count {
                        let dark = modules[start + i * stride]
                        if dark != before[i] { matchesBefore = false }
                        if dark != after[i] { matchesAfter = false }
                    }
                    if matchesBefore || matchesAfter { result += 40 }
                }
            }
        }
        return result
    }

    /// Rule 4: 10 for every full 5 % the dark share lies from 50 %. boombuler takes the nearer
    /// of floor and ceiling of percent / 5 in floating point; the same arithmetic here keeps
    /// borderline shares (exactly 45 %, 55 %) on its side.
    var penaltyBalance: Int {
        let dark = modules.reduce(0) { $0 + ($1 ? 1 : 0) }
        let percent = Double(dark) * 100 / Double(modules.count)
        let low = abs((percent / 5).rounded(.down) - 10)
        let high = abs((percent / 5).rounded(.up) - 10)
        return Int(min(low, high) * 10)
    }
}

/// The function patterns of one version and which modules they take (§6.3.3–§6.3.6), the
/// starting point of every mask candidate.
struct FunctionLayout {
    let version: QRVersion
    var matrix: QRMatrix
    private var reserved: [Bool]

    init(version: QRVersion) {
        self.version = version
        let size = version.size
        matrix = QRMatrix(size: size, version: version.number, mask: -1,
                          modules: [Bool](repeating: false, count: size * size))
        reserved = [Bool](repeating: false, count: size * size)
        drawFinder(x: 0, y: 0)
        drawFinder(x: size - 7, y: 0)
        drawFinder(x: 0, y: size - 7)
        // Alignment patterns go wherever their centre is still free, so the three that would
        // sit on a finder are left out; those on the timing rows are drawn, before the timing.
        for y in version.alignmentPositions {
            for x in version.alignmentPositions where !reserved[y * size + x] { drawAlignment(x: x, y: y) }
        }
        for i in 0..<size {
            if !reserved[6 * size + i] { set(i, 6, i % 2 == 0) }
            if !reserved[i * size + 6] { set(6, i, i % 2 == 0) }
        }
        set(8, size - 8, true)  // the dark module (§7.9.1)
        if version.number >= 7 {
            // Version information: bit i at column size−11 + i mod 3, row i / 3 near the top
            // right corner, and transposed near the bottom left (§7.10).
            let info = QRMatrix.versionInformation(version.number)
            for i in 0..<18 {
                let dark = (info >> i) & 1 == 1
                set(size - 11 + i % 3, i / 3, dark)
                set(i / 3, size - 11 + i % 3, dark)
            }
        }
        // Format information is drawn per mask; here its modules are only taken: row 8 and
        // column 8 next to the top-left finder (but not the timing module), column 8 below the
        // dark module and row 8 left of the top-right finder.
        for i in 0..<size where i != 6 && (i <= 8 || i >= size - 8) {
            reserved[8 * size + i] = true
            if i <= 8 || i >= size - 7 { reserved[i * size + 8] = true }
        }
    }

    private mutating func set(_ x: Int, _ y: Int, _ dark: Bool) {
        matrix[x, y] = dark
        reserved[y * version.size + x] = true
    }

    /// A finder with its light separator: a 9 × 9 square around the 7 × 7 pattern, clipped at
    /// the symbol's edges.
    private mutating func drawFinder(x left: Int, y top: Int) {
        for dy in -1...7 {
            for dx in -1...7 {
                let x = left + dx
                let y = top + dy
                guard (0..<version.size).contains(x), (0..<version.size).contains(y) else { continue }
                let inside = (0...6).contains(dx) && (0...6).contains(dy)
                let ring = dx == 0 || dx == 6 || dy == 0 || dy == 6
                let core = (2...4).contains(dx) && (2...4).contains(dy)
                set(x, y, inside && (ring || core))
            }
        }
    }

    private mutating func drawAlignment(x centreX: Int, y centreY: Int) {
        for dy in -2...2 {
            for dx in -2...2 { set(centreX + dx, centreY + dy, max(abs(dx), abs(dy)) != 1) }
        }
    }

    /// The modules left for codewords in placement order (§7.7.3): two-module columns from the
    /// right edge, upwards then downwards in turn, right module before left, jumping over the
    /// vertical timing column.
    func dataPositions() -> [(Int, Int)] {
        let size = version.size
        var positions: [(Int, Int)] = []
        positions.reserveCapacity(version.rawDataModules)
        var right = size - 1
        var upward = true
        while right > 0 {
            if right == 6 { right -= 1 }
            for step in 0..<size {
                let y = upward ? size - 1 - step : step
                for x in [right, right - 1] where !reserved[y * size + x] { positions.append((x, y)) }
            }
            upward.toggle()
            right -= 2
        }
        return positions
    }
}

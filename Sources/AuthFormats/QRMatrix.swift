/// A finished symbol: `size` × `size` modules, true for dark, without the quiet zone.
/// `x` counts columns from the left and `y` rows from the top, as boombuler's `At(x, y)`.
package struct QRMatrix: Sendable, Equatable {
    package let size: Int
    package let version: Int
    package let mask: Int
    private(set) var modules: [Bool]

    package init(size: Int, version: Int, mask: Int, modules: [Bool]) {
        precondition(modules.count == size * size)
        self.size = size
        self.version = version
        self.mask = mask
        self.modules = modules
    }

    package subscript(x: Int, y: Int) -> Bool {
        get { modules[y * size + x] }
        set { modules[y * size + x] = newValue }
    }

    /// Rows top to bottom, "#" dark and "." light: the shape the tests compare.
    package var rows: [String] {
        (0..<size).map { y in String((0..<size).map { x in self[x, y] ? "#" : "." }) }
    }

    /// Draws the function patterns, places `codewords` and keeps the mask boombuler's `render` keeps.
    package static func render(codewords: [UInt8], version: QRVersion) -> QRMatrix {
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
    package static func maskCandidates(codewords: [UInt8], version: QRVersion) -> [QRMatrix] {
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
    package static func maskInverts(_ mask: Int, x: Int, y: Int) -> Bool {
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

    package mutating func applyMask(_ mask: Int, at positions: [(Int, Int)]) {
        for (x, y) in positions where Self.maskInverts(mask, x: x, y: y) { self[x, y].toggle() }
    }

    /// The 15-bit format information: level and mask, BCH(15,5) with generator 0x537, XOR 0x5412
    /// (§7.9.1, Annex C).
    package static func formatInformation(level: QRCode.Level, mask: Int) -> Int {
        let data = level.formatBits << 3 | mask
        return bch(data, generator: 0x537, degree: 10) ^ 0x5412
    }

    /// The 18-bit version information: BCH(18,6) with generator 0x1F25 (§7.10, Annex D).
    package static func versionInformation(_ version: Int) -> Int {
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
    package mutating func drawFormatInformation(level: QRCode.Level, mask: Int) {
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
    package var penalty: Int { penaltyRuns + penaltyBlocks + penaltyFinderLike + penaltyBalance }

    /// Rule 1: a run of n ≥ 5 same-coloured modules in a row or column costs n − 2.
    package var penaltyRuns: Int {
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
    package var penaltyBlocks: Int {
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
    package var penaltyFinderLike: Int {
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
    package var penaltyBalance: Int {
        let dark = modules.reduce(0) { $0 + ($1 ? 1 : 0) }
        let percent = Double(dark) * 100 / Double(modules.count)
        let low = abs((percent / 5).rounded(.down) - 10)
        let high = abs((percent / 5).rounded(.up) - 10)
        return Int(min(low, high) * 10)
    }
}

/// The function patterns of one version and which modules they take (§6.3.3–§6.3.6), the
/// starting point of every mask candidate.
package struct FunctionLayout {
    package let version: QRVersion
    package var matrix: QRMatrix
    private var reserved: [Bool]

    package init(version: QRVersion) {
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
    package func dataPositions() -> [(Int, Int)] {
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

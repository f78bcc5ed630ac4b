import AuthCrypto
@testable import AuthFormats
import Testing
@testable import EmulatorTools
@testable import GoTrue

// Known answers, from three independent places:
// - ISO/IEC 18004:2015 worked examples (Annex C format information, Annex D version
//   information, Annex I "01234567" at 1-M) and its Table 1 codeword counts;
// - segno 1.6.6 and python-qrcode 8.2, which build a symbol for a forced version and mask: the
//   matrices below are theirs for the version and mask boombuler picks (both agree; segno puts a
//   zero codeword where a byte-aligned stream needs its first pad codeword, so these examples
//   are ones whose stream is not aligned or has no pad);
// - the real thing: GoTrue's qr_code code (boombuler/barcode 6c824513bacc, goqrsvg 17e843f1dd40,
//   svgo 1546f124cd8b, as pinned in GoTrue's go.mod) compiled and run, whose output's SHA-256
//   digests are below. Every matrix here also decodes with zxing-cpp 3.1.1 to its text.
@Suite struct QRCodeTests {
    // MARK: Reed–Solomon

    @Test func galoisField() {
        #expect(ReedSolomon.powers[0] == 1)
        #expect(ReedSolomon.powers[8] == 0x1D)  // α⁸ = α⁴ + α³ + α² + 1 under 0x11D
        #expect(ReedSolomon.powers[254] == 0x8E)  // α²⁵⁴ = α⁻¹
        #expect(Set(ReedSolomon.powers).count == 255)
        #expect(ReedSolomon.multiply(0x8E, 0x02) == 1)
        #expect(ReedSolomon.multiply(0, 0x53) == 0)
    }

    // ISO/IEC 18004:2015 Annex I.2: "01234567" at 1-M, 16 data and 10 EC codewords.
    @Test func reedSolomonISOExample() {
        let data: [UInt8] = [0x10, 0x20, 0x0C, 0x56, 0x61, 0x80, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11]
        #expect(ReedSolomon.remainder(of: data, eccCount: 10) == [0xA5, 0x24, 0xD4, 0xC1, 0xED, 0x36, 0xC7, 0x87, 0x2C, 0x55])
        // The numeric encoder yields exactly those data codewords.
        let (bits, version) = DataEncoder.encode(Array("01234567".utf8), level: .medium)!
        #expect(version.number == 1)
        #expect(bits.bytes == data)
    }

    // 28 and 30 EC codewords, the lengths of GoTrue's versions; segno and python-qrcode agree.
    // x³⁰ mod g(x) is g's own lower coefficients, which also checks leading zero data.
    @Test func reedSolomonLongBlocks() {
        #expect(ReedSolomon.remainder(of: Array("otpauth://totp/l".utf8), eccCount: 28) == [
            118, 56, 53, 58, 125, 63, 243, 10, 42, 67, 28, 240, 144, 55, 8, 242, 44, 53, 65, 137, 74, 67, 87, 62,
            207, 18, 187, 240,
        ])
        let generatorTail: [UInt8] = [
            212, 246, 77, 73, 195, 192, 75, 98, 5, 70, 103, 177, 22, 217, 138, 51, 181, 246, 72, 25, 18, 46, 228,
            74, 216, 195, 11, 106, 130, 150,
        ]
        #expect(ReedSolomon.remainder(of: [0, 0, 0, 0, 0, 1], eccCount: 30) == generatorTail)
        #expect(ReedSolomon.generator(degree: 30) == generatorTail)
    }

    // MARK: Versions, modes, padding

    @Test func versionTables() {
        // ISO/IEC 18004 Table 1: codewords per version.
        let totals = [26, 44, 70, 100, 134, 172, 196, 242, 292, 346, 404, 466, 532, 581, 655, 733, 815, 901, 991,
                      1085, 1156, 1258, 1364, 1474, 1588, 1706, 1828, 1921, 2051, 2185, 2323, 2465, 2611, 2761, 2876,
                      3034, 3196, 3362, 3532, 3706]
        // Table 7: data codewords at level H.
        let dataH = [9, 16, 26, 36, 46, 60, 66, 86, 100, 122, 140, 158, 180, 197, 223, 253, 283, 313, 341, 385,
                     406, 442, 464, 514, 538, 596, 628, 661, 701, 745, 793, 845, 901, 961, 986, 1054, 1096, 1142,
                     1222, 1276]
        for number in 1...40 {
            for level in QRCode.Level.allCases {
                let version = QRVersion(number, level)!
                let blocks = version.blocks
                #expect(blocks.dataCodewords + blocks.eccPerBlock * (blocks.shortBlocks + blocks.longBlocks)
                    == totals[number - 1], "\(number)-\(level)")
            }
            #expect(QRVersion(number, .high)!.dataCodewords == dataH[number - 1], "\(number)-H")
        }
        // Table 9 rows with two block groups.
        #expect(QRVersion(5, .high)!.blocks == QRBlockLayout(eccPerBlock: 22, shortBlocks: 2, shortBlockData: 11,
                                                               longBlocks: 2, longBlockData: 12))
        #expect(QRVersion(10, .high)!.blocks == QRBlockLayout(eccPerBlock: 28, shortBlocks: 6, shortBlockData: 15,
                                                                longBlocks: 2, longBlockData: 16))
        #expect(QRVersion(40, .high)!.blocks == QRBlockLayout(eccPerBlock: 30, shortBlocks: 20, shortBlockData: 15,
                                                                longBlocks: 61, longBlockData: 16))
        #expect(QRVersion(0, .high) == nil && QRVersion(41, .high) == nil)
    }

    // Annex C: level M with mask 101 gives 100000011001110; Annex D: version 7 gives 0x07C94.
    @Test func formatAndVersionInformation() {
        #expect(QRMatrix.formatInformation(level: .medium, mask: 5) == 0b100000011001110)
        #expect(QRMatrix.formatInformation(level: .high, mask: 0) == 0b001011010001001)
        #expect(QRMatrix.versionInformation(7) == 0x07C94)
        #expect(QRMatrix.versionInformation(40) == 0x28C69)
    }

    @Test func modeSelection() {
        func mode(_ text: String) -> Int? {
            DataEncoder.encode(Array(text.utf8), level: .high).map { Int($0.0.bytes[0] >> 4) }
        }
        #expect(mode("0123456789") == QRMode.numeric.rawValue)
        #expect(mode("") == QRMode.numeric.rawValue)  // an empty text is numeric with count 0
        #expect(mode("HELLO WORLD $%*+-./:") == QRMode.alphanumeric.rawValue)
        #expect(mode("Hello") == QRMode.byte.rawValue)
        #expect(mode("otpauth://totp/x") == QRMode.byte.rawValue)
        #expect(mode("ÄB") == QRMode.byte.rawValue)
        // Go's Atoi takes a sign: "+12" is one numeric group worth 12 in 10 bits, "-0" passes,
        // "-1" does not (it falls through to alphanumeric).
        #expect(mode("+12") == QRMode.numeric.rawValue)
        #expect(mode("-0") == QRMode.numeric.rawValue)
        #expect(mode("-1") == QRMode.alphanumeric.rawValue)
        #expect(mode("1+") == QRMode.alphanumeric.rawValue)
        #expect(DataEncoder.atoi(ArraySlice(Array("+12".utf8))) == 12)
        #expect(DataEncoder.atoi(ArraySlice(Array("+".utf8))) == nil)
        #expect(DataEncoder.atoi(ArraySlice(Array("1 2".utf8))) == nil)
    }

    // Capacities at level H (Table 7): the last text that fits version 40 and the first that
    // does not, as boombuler answers (the real server then has no qr_code to send).
    @Test func versionSelection() {
        #expect(QRCode.encode(String(repeating: "a", count: 7))?.version == 1)
        #expect(QRCode.encode(String(repeating: "a", count: 8))?.version == 2)
        #expect(QRCode.encode(String(repeating: "a", count: 1273))?.version == 40)
        #expect(QRCode.encode(String(repeating: "a", count: 1274)) == nil)
        #expect(QRCode.encode(String(repeating: "A", count: 1852))?.version == 40)
        #expect(QRCode.encode(String(repeating: "A", count: 1853)) == nil)
        #expect(QRCode.encode(String(repeating: "7", count: 3057))?.version == 40)
        #expect(QRCode.encode(String(repeating: "7", count: 3058)) == nil)
        #expect(QRCode.svg(String(repeating: "a", count: 1274)) == nil)
    }

    @Test func padding() {
        // "otpauth" at H: 4 + 8 + 56 bits, the 4-bit terminator fills version 1 exactly.
        let (full, _) = DataEncoder.encode(Array("otpauth".utf8), level: .high)!
        #expect(full.bytes == [0x40, 0x76, 0xF7, 0x47, 0x06, 0x17, 0x57, 0x46, 0x80])
        // "A" at H: 4 + 9 + 6 bits, terminator, zero bits to the byte, then EC 11 EC ...
        let (short, _) = DataEncoder.encode(Array("A".utf8), level: .high)!
        #expect(short.bytes == [0x20, 0x09, 0x40, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11])
    }

    // MARK: Matrices

    // Byte mode, version 1, mask 5 (boombuler's choice); identical in segno and python-qrcode.
    @Test func matrixOtpauth() {
        let matrix = QRCode.encode("otpauth")!
        #expect(matrix.version == 1 && matrix.mask == 5)
        #expect(matrix.rows == Self.otpauthRows)
    }

    // Alphanumeric, version 2 (one alignment pattern), mask 5.
    @Test func matrixAlphanumeric() {
        let matrix = QRCode.encode("HELLO WORLD")!
        #expect(matrix.version == 2 && matrix.mask == 5)
        #expect(matrix.rows == [
            "#######.###.##.##.#######",
            "#.....#...#.##.##.#.....#",
            "#.###.#.#.#.....#.#.###.#",
            "#.###.#..##..####.#.###.#",
            "#.###.#.##..#.##..#.###.#",
            "#.....#..#.....#..#.....#",
            "#######.#.#.#.#.#.#######",
            "........#.#.##..#........",
            ".....##...####.#..#.#.#.#",
            "##.##..####...#.#.##.#..#",
            "....#.#....#...#..#.#....",
            "#.###..#.#.#...#.####..#.",
            "#.#.###..###.....####.#.#",
            "###.##..#....#...##..#.#.",
            "#...#.##....#.####....#..",
            "#..##....#.##.#.#..##.#.#",
            "#.#.#.#..#...#.########.#",
            "........##..#.#.#...####.",
            "#######...##.####.#.#.##.",
            "#.....#.#..#.####...#####",
            "#.###.#......##.######.##",
            "#.###.#...###....#.#.##.#",
            "#.###.#..#.#..#.#.#..#..#",
            "#.....#.....####..#..##..",
            "#######...###..##.#.#.###",
        ])
    }

    // The ISO Annex I text at level M; boombuler's penalty picks mask 0 here.
    @Test func matrixNumeric() {
        let matrix = QRCode.encode("01234567", level: .medium)!
        #expect(matrix.version == 1 && matrix.mask == 0)
        #expect(matrix.rows == [
            "#######...###.#######",
            "#.....#.###...#.....#",
            "#.###.#..##...#.###.#",
            "#.###.#..#.##.#.###.#",
            "#.###.#.##.##.#.###.#",
            "#.....#....#..#.....#",
            "#######.#.#.#.#######",
            ".....................",
            "#.#.#.#...#.#...#..#.",
            "##.#....#.##.#.#...#.",
            "...##.###.##.###.###.",
            "##..##.#.#.###.##..#.",
            "..#..###.###.###....#",
            "........#.#...#....#.",
            "#######.....#...#...#",
            "#.....#...#...#..#.##",
            "#.###.#.###.#.#.###.#",
            "#.###.#..#.#.#.#.###.",
            "#.###.#.##.#.###..#.#",
            "#.....#....###.###...",
            "#######.#..#.###..#.#",
        ])
    }

    // "766" (numeric, 1-H) is one of the few texts where two masks share the lowest penalty;
    // boombuler keeps the earlier one, and so must we (the real server's SVG has mask 0).
    @Test func maskTieKeepsTheEarlierMask() throws {
        let (bits, version) = try #require(DataEncoder.encode(Array("766".utf8), level: .high))
        let candidates = QRMatrix.maskCandidates(codewords: version.blocks.codewords(for: bits.bytes), version: version)
        let penalties = candidates.map(\.penalty)
        let lowest = try #require(penalties.min())
        #expect(penalties.filter { $0 == lowest }.count > 1)
        #expect(penalties.firstIndex(of: lowest) == 0)
        #expect(QRCode.encode("766")?.mask == 0)
        #expect(QRCode.encode("766") == candidates[0])
    }

    // Hand-counted: an all-light 21 × 21 square has 42 runs of 21 (19 each), 400 uniform 2 × 2
    // squares, no finder-like run and 0 % dark (100).
    @Test func penaltyRules() {
        var matrix = QRMatrix(size: 21, version: 1, mask: 0, modules: [Bool](repeating: false, count: 441))
        #expect(matrix.penaltyRuns == 42 * 19)
        #expect(matrix.penaltyBlocks == 400 * 3)
        #expect(matrix.penaltyFinderLike == 0)
        #expect(matrix.penaltyBalance == 100)
        // One row 1011101 0000 at the left: 40 once, and its runs shrink.
        for (x, dark) in [true, false, true, true, true, false, true].enumerated() { matrix[x, 3] = dark }
        #expect(matrix.penaltyFinderLike == 40)
        // 220 of 441 dark (49.9 %): floor 9 and ceiling 10 of percent / 5, the nearer wins: 0.
        let half = QRMatrix(size: 21, version: 1, mask: 0, modules: (0..<441).map { $0 < 220 })
        #expect(half.penaltyBalance == 0)
        // Exactly 45 % is a full 5 % away: 10.
        let share = QRMatrix(size: 10, version: 1, mask: 0, modules: (0..<100).map { $0 < 45 })
        #expect(share.penaltyBalance == 10)
    }

    // MARK: SVG

    // goqrsvg + SVGo, derived from their source: the header of svg.Start, one rect per module with
    // the SVG's y following the symbol's column (goqrsvg's transposition), 4 modules of quiet zone
    // (12 units at size 3), " />" endings, then </svg> and a newline.
    @Test func svgTinyExact() {
        let svg = QRCode.svg("otpauth")!
        var expected = "<?xml version=\"1.0\"?>\n<!-- Generated by SVGo -->\n<svg width=\"87\" height=\"87\"\n"
            + "     xmlns=\"http://www.w3.org/2000/svg\"\n     xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
        let rows = Self.otpauthRows.map(Array.init)
        for column in 0..<21 {
            for row in 0..<21 {
                let fill = rows[row][column] == "#" ? "black" : "white"
                expected += "<rect x=\"\(12 + 3 * row)\" y=\"\(12 + 3 * column)\" width=\"3\" height=\"3\" "
                    + "style=\"fill:\(fill);stroke:none\" />\n"
            }
        }
        expected += "</svg>\n"
        #expect(svg == expected)
        #expect(svg.utf8.count == 33248)
        // Spot checks written out in full: the first rect; then the second SVG row, which is the
        // symbol's second column: light inside the finder (row 1), dark on its edge (row 6).
        let lines = svg.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 5 + 441 + 2)
        #expect(lines[5] == #"<rect x="12" y="12" width="3" height="3" style="fill:black;stroke:none" />"#)
        #expect(lines[5 + 21 + 1] == #"<rect x="15" y="15" width="3" height="3" style="fill:white;stroke:none" />"#)
        #expect(lines[5 + 21 + 6] == #"<rect x="30" y="15" width="3" height="3" style="fill:black;stroke:none" />"#)
    }

    // SHA-256 of the real server's qr_code for the same text, from the pinned Go code run as
    // mfa.go runs it. The first otpauth URI needs version 10 (version information, 8 blocks in
    // two groups, six alignment patterns).
    @Test(arguments: [
        ("otpauth", 33_248, "15ba35456f2058a6a920e2e2ee83caa916263e05fcaf62bdf8182dba673cdce1"),
        ("", 33_248, "7cfbfe64dc397fc01b597d29aad5539e90488a86942cad5f5a33642c1ef4da0e"),
        ("otpauth://totp/localhost:user@example.com?algorithm=SHA1&digits=6&issuer=localhost&period=30&secret=JBSWY3DPEHPK3PXP",
         246_928, "c8e86758bf28ae03cc9068c2aac55048b1a4675caf7baa538c6a1a428ff4464c"),
        ("766", 33_248, "fdf64025c45d7e9fd6ac7b7acf76c55ec7e9eb28b0e525e0a323de964006b288"),
        // Version 12 with a tie between masks, like "766".
        ("otpauth://totp/127.0.0.1%3A54321:5mn%40tzron.co.uk?algorithm=SHA1&digits=6&issuer=127.0.0.1%3A54321"
            + "&period=30&secret=MLB6HXW76P2YWS7J4DVJVTK4HOSML35O",
         321_600, "68d9351a2d4005b25fcc6cd87d48bdbf74c4a3227dd83d705e611ef66e5d745d"),
    ])
    func svgMatchesGoTrue(text: String, length: Int, digest: String) throws {
        let svg = try #require(QRCode.svg(text))
        #expect(svg.utf8.count == length)
        #expect(Hex.encode(SHA256.hash(data: Array(svg.utf8))) == digest)
    }

    @Test func otpauthSymbol() throws {
        let uri = "otpauth://totp/localhost:user@example.com?algorithm=SHA1&digits=6&issuer=localhost&period=30&secret=JBSWY3DPEHPK3PXP"
        let matrix = try #require(QRCode.encode(uri))
        #expect(matrix.version == 10 && matrix.size == 57 && matrix.mask == 5)
        let svg = try #require(QRCode.svg(uri))
        #expect(svg.hasPrefix("<?xml version=\"1.0\"?>\n<!-- Generated by SVGo -->\n<svg width=\"195\" height=\"195\"\n"))
        #expect(svg.hasSuffix("style=\"fill:black;stroke:none\" />\n</svg>\n") == matrix[56, 56])
    }

    // GoTrue's qr_code is the bare SVG; supabase-js prefixes it with exactly this.
    @Test func dataURI() throws {
        let svg = try #require(QRCode.svg("otpauth"))
        let uri = try #require(QRCode.svgDataURI("otpauth"))
        #expect(QRCode.dataURIPrefix == "data:image/svg+xml;utf-8,")
        #expect(uri == "data:image/svg+xml;utf-8," + svg)
        #expect(uri.hasPrefix("data:image/svg+xml;utf-8,<?xml version=\"1.0\"?>\n"))
        #expect(!svg.hasPrefix("data:"))
        #expect(QRCode.svgDataURI(String(repeating: "a", count: 1274)) == nil)
    }

    static let otpauthRows = [
        "#######.#...#.#######",
        "#.....#..#.#..#.....#",
        "#.###.#.###...#.###.#",
        "#.###.#...#.#.#.###.#",
        "#.###.#.##..#.#.###.#",
        "#.....#..#..#.#.....#",
        "#######.#.#.#.#######",
        "........#...#........",
        ".....##.......#.#.#.#",
        "#.##.#.#.##.....####.",
        "###...##....#.##..##.",
        ".#.#...##........####",
        "##.##.##...#.###.....",
        "........###..#..#.#.#",
        "#######..#........##.",
        "#.....#.#..####.####.",
        "#.###.#...###......#.",
        "#.###.#...#.#####.#..",
        "#.###.#...##..#.#.###",
        "#.....#..#.#####.##..",
        "#######..#...#...#.#.",
    ]
}

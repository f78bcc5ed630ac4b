@testable import AuthCrypto

/// Both SHA-256 back ends: hardware when this CPU has it (otherwise the same as portable), and
/// the forced pure-Swift path.
let implementations: [SHA256Implementation] = [.automatic, .portable]

func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

func unhex(_ text: String) -> [UInt8] {
    // Vectors below are written with spaces as in their RFCs.
    try! Hex.decode(text.filter { !$0.isWhitespace })
}

/// Feeds `data` to `hasher` in the given repeating chunk sizes, to exercise block buffering.
func feed<H: HashFunction>(_ hasher: inout H, _ data: [UInt8], chunks: [Int]) {
    var offset = 0, turn = 0
    while offset < data.count {
        let size = min(chunks[turn % chunks.count], data.count - offset)
        hasher.update(data: data[offset..<(offset + size)])
        offset += size
        turn += 1
    }
}

import Testing
@testable import AuthStore

@Suite struct StringTableTests {
    /// Keys of one length that differ only outside the sampled words share a hash, so they
    /// exercise probing inside one run.
    func collidingKeys(_ count: Int) -> [String] {
        (0..<count).map { i in
            var bytes = [UInt8](repeating: UInt8(ascii: "s"), count: 160)
            bytes[20] = UInt8(ascii: "a") + UInt8(i % 26)
            bytes[21] = UInt8(ascii: "a") + UInt8(i / 26)
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    @Test func collidingKeysShareAHashAndStayApart() {
        let keys = collidingKeys(40)
        #expect(Set(keys.map(StringTable<Int>.hash)).count == 1)
        var table = StringTable<Int>()
        for (i, key) in keys.enumerated() { table.set(i, for: key) }
        #expect(table.count == keys.count)
        for (i, key) in keys.enumerated() { #expect(table[key] == i) }
        #expect(table[String(keys[0].dropLast())] == nil)
    }

    /// Against Dictionary, over random inserts and overwrites (with colliding and short keys,
    /// through several growths and a `removeAll` midway), checking every key after each step.
    @Test func behavesAsADictionary() {
        var generator = SplitMix(seed: 7)
        let keys = collidingKeys(30) + ["", "a", "b", "id", "email", "é", "user_metadata", "Email"]
        var table = StringTable<Int>(capacity: 1)
        var reference: [String: Int] = [:]
        for step in 0..<3_000 {
            let key = keys[Int(generator.next() % UInt64(keys.count))]
            if step == 1_500 {
                table.removeAll()
                reference.removeAll()
            }
            table.set(step, for: key)
            reference[key] = step
            #expect(table.count == reference.count)
            for probe in keys where table[probe] != reference[probe] {
                Issue.record("step \(step): \(probe.prefix(8)) is \(String(describing: table[probe])), expected \(String(describing: reference[probe]))")
                return
            }
        }
        #expect(table.allValues.sorted() == reference.values.sorted())
        table.removeAll()
        #expect(table.count == 0 && keys.allSatisfy { table[$0] == nil })
    }

    @Test func rowsFindColumnsByNameFirstDuplicateWinning() {
        let row = Row(columns: ["id", "email", "id"], values: [.integer(1), .text("a@b.c"), .integer(2)])
        #expect(row.int64("id") == 1)
        #expect(row.string("email") == "a@b.c")
        #expect(row["missing"] == .null)
        #expect(row == Row(columns: ["id", "email", "id"], values: [.integer(1), .text("a@b.c"), .integer(2)]))
        #expect(row != Row(columns: ["id", "email", "id"], values: [.integer(1), .text("x"), .integer(2)]))
    }
}

/// SplitMix64 (Steele, Lea and Flood, 2014): a seeded source so failures reproduce.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

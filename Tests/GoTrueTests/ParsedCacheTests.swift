import AuthJSON
import AuthPlatform
import Testing
@testable import EmulatorTools
@testable import GoTrue

@Suite struct ParsedCacheTests {
    typealias Cache = Models.ParsedCache

    func entry(_ marker: String) -> Models.ParsedObject {
        var object = JSONObject()
        object.append("marker", .string(marker))
        return Models.ParsedObject(object: object, sorted: object)
    }

    func marker(_ entry: Models.ParsedObject?) -> String? { entry?.object["marker"]?.stringValue }

    /// Texts of one length that differ only outside the three sampled words, so they share a
    /// hash and therefore a slot.
    func collidingTexts(_ count: Int) -> [String] {
        (0..<count).map { i in
            var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: 120)
            bytes[20] = UInt8(ascii: "a") + UInt8(i % 26)
            bytes[21] = UInt8(ascii: "a") + UInt8(i / 26)
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    @Test func aHitNeedsTheSameTextNotJustTheSameSlot() {
        let texts = collidingTexts(2)
        #expect(SampledHash.of(texts[0]) == SampledHash.of(texts[1]))
        var cache = Cache()
        let first = cache.find(texts[0])
        #expect(first.entry == nil)
        cache.offer(texts[0], entry("zero"), slot: first.slot)
        #expect(marker(cache.find(texts[0]).entry) == "zero")
        let other = cache.find(texts[1])
        #expect(other.slot == first.slot && other.entry == nil)
    }

    /// A text read again keeps its slot against a stream of one-off texts that map to it.
    @Test func sharedTextsStayWhileOneOffTextsPassThrough() {
        let texts = collidingTexts(40)
        let shared = texts[0]
        var cache = Cache()
        cache.offer(shared, entry("shared"), slot: cache.find(shared).slot)
        for (index, text) in texts.dropFirst().enumerated() {
            // Every request reads the shared text, then meets a user's own.
            #expect(marker(cache.find(shared).entry) == "shared", "evicted at \(index)")
            let found = cache.find(text)
            #expect(found.entry == nil)
            cache.offer(text, entry("one-off \(index)"), slot: found.slot)
            #expect(cache.find(text).entry == nil, "admitted at \(index)")
        }
        // Not read since it was last spared, the shared text gives way to the next newcomer.
        let newcomer = texts[1]
        cache.offer(newcomer, entry("newcomer"), slot: cache.find(newcomer).slot)
        #expect(cache.find(shared).entry == nil)
        #expect(marker(cache.find(newcomer).entry) == "newcomer")
    }

    /// One-off texts replace each other: an occupant never read is not spared.
    @Test func unreadTextsReplaceEachOther() {
        let texts = collidingTexts(3)
        var cache = Cache()
        for (index, text) in texts.enumerated() {
            cache.offer(text, entry("\(index)"), slot: cache.find(text).slot)
        }
        #expect(cache.find(texts[0]).entry == nil)
        #expect(cache.find(texts[1]).entry == nil)
        #expect(marker(cache.find(texts[2]).entry) == "2")
    }

    /// Texts in different slots do not disturb each other, and a free slot takes any text.
    @Test func distinctSlotsHoldTheirOwnTexts() {
        var cache = Cache()
        var stored: [Int: String] = [:]
        for index in 0..<500 {
            let text = "{\"email\":\"user\(index)@example.com\",\"sub\":\"\(index)\"}"
            let found = cache.find(text)
            if stored[found.slot] == nil {
                cache.offer(text, entry(text), slot: found.slot)
                stored[found.slot] = text
            }
        }
        #expect(stored.count > Cache.slotCount / 2)
        for (slot, text) in stored {
            let found = cache.find(text)
            #expect(found.slot == slot)
            #expect(marker(found.entry) == text)
        }
    }

    /// Canonically equivalent texts (equal to Swift's `==`) are different texts here: each
    /// reads back in its own bytes, as the real server returns what it stored.
    @Test func equivalentSpellingsAreDifferentTexts() {
        let composedFirst = "{\"name\":\"\u{E9}e\u{301}" + String(repeating: "x", count: 40) + "\"}"
        let decomposedFirst = "{\"name\":\"e\u{301}\u{E9}" + String(repeating: "x", count: 40) + "\"}"
        #expect(composedFirst == decomposedFirst)  // Swift's String equality
        #expect(!UTF8Bytes.equal(composedFirst, decomposedFirst))
        #expect(UTF8Bytes.equal(composedFirst, String(decoding: Array(composedFirst.utf8), as: UTF8.self)))
        #expect(SampledHash.of(composedFirst) == SampledHash.of(decomposedFirst))  // one slot

        var cache = Cache()
        cache.offer(composedFirst, entry("composed"), slot: cache.find(composedFirst).slot)
        #expect(marker(cache.find(composedFirst).entry) == "composed")
        #expect(cache.find(decomposedFirst).entry == nil)

        for text in [composedFirst, decomposedFirst, composedFirst] {
            #expect(Array(JSON.object(Models.object(text)).serialized().utf8) == Array(text.utf8))
        }
    }

    /// Through the cache, the same text parses to the same objects, and one stored in any
    /// key order comes out sorted.
    @Test func modelsReadTheSameObjectsThroughTheCache() {
        let text = "{\"zeta\":1,\"alpha\":{\"y\":2,\"x\":[{\"d\":1,\"c\":2}]},\"email\":\"a@b.c\"}"
        for _ in 0..<3 {
            #expect(JSON.object(Models.sortedObject(text)).serialized()
                == "{\"alpha\":{\"x\":[{\"c\":2,\"d\":1}],\"y\":2},\"email\":\"a@b.c\",\"zeta\":1}")
            #expect(Models.object(text).keys.first == "zeta")
        }
        #expect(Models.object("{").isEmpty)
        #expect(Models.object("{}").isEmpty)
    }
}

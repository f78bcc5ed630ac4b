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

@Suite struct RowLayoutTests {
    static let layout = RowLayout("a, b,\n c")

    @Test func layoutNamesAndList() {
        #expect(Self.layout.names == ["a", "b", "c"])
        #expect(Self.layout.list == "a, b, c")
        #expect(RowLayout("a").id != RowLayout("a").id)
    }

    /// The same reads give the same values whether the row is read by position (its columns
    /// are the layout's) or by name (any other order, extra columns, a missing one).
    @Test func readsByPositionOrByNameAlike() {
        let ordered = Row(columns: ["a", "b", "c"], values: [.text("x"), .integer(2), .null])
        let shuffled = Row(columns: ["c", "extra", "a", "b"], values: [.null, .text("?"), .text("x"), .integer(2)])
        let missing = Row(columns: ["b", "a"], values: [.integer(2), .text("x")])
        #expect(ordered.matches(Self.layout))
        #expect(!shuffled.matches(Self.layout))
        #expect(!missing.matches(Self.layout))
        for row in [ordered, shuffled, missing] {
            var reader = RowReader(row, Self.layout)
            #expect(reader.string("a") == "x")
            #expect(reader.int64("b") == 2)
            #expect(reader.value("c") == .null)
            #expect(reader.isComplete)
        }
    }

    /// Rows of one statement share their positions, which remember the answer per layout.
    @Test func matchIsRememberedPerLayout() {
        let other = RowLayout("c, b, a")
        let positions = ColumnPositions(["a", "b", "c"])
        for _ in 0..<3 {
            #expect(positions.match(Self.layout, ["a", "b", "c"]))
            #expect(!positions.match(other, ["a", "b", "c"]))
        }
    }
}

@Suite struct RecordLayoutTests {
    /// Every record read from a row whose columns are in another order (read by name) equals
    /// the one read from its own SELECT's order (read by position): the reads follow the layout.
    @Test func recordsReadTheSameInAnyColumnOrder() throws {
        let database = try Database(path: ":memory:")
        try database.write { connection in
            var user = UserRecord(id: "u1", createdAt: 1_000)
            user.aud = "authenticated"
            user.role = "authenticated"
            user.email = "a@example.com"
            user.emailConfirmedAt = 1_001
            user.phone = "15550001"
            user.lastSignInAt = 1_002
            user.appMetadata = #"{"provider":"email"}"#
            user.userMetadata = #"{"k":1}"#
            user.isAnonymous = true
            try connection.insertUser(user)
            var identity = IdentityRecord(id: "i1", providerID: "u1", userID: "u1",
                                          identityData: #"{"email":"a@example.com"}"#, provider: "email", at: 1_003)
            identity.lastSignInAt = 1_004
            try connection.insertIdentity(identity)
            var session = SessionRecord(id: "s1", userID: "u1", at: 1_005)
            session.aal = "aal2"
            session.userAgent = "agent"
            session.refreshTokenCounter = 7
            try connection.insertSession(session)
            _ = try connection.insertRefreshToken(token: "tok", userID: "u1", sessionID: "s1", parent: "p", at: 1_006)
        }
        try database.read { connection in
            func check<R: Equatable>(_ layout: RowLayout, _ table: String, _ make: (Row) -> R) throws {
                let ordered = try connection.query("SELECT \(layout.list) FROM \(table)")
                let reversed = try connection.query("SELECT \(layout.names.reversed().joined(separator: ", ")) FROM \(table)")
                #expect(ordered.count == 1 && reversed.count == 1)
                #expect(ordered[0].matches(layout) && !reversed[0].matches(layout))
                #expect(make(ordered[0]) == make(reversed[0]), "\(table)")
            }
            try check(UserRecord.layout, "users", UserRecord.init(row:))
            try check(IdentityRecord.layout, "identities", IdentityRecord.init(row:))
            try check(SessionRecord.layout, "sessions", SessionRecord.init(row:))
            try check(RefreshTokenRecord.layout, "refresh_tokens", RefreshTokenRecord.init(row:))
            let user = try #require(try connection.user(id: "u1"))
            #expect(user.email == "a@example.com" && user.emailConfirmedAt == 1_001 && user.confirmedAt == 1_001)
            #expect(user.lastSignInAt == 1_002 && user.isAnonymous && user.userMetadata == #"{"k":1}"#)
            let session = try #require(try connection.session(id: "s1"))
            #expect(session.aal == "aal2" && session.userAgent == "agent" && session.refreshTokenCounter == 7)
        }
    }
}

import AuthJSON
import AuthStore
import AuthTestSupport
import GoJSONFixtures
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// The user's JSON is written once (`Models.writeUser`) and comes out as a tree for most callers
/// and as bytes for `GET /user` and the refresh grant: both must be the bytes GoTrue sends.
@Suite struct UserJSONTests {

    static let texts = ["", "a@example.com", "Renée <r@x>", "+15550001", "\u{2028}", "\"q\"", "x\ny"]
    static let metadata = [
        "{}", #"{"b":1,"a":"x"}"#, #"{ "sub": "u1", "email": "Up@Example.com", "n": {"z": [1.5, null, true]} }"#,
        "not json", #"{"a":"<&>","a":2}"#, #"{"email_verified":false,"provider":"email","providers":["email","phone"]}"#,
        #"{"email":"up@example.com","sub":"u1"}"#, #"{"a":[1,-2,0,{"b":null}],"b":{"c":true},"n":999999999999999}"#,
        #"{"a":1.5}"#, #"{"b":{"z":1,"a":2}}"#,
    ]
    static let times: [Int64] = [0, 1_714_558_272_345_678, 1_714_558_272_300_000, -1, 253_402_300_799_000_000]

    static func user(_ g: inout SeededGenerator) -> UserRecord {
        func text() -> String { texts[g.next(texts.count)] }
        func time() -> Int64 { times[g.next(times.count)] }
        var u = UserRecord(id: "8d1f3c6e-3f0e-4a43-9e3a-0b4f2f1d8c7a", createdAt: time())
        u.updatedAt = time()
        u.aud = g.maybe("authenticated") ?? ""
        u.role = text()
        u.email = g.maybe(text())
        u.phone = g.maybe(text())
        u.emailConfirmedAt = g.maybe(time())
        u.invitedAt = g.maybe(time())
        u.phoneConfirmedAt = g.maybe(time())
        u.confirmationSentAt = g.maybe(time())
        u.recoverySentAt = g.maybe(time())
        u.emailChange = g.maybe(text())
        u.emailChangeSentAt = g.maybe(time())
        u.phoneChange = g.maybe(text())
        u.phoneChangeSentAt = g.maybe(time())
        u.reauthenticationSentAt = g.maybe(time())
        u.lastSignInAt = g.maybe(time())
        u.appMetadata = metadata[g.next(metadata.count)]
        u.userMetadata = metadata[g.next(metadata.count)]
        u.bannedUntil = g.maybe(time())
        u.deletedAt = g.maybe(time())
        u.isAnonymous = g.next(2) == 0
        u.refreshConfirmedAt()
        return u
    }

    static func identity(_ g: inout SeededGenerator, userID: String) -> IdentityRecord {
        var i = IdentityRecord(id: "i\(g.next(100))", providerID: texts[g.next(texts.count)], userID: userID,
                               identityData: metadata[g.next(metadata.count)], provider: ["email", "phone", "google"][g.next(3)],
                               at: times[g.next(times.count)])
        i.lastSignInAt = g.maybe(times[g.next(times.count)])
        return i
    }

    static func factor(_ g: inout SeededGenerator, userID: String) -> FactorRecord {
        var f = FactorRecord(id: "f\(g.next(100))", userID: userID, factorType: ["totp", "phone", "webauthn"][g.next(3)],
                             status: ["verified", "unverified"][g.next(2)], at: times[g.next(times.count)])
        f.friendlyName = g.maybe(texts[g.next(texts.count)])
        f.phone = g.maybe("15550001")
        f.lastChallengedAt = g.maybe(times[g.next(times.count)])
        f.webAuthnAAGUID = g.maybe(["", "adce0002-35bc-c60a-648b-0b25f1f05503"][g.next(2)])
        return f
    }

    /// Every optional field set, written out by hand in GoTrue's declaration order
    /// (`models.User`, `models.Factor`, `models.Identity`).
    @Test func aFullUserInGoTruesOrder() {
        var u = UserRecord(id: "u1", createdAt: 1_000_000)
        u.aud = "authenticated"
        u.role = "authenticated"
        u.email = "a@x.io"
        u.emailConfirmedAt = 2_000_000
        u.invitedAt = 3_000_000
        u.phone = "1555"
        u.phoneConfirmedAt = 4_000_000
        u.confirmationSentAt = 5_000_000
        u.recoverySentAt = 7_000_000
        u.emailChange = "b@x.io"
        u.emailChangeSentAt = 8_000_000
        u.phoneChange = "1666"
        u.phoneChangeSentAt = 9_000_000
        u.reauthenticationSentAt = 10_000_000
        u.lastSignInAt = 11_000_000
        u.appMetadata = #"{"provider":"email"}"#
        u.userMetadata = #"{"z":1,"a":"<"}"#
        u.updatedAt = 12_500_000
        u.bannedUntil = 13_000_000
        u.deletedAt = 14_000_000
        u.isAnonymous = true
        u.refreshConfirmedAt()  // the earlier of the two confirmations
        var f = FactorRecord(id: "f1", userID: "u1", factorType: "totp", status: "verified", at: 15_000_000)
        f.friendlyName = "phone app"
        let i = IdentityRecord(id: "i1", providerID: "u1", userID: "u1", identityData: #"{"sub":"u1","email":"A@X.io"}"#,
                               provider: "email", at: 16_000_000)
        let expected = #"{"id":"u1","aud":"authenticated","role":"authenticated","email":"a@x.io","#
            + #""email_confirmed_at":"1970-01-01T00:00:02Z","invited_at":"1970-01-01T00:00:03Z","phone":"1555","#
            + #""phone_confirmed_at":"1970-01-01T00:00:04Z","confirmation_sent_at":"1970-01-01T00:00:05Z","#
            + #""confirmed_at":"1970-01-01T00:00:02Z","recovery_sent_at":"1970-01-01T00:00:07Z","new_email":"b@x.io","#
            + #""email_change_sent_at":"1970-01-01T00:00:08Z","new_phone":"1666","phone_change_sent_at":"1970-01-01T00:00:09Z","#
            + #""reauthentication_sent_at":"1970-01-01T00:00:10Z","last_sign_in_at":"1970-01-01T00:00:11Z","#
            + #""app_metadata":{"provider":"email"},"user_metadata":{"a":"\u003c","z":1},"#
            + #""factors":[{"id":"f1","created_at":"1970-01-01T00:00:15Z","updated_at":"1970-01-01T00:00:15Z","#
            + #""status":"verified","friendly_name":"phone app","factor_type":"totp","phone":"","last_challenged_at":null}],"#
            + #""identities":[{"identity_id":"i1","id":"u1","user_id":"u1","identity_data":{"email":"A@X.io","sub":"u1"},"#
            + #""provider":"email","last_sign_in_at":"1970-01-01T00:00:16Z","created_at":"1970-01-01T00:00:16Z","#
            + #""updated_at":"1970-01-01T00:00:16Z","email":"a@x.io"}],"#
            + #""created_at":"1970-01-01T00:00:01Z","updated_at":"1970-01-01T00:00:12.5Z","#
            + #""banned_until":"1970-01-01T00:00:13Z","deleted_at":"1970-01-01T00:00:14Z","is_anonymous":true}"#
        #expect(Models.user(u, identities: [i], factors: [f]).serialized() == expected)
        var writer = JSONByteWriter()
        Models.writeUser(u, identities: [i], factors: [f], to: &writer)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == expected)
    }

    @Test func bytesMatchTheTreeForRandomUsers() {
        var g = SeededGenerator(state: 0x51a7_e5ee_d00d_f00d)
        for _ in 0..<2_000 {
            let u = Self.user(&g)
            let identities: [IdentityRecord]? = g.next(4) == 0 ? nil : (0..<g.next(3)).map { _ in Self.identity(&g, userID: u.id) }
            let factors = (0..<g.next(3)).map { _ in Self.factor(&g, userID: u.id) }
            var writer = JSONByteWriter()
            Models.writeUser(u, identities: identities, factors: factors, to: &writer)
            let tree = Models.user(u, identities: identities, factors: factors)
            #expect(writer.bytes == tree.goJSONBytes)
            // The tree reads back from its own bytes: nothing in it the writer could not express.
            #expect((try? JSON(parsing: String(decoding: writer.bytes, as: UTF8.self))) == tree)

            let view = Models.UserView(user: u, identities: identities, factors: factors)
            let issued = Tokens.Issued(accessToken: "eyJ.\(g.next(1000)).sig", expiresAt: 1_714_561_872, refreshToken: "r\(g.next(99))",
                                       sessionID: "s", userID: u.id, issuedAt: 1_714_558_272)
            #expect(issued.responseWriter(user: view).bytes == JSON.object(issued.response(user: tree)).goJSONBytes)
        }
    }

    /// Through the API: `GET /user` copies stored metadata that is already canonical and parses
    /// the rest (spacing, key order, escapes, non-ASCII written by something else into the
    /// database); either way its bytes are the tree path's for the same stored rows.
    @Test func getUserMatchesTheTreeOfTheStoredRows() throws {
        let api = try makeAPI()
        let session = api.signUp("meta@example.com", data: ["b": [1, true, nil], "a": "x"])
        let token = session["access_token"]!.stringValue!
        let id = session["user"]!["id"]!.stringValue!
        let texts = [
            (nil, nil),
            (#"{ "b": 1, "a": "é" }"#, #"{"sub":"s","email":"Meta@Example.com","z":{"y":1,"x":"<"}}"#),
            (#"{"a":1.50,"b":"A"}"#, #"{"email":"meta@example.com","sub":"s"}"#),
            ("[1,2]", "{}"),
        ]
        for (userMetadata, identityData) in texts {
            try api.project.database.write { conn in
                if let userMetadata { try conn.execute(portable: "UPDATE users SET raw_user_meta_data = ? WHERE id = ?", .text(userMetadata), .text(id)) }
                if let identityData { try conn.execute(portable: "UPDATE identities SET identity_data = ? WHERE user_id = ?", .text(identityData), .text(id)) }
            }
            let response = api.call("GET", "/user", bearer: token)
            #expect(response.status == 200)
            let expected = try api.project.database.read { conn in
                Models.user(try conn.user(id: id)!, identities: try conn.identities(userID: id), factors: try conn.factors(userID: id))
            }
            #expect(response.text == expected.serialized(), "\(userMetadata ?? "as signed up")")
        }
    }

    /// The access token's claims: written as bytes when no hook sees them, as a tree for the
    /// custom access token hook; the same JSON either way, in `AccessTokenClaims`' order.
    @Test func claimsBytesMatchTheTree() {
        var g = SeededGenerator(state: 0xc1a1_5eed)
        for round in 0..<1_000 {
            let u = Self.user(&g)
            let claims = Tokens.Claims(user: u, sessionID: "s\(round)", aal: ["aal1", "aal2"][g.next(2)],
                                       amr: [["method": "password", "timestamp": 1_714_558_272]], issuedAt: 1_714_558_272,
                                       expiresAt: 1_714_561_872, issuer: ["", "http://127.0.0.1:9999/auth/v1"][g.next(2)],
                                       oauthClientID: g.maybe(["", "c1"][g.next(2)]), scopes: g.maybe(["", "openid email"][g.next(2)]))
            var writer = JSONByteWriter()
            claims.write(to: &writer)
            var tree = JSONTreeBuilder()
            claims.write(to: &tree)
            #expect(writer.bytes == tree.result!.goJSONBytes)
        }
        let u = UserRecord(id: "u", createdAt: 0)
        var writer = JSONByteWriter()
        Tokens.Claims(user: u, sessionID: "s", aal: "aal1", amr: [], issuedAt: 1, expiresAt: 2, issuer: "i", oauthClientID: "c",
                      scopes: "openid").write(to: &writer)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"iss":"i","sub":"u","aud":"","exp":2,"iat":1,"email":"","#
            + #""phone":"","app_metadata":{},"user_metadata":{},"role":"","aal":"aal1","amr":[],"session_id":"s","#
            + #""is_anonymous":false,"client_id":"c","scope":"openid"}"#)
    }

    /// The admin listing writes its page as bytes too: the same as the tree of the stored rows.
    @Test func adminListMatchesTheTreeOfTheStoredRows() throws {
        let api = try makeAPI()
        for (index, data) in [JSON.null, ["b": 1, "a": "x"], ["name": "Renée"]].enumerated() {
            _ = api.signUp("list\(index)@example.com", data: data == .null ? nil : data)
        }
        try api.project.database.write { conn in
            try conn.execute(portable: "UPDATE users SET raw_app_meta_data = ? WHERE email = ?", .text(#"{ "z": 1, "a": [2] }"#),
                             .text("list0@example.com"))
        }
        let response = api.admin("GET", "/admin/users")
        #expect(response.status == 200)
        let ids = response.json["users"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        #expect(ids.count == 3)
        let users = try api.project.database.read { conn in try ids.map { Models.user(try conn.user(id: $0)!, identities: nil) } }
        #expect(response.text == JSON.object(["users": .array(users), "aud": "authenticated"]).serialized())
    }

    @Test func responseExtrasFollowTheUser() {
        let issued = Tokens.Issued(accessToken: "a", expiresAt: 3_600, refreshToken: "r", sessionID: "s", userID: "u", issuedAt: 0)
        let response = issued.response(user: ["id": "u"], extra: ["weak_password": .null, "provider_token": "p"])
        #expect(JSON.object(response).serialized() == #"{"access_token":"a","token_type":"bearer","expires_in":3600,"#
            + #""expires_at":3600,"refresh_token":"r","user":{"id":"u"},"weak_password":null,"provider_token":"p"}"#)
    }

    @Test func timestampBytesMatchTheString() {
        var g = SeededGenerator(state: 42)
        var values: [Int64] = [.max, .min + 1_000_000, 0, -1, 1, 999_999, -86_400_000_000, 253_402_300_799_999_999]
        for _ in 0..<5_000 { values.append(Int64(g.next(1 << 30)) * Int64(g.next(1 << 30)) * (g.next(2) == 0 ? 1 : -1)) }
        for micros in values {
            let t = Timestamp(microseconds: micros)
            var bytes: [UInt8] = []
            t.withRFC3339UTF8 { bytes = Array($0) }
            #expect(bytes == Array(t.rfc3339.utf8), "\(micros)")
        }
    }
}

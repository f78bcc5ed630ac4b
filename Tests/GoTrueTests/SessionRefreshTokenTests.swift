import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthStore
import Testing
@testable import EmulatorTools
@testable import GoTrue

// Expected behaviour: reference §7.5-7.6 and the real server's internal/crypto/refresh_tokens.go,
// internal/tokens/service.go (RefreshTokenGrant, IssueRefreshToken), internal/api/token.go
// (updateMFASessionAndClaims) and internal/api/token_refresh.go (Validate).

@Suite struct SessionRefreshTokenFormatTests {
    static let key = Array(UInt8(0)..<32)
    static let session = "0b4f6c1e-2d3a-4b5c-8d9e-0f1a2b3c4d5e"

    /// Vectors computed outside this code base from the format's definition (Python's hmac,
    /// hashlib and base64 over `0x00 | uuid | uvarint | HMAC[:16] | SHA-256[:4]`).
    @Test func encodesTheKnownVectors() {
        let vectors: [(Int64, String)] = [
            (0, "AAtPbB4tOktcjZ4PGis8TV4A0ieZjSzyHpRczms69vrgfeEdmqw"),
            (1, "AAtPbB4tOktcjZ4PGis8TV4BXo-dNQBxymuhCaUvw8OoZd5HvN8"),
            (300, "AAtPbB4tOktcjZ4PGis8TV6sAsm7Vzakbu7PkcEOWD5nBzYx6_lB"),
        ]
        for (counter, expected) in vectors {
            let token = SessionRefreshToken(sessionID: Self.session, counter: counter).encoded(key: Self.key)
            #expect(token == expected)
            let parsed = SessionRefreshToken.parse(expected)
            #expect(parsed != nil)
            #expect(parsed?.sessionID == Self.session)
            #expect(parsed?.counter == counter)
            #expect(parsed?.isSigned(with: Self.key) == true)
        }
        // A session row holding that key as GoTrue stores it (base64url text).
        var session = SessionRecord(id: Self.session, userID: "u", at: 0)
        session.refreshTokenHMACKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
        session.refreshTokenCounter = 7
        #expect(SessionRefreshToken.state(of: session)?.key == Self.key)
        #expect(SessionRefreshToken.state(of: session)?.counter == 7)
        session.refreshTokenCounter = nil
        #expect(SessionRefreshToken.state(of: session) == nil, "a key without a counter is no state")
        session.refreshTokenCounter = 7
        session.refreshTokenHMACKey = "not base64url!"
        #expect(SessionRefreshToken.state(of: session) == nil)
    }

    @Test func lengthsSpanTheCounterRange() {
        for counter: Int64 in [0, 127, 128, 1 << 35, .max] {
            let token = SessionRefreshToken(sessionID: Self.session, counter: counter).encoded(key: Self.key)
            #expect((51...62).contains(token.utf8.count), "\(counter): \(token.utf8.count)")
            #expect(SessionRefreshToken.parse(token)?.counter == counter)
        }
    }

    @Test func refusesWhatIsNotAToken() {
        let good = SessionRefreshToken(sessionID: Self.session, counter: 5).encoded(key: Self.key)
        var bytes = try! Base64URL.decode(good)
        // Any changed byte breaks the checksum.
        for index in [0, 1, 17, 20, bytes.count - 1] {
            var changed = bytes
            changed[index] ^= 0x40
            #expect(SessionRefreshToken.parse(Base64URL.encode(changed)) == nil, "byte \(index)")
        }
        // Version 1 with a correct checksum is still refused.
        bytes[0] = 1
        #expect(SessionRefreshToken.parse(Self.withChecksum(Array(bytes.dropLast(4)))) == nil)
        // Too short, a signature one byte long or short, and strings that are not base64url.
        let body = Array(try! Base64URL.decode(good).dropLast(4))
        #expect(SessionRefreshToken.parse(Self.withChecksum(Array(body.prefix(20)))) == nil)
        #expect(SessionRefreshToken.parse(Self.withChecksum(body + [0])) == nil)
        #expect(SessionRefreshToken.parse(Self.withChecksum(Array(body.dropLast()))) == nil)
        for text in ["", "abcdefghijklm", String(repeating: "A", count: 51) + "=", good + "!", String(repeating: "A", count: 400)] {
            #expect(SessionRefreshToken.parse(text) == nil, "\(text)")
        }
    }

    /// Go's `binary.Uvarint`: ten bytes at most, the tenth no more than 1; a counter above
    /// `Int64.max` is clamped (`safeInt64`). Only a forged token carries one.
    @Test func uvarintBoundsAreGos() {
        let uuid = SessionRefreshToken.uuidBytes(Self.session)
        let signature = [UInt8](repeating: 7, count: 16)
        let ten: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]
        let parsed = SessionRefreshToken.parse(Self.withChecksum([0] + uuid + ten + signature))
        #expect(parsed?.counter == .max)
        var overflow = ten
        overflow[9] = 0x02
        #expect(SessionRefreshToken.parse(Self.withChecksum([0] + uuid + overflow + signature)) == nil)
        let eleven: [UInt8] = [UInt8](repeating: 0x80, count: 10) + [0x01]
        #expect(SessionRefreshToken.parse(Self.withChecksum([0] + uuid + eleven + signature)) == nil)
    }

    @Test func signatureNeedsTheSessionsKey() throws {
        let token = SessionRefreshToken(sessionID: Self.session, counter: 3).encoded(key: Self.key)
        let parsed = try #require(SessionRefreshToken.parse(token))
        #expect(parsed.isSigned(with: Self.key))
        #expect(!parsed.isSigned(with: Array(Self.key.reversed())))
        #expect(!parsed.isSigned(with: []))
    }

    static func withChecksum(_ body: [UInt8]) -> String {
        Base64URL.encode(body + SHA256.hash(data: body).prefix(4))
    }
}

@Suite struct SessionRefreshTokenGrantTests {
    func v2API(clock: ManualClock = ManualClock(), _ configure: (inout Configuration) -> Void = { _ in }) throws -> GoTrueAPI {
        try makeAPI(clock: clock) { config in
            config.security.refreshTokenAlgorithmVersion = 2
            configure(&config)
        }
    }

    func signUp(_ api: GoTrueAPI, _ email: String) -> HTTPResponse {
        api.call("POST", "/signup", ["email": .string(email), "password": "password1"])
    }

    func stored(_ api: GoTrueAPI, _ sessionID: String) throws -> SessionRecord? {
        try api.project.database.read { try $0.session(id: sessionID) }
    }

    /// Signs up and refreshes twice, `apart` seconds before each refresh: the three tokens.
    func generations(_ api: GoTrueAPI, _ clock: ManualClock, _ email: String, apart: Double) -> [String] {
        var tokens = [signUp(api, email).json["refresh_token"]!.stringValue!]
        for _ in 0..<2 {
            clock.advance(seconds: apart)
            tokens.append(api.refresh(tokens.last!).json["refresh_token"]!.stringValue!)
        }
        return tokens
    }

    func tokenRows(_ api: GoTrueAPI) throws -> Int64 {
        try api.project.database.read { try $0.scalar(portable: "SELECT count(*) FROM refresh_tokens").int64Value ?? -1 }
    }

    @Test func signUpIssuesTheSessionFormat() throws {
        let api = try v2API()
        let response = signUp(api, "v2@example.com")
        #expect(response.status == 200)
        let token = try #require(response.json["refresh_token"]?.stringValue)
        let parsed = try #require(SessionRefreshToken.parse(token))
        let sessionID = try #require(claims(of: response.json["access_token"]!.stringValue!)["session_id"]?.stringValue)
        #expect(parsed.sessionID == sessionID)
        #expect(parsed.counter == 0)
        #expect(response.headers["sb-auth-refresh-token-counter"] == "0")
        #expect(response.headers["sb-auth-refresh-token-prefix"] == nil)
        #expect(response.headers["sb-auth-session-id"] == sessionID)
        // Nothing is stored per token: the session row holds the key and the counter.
        #expect(try tokenRows(api) == 0)
        let session = try #require(try stored(api, sessionID))
        #expect(session.refreshTokenCounter == 0)
        let state = try #require(SessionRefreshToken.state(of: session))
        #expect(state.key.count == 32)
        #expect(parsed.isSigned(with: state.key))
    }

    @Test func refreshAdvancesTheCounter() throws {
        let clock = ManualClock()
        let api = try v2API(clock: clock)
        let first = signUp(api, "rot@example.com").json
        let sessionID = claims(of: first["access_token"]!.stringValue!)["session_id"]!.stringValue!
        clock.advance(seconds: 30)
        let response = api.refresh(first["refresh_token"]!.stringValue!)
        #expect(response.status == 200)
        #expect(response.json.objectValue?.keys == ["access_token", "token_type", "expires_in", "expires_at", "refresh_token", "user"])
        let next = try #require(SessionRefreshToken.parse(response.json["refresh_token"]!.stringValue!))
        #expect(next.counter == 1 && next.sessionID == sessionID)
        #expect(response.headers["sb-auth-refresh-token-counter"] == "1")
        #expect(response.headers["sb-auth-refresh-token-reuse"] == "false")
        #expect(response.headers["sb-auth-refresh-token-reuse-cause"] == nil)
        #expect(claims(of: response.json["access_token"]!.stringValue!)["session_id"]?.stringValue == sessionID)
        let session = try #require(try stored(api, sessionID))
        #expect(session.refreshTokenCounter == 1)
        #expect(session.refreshedAt == clock.now().microseconds)
        #expect(try tokenRows(api) == 0)
    }

    @Test func oneBehindGetsTheCurrentTokenAgain() throws {
        let clock = ManualClock()
        let api = try v2API(clock: clock) { $0.security.refreshTokenReuseInterval = 10 }
        let t0 = signUp(api, "lost@example.com").json["refresh_token"]!.stringValue!
        clock.advance(seconds: 60)
        let t1 = api.refresh(t0).json["refresh_token"]!.stringValue!
        // Within the interval of that refresh and one behind: both causes.
        clock.advance(seconds: 2)
        let again = api.refresh(t0)
        #expect(again.status == 200)
        #expect(again.json["refresh_token"]?.stringValue == t1)
        #expect(again.headers["sb-auth-refresh-token-reuse-cause"] == "concurrent-refresh,fail-to-save")
        #expect(again.headers["sb-auth-refresh-token-reuse"] == nil)
        #expect(again.headers["sb-auth-refresh-token-counter"] == "1")
        // Long after: one behind still means the client lost the answer.
        clock.advance(seconds: 600)
        let late = api.refresh(t0)
        #expect(late.json["refresh_token"]?.stringValue == t1)
        #expect(late.headers["sb-auth-refresh-token-reuse-cause"] == "fail-to-save")
        // The current token still rotates.
        #expect(SessionRefreshToken.parse(api.refresh(t1).json["refresh_token"]!.stringValue!)?.counter == 2)
    }

    @Test func olderReuseEndsTheSession() throws {
        let clock = ManualClock()
        let api = try v2API(clock: clock) { $0.security.refreshTokenReuseInterval = 10 }
        let t = generations(api, clock, "reuse@example.com", apart: 60)
        let (t0, t2) = (t[0], t[2])
        let sessionID = try #require(SessionRefreshToken.parse(t0)).sessionID
        // Two behind and outside the interval: reuse; the session goes (committed with the error).
        clock.advance(seconds: 60)
        let reused = api.refresh(t0)
        #expect(reused.status == 400)
        #expect(errorCode(reused) == "refresh_token_already_used")
        #expect(reused.json["msg"] == "Invalid Refresh Token: Already Used")
        #expect(reused.headers["sb-auth-refresh-token-rotated"] == "true")
        #expect(reused.headers["sb-auth-refresh-token-reuse-cause"] == nil)
        #expect(try stored(api, sessionID) == nil)
        let current = api.refresh(t2)
        #expect(errorCode(current) == "refresh_token_not_found")
        #expect(current.json["msg"] == "Invalid Refresh Token: Refresh Token Not Found")
    }

    @Test func reuseWithinTheIntervalIsAllowed() throws {
        let clock = ManualClock()
        let api = try v2API(clock: clock) { $0.security.refreshTokenReuseInterval = 10 }
        let t = generations(api, clock, "tabs@example.com", apart: 60)
        let (t0, t2) = (t[0], t[2])
        clock.advance(seconds: 3)
        let concurrent = api.refresh(t0)
        #expect(concurrent.status == 200)
        #expect(concurrent.json["refresh_token"]?.stringValue == t2)
        #expect(concurrent.headers["sb-auth-refresh-token-reuse-cause"] == "concurrent-refresh")
    }

    @Test func reuseWithoutRotationOnlyFails() throws {
        let clock = ManualClock()
        let api = try v2API(clock: clock) {
            $0.security.refreshTokenReuseInterval = 0
            $0.security.refreshTokenRotationEnabled = false
        }
        let t = generations(api, clock, "norot@example.com", apart: 5)
        let (t0, t2) = (t[0], t[2])
        let reused = api.refresh(t0)
        #expect(errorCode(reused) == "refresh_token_already_used")
        #expect(reused.headers["sb-auth-refresh-token-rotated"] == nil)
        #expect(api.refresh(t2).status == 200)
    }

    @Test func allowReuseAnswersAnyOlderToken() throws {
        let clock = ManualClock()
        let api = try v2API(clock: clock) {
            $0.security.refreshTokenReuseInterval = 0
            $0.security.refreshTokenAllowReuse = true
        }
        let t = generations(api, clock, "allow@example.com", apart: 5)
        let (t0, t2) = (t[0], t[2])
        clock.advance(seconds: 5)
        let old = api.refresh(t0)
        #expect(old.status == 200)
        #expect(old.json["refresh_token"]?.stringValue == t2)
        #expect(old.headers["sb-auth-refresh-token-reuse-cause"] == "always-allow")
    }

    @Test func tokensThisServerDidNotIssue() throws {
        let api = try v2API()
        let t0 = signUp(api, "forge@example.com").json["refresh_token"]!.stringValue!
        let parsed = try #require(SessionRefreshToken.parse(t0))
        let session = try #require(try stored(api, parsed.sessionID))
        let key = try #require(SessionRefreshToken.state(of: session)).key
        // Signed with the session's key but ahead of its counter.
        let ahead = api.refresh(SessionRefreshToken(sessionID: parsed.sessionID, counter: 5).encoded(key: key))
        #expect(ahead.status == 400)
        #expect(errorCode(ahead) == "validation_failed")
        #expect(ahead.json["msg"] == "Invalid Refresh Token: Not Issued By This Server")
        // Another key, an unknown session, a mangled string.
        let otherKey = api.refresh(SessionRefreshToken(sessionID: parsed.sessionID, counter: 0).encoded(key: Array(key.reversed())))
        #expect(errorCode(otherKey) == "refresh_token_not_found")
        let unknown = api.refresh(SessionRefreshToken(sessionID: "11111111-2222-4333-8444-555555555555", counter: 0).encoded(key: key))
        #expect(errorCode(unknown) == "refresh_token_not_found")
        var mangled = Array(t0.utf8)
        mangled[30] = mangled[30] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let bad = api.refresh(String(decoding: mangled, as: UTF8.self))
        #expect(errorCode(bad) == "validation_failed")
        #expect(bad.json["msg"] == "Refresh token is not valid")
        // None of that moved the counter: the real token still rotates from 0.
        #expect(try stored(api, parsed.sessionID)?.refreshTokenCounter == 0)
        #expect(SessionRefreshToken.parse(api.refresh(t0).json["refresh_token"]!.stringValue!)?.counter == 1)
    }

    @Test func aBannedUserCannotRefresh() throws {
        let clock = ManualClock()
        let api = try v2API(clock: clock)
        let t0 = signUp(api, "banned@example.com").json["refresh_token"]!.stringValue!
        try api.project.database.write {
            try $0.execute(portable: "UPDATE users SET banned_until = ?", $0.timestamp(clock.now().microseconds + 60_000_000))
        }
        let refused = api.refresh(t0)
        #expect(refused.status == 400)
        #expect(errorCode(refused) == "user_banned")
        #expect(refused.json["msg"] == "Invalid Refresh Token: User Banned")
        clock.advance(seconds: 61)
        #expect(SessionRefreshToken.parse(api.refresh(t0).json["refresh_token"]!.stringValue!)?.counter == 1)
    }

    @Test func aLegacySessionHasNoSecondFormatTokens() throws {
        let api = try makeAPI()
        let legacy = signUp(api, "legacy@example.com").json
        #expect(legacy["refresh_token"]?.stringValue?.utf8.count == 12)
        let sessionID = claims(of: legacy["access_token"]!.stringValue!)["session_id"]!.stringValue!
        let forged = SessionRefreshToken(sessionID: sessionID, counter: 0).encoded(key: Array(repeating: 1, count: 32))
        #expect(errorCode(api.refresh(forged)) == "refresh_token_not_found")
    }

    @Test func tokensKeepWorkingWhenTheServerGoesBackToVersionZero() throws {
        let api = try v2API()
        let t0 = signUp(api, "back@example.com").json["refresh_token"]!.stringValue!
        api.project.configuration.security.refreshTokenAlgorithmVersion = 0
        let next = api.refresh(t0)
        #expect(next.status == 200)
        #expect(SessionRefreshToken.parse(next.json["refresh_token"]!.stringValue!)?.counter == 1)
        #expect(signUp(api, "new@example.com").json["refresh_token"]?.stringValue?.utf8.count == 12)
    }

    @Test func upgradeSwapsALegacyTokenOnItsNextRefresh() throws {
        let api = try makeAPI()
        let legacy = signUp(api, "up@example.com").json["refresh_token"]!.stringValue!
        api.project.configuration.security.refreshTokenAlgorithmVersion = 2
        // No upgrade share: the session stays on 12-character tokens.
        let still = api.refresh(legacy)
        #expect(still.json["refresh_token"]?.stringValue?.utf8.count == 12)
        #expect(still.headers["sb-auth-refresh-token-counter"] == nil)
        api.project.configuration.security.refreshTokenUpgradePercentage = 100
        let upgraded = api.refresh(still.json["refresh_token"]!.stringValue!)
        #expect(upgraded.status == 200)
        let token = try #require(SessionRefreshToken.parse(upgraded.json["refresh_token"]!.stringValue!))
        #expect(token.counter == 0)
        #expect(upgraded.headers["sb-auth-refresh-token-counter"] == "0")
        #expect(upgraded.headers["sb-auth-refresh-token-prefix"] == String(upgraded.json["refresh_token"]!.stringValue!.prefix(5)))
        // The 12-character child written on the way is revoked: no live row remains.
        let live = try api.project.database.read {
            try $0.scalar(portable: "SELECT count(*) FROM refresh_tokens WHERE revoked = false").int64Value
        }
        #expect(live == 0)
        // The 12-character token it replaced, back within the reuse interval: GoTrue's legacy
        // path issues a child and upgrades again, moving the session's counter on, same key.
        let keyBefore = try stored(api, token.sessionID)?.refreshTokenHMACKey
        let late = api.refresh(still.json["refresh_token"]!.stringValue!)
        #expect(late.status == 200)
        let lateToken = try #require(SessionRefreshToken.parse(late.json["refresh_token"]!.stringValue!))
        #expect(lateToken.counter == 1)
        #expect(try stored(api, token.sessionID)?.refreshTokenHMACKey == keyBefore)
        #expect(SessionRefreshToken.parse(api.refresh(late.json["refresh_token"]!.stringValue!).json["refresh_token"]!.stringValue!)?.counter == 2)
    }

    @Test func upgradeShareIsPerSession() throws {
        let api = try makeAPI()
        var tokens: [String] = []
        for i in 0..<24 { tokens.append(signUp(api, "share\(i)@example.com").json["refresh_token"]!.stringValue!) }
        api.project.configuration.security.refreshTokenAlgorithmVersion = 2
        api.project.configuration.security.refreshTokenUpgradePercentage = 50
        var upgraded = 0
        for token in tokens {
            let sessionID = try #require(try api.project.database.read { try $0.refreshToken(token)?.sessionID })
            let answer = api.refresh(token).json["refresh_token"]!.stringValue!
            let chosen = SessionRefreshToken.upgradeDraw(sessionID) < 50
            #expect((answer.utf8.count > 12) == chosen)
            if chosen { upgraded += 1 }
        }
        // 24 random sessions at 50 %: all or none would be a broken draw (chance 2^-23).
        #expect(upgraded > 0 && upgraded < 24)
    }

    @Test func mfaVerificationMovesTheCounterByTwo() throws {
        let clock = ManualClock()
        let api = try v2API(clock: clock) {
            $0.mfa.totp = MFASettings.Toggles(enroll: true, verify: true)
            $0.security.refreshTokenReuseInterval = 10
        }
        let session = signUp(api, "mfa@example.com").json
        let bearer = session["access_token"]!.stringValue!
        let aal1Token = session["refresh_token"]!.stringValue!
        let enrolled = api.call("POST", "/factors", ["factor_type": "totp"], bearer: bearer)
        let factor = try #require(enrolled.json["id"]?.stringValue)
        let secret = try #require(enrolled.json["totp"]?["secret"]?.stringValue)
        let challenge = try #require(api.call("POST", "/factors/\(factor)/challenge", .object([:]), bearer: bearer).json["id"]?.stringValue)
        let code = OneTimePassword.totp(secret: try Base32.decode(secret), unixSeconds: clock.now().unixSeconds)
        let verified = api.call("POST", "/factors/\(factor)/verify", ["challenge_id": .string(challenge), "code": .string(code)],
                                bearer: bearer)
        #expect(verified.status == 200, "\(verified.text)")
        let aal2Token = try #require(SessionRefreshToken.parse(verified.json["refresh_token"]!.stringValue!))
        #expect(aal2Token.counter == 2)
        // The aal1 token is two behind: once the reuse interval has passed, it ends the session.
        clock.advance(seconds: 60)
        #expect(errorCode(api.refresh(aal1Token)) == "refresh_token_already_used")
    }

    @Test func scriptedReuseConsequenceEndsTheSession() throws {
        let api = try v2API()
        let t0 = signUp(api, "scripted@example.com").json["refresh_token"]!.stringValue!
        let sessionID = try #require(SessionRefreshToken.parse(t0)).sessionID
        #expect(try api.project.revokeRefreshTokenFamily(of: t0))
        #expect(try stored(api, sessionID) == nil)
        #expect(try !api.project.revokeRefreshTokenFamily(of: t0))
        let t1 = signUp(api, "scripted2@example.com").json["refresh_token"]!.stringValue!
        #expect(try api.project.endSession(refreshToken: t1, accessToken: nil))
        #expect(errorCode(api.refresh(t1)) == "refresh_token_not_found")
    }
}

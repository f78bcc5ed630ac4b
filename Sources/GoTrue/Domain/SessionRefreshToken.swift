import AuthCrypto
import AuthStore
import GoFormats

/// GoTrue's second refresh-token format (`GOTRUE_SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION=2`,
/// reference §7.5; `internal/crypto/refresh_tokens.go`): nothing is stored per token. The token
/// names its session and a counter, signed with a key of that session's own; the session row
/// holds the key and the counter of the newest token, so a refresh reads and writes one row.
///
/// Bytes, base64url without padding (51-62 characters):
/// `0x00 | session id (16) | uvarint(counter) | HMAC-SHA-256(session key)[:16] | SHA-256(all before)[:4]`.
/// The checksum lets a mangled string be refused before any lookup; the HMAC, truncated to
/// 128 bits as GoTrue does, is what authenticates it.
struct SessionRefreshToken: Equatable {
    /// The session's UUID in GoTrue's lowercase hyphenated form.
    var sessionID: String
    /// Non-negative; GoTrue clamps a uvarint above `Int64.max` to `Int64.max`.
    var counter: Int64
    /// The decoded token (empty for one about to be encoded).
    private(set) var raw: [UInt8] = []

    static let signatureLength = 16
    static let checksumLength = 4
    /// Version byte, session id, a one-byte counter, signature, checksum. An issued counter
    /// (an `Int64`) takes at most 9 bytes; a parsed one may take the 10 of any uvarint.
    static let minimumLength = 1 + 16 + 1 + signatureLength + checksumLength
    static let maximumLength = minimumLength + 9

    init(sessionID: String, counter: Int64) {
        self.sessionID = sessionID
        self.counter = counter
    }

    /// A session's new signing key: 32 random bytes, stored as base64url text
    /// (`Session.SetupRefreshTokenData`).
    static func newKey(_ environment: Environment) -> (stored: String, bytes: [UInt8]) {
        let bytes = environment.randomBytes(32)
        return (Base64URL.encode(bytes), bytes)
    }

    /// A session's state in this format: its stored key, the key's bytes and its counter; nil
    /// for a session of 12-character tokens (`GetRefreshTokenHmacKey` finds no key) or a key
    /// that is not base64url (a row written by hand).
    static func state(of session: SessionRecord) -> (stored: String, key: [UInt8], counter: Int64)? {
        guard let stored = session.refreshTokenHMACKey, let counter = session.refreshTokenCounter,
              let key = try? Base64URL.decode(stored) else { return nil }
        return (stored, key, counter)
    }

    /// `RefreshToken.Encode`.
    func encoded(key: [UInt8]) -> String {
        var bytes: [UInt8] = [0]
        bytes.reserveCapacity(Self.maximumLength - 1)
        bytes.append(contentsOf: Self.uuidBytes(sessionID))
        var value = UInt64(max(counter, 0))
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
        bytes.append(contentsOf: HMAC<SHA256>.authenticationCode(for: bytes, using: SymmetricKey(data: key)).prefix(Self.signatureLength))
        bytes.append(contentsOf: SHA256.hash(data: bytes).prefix(Self.checksumLength))
        return Base64URL.encode(bytes)
    }

    /// `ParseRefreshToken`: nil unless the string decodes, has a plausible length, version 0, a
    /// matching checksum, a well-formed counter and exactly a signature after it. Says nothing
    /// about the signature, which needs the session's key (`isSigned(with:)`).
    static func parse(_ token: String) -> SessionRefreshToken? {
        // 4/3 of the longest token, rounded up: longer strings are refused before decoding.
        guard token.utf8.count <= (maximumLength * 4 + 2) / 3, let bytes = try? Base64URL.decode(token),
              bytes.count >= minimumLength, bytes[0] == 0 else { return nil }
        let body = bytes.count - checksumLength
        guard constantTimeEquals(SHA256.hash(data: bytes[..<body]).prefix(checksumLength), bytes[body...]) else { return nil }
        // Go's binary.Uvarint: at most 10 bytes, the tenth no more than 1, else overflow.
        var counter: UInt64 = 0
        var shift: UInt64 = 0
        var index = 17
        var ended = false
        while index < body, index - 17 < 10 {
            let byte = bytes[index]
            index += 1
            if index - 17 == 10, byte > 1 { return nil }
            counter |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 {
                ended = true
                break
            }
            shift += 7
        }
        guard ended, body - index == signatureLength else { return nil }
        var token = SessionRefreshToken(sessionID: UUIDText.format(Array(bytes[1..<17])), counter: Int64(clamping: counter))
        token.raw = bytes
        return token
    }

    /// A session's fixed draw in 0..<100 for the upgrade percentage: the first four bytes of the
    /// SHA-256 of its id, so the same session always falls on the same side.
    static func upgradeDraw(_ sessionID: String) -> Int {
        let digest = SHA256.hash(data: uuidBytes(sessionID))
        var word: UInt32 = 0
        for byte in digest.prefix(4) { word = word << 8 | UInt32(byte) }
        return Int(word % 100)
    }

    /// `RefreshToken.CheckSignature`, in constant time.
    func isSigned(with key: [UInt8]) -> Bool {
        let signed = raw.count - Self.signatureLength - Self.checksumLength
        guard signed > 0 else { return false }
        let expected = HMAC<SHA256>.authenticationCode(for: raw[..<signed], using: SymmetricKey(data: key))
        return constantTimeEquals(expected.prefix(Self.signatureLength), raw[signed..<(signed + Self.signatureLength)])
    }

    /// The 16 bytes of a session id (a UUID string, hyphens skipped); zeros for anything else,
    /// which names no session (gofrs' `uuid.FromBytesOrNil` gives the nil UUID the same way).
    static func uuidBytes(_ id: String) -> [UInt8] {
        let bytes = (try? Hex.decode(id.filter { $0 != "-" })) ?? []
        return bytes.count == 16 ? bytes : [UInt8](repeating: 0, count: 16)
    }
}

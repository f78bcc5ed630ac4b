import AuthJSON
import AuthCrypto

/// JWS signature algorithms (RFC 7518 section 3.1) this module signs and verifies: HS256 with a
/// shared secret, RS256 with RSA (PKCS #1 v1.5, SHA-256), ES256 with ECDSA P-256 (SHA-256,
/// section 3.4) and EdDSA with Ed25519 (RFC 8037 section 3.1), the algorithms GoTrue signs with.
public enum JWTAlgorithm: String, Sendable, CaseIterable {
    case hs256 = "HS256"
    case rs256 = "RS256"
    case es256 = "ES256"
    case edDSA = "EdDSA"
}

/// A JWS key: its algorithm, its key id and its material. Asymmetric keys carry their public
/// half and, when they can sign, their private half. With a `kid`, signed headers carry it, as
/// GoTrue does when its JWK has a key id.
public struct JWTKey: Sendable {
    public enum Material: Sendable {
        case secret([UInt8])
        case rsa(RSAPublicKey, RSAPrivateKey?)
        case p256(P256PublicKey, P256PrivateKey?)
        case ed25519(Ed25519PublicKey, Ed25519PrivateKey?)
    }

    public var kid: String?
    public var algorithm: JWTAlgorithm
    public var material: Material

    public init(kid: String? = nil, algorithm: JWTAlgorithm, material: Material) {
        self.kid = kid
        self.algorithm = algorithm
        self.material = material
    }

    /// An HMAC key.
    public init(kid: String? = nil, secret: [UInt8], algorithm: JWTAlgorithm = .hs256) {
        self.init(kid: kid, algorithm: algorithm, material: .secret(secret))
    }

    /// The secret's UTF-8 bytes, as GoTrue uses `GOTRUE_JWT_SECRET`.
    public init(kid: String? = nil, secret: String, algorithm: JWTAlgorithm = .hs256) {
        self.init(kid: kid, secret: Array(secret.utf8), algorithm: algorithm)
    }

    public init(kid: String? = nil, rsa key: RSAPrivateKey) {
        self.init(kid: kid, algorithm: .rs256, material: .rsa(key.publicKey, key))
    }

    public init(kid: String? = nil, p256 key: P256PrivateKey) {
        self.init(kid: kid, algorithm: .es256, material: .p256(key.publicKey, key))
    }

    public init(kid: String? = nil, ed25519 key: Ed25519PrivateKey) {
        self.init(kid: kid, algorithm: .edDSA, material: .ed25519(key.publicKey, key))
    }

    /// The HMAC secret; empty for an asymmetric key.
    public var secret: [UInt8] {
        if case .secret(let bytes) = material { return bytes }
        return []
    }

    /// Whether the key holds what signing needs (a secret, or a private key).
    public var canSign: Bool {
        switch material {
        case .secret: true
        case .rsa(_, let key): key != nil
        case .p256(_, let key): key != nil
        case .ed25519(_, let key): key != nil
        }
    }

    /// Whether the key is symmetric (never published in a JWKS).
    public var isSymmetric: Bool {
        if case .secret = material { return true }
        return false
    }

    /// The key without its private half (a secret stays a secret).
    public var publicOnly: JWTKey {
        var copy = self
        switch material {
        case .secret: break
        case .rsa(let key, _): copy.material = .rsa(key, nil)
        case .p256(let key, _): copy.material = .p256(key, nil)
        case .ed25519(let key, _): copy.material = .ed25519(key, nil)
        }
        return copy
    }
}

/// The keys a verifier accepts, selected as GoTrue's `parseJWTClaims` key function selects
/// them (internal/api/auth.go): a string `kid` names a key of `keys`; a token whose `kid` is
/// missing (or, with `unknownKidUsesFallback`, unknown) falls back to `fallback` only when its
/// `alg` is HS256, so legacy HS256 tokens signed with `GOTRUE_JWT_SECRET` keep working.
public struct JWTKeySet: Sendable {
    /// Keys selected by the token header's `kid`.
    public var keys: [JWTKey]
    /// The HS256 key for tokens without a usable `kid`, e.g. GoTrue's `GOTRUE_JWT_SECRET`.
    public var fallback: JWTKey?
    /// When a token names a `kid` that is not in `keys`: `false` (default) rejects it;
    /// `true` reproduces GoTrue, which then falls back to the plain secret for HS256 tokens.
    public var unknownKidUsesFallback: Bool
    /// `GOTRUE_JWT_VALID_METHODS`: the `alg` values accepted at all (golang-jwt's
    /// `WithValidMethods`, checked before any key is looked up). nil means the algorithms of
    /// the set's keys, as GoTrue's `ApplyDefaults` derives the list from its keys.
    public var validMethods: [String]?

    /// The algorithms accepted: `validMethods`, else those of the keys and the fallback.
    var acceptedMethods: [String] {
        if let validMethods { return validMethods }
        return (keys + [fallback].compactMap { $0 }).map(\.algorithm.rawValue)
    }

    public init(keys: [JWTKey] = [], fallback: JWTKey? = nil, unknownKidUsesFallback: Bool = false,
                validMethods: [String]? = nil) {
        self.keys = keys
        self.fallback = fallback
        self.unknownKidUsesFallback = unknownKidUsesFallback
        self.validMethods = validMethods
    }

    /// A single HS256 secret used for every token.
    public init(secret: [UInt8]) {
        self.init(fallback: JWTKey(secret: secret))
    }

    func key(forKid kid: String) -> JWTKey? {
        // Exact UTF-8 comparison, as Go compares strings (not Swift's canonical equivalence).
        keys.first { $0.kid.map { $0.utf8.elementsEqual(kid.utf8) } ?? false }
    }
}

/// Claim-validation options beyond the golang-jwt v5 defaults GoTrue uses.
public struct JWTValidationOptions: Sendable {
    /// Reject tokens whose `iat` is after now + leeway ("token used before issued").
    /// Off by default: golang-jwt v5 only checks `iat` with `WithIssuedAt()`, which GoTrue
    /// does not pass.
    public var rejectIssuedInFuture: Bool

    public init(rejectIssuedInFuture: Bool = false) {
        self.rejectIssuedInFuture = rejectIssuedInFuture
    }
}

/// A verified compact JWS (RFC 7515 section 7.1) carrying a JWT claims set (RFC 7519).
public struct JWT: Sendable {
    public let header: JSONObject
    public let claims: JSONObject
    /// ASCII(BASE64URL(header) || "." || BASE64URL(payload)), the MAC input (RFC 7515 section 5.1).
    public let signingInput: String
    public let signature: [UInt8]
}

extension JWT {
    /// Signs `claims` (serialized in their own key order, as Go serializes a claims struct in
    /// field order) with `key`. The header is `{"alg":...,"kid":...,"typ":"JWT"}`: the keys
    /// golang-jwt writes, sorted as Go sorts its header map, `kid` only when set.
    /// - Precondition: `key.canSign`.
    public static func sign(claims: JSONObject, key: JWTKey) -> String {
        sign(payload: claims.serializedBytes(), key: key)
    }

    /// `sign(claims:key:)` for claims already written as JSON (`JSONByteWriter`). The token is
    /// assembled in one byte buffer: the signing input (RFC 7515 section 7.1) is signed where it
    /// lies, and no segment becomes a `String` of its own.
    public static func sign(payload: [UInt8], key: JWTKey) -> String {
        // Written in Go's sorted map order (alg, kid, typ) without a tree to sort.
        var header = JSONByteWriter(reservingCapacity: 64)
        header.beginObject()
        header.member("alg", key.algorithm.rawValue)
        if let kid = key.kid { header.member("kid", kid) }
        header.member("typ", "JWT")
        header.endObject()
        let headerBytes = header.bytes
        var token: [UInt8] = []
        // The segments grow by a third; the signature's segment is at most 342 bytes (RS256).
        token.reserveCapacity((headerBytes.count + payload.count) / 3 * 4 + 360)
        headerBytes.withUnsafeBufferPointer { Base64URL.encode($0, appendingTo: &token) }
        token.append(UInt8(ascii: "."))
        payload.withUnsafeBufferPointer { Base64URL.encode($0, appendingTo: &token) }
        let signed = signature(message: token, key)
        token.append(UInt8(ascii: "."))
        signed.withUnsafeBufferPointer { Base64URL.encode($0, appendingTo: &token) }
        return String(decoding: token, as: UTF8.self)
    }

    /// The JWS signature of `signingInput` (RFC 7515 section 5.1): an HMAC, a PKCS #1 v1.5
    /// signature, ECDSA's `r || s` (RFC 7518 section 3.4) or Ed25519's 64 bytes (RFC 8037).
    static func signature(_ signingInput: String, _ key: JWTKey) -> [UInt8] {
        signature(message: Array(signingInput.utf8), key)
    }

    static func signature(message: [UInt8], _ key: JWTKey) -> [UInt8] {
        switch key.material {
        case .secret(let secret):
            return HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: secret))
        case .rsa(_, let privateKey?):
            return RSA.signPKCS1v15SHA256(message, key: privateKey)
        case .p256(_, let privateKey?):
            return privateKey.signature(for: message)
        case .ed25519(_, let privateKey?):
            return privateKey.signature(for: message)
        default:
            preconditionFailure("JWT.sign needs a key that can sign (a secret or a private key)")
        }
    }

    /// The HS256 MAC (RFC 7518 section 3.2) of `signingInput`: `signature` for a secret key.
    static func mac(_ signingInput: String, _ key: JWTKey) -> [UInt8] { signature(signingInput, key) }

    /// Algorithm names golang-jwt v5 registers. A token naming one of these but not an
    /// accepted algorithm fails as "signing method X is invalid"; any other name (including
    /// lowercase spellings) as "signing method (alg) is unavailable".
    static let knownAlgorithms: Set<String> = [
        "HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
        "ES256", "ES384", "ES512", "EdDSA", "none",
    ]

    /// Verifies a compact JWS and its time claims against `now` (Unix seconds, injected so
    /// virtual clocks work), in the order golang-jwt v5's `Parser.ParseWithClaims` checks:
    /// segments, header, claims, `alg`, signature encoding, accepted algorithm (`validMethods`),
    /// key lookup (GoTrue's key function, see `JWTKeySet`), signature, then `exp` / `nbf` (and
    /// `iat` when enabled).
    ///
    /// The signature is checked by the token's algorithm with the selected key, as golang-jwt's
    /// signing methods do: a key of another type fails as "key is of invalid type" (so a public
    /// key can never be used as an HMAC secret); a wrong signature with the method's own error.
    ///
    /// Strictness: exactly three segments; each strict unpadded base64url (golang-jwt's default
    /// decoder also tolerates non-zero trailing bits, which here are rejected as malformed);
    /// header and payload must be JSON objects; MACs compared in constant time.
    ///
    /// Time claims follow golang-jwt's `NumericDate` (as in GoTrue's claims struct): a number,
    /// or a string holding a JSON number (Go decodes those into `json.Number`), truncated to
    /// whole seconds; `null` counts as absent; anything else, or a non-string `iss`/`sub`/`jti`,
    /// or an `aud` that is not a string or array of strings, is a claims decoding error.
    /// Expired when now >= exp + leeway; not yet valid when now < nbf - leeway.
    public static func verify(
        _ token: String, keys: JWTKeySet, now: Int64, leeway: Int64 = 0,
        options: JWTValidationOptions = JWTValidationOptions()
    ) throws(JWTError) -> JWT {
        try verifiedWithKey(token, keys: keys, now: now, leeway: leeway, options: options).parsed.token
    }

    /// `verify`, also returning what `JWTVerificationCache` keeps: the parsed token and the key
    /// that verified it.
    static func verifiedWithKey(
        _ token: String, keys: JWTKeySet, now: Int64, leeway: Int64, options: JWTValidationOptions
    ) throws(JWTError) -> (parsed: Parsed, key: JWTKey) {
        let parsed = try parse(token)
        let (algorithm, key) = try verificationKey(parsed, keys)
        try checkSignature(parsed.token, algorithm: algorithm, key: key)
        try parsed.times.check(now: now, leeway: leeway, options: options)
        return (parsed, key)
    }

    /// The accepted-algorithm check, then GoTrue's key function: a string `kid` picks from the
    /// set; a missing or unknown one falls back to the secret for HS256 tokens only.
    static func verificationKey(_ parsed: Parsed, _ keys: JWTKeySet) throws(JWTError) -> (JWTAlgorithm, JWTKey) {
        let alg = parsed.algorithm
        guard keys.acceptedMethods.contains(alg), let algorithm = JWTAlgorithm(rawValue: alg) else {
            throw .signatureInvalid(.algorithmNotAccepted(alg))
        }
        let kid = parsed.header["kid"]?.stringValue
        var key = kid.flatMap { keys.key(forKid: $0) }
        if key == nil, kid == nil || keys.unknownKidUsesFallback, algorithm == .hs256 { key = keys.fallback }
        guard let key else { throw .unverifiable(.unknownKey(kid: kid, algorithm: alg)) }
        return (algorithm, key)
    }

    /// golang-jwt's `SigningMethod.Verify` for `algorithm`, with its errors.
    static func checkSignature(_ token: JWT, algorithm: JWTAlgorithm, key: JWTKey) throws(JWTError) {
        let message = Array(token.signingInput.utf8)
        let signature = token.signature
        switch (algorithm, key.material) {
        case (.hs256, .secret(let secret)):
            let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: secret))
            guard constantTimeEquals(mac, signature) else { throw .signatureInvalid(.signatureMismatch) }
        case (.rs256, .rsa(let publicKey, _)):
            guard RSA.verifyPKCS1v15SHA256(message, signature: signature, key: publicKey) else {
                throw .signatureInvalid(.verificationFailed("crypto/rsa: verification error"))
            }
        case (.es256, .p256(let publicKey, _)):
            guard publicKey.isValidSignature(signature, for: message) else {
                throw .signatureInvalid(.verificationFailed("crypto/ecdsa: verification error"))
            }
        case (.edDSA, .ed25519(let publicKey, _)):
            guard publicKey.isValidSignature(signature, for: message) else {
                throw .signatureInvalid(.verificationFailed("ed25519: verification error"))
            }
        case (.hs256, _): throw .signatureInvalid(.invalidKeyType("HMAC verify expects []byte"))
        case (.rs256, _): throw .signatureInvalid(.invalidKeyType("RSA verify expects *rsa.PublicKey"))
        case (.es256, _): throw .signatureInvalid(.invalidKeyType("ECDSA verify expects *ecdsa.PublicKey"))
        case (.edDSA, _): throw .signatureInvalid(.invalidKeyType("Ed25519 verify expects ed25519.PublicKey"))
        }
    }

    /// A token split and decoded up to (not including) the choice of key: what every
    /// algorithm's verification and `decodeUnverified` share.
    struct Parsed {
        var token: JWT
        var times: TimeClaims
        var algorithm: String
        var header: JSONObject { token.header }
    }

    /// The checks golang-jwt v5 runs before looking at a key, in its order: segments, header,
    /// claims, `alg` present and registered, signature encoding.
    static func parse(_ token: String) throws(JWTError) -> Parsed {
        // Works on the token's contiguous UTF-8: the segments are byte ranges, decoded without
        // the per-character generic walks of `split` and `Substring.utf8`.
        var text = token
        let result: Result<Parsed, JWTError> = text.withUTF8 { bytes in
            do throws(JWTError) {
                return .success(try parse(bytes: bytes))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private static func parse(bytes: UnsafeBufferPointer<UInt8>) throws(JWTError) -> Parsed {
        // Like `split(separator: ".", maxSplits: 3)`: exactly three segments, so exactly two dots.
        var first = -1, second = -1
        for index in 0..<bytes.count where bytes[index] == UInt8(ascii: ".") {
            if first < 0 { first = index } else if second < 0 { second = index } else { throw .malformed(.segmentCount) }
        }
        guard second >= 0 else { throw .malformed(.segmentCount) }
        let headerBytes = UnsafeBufferPointer(rebasing: bytes[0..<first])
        let claimsBytes = UnsafeBufferPointer(rebasing: bytes[(first + 1)..<second])
        let signatureBytes = UnsafeBufferPointer(rebasing: bytes[(second + 1)...])

        let header: JSONObject
        do throws(SegmentError) {
            header = try decodeObject(headerBytes)
        } catch .base64(let offset) {
            throw .malformed(.headerBase64(offset: offset))
        } catch {
            throw .malformed(.headerJSON)
        }

        let claims: JSONObject
        let times: TimeClaims
        do throws(SegmentError) {
            claims = try decodeObject(claimsBytes)
            times = try TimeClaims(claims)
        } catch .base64(let offset) {
            throw .malformed(.claimsBase64(offset: offset))
        } catch {
            throw .malformed(.claimsJSON)
        }

        guard case .string(let alg)? = header["alg"] else { throw .unverifiable(.algorithmUnspecified) }
        guard knownAlgorithms.contains(alg) else { throw .unverifiable(.algorithmUnavailable) }

        let signature: [UInt8]
        do throws(DecodingError) {
            signature = try Base64URL.decode(bytes: signatureBytes)
        } catch {
            throw .malformed(.signatureBase64(offset: error.offset))
        }

        let signingInput = String(decoding: UnsafeBufferPointer(rebasing: bytes[0..<second]), as: UTF8.self)
        return Parsed(
            token: JWT(header: header, claims: claims, signingInput: signingInput, signature: signature),
            times: times, algorithm: alg)
    }

    enum SegmentError: Error {
        case base64(offset: Int)
        case json
    }

    static func decodeObject(_ segment: UnsafeBufferPointer<UInt8>) throws(SegmentError) -> JSONObject {
        let bytes: [UInt8]
        do throws(DecodingError) {
            bytes = try Base64URL.decode(bytes: segment)
        } catch {
            throw .base64(offset: error.offset)
        }
        guard case .object(let object)? = try? JSON(parsing: bytes) else { throw .json }
        return object
    }
}

/// Signing entry point under its own name (same as `JWT.sign`).
public enum JWTSigner {
    public static func sign(claims: JSONObject, key: JWTKey) -> String {
        JWT.sign(claims: claims, key: key)
    }

    public static func sign(payload: [UInt8], key: JWTKey) -> String {
        JWT.sign(payload: payload, key: key)
    }
}

/// Verification entry point under its own name (same as `JWT.verify`).
public enum JWTVerifier {
    public static func verify(
        token: String, keys: JWTKeySet, now: Int64, leeway: Int64 = 0,
        options: JWTValidationOptions = JWTValidationOptions()
    ) throws(JWTError) -> JWT {
        try JWT.verify(token, keys: keys, now: now, leeway: leeway, options: options)
    }
}

/// Tokens verified recently, so that presenting the same token again (a client calling
/// `GET /user` after each navigation, an ES256 signature that costs ~55 µs to check) skips the
/// signature check and the decoding.
///
/// A hit is the exact token text seen before; it still answers exactly as `JWT.verify` would
/// now: the algorithm must still be accepted by `keys` and the key `keys` selects for it must
/// still be the one that verified it (same kid, algorithm and public material), or the token
/// is verified again from scratch; the time claims are checked against `now` on every call.
/// Not thread-safe: keep one per thread. Bounded: when full it starts over.
public struct JWTVerificationCache {
    private struct Entry {
        let parsed: JWT.Parsed
        let key: JWTKey
    }

    /// A token as a key: hashed by its length and its last 16 bytes, which lie in the signature.
    /// SipHash over a whole token (~800 bytes) cost ~4,000 instructions per lookup. Only tokens
    /// whose signature verified are stored, and nobody without the key chooses their tails.
    struct Key: Hashable {
        let token: String

        /// The same bytes. A synthesized `==` would compare the strings by canonical
        /// equivalence, under which U+212A KELVIN SIGN equals "K": a token with one in place of
        /// a "K" of a cached token, which GoTrue rejects as malformed, would have been answered
        /// from the cache whenever its hash led the lookup to that token's bucket.
        static func == (lhs: Key, rhs: Key) -> Bool { UTF8Bytes.equal(lhs.token, rhs.token) }

        func hash(into hasher: inout Hasher) {
            // The UTF-8 view in place: a `var` copy for `withUTF8` cost a retain and a release.
            func combine(_ bytes: UnsafeBufferPointer<UInt8>) {
                hasher.combine(bytes.count)
                hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[max(0, bytes.count - 16)...])))
            }
            if token.utf8.withContiguousStorageIfAvailable(combine) == nil { Array(token.utf8).withUnsafeBufferPointer(combine) }
        }
    }

    private var entries: [Key: Entry] = [:]
    public let capacity: Int

    public init(capacity: Int = 256) {
        self.capacity = capacity
    }

    public var count: Int { entries.count }

    /// `JWT.verify`, answered from the cache when `token` was verified before with the key
    /// `keys` still selects for it.
    public mutating func verify(
        _ token: String, keys: JWTKeySet, now: Int64, leeway: Int64 = 0,
        options: JWTValidationOptions = JWTValidationOptions()
    ) throws(JWTError) -> JWT {
        if let entry = entries[Key(token: token)], let (_, key) = try? JWT.verificationKey(entry.parsed, keys),
           key.verifiesLike(entry.key) {
            try entry.parsed.times.check(now: now, leeway: leeway, options: options)
            return entry.parsed.token
        }
        let (parsed, key) = try JWT.verifiedWithKey(token, keys: keys, now: now, leeway: leeway, options: options)
        if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
        entries[Key(token: token)] = Entry(parsed: parsed, key: key)
        return parsed.token
    }
}

extension JWTKey {
    /// Same kid, algorithm and verifying material (the secret, or the public key).
    func verifiesLike(_ other: JWTKey) -> Bool {
        guard kid == other.kid, algorithm == other.algorithm else { return false }
        switch (material, other.material) {
        case (.secret(let a), .secret(let b)): return a == b
        case (.rsa(let a, _), .rsa(let b, _)): return a == b
        case (.p256(let a, _), .p256(let b, _)): return a == b
        case (.ed25519(let a, _), .ed25519(let b, _)): return a == b
        default: return false
        }
    }
}

/// The registered time claims, typed as golang-jwt's `RegisteredClaims` decodes them.
struct TimeClaims {
    var exp: Int64?
    var nbf: Int64?
    var iat: Int64?

    init(_ claims: JSONObject) throws(JWT.SegmentError) {
        exp = try Self.numericDate(claims["exp"])
        nbf = try Self.numericDate(claims["nbf"])
        iat = try Self.numericDate(claims["iat"])
        for name in ["iss", "sub", "jti"] {
            switch claims[name] {
            case nil, .null?, .string?: break
            default: throw .json
            }
        }
        switch claims["aud"] {
        case nil, .null?, .string?: break
        case .array(let values)?: if !values.allSatisfy({ $0.stringValue != nil }) { throw .json }
        default: throw .json
        }
    }

    /// golang-jwt v5 Validator.Validate: every failing check is reported, in this order.
    func check(now: Int64, leeway: Int64, options: JWTValidationOptions) throws(JWTError) {
        var problems: [JWTError.ClaimProblem] = []
        if let exp, !(now < exp.addingClamped(leeway)) { problems.append(.expired) }
        if let nbf, now < nbf.addingClamped(-leeway) { problems.append(.notValidYet) }
        if options.rejectIssuedInFuture, let iat, now < iat.addingClamped(-leeway) {
            problems.append(.usedBeforeIssued)
        }
        guard problems.isEmpty else { throw .invalidClaims(problems) }
    }

    /// Seconds since the epoch, truncated toward negative infinity to whole seconds as
    /// `NumericDate` does with the default one-second precision.
    static func numericDate(_ value: JSON?) throws(JWT.SegmentError) -> Int64? {
        let seconds: Double
        switch value {
        case nil, .null?: return nil
        case .number(let n)?: seconds = n
        case .string(let text)?:
            // Go accepts a quoted number for json.Number; it must be JSON number syntax.
            guard let parsed = try? JSON(parsing: text), case .number(let n) = parsed,
                  text.utf8.first != UInt8(ascii: " "), text.utf8.last != UInt8(ascii: " "),
                  text.utf8.allSatisfy({ ![0x09, 0x0a, 0x0d].contains($0) })
            else { throw .json }
            seconds = n
        default: throw .json
        }
        let floored = seconds.rounded(.down)
        if floored >= 9.2e18 { return Int64.max }
        if floored <= -9.2e18 { return Int64.min }
        return Int64(floored)
    }
}

extension Int64 {
    func addingClamped(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        if overflow { return other > 0 ? .max : .min }
        return sum
    }
}

/// Why a token was rejected. `description` is golang-jwt v5's error text for the same failure
/// (errors.go, parser.go, validator.go), which GoTrue embeds in its 403 `bad_jwt` message
/// ("invalid JWT: unable to parse or verify signature, <text>"). Where golang-jwt appends the
/// underlying Go error (base64 positions, JSON decoder messages), base64 positions are
/// reproduced and JSON decoder details are left out. Texts never contain the token or a key.
public enum JWTError: Error, Sendable, Equatable, CustomStringConvertible {
    case malformed(Malformed)
    case unverifiable(Unverifiable)
    case signatureInvalid(SignatureProblem)
    /// Every failing time check, in golang-jwt's order (exp, nbf, iat), joined by ", ".
    case invalidClaims([ClaimProblem])

    public enum Malformed: Sendable, Equatable {
        case segmentCount
        case headerBase64(offset: Int)
        case headerJSON
        case claimsBase64(offset: Int)
        case claimsJSON
        case signatureBase64(offset: Int)
    }

    public enum Unverifiable: Sendable, Equatable {
        case algorithmUnspecified
        case algorithmUnavailable
        /// No key for the token's `kid` (nil when the header had none and no fallback is set).
        case unknownKey(kid: String?, algorithm: String)
    }

    public enum SignatureProblem: Sendable, Equatable {
        /// A registered algorithm (RS256, none, ...) that this verifier does not accept.
        case algorithmNotAccepted(String)
        /// HMAC mismatch ("signature is invalid").
        case signatureMismatch
        /// An asymmetric signature that does not verify, with the Go crypto package's error
        /// text ("crypto/rsa: verification error", ...).
        case verificationFailed(String)
        /// The selected key is not of the token algorithm's type (golang-jwt's
        /// `ErrInvalidKeyType` with the method's message).
        case invalidKeyType(String)
    }

    public enum ClaimProblem: Sendable, Equatable {
        case expired
        case notValidYet
        case usedBeforeIssued
    }

    public var description: String {
        switch self {
        case .malformed(let problem):
            let detail: String
            switch problem {
            case .segmentCount: detail = "token contains an invalid number of segments"
            case .headerBase64(let offset): detail = "could not base64 decode header: illegal base64 data at input byte \(offset)"
            case .headerJSON: detail = "could not JSON decode header"
            case .claimsBase64(let offset): detail = "could not base64 decode claim: illegal base64 data at input byte \(offset)"
            case .claimsJSON: detail = "could not JSON decode claim"
            case .signatureBase64(let offset): detail = "could not base64 decode signature: illegal base64 data at input byte \(offset)"
            }
            return "token is malformed: " + detail
        case .unverifiable(let problem):
            switch problem {
            case .algorithmUnspecified: return "token is unverifiable: signing method (alg) is unspecified"
            case .algorithmUnavailable: return "token is unverifiable: signing method (alg) is unavailable"
            case .unknownKey(let kid, let algorithm):
                // GoTrue's key function error, printed with Go's %v (a missing kid is <nil>).
                return "token is unverifiable: error while executing keyfunc: unrecognized JWT kid \(kid ?? "<nil>") for algorithm \(algorithm)"
            }
        case .signatureInvalid(let problem):
            switch problem {
            case .algorithmNotAccepted(let alg): return "token signature is invalid: signing method \(alg) is invalid"
            case .signatureMismatch: return "token signature is invalid: signature is invalid"
            case .verificationFailed(let text): return "token signature is invalid: " + text
            case .invalidKeyType(let text): return "token signature is invalid: key is of invalid type: " + text
            }
        case .invalidClaims(let problems):
            let texts = problems.map { problem -> String in
                switch problem {
                case .expired: "token is expired"
                case .notValidYet: "token is not valid yet"
                case .usedBeforeIssued: "token used before issued"
                }
            }
            return "token has invalid claims: " + texts.joined(separator: ", ")
        }
    }
}

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

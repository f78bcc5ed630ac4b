import AuthJSON
import AuthCrypto

/// JWS signature algorithms (RFC 7518 section 3.1): HS256 with a shared secret (`JWTKey`),
/// RS256 with an RSA key pair (`JWT.signRS256`, `JWT.verify(_:rsaKeys:...)`, RS256.swift).
public enum JWTAlgorithm: String, Sendable, CaseIterable {
    case hs256 = "HS256"
    case rs256 = "RS256"
}

/// An HMAC signing/verification key (`algorithm` must be `.hs256`; RSA keys are
/// `RSAPrivateKey` / `RSAPublicKey`). With a `kid`, signed headers carry it, as GoTrue does
/// when its JWK has a key id.
public struct JWTKey: Sendable {
    public var kid: String?
    public var secret: [UInt8]
    public var algorithm: JWTAlgorithm

    public init(kid: String? = nil, secret: [UInt8], algorithm: JWTAlgorithm = .hs256) {
        self.kid = kid
        self.secret = secret
        self.algorithm = algorithm
    }

    /// The secret's UTF-8 bytes, as GoTrue uses `GOTRUE_JWT_SECRET`.
    public init(kid: String? = nil, secret: String, algorithm: JWTAlgorithm = .hs256) {
        self.init(kid: kid, secret: Array(secret.utf8), algorithm: algorithm)
    }
}

/// The keys a verifier accepts.
public struct JWTKeySet: Sendable {
    /// Keys selected by the token header's `kid`.
    public var keys: [JWTKey]
    /// The key for tokens without a (string) `kid`, e.g. GoTrue's `GOTRUE_JWT_SECRET`.
    public var fallback: JWTKey?
    /// When a token names a `kid` that is not in `keys`: `false` (default) rejects it;
    /// `true` reproduces GoTrue, which then falls back to the plain secret for HS256 tokens
    /// (internal/api/auth.go, parseJWTClaims).
    public var unknownKidUsesFallback: Bool

    public init(keys: [JWTKey] = [], fallback: JWTKey? = nil, unknownKidUsesFallback: Bool = false) {
        self.keys = keys
        self.fallback = fallback
        self.unknownKidUsesFallback = unknownKidUsesFallback
    }

    /// A single HS256 secret used for every token.
    public init(secret: [UInt8]) {
        self.init(fallback: JWTKey(secret: secret))
    }

    func key(forKid kid: String) -> JWTKey? {
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
    /// field order) with `key`. The header is `{"alg":"HS256","kid":...,"typ":"JWT"}`: the
    /// keys golang-jwt writes, sorted as Go sorts its header map, `kid` only when set.
    public static func sign(claims: JSONObject, key: JWTKey) -> String {
        var header: JSONObject = ["alg": .string(key.algorithm.rawValue)]
        if let kid = key.kid { header["kid"] = .string(kid) }
        header["typ"] = "JWT"
        let signingInput = Base64URL.encode(header.serializedBytes(sortedKeys: true)) + "."
            + Base64URL.encode(claims.serializedBytes())
        return signingInput + "." + Base64URL.encode(mac(signingInput, key))
    }

    static func mac(_ signingInput: String, _ key: JWTKey) -> [UInt8] {
        switch key.algorithm {
        case .hs256: HMAC<SHA256>.authenticationCode(for: signingInput.utf8, using: SymmetricKey(data: key.secret))
        case .rs256: preconditionFailure("a JWTKey holds an HMAC secret; RS256 signs with JWT.signRS256")
        }
    }

    /// Algorithm names golang-jwt v5 registers. A token naming one of these but not an
    /// accepted algorithm fails as "signing method X is invalid"; any other name (including
    /// lowercase spellings) as "signing method (alg) is unavailable".
    static let knownAlgorithms: Set<String> = [
        "HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
        "ES256", "ES384", "ES512", "EdDSA", "none",
    ]

    /// Verifies a compact JWS and its time claims against `now` (Unix seconds, injected so
    /// virtual clocks work), in the order golang-jwt v5's `Parser.ParseWithClaims` checks:
    /// segments, header, claims, `alg`, signature encoding, accepted algorithm, key lookup,
    /// MAC, then `exp` / `nbf` (and `iat` when enabled).
    ///
    /// Strictness: exactly three segments; each strict unpadded base64url (golang-jwt's default
    /// decoder also tolerates non-zero trailing bits, which here are rejected as malformed);
    /// header and payload must be JSON objects; `alg` exactly `HS256`; MAC compared in
    /// constant time.
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
        let parsed = try parse(token)
        let alg = parsed.algorithm
        // JWTKey holds HMAC secrets, so only HS256 is accepted here (RS256 has its own verify).
        guard let algorithm = JWTAlgorithm(rawValue: alg), algorithm == .hs256 else {
            throw .signatureInvalid(.algorithmNotAccepted(alg))
        }

        // Key selection as GoTrue's key function: a string `kid` picks from the set; without
        // one (or, if configured, with an unknown one) the fallback secret is used.
        let kid = parsed.header["kid"]?.stringValue
        var key: JWTKey?
        if let kid {
            key = keys.key(forKid: kid)
            if key == nil, keys.unknownKidUsesFallback { key = keys.fallback }
        } else {
            key = keys.fallback
        }
        guard let key, key.algorithm == algorithm else {
            throw .unverifiable(.unknownKey(kid: kid, algorithm: alg))
        }

        guard constantTimeEquals(mac(parsed.token.signingInput, key), parsed.token.signature) else {
            throw .signatureInvalid(.signatureMismatch)
        }
        try parsed.times.check(now: now, leeway: leeway, options: options)
        return parsed.token
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
        let parts = token.utf8.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed(.segmentCount) }
        let headerText = Substring(parts[0]), claimsText = Substring(parts[1]), signatureText = Substring(parts[2])

        let header: JSONObject
        do throws(SegmentError) {
            header = try decodeObject(headerText)
        } catch .base64(let offset) {
            throw .malformed(.headerBase64(offset: offset))
        } catch {
            throw .malformed(.headerJSON)
        }

        let claims: JSONObject
        let times: TimeClaims
        do throws(SegmentError) {
            claims = try decodeObject(claimsText)
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
            signature = try Base64URL.decode(signatureText)
        } catch {
            throw .malformed(.signatureBase64(offset: error.offset))
        }

        let signingInput = String(headerText) + "." + String(claimsText)
        return Parsed(
            token: JWT(header: header, claims: claims, signingInput: signingInput, signature: signature),
            times: times, algorithm: alg)
    }

    enum SegmentError: Error {
        case base64(offset: Int)
        case json
    }

    static func decodeObject(_ segment: Substring) throws(SegmentError) -> JSONObject {
        let bytes: [UInt8]
        do throws(DecodingError) {
            bytes = try Base64URL.decode(segment)
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
        case signatureMismatch
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

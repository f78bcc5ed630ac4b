import AuthCrypto
import AuthJSON

/// A JSON Web Key (RFC 7517) as GoTrue's `GOTRUE_JWT_KEYS` and the Supabase CLI's
/// `signing_keys.json` hold them: a private (or symmetric) key with its `kid`, `alg` and
/// `key_ops`. Supported: `oct` (HS256), `RSA` (RS256), `EC` on P-256 (ES256) and `OKP` Ed25519
/// (EdDSA, RFC 8037).
public struct JWK: Sendable {
    /// The key, ready to sign (when it holds private material) and verify.
    public let key: JWTKey
    /// `key_ops` (RFC 7517 section 4.3); GoTrue signs with the key whose list has `sign`.
    public let keyOperations: [String]
    /// The members as given, so the public form keeps what the real server keeps.
    public let members: JSONObject

    /// Reads a JWK object. Key material is validated (RSA consistency, points on their curve);
    /// `alg`, when missing, follows from the key type.
    public init(_ object: JSONObject) throws(JWKError) {
        guard let kty = object["kty"]?.stringValue else { throw .invalidMember("kty") }
        var kid: String?
        if let value = object["kid"] {
            guard let text = value.stringValue else { throw .invalidMember("kid") }
            kid = text.isEmpty ? nil : text  // an empty kid is no kid: headers leave it out
        }
        var operations: [String] = []
        if let value = object["key_ops"] {
            guard let list = value.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else {
                throw .invalidMember("key_ops")
            }
            operations = list.compactMap(\.stringValue)
        }
        var alg: String?
        if let value = object["alg"] {
            guard let text = value.stringValue else { throw .invalidMember("alg") }
            alg = text
        }
        func resolved(_ expected: JWTAlgorithm) throws(JWKError) -> JWTAlgorithm {
            guard let alg else { return expected }
            guard alg == expected.rawValue else { throw .unsupported("\"alg\" \(alg) with a \(kty) key") }
            return expected
        }

        let material: JWTKey.Material
        let algorithm: JWTAlgorithm
        switch kty {
        case "oct":
            material = .secret(try JWKMember.bytes(object, "k"))
            algorithm = try resolved(.hs256)
        case "RSA":
            algorithm = try resolved(.rs256)
            if object["d"] != nil {
                let privateKey = try RSAPrivateKey(jwk: object)
                material = .rsa(privateKey.publicKey, privateKey)
            } else {
                material = .rsa(try RSAPublicKey(jwk: object), nil)
            }
        case "EC":
            guard object["crv"]?.stringValue == "P-256" else {
                throw .unsupported("curve \(object["crv"]?.stringValue ?? "(none)"); only P-256 (ES256)")
            }
            algorithm = try resolved(.es256)
            let x = try JWKMember.bytes(object, "x"), y = try JWKMember.bytes(object, "y")
            let (publicKey, privateKey) = try Self.curveKeys(
                object, publicKey: { try P256PublicKey(x: x, y: y) },
                privateKey: { try P256PrivateKey(scalar: $0) }, derived: \.publicKey,
                mismatch: "\"d\" does not match \"x\" and \"y\"")
            material = .p256(publicKey, privateKey)
        case "OKP":
            guard object["crv"]?.stringValue == "Ed25519" else {
                throw .unsupported("curve \(object["crv"]?.stringValue ?? "(none)"); only Ed25519 (EdDSA)")
            }
            algorithm = try resolved(.edDSA)
            let x = try JWKMember.bytes(object, "x")
            let (publicKey, privateKey) = try Self.curveKeys(
                object, publicKey: { try Ed25519PublicKey(rawRepresentation: x) },
                privateKey: { try Ed25519PrivateKey(seed: $0) }, derived: \.publicKey,
                mismatch: "\"d\" does not match \"x\"")
            material = .ed25519(publicKey, privateKey)
        default:
            throw .unsupportedKeyType
        }
        self.key = JWTKey(kid: kid, algorithm: algorithm, material: material)
        self.keyOperations = operations
        self.members = object
    }

    /// The validated public key of an `EC` or `OKP` JWK and, when it has `d`, the private key,
    /// which must be the one of that same public key (RFC 7518 section 6.2.2.1, RFC 8037
    /// section 2). A key constructor's refusal becomes `.invalidCurveKey` with its reason.
    private static func curveKeys<Public: Equatable, Private>(
        _ object: JSONObject, publicKey makePublic: () throws -> Public,
        privateKey makePrivate: ([UInt8]) throws -> Private, derived: (Private) -> Public, mismatch: String
    ) throws(JWKError) -> (Public, Private?) {
        func validated<Key>(_ make: () throws -> Key) throws(JWKError) -> Key {
            do {
                return try make()
            } catch {
                throw .invalidCurveKey("\(error)")
            }
        }
        let publicKey = try validated(makePublic)
        guard object["d"] != nil else { return (publicKey, nil) }
        let d = try JWKMember.bytes(object, "d")
        let privateKey = try validated { try makePrivate(d) }
        guard derived(privateKey) == publicKey else { throw .invalidCurveKey(mismatch) }
        return (publicKey, privateKey)
    }

    /// A new private JWK in the Supabase CLI's `signing_keys.json` format (`gen signing-key`):
    /// `kty`, `kid`, `use: "sig"`, `key_ops: ["sign", "verify"]`, `alg`, `ext: true`, then the
    /// key material.
    public init(generating algorithm: JWTAlgorithm, kid: String, random: some RandomSource) {
        var object: JSONObject = [:]
        switch algorithm {
        case .hs256:
            object["kty"] = "oct"
        case .rs256:
            object["kty"] = "RSA"
        case .es256:
            object["kty"] = "EC"
        case .edDSA:
            object["kty"] = "OKP"
        }
        object["kid"] = .string(kid)
        object["use"] = "sig"
        object["key_ops"] = ["sign", "verify"]
        object["alg"] = .string(algorithm.rawValue)
        object["ext"] = true
        switch algorithm {
        case .hs256:
            var secret = [UInt8](repeating: 0, count: 32)
            random.fill(&secret)
            object["k"] = .string(Base64URL.encode(secret))
        case .rs256:
            let key = RSAPrivateKey.generate(bits: 2048, random: random)
            for (name, value) in [("n", key.n), ("e", key.e), ("d", key.d), ("p", key.p), ("q", key.q),
                                  ("dp", key.dp), ("dq", key.dq), ("qi", key.qinv)] {
                object[name] = .string(Base64URL.encode(value))
            }
        case .es256:
            // The CLI's JWK struct order: d before crv, x, y.
            let key = P256PrivateKey.generate(random: random)
            object["d"] = .string(Base64URL.encode(key.scalar))
            object["crv"] = "P-256"
            object["x"] = .string(Base64URL.encode(key.publicKey.x))
            object["y"] = .string(Base64URL.encode(key.publicKey.y))
        case .edDSA:
            let key = Ed25519PrivateKey.generate(random: random)
            object["d"] = .string(Base64URL.encode(key.seed))
            object["crv"] = "Ed25519"
            object["x"] = .string(Base64URL.encode(key.publicKey.rawRepresentation))
        }
        // Generated material is valid by construction.
        try! self.init(object)
    }

    /// Whether `key_ops` lists `sign`: the key GoTrue signs with.
    public var canSign: Bool { keyOperations.contains("sign") }

    /// The private JWK (its members as given). Never publish it.
    public var privateJSON: JSONObject { members }

    /// The public JWK as GoTrue's `/.well-known/jwks.json` serves it (conf/jwk.go with jwx's
    /// `PublicKeyOf`): every member but the private ones, `use` set to `sig` and `key_ops` to
    /// `["verify"]`, keys sorted as jwx writes them. nil for a symmetric key, which is never
    /// published.
    public var publicJSON: JSONObject? {
        guard !key.isSymmetric else { return nil }
        var object = JSONObject()
        for (name, value) in members where !JWK.privateMembers.contains(name) { object[name] = value }
        object["use"] = "sig"
        object["key_ops"] = ["verify"]
        return object.sortedRecursively()
    }

    /// Members that carry private key material (RFC 7518 sections 6.2.2, 6.3.2; RFC 8037).
    static let privateMembers: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]
}

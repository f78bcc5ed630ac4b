import AuthCrypto
import AuthJSON
import AuthJWT
import FuzzSupport

// Fuzz target for the JWT decoder and verifier.
//
// The first input byte picks a mode:
// - even: the rest is a compact token, decoded unverified and verified against a single HS256
//   secret and against a JWKS-like set (HS256 by kid, ES256, EdDSA, legacy HS256 fallback);
//   the rest may also be a JWK or key set, read with `JWK.init`; RS256 tokens are also checked
//   with `JWT.verify(_:rsaKeys:)`, the provider id_token path;
// - odd: the next byte picks a signer, the rest is header JSON, a NUL, claims JSON; the
//   harness signs those bytes itself (the fuzzer cannot forge a MAC, so acceptance paths would
//   otherwise never be reached) and verifies the token.
//
// Property (the one that matters): a token is accepted only if one of the set's keys signed
// exactly its first two segments. Accepted tokens must also stop verifying once their
// signature or payload changes, and report the header and claims they carry.

let now: Int64 = 1_700_000_000
let legacySecret = Array("super-secret-jwt-token-with-at-least-32-characters-long".utf8)
let kidSecretBytes = Array("a-second-secret-selected-by-its-kid-0123456789".utf8)
// Fixed key material: a crash must replay identically.
let ecKey = try! P256PrivateKey(scalar: Array(repeating: 0x35, count: 32))
let edKey = try! Ed25519PrivateKey(seed: Array(repeating: 0x07, count: 32))
let foreignECKey = try! P256PrivateKey(scalar: Array(repeating: 0x11, count: 32))
let foreignEdKey = try! Ed25519PrivateKey(seed: Array(repeating: 0x09, count: 32))
// Generating an RSA key takes too long per process start; the repository's test key is read
// instead, found from this file's path (the fuzz binaries run in the checkout they were built from).
let rsaKey: RSAPrivateKey = {
    let path = String(describing: #filePath).split(separator: "/", omittingEmptySubsequences: false)
        .dropLast(3).joined(separator: "/") + "/Fixtures/signing_keys/rsa.json"
    guard let bytes = fuzzReadFile(path), case .array(let keys)? = try? JSON(parsing: bytes),
          case .object(let object)? = keys.first, let jwk = try? JWK(object),
          case .rsa(_, let privateKey?) = jwk.key.material
    else {
        fuzzCheck(false, "cannot read the RSA test key at \(path)")
        fatalError()
    }
    return privateKey
}()

let singleSet = JWTKeySet(secret: legacySecret)

func keySet(unknownKidUsesFallback: Bool) -> JWTKeySet {
    JWTKeySet(
        keys: [
            JWTKey(kid: "hs-kid", secret: kidSecretBytes),
            JWTKey(kid: "ec-kid", p256: ecKey).publicOnly,
            JWTKey(kid: "ed-kid", ed25519: edKey).publicOnly,
            JWTKey(kid: "rs-kid", rsa: rsaKey).publicOnly,
        ],
        fallback: JWTKey(secret: legacySecret),
        unknownKidUsesFallback: unknownKidUsesFallback)
}

func hmac(_ message: [UInt8], _ secret: [UInt8]) -> [UInt8] {
    HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: secret))
}

/// Who signs a constructed token: the set's own keys, or impostors (other material of the same
/// type, public key bytes used as an HMAC secret, an empty secret, no signature at all).
enum Signer: CaseIterable {
    case legacy, kidSecret, ec, ed
    case foreignSecret, foreignEC, foreignEd, ecPublicAsSecret, edPublicAsSecret, emptySecret, unsigned
    case rsa, rsaModulusAsSecret

    var inSet: Bool { [.legacy, .kidSecret, .ec, .ed, .rsa].contains(self) }

    func sign(_ message: [UInt8]) -> [UInt8] {
        switch self {
        case .legacy: hmac(message, legacySecret)
        case .kidSecret: hmac(message, kidSecretBytes)
        case .ec: ecKey.signature(for: message)
        case .ed: edKey.signature(for: message)
        case .foreignSecret: hmac(message, Array("not-the-project-secret-but-just-as-long-0123456".utf8))
        case .foreignEC: foreignECKey.signature(for: message)
        case .foreignEd: foreignEdKey.signature(for: message)
        case .ecPublicAsSecret: hmac(message, ecKey.publicKey.x + ecKey.publicKey.y)
        case .edPublicAsSecret: hmac(message, edKey.publicKey.rawRepresentation)
        case .emptySecret: hmac(message, [])
        case .unsigned: []
        case .rsa: RSA.signPKCS1v15SHA256(message, key: rsaKey)
        case .rsaModulusAsSecret: hmac(message, rsaKey.publicKey.modulus)
        }
    }
}

/// Independent of the verifier: did a key of the set sign `signingInput`?
func signedBySet(_ signingInput: [UInt8], _ signature: [UInt8], single: Bool) -> Bool {
    if hmac(signingInput, legacySecret) == signature { return true }
    if single { return false }
    return hmac(signingInput, kidSecretBytes) == signature
        || ecKey.publicKey.isValidSignature(signature, for: signingInput)
        || edKey.publicKey.isValidSignature(signature, for: signingInput)
        || RSA.verifyPKCS1v15SHA256(signingInput, signature: signature, key: rsaKey.publicKey)
}

/// Splits a compact token into its signing input and decoded signature, without the library.
func split(_ token: String) -> (signingInput: [UInt8], signature: [UInt8])? {
    let bytes = Array(token.utf8)
    let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
    guard dots.count == 2, let signature = try? Base64URL.decode(String(decoding: bytes[(dots[1] + 1)...], as: UTF8.self))
    else { return nil }
    return (Array(bytes[..<dots[1]]), signature)
}

/// Verifies against both sets (and the RS256-only provider path); returns which accepted,
/// checking every acceptance.
@discardableResult
func verifyAll(_ token: String, unknownKidUsesFallback: Bool) -> (single: JWT?, set: JWT?) {
    let single = try? JWTVerifier.verify(token: token, keys: singleSet, now: now)
    let set = try? JWTVerifier.verify(token: token, keys: keySet(unknownKidUsesFallback: unknownKidUsesFallback), now: now)
    if (try? JWT.verify(token, rsaKeys: ["rs-kid": rsaKey.publicKey], now: now)) != nil {
        let parts = split(token)
        fuzzCheck(parts.map { RSA.verifyPKCS1v15SHA256($0.signingInput, signature: $0.signature, key: rsaKey.publicKey) } ?? false,
                  "RS256 path accepted a token the RSA key did not sign: \(fuzzExcerpt(Array(token.utf8)))")
    }
    for (jwt, isSingle) in [(single, true), (set, false)] {
        guard let jwt else { continue }
        guard let parts = split(token) else {
            fuzzCheck(false, "accepted a token that does not split into three segments: \(fuzzExcerpt(Array(token.utf8)))")
            continue
        }
        fuzzCheck(signedBySet(parts.signingInput, parts.signature, single: isSingle),
                  "accepted a token no key of the set signed: \(fuzzExcerpt(Array(token.utf8)))")
        fuzzCheck(jwt.signature == parts.signature && Array(jwt.signingInput.utf8) == parts.signingInput,
                  "accepted token reports other segments: \(fuzzExcerpt(Array(token.utf8)))")
    }
    return (single, set)
}

func rawToken(_ bytes: ArraySlice<UInt8>, flags: UInt8) {
    let token = String(decoding: bytes, as: UTF8.self)
    if let decoded = try? JWT.decodeUnverified(token) {
        // Whatever decodes has a header with a registered alg.
        fuzzCheck(decoded.header["alg"]?.stringValue != nil, "decoded a token without alg: \(fuzzExcerpt(bytes))")
    }
    verifyAll(token, unknownKidUsesFallback: flags & 2 != 0)

    // The same bytes as a JWK or a key set: reading one must fail cleanly or give a key.
    switch try? JSON(parsing: bytes) {
    case .object(let object)?:
        _ = try? JWK(object)
    case .array(let elements)?:
        for case .object(let object) in elements.prefix(4) { _ = try? JWK(object) }
    default:
        break
    }
}

func constructed(_ bytes: ArraySlice<UInt8>, flags: UInt8) {
    guard let selector = bytes.first else { return }
    let signer = Signer.allCases[Int(selector) % Signer.allCases.count]
    let rest = bytes.dropFirst()
    let header: ArraySlice<UInt8>, claims: ArraySlice<UInt8>
    if let nul = rest.firstIndex(of: 0) {
        header = rest[..<nul]
        claims = rest[(nul + 1)...]
    } else {
        header = rest
        claims = Array("{}".utf8)[...]
    }
    let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(claims)
    let signature = signer.sign(Array(signingInput.utf8))
    let token = signingInput + "." + Base64URL.encode(signature)
    let unknownKidUsesFallback = flags & 2 != 0
    let (single, set) = verifyAll(token, unknownKidUsesFallback: unknownKidUsesFallback)
    fuzzCheck(single == nil || signer == .legacy, "single secret accepted a token signed by \(signer)")
    fuzzCheck(set == nil || signer.inSet, "key set accepted a token signed by \(signer): \(fuzzExcerpt(Array(token.utf8)))")

    guard let accepted = set ?? single else { return }
    // What was accepted is what was signed.
    fuzzCheck(try! JSON(parsing: header) == .object(accepted.header), "accepted header differs from the signed one")
    fuzzCheck(try! JSON(parsing: claims) == .object(accepted.claims), "accepted claims differ from the signed ones")
    // Any change to the signature or the payload must be refused.
    var tampered = signature
    if tampered.isEmpty { return }
    let index = Int(fuzzHash(bytes) % UInt64(tampered.count))
    tampered[index] ^= 1 << (flags >> 5)
    let badSignature = signingInput + "." + Base64URL.encode(tampered)
    let badPayload = Base64URL.encode(header) + "." + Base64URL.encode(claims + [UInt8(ascii: " ")]) + "."
        + Base64URL.encode(signature)
    for token in [badSignature, badPayload] {
        let (single, set) = verifyAll(token, unknownKidUsesFallback: unknownKidUsesFallback)
        fuzzCheck(single == nil && set == nil, "a tampered token was accepted: \(fuzzExcerpt(Array(token.utf8)))")
    }
}

func fuzzOne(_ input: [UInt8]) {
    guard let mode = input.first else { return }
    if mode & 1 == 0 {
        rawToken(input.dropFirst(), flags: mode)
    } else {
        constructed(input.dropFirst(), flags: mode)
    }
}

@main
enum Main {
    static func main() { FuzzTarget.main(name: "fuzz-jwt", fuzzOne) }
}

import AuthCrypto
import AuthJSON

/// WebAuthn Level 3 relying-party verification (https://www.w3.org/TR/webauthn-3/) as the real
/// server runs it through go-webauthn v0.16.5: `CredentialCreationResponse.Parse` and
/// `ParsedCredentialCreationData.Verify` for registration (§7.1), `CredentialAssertionResponse.Parse`
/// and `validateLogin` for authentication (§7.2). Every failure is a `WebAuthnFailure` whose
/// `reason` names the rule (for the log and tests); endpoints answer all of them with the real
/// server's single 400 `webauthn_verification_failed`.
struct WebAuthnFailure: Error, Sendable, Equatable, CustomStringConvertible {
    enum Stage: Sendable { case parse, verify }
    let stage: Stage
    let reason: String
    var description: String { reason }
    static func parse(_ reason: String) -> WebAuthnFailure { WebAuthnFailure(stage: .parse, reason: reason) }
    static func verify(_ reason: String) -> WebAuthnFailure { WebAuthnFailure(stage: .verify, reason: reason) }
}

package enum WebAuthn {
    /// COSE algorithm identifiers (RFC 9053 §2.1, RFC 8812 §2): the ones verified here.
    package static let es256: Int64 = -7
    static let rs256: Int64 = -257
    static let edDSA: Int64 = -8
    /// `webauthn.CredentialParametersDefault()`: what the real server offers in
    /// `pubKeyCredParams`, in its order (ES256, ES384, ES512, RS256, RS384, RS512, PS256, PS384,
    /// PS512, EdDSA). Only ES256, RS256 and EdDSA keys can be verified by this emulator; a
    /// credential with another algorithm fails verification (no authenticator in practice
    /// picks one of the others before ES256).
    static let offeredAlgorithms: [Int64] = [-7, -35, -36, -257, -258, -259, -37, -38, -39, -8]

    /// `protocol.DefaultChallengeLength`: 32 random bytes.
    static let challengeLength = 32
    /// webauthn/const.go: `defaultTimeout` (300 s) and `defaultTimeoutUVD` (120 s, when user
    /// verification is "discouraged"), sent as `timeout` in milliseconds.
    static let defaultTimeoutMilliseconds = 300_000

    /// Go's `URLEncodedBase64.UnmarshalJSON`: trailing `=` trimmed, then unpadded base64url.
    package static func decodeBase64URL(_ text: String) -> [UInt8]? {
        var t = Substring(text)
        while t.hasSuffix("=") { t = t.dropLast() }
        return try? Base64URL.decode(t)
    }

    package static func sha256(_ bytes: [UInt8]) -> [UInt8] { SHA256.hash(data: bytes) }
}

// MARK: - COSE keys (RFC 9052 §7, RFC 9053 §7)

package struct COSEKey: Sendable {
    enum Key: Sendable {
        case p256(P256PublicKey)
        case rsa(RSAPublicKey)
        case ed25519(Ed25519PublicKey)
    }
    let algorithm: Int64
    let key: Key

    /// `webauthncose.ParsePublicKey`, limited to what AuthCrypto verifies: EC2 (kty 2) on P-256
    /// (crv 1) with ES256, RSA (kty 3) with RS256, OKP (kty 1) on Ed25519 (crv 6) with EdDSA.
    init(cbor bytes: [UInt8]) throws(WebAuthnFailure) {
        let value: CBOR
        do { value = try CBOR.decode(bytes) } catch { throw .verify("COSE key: \(error)") }
        guard value.mapValue != nil else { throw .verify("COSE key is not a map") }
        guard let kty = value[int: 1]?.intValue else { throw .verify("COSE key without kty") }
        guard let alg = value[int: 3]?.intValue else { throw .verify("COSE key without alg") }
        algorithm = alg
        switch (kty, alg) {
        case (2, WebAuthn.es256):
            guard value[int: -1]?.intValue == 1 else { throw .verify("EC2 key is not on P-256") }
            guard let x = value[int: -2]?.bytesValue, let y = value[int: -3]?.bytesValue, x.count == 32, y.count == 32 else {
                throw .verify("EC2 key coordinates are not 32-byte strings")
            }
            do { key = .p256(try P256PublicKey(x: x, y: y)) } catch { throw .verify("EC2 key: \(error)") }
        case (3, WebAuthn.rs256):
            guard let n = value[int: -1]?.bytesValue, let e = value[int: -2]?.bytesValue else {
                throw .verify("RSA key without n or e")
            }
            do { key = .rsa(try RSAPublicKey(modulus: n, exponent: e)) } catch { throw .verify("RSA key: \(error)") }
        case (1, WebAuthn.edDSA):
            guard value[int: -1]?.intValue == 6 else { throw .verify("OKP key is not Ed25519") }
            guard let x = value[int: -2]?.bytesValue else { throw .verify("OKP key without x") }
            do { key = .ed25519(try Ed25519PublicKey(rawRepresentation: x)) } catch { throw .verify("OKP key: \(error)") }
        default:
            throw .verify("unsupported COSE key type \(kty) with algorithm \(alg)")
        }
    }

    /// WebAuthn §6.5.6: ES256 signatures are ASN.1 DER `Ecdsa-Sig-Value`, RS256 PKCS #1 v1.5,
    /// EdDSA the raw 64 bytes.
    func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        switch key {
        case .p256(let k):
            guard let raw = DERSignature.rawP256(signature) else { return false }
            return k.isValidSignature(raw, for: message)
        case .rsa(let k):
            return RSA.verifyPKCS1v15SHA256(message, signature: signature, key: k)
        case .ed25519(let k):
            return k.isValidSignature(signature, for: message)
        }
    }

    /// A P-256 public key as a COSE_Key (the software authenticator's credentials).
    package static func encodeP256(_ key: P256PublicKey) -> [UInt8] {
        CBOR.map([
            .init(.int(1), .int(2)), .init(.int(3), .int(WebAuthn.es256)),
            .init(.int(-1), .int(1)), .init(.int(-2), .bytes(key.x)), .init(.int(-3), .bytes(key.y)),
        ]).encoded
    }
}

/// ECDSA signatures in DER (SEC 1 §C.5, X.690 §8.3 / §10): SEQUENCE { INTEGER r, INTEGER s }.
package enum DERSignature {
    /// Strict DER: short or minimal long-form lengths, minimal positive integers, nothing after.
    static func rawP256(_ der: [UInt8]) -> [UInt8]? {
        var i = 0
        func length() -> Int? {
            guard i < der.count else { return nil }
            let first = der[i]; i += 1
            if first < 0x80 { return Int(first) }
            guard first == 0x81, i < der.count, der[i] >= 0x80 else { return nil }
            defer { i += 1 }
            return Int(der[i])
        }
        func integer() -> [UInt8]? {
            guard i < der.count, der[i] == 0x02 else { return nil }
            i += 1
            guard let n = length(), n > 0, n <= 33, der.count - i >= n else { return nil }
            let bytes = Array(der[i..<i + n]); i += n
            if bytes[0] & 0x80 != 0 { return nil }  // negative
            if n > 1 && bytes[0] == 0 && bytes[1] & 0x80 == 0 { return nil }  // not minimal
            let trimmed = bytes.drop(while: { $0 == 0 })
            guard trimmed.count <= 32 else { return nil }
            return [UInt8](repeating: 0, count: 32 - trimmed.count) + trimmed
        }
        guard der.first == 0x30 else { return nil }
        i = 1
        guard let total = length(), total == der.count - i, let r = integer(), let s = integer(), i == der.count else { return nil }
        return r + s
    }

    package static func encode(raw: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var v = Array(bytes.drop(while: { $0 == 0 }))
            if v.isEmpty { v = [0] }
            if v[0] & 0x80 != 0 { v.insert(0, at: 0) }
            return [0x02, UInt8(v.count)] + v
        }
        let body = integer(raw[0..<32]) + integer(raw[32..<64])
        return [0x30, UInt8(body.count)] + body
    }
}

// MARK: - Authenticator data (WebAuthn §6.1)

package struct AuthenticatorData: Sendable {
    package struct Flags: OptionSet, Sendable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        package static let userPresent = Flags(rawValue: 0x01)
        package static let userVerified = Flags(rawValue: 0x04)
        static let backupEligible = Flags(rawValue: 0x08)
        static let backupState = Flags(rawValue: 0x10)
        package static let attestedCredentialData = Flags(rawValue: 0x40)
        static let extensionData = Flags(rawValue: 0x80)
    }
    let rpIDHash: [UInt8]
    let flags: Flags
    let signCount: UInt32
    var aaguid: [UInt8] = []
    var credentialID: [UInt8] = []
    var credentialPublicKey: [UInt8] = []

    /// `maxCredentialIDLength` (WebAuthn §5.8.3: at most 1023 bytes).
    static let maximumCredentialIDLength = 1023

    /// `AuthenticatorData.Unmarshal`: at least 37 bytes; attested credential data when its flag
    /// says so; extension data only with the ED flag; no leftover bytes.
    init(_ raw: [UInt8]) throws(WebAuthnFailure) {
        guard raw.count >= 37 else { throw .parse("authenticator data shorter than 37 bytes") }
        rpIDHash = Array(raw[0..<32])
        flags = Flags(rawValue: raw[32])
        signCount = raw[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var position = 37
        if flags.contains(.attestedCredentialData) {
            guard raw.count > 55 else { throw .parse("attested credential flag set but data is missing") }
            aaguid = Array(raw[37..<53])
            let idLength = Int(raw[53]) << 8 | Int(raw[54])
            guard raw.count >= 55 + idLength else { throw .parse("attested credential data too short") }
            guard idLength <= AuthenticatorData.maximumCredentialIDLength else { throw .parse("credential id too long") }
            credentialID = Array(raw[55..<55 + idLength])
            do {
                let (_, end) = try CBOR.decodePrefix(raw, from: 55 + idLength)
                credentialPublicKey = Array(raw[(55 + idLength)..<end])
                position = end
            } catch {
                throw .parse("credential public key: \(error)")
            }
        } else if !flags.contains(.extensionData) && raw.count != 37 {
            throw .parse("attested credential flag not set")
        }
        if flags.contains(.extensionData) {
            guard position < raw.count else { throw .parse("extensions flag set but extension data is missing") }
            do {
                let (extensions, end) = try CBOR.decodePrefix(raw, from: position)
                guard extensions.mapValue != nil else { throw WebAuthnFailure.parse("extension data is not a map") }
                position = end
            } catch let failure as WebAuthnFailure {
                throw failure
            } catch {
                throw .parse("extension data: \(error)")
            }
        }
        guard position == raw.count else { throw .parse("leftover bytes decoding authenticator data") }
    }

    /// `AuthenticatorData.Verify`: the RP id hash, then UP and UV when required.
    func verify(rpID: String, userPresenceRequired: Bool, userVerificationRequired: Bool) throws(WebAuthnFailure) {
        guard constantTimeEquals(rpIDHash, WebAuthn.sha256(Array(rpID.utf8))) else { throw .verify("RP id hash mismatch") }
        if userPresenceRequired && !flags.contains(.userPresent) {
            throw .verify("user presence required but flag not set by authenticator")
        }
        if userVerificationRequired && !flags.contains(.userVerified) {
            throw .verify("user verification required but flag not set by authenticator")
        }
    }
}

// MARK: - Client data (WebAuthn §5.8.1)

struct CollectedClientData: Sendable {
    let type: String
    let challenge: String
    let origin: String
    let tokenBindingStatus: String?
    let hasTokenBinding: Bool

    /// `json.Unmarshal` into `CollectedClientData`.
    init(_ raw: [UInt8]) throws(WebAuthnFailure) {
        guard let json = try? JSON(parsing: raw), let o = json.objectValue else { throw .parse("clientDataJSON is not a JSON object") }
        func string(_ key: String) throws(WebAuthnFailure) -> String {
            switch o[key] {
            case nil, .null?: return ""
            case .string(let s)?: return s
            default: throw .parse("clientDataJSON.\(key) is not a string")
            }
        }
        type = try string("type")
        challenge = try string("challenge")
        origin = try string("origin")
        switch o["tokenBinding"] {
        case nil, .null?:
            hasTokenBinding = false; tokenBindingStatus = nil
        case .object(let tb)?:
            hasTokenBinding = true; tokenBindingStatus = tb["status"]?.stringValue ?? ""
        default:
            throw .parse("clientDataJSON.tokenBinding is not an object")
        }
    }

    /// `CollectedClientData.Verify` (§7.1 steps 7-9, §7.2 steps 11-13): the ceremony type, the
    /// challenge (compared as the base64url text, constant time), the origin against the
    /// configured origins; top origins are ignored (go-webauthn's default mode); a token binding
    /// must carry a known status.
    func verify(ceremony: String, challenge stored: String, origins: [String]) throws(WebAuthnFailure) {
        guard type == ceremony else { throw .verify("ceremony type \(type), expected \(ceremony)") }
        guard constantTimeEquals(Array(stored.utf8), Array(challenge.utf8)) else { throw .verify("challenge mismatch") }
        guard CollectedClientData.originMatches(origin, origins) else { throw .verify("origin \(origin) is not allowed") }
        if hasTokenBinding {
            guard let status = tokenBindingStatus, !status.isEmpty else { throw .parse("token binding present without status") }
            guard ["present", "supported", "not-supported"].contains(status) else { throw .parse("token binding with invalid status") }
        }
    }

    /// `IsOriginInHaystack`: scheme and host compare case-insensitively, ports (with the
    /// scheme's default filled in) exactly; a value that is not a URL compares verbatim.
    static func originMatches(_ origin: String, _ allowed: [String]) -> Bool {
        guard let needle = parts(origin) else { return allowed.contains(origin) }
        return allowed.contains { parts($0) == needle }
    }

    private static func parts(_ text: String) -> [String]? {
        guard let scheme = text.firstRange(of: "://"), !text[..<scheme.lowerBound].isEmpty else { return nil }
        let s = text[..<scheme.lowerBound].lowercased()
        let rest = text[scheme.upperBound...]
        let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var authority = rest[..<end]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host = String(authority), port = ""
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            host = String(authority[..<colon]); port = String(authority[authority.index(after: colon)...])
        }
        if port.isEmpty { port = s == "https" ? "443" : s == "http" ? "80" : "" }
        guard !host.isEmpty else { return nil }
        return [s, host.lowercased(), port]
    }
}

// MARK: - Ceremony state (go-webauthn `SessionData`)

/// What the options endpoint remembers for the verify call: stored as JSON in
/// `webauthn_challenges.session_data` with go-webauthn's field names.
package struct WebAuthnSession: Sendable, Equatable {
    package var challenge: String
    package var rpID: String
    package var userID: [UInt8]
    package var allowedCredentialIDs: [[UInt8]] = []
    var userVerification: String
    package var credParams: [Int64] = []

    var json: JSON {
        var o = JSONObject()
        o["challenge"] = .string(challenge)
        o["rpId"] = .string(rpID)
        // Go marshals []byte as standard base64; nil as null.
        o["user_id"] = userID.isEmpty ? .null : .string(Base64.encode(userID))
        if !allowedCredentialIDs.isEmpty {
            o["allowed_credentials"] = .array(allowedCredentialIDs.map { .string(Base64.encode($0)) })
        }
        o["expires"] = "0001-01-01T00:00:00Z"
        o["userVerification"] = .string(userVerification)
        if !credParams.isEmpty {
            o["credParams"] = .array(credParams.map { ["type": "public-key", "alg": .number(Double($0))] })
        }
        return .object(o)
    }

    init(challenge: String, rpID: String, userID: [UInt8], allowedCredentialIDs: [[UInt8]] = [],
         userVerification: String, credParams: [Int64] = []) {
        self.challenge = challenge
        self.rpID = rpID
        self.userID = userID
        self.allowedCredentialIDs = allowedCredentialIDs
        self.userVerification = userVerification
        self.credParams = credParams
    }

    package init?(json: JSON) {
        guard let o = json.objectValue, let challenge = o["challenge"]?.stringValue else { return nil }
        self.challenge = challenge
        rpID = o["rpId"]?.stringValue ?? ""
        userID = o["user_id"]?.stringValue.flatMap { try? Base64.decode($0) } ?? []
        allowedCredentialIDs = (o["allowed_credentials"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap { try? Base64.decode($0) } }
        userVerification = o["userVerification"]?.stringValue ?? ""
        credParams = (o["credParams"]?.arrayValue ?? []).compactMap { $0["alg"]?.int64Value }
    }
}

// MARK: - Registration (§7.1)

/// A parsed `PublicKeyCredential` from `navigator.credentials.create()` (its JSON form).
struct RegistrationResponse: Sendable {
    let id: String
    let clientDataJSON: [UInt8]
    let clientData: CollectedClientData
    let format: String
    let statement: CBOR
    let rawAuthData: [UInt8]
    let authData: AuthenticatorData
    let transports: [String]

    /// `CredentialCreationResponse.Parse` and `AuthenticatorAttestationResponse.Parse`.
    init(_ json: JSON) throws(WebAuthnFailure) {
        guard let o = json.objectValue else { throw .parse("credential is not an object") }
        let id = try RegistrationResponse.string(o, "id")
        guard !id.isEmpty else { throw .parse("missing id") }
        guard let idBytes = try? Base64URL.decode(id), !idBytes.isEmpty else { throw .parse("id not base64url") }
        if case .string(let raw)? = o["rawId"], WebAuthn.decodeBase64URL(raw) == nil { throw .parse("rawId not base64url") }
        let type = try RegistrationResponse.string(o, "type")
        guard !type.isEmpty else { throw .parse("missing type") }
        guard type == "public-key" else { throw .parse("type not public-key") }
        guard let response = o["response"]?.objectValue else { throw .parse("missing response") }
        clientDataJSON = try RegistrationResponse.bytes(response, "clientDataJSON")
        clientData = try CollectedClientData(clientDataJSON)
        let object: CBOR
        do { object = try CBOR.decode(try RegistrationResponse.bytes(response, "attestationObject")) } catch let f as WebAuthnFailure {
            throw f
        } catch {
            throw .parse("attestationObject: \(error)")
        }
        guard object.mapValue != nil, let fmt = object[text: "fmt"]?.textValue,
              let authData = object[text: "authData"]?.bytesValue else {
            throw .parse("attestationObject lacks fmt or authData")
        }
        let statement = object[text: "attStmt"] ?? .map([])
        guard statement.mapValue != nil else { throw .parse("attStmt is not a map") }
        self.id = id
        format = fmt
        self.statement = statement
        rawAuthData = authData
        self.authData = try AuthenticatorData(authData)
        guard self.authData.flags.contains(.attestedCredentialData) else { throw .parse("attestation missing attested credential data flag") }
        transports = (response["transports"]?.arrayValue ?? []).compactMap(\.stringValue)
    }

    static func string(_ o: JSONObject, _ key: String) throws(WebAuthnFailure) -> String {
        switch o[key] {
        case nil, .null?: return ""
        case .string(let s)?: return s
        default: throw .parse("\(key) is not a string")
        }
    }

    static func bytes(_ o: JSONObject, _ key: String) throws(WebAuthnFailure) -> [UInt8] {
        let text = try string(o, key)
        guard let bytes = WebAuthn.decodeBase64URL(text) else { throw .parse("\(key) not base64url") }
        return bytes
    }

    /// What registration stores (webauthn.NewCredential).
    struct Credential: Sendable {
        var id: [UInt8]
        var publicKey: [UInt8]
        var attestationType: String
        var aaguid: [UInt8]
        var signCount: UInt32
        var transports: [String]
        var backupEligible: Bool
        var backedUp: Bool
        var userVerified: Bool
    }

    /// `ParsedCredentialCreationData.Verify` then `AttestationObject.Verify`: client data, RP id
    /// hash and flags (UP always, the registration is never conditional; UV when the session
    /// requires it), the key's algorithm among those offered, then the attestation statement:
    /// `none` with an empty statement, or `packed` self attestation (§8.2: `alg` matching the
    /// credential key and `sig` over authData || clientDataHash by that key). Other formats and
    /// `packed` with a certificate chain are refused.
    func verify(session: WebAuthnSession, relyingParty: RelyingParty) throws(WebAuthnFailure) -> Credential {
        try clientData.verify(ceremony: "webauthn.create", challenge: session.challenge, origins: relyingParty.origins)
        try authData.verify(rpID: relyingParty.id, userPresenceRequired: true,
                            userVerificationRequired: session.userVerification == "required")
        guard let keyMap = try? CBOR.decode(authData.credentialPublicKey), let alg = keyMap[int: 3]?.intValue else {
            throw .verify("credential public key has no algorithm")
        }
        guard session.credParams.contains(alg) else { throw .verify("credential public key algorithm not supported") }
        let key = try COSEKey(cbor: authData.credentialPublicKey)
        let clientDataHash = WebAuthn.sha256(clientDataJSON)
        switch format {
        case "none":
            guard statement.mapValue?.isEmpty ?? true else { throw .verify("attestation format none with attestation present") }
        case "packed":
            guard let statementAlg = statement[text: "alg"]?.intValue else { throw .verify("packed: error retrieving alg value") }
            guard let sig = statement[text: "sig"]?.bytesValue else { throw .verify("packed: error retrieving sig value") }
            guard statement[text: "x5c"] == nil, statement[text: "ecdaaKeyId"] == nil else {
                throw .verify("packed attestation with a certificate chain is not supported")
            }
            guard statementAlg == key.algorithm else { throw .verify("packed: alg does not match the credential key") }
            guard key.isValidSignature(sig, for: rawAuthData + clientDataHash) else { throw .verify("packed: unable to verify signature") }
        default:
            throw .verify("attestation format \(format) is unsupported")
        }
        return Credential(
            id: authData.credentialID, publicKey: authData.credentialPublicKey, attestationType: format,
            aaguid: authData.aaguid, signCount: authData.signCount, transports: transports,
            backupEligible: authData.flags.contains(.backupEligible), backedUp: authData.flags.contains(.backupState),
            userVerified: authData.flags.contains(.userVerified))
    }
}

// MARK: - Authentication (§7.2)

/// A parsed `PublicKeyCredential` from `navigator.credentials.get()`.
struct AssertionResponse: Sendable {
    let id: String
    let rawID: [UInt8]
    let clientDataJSON: [UInt8]
    let clientData: CollectedClientData
    let rawAuthData: [UInt8]
    let authData: AuthenticatorData
    let signature: [UInt8]
    let userHandle: [UInt8]

    /// `CredentialAssertionResponse.Parse`.
    init(_ json: JSON) throws(WebAuthnFailure) {
        guard let o = json.objectValue else { throw .parse("credential is not an object") }
        id = try RegistrationResponse.string(o, "id")
        guard !id.isEmpty else { throw .parse("credential with id missing") }
        guard (try? Base64URL.decode(id)) != nil else { throw .parse("credential id not base64url") }
        rawID = try RegistrationResponse.bytes(o, "rawId")
        guard try RegistrationResponse.string(o, "type") == "public-key" else { throw .parse("credential with bad type") }
        guard let response = o["response"]?.objectValue else { throw .parse("missing response") }
        clientDataJSON = try RegistrationResponse.bytes(response, "clientDataJSON")
        rawAuthData = try RegistrationResponse.bytes(response, "authenticatorData")
        signature = try RegistrationResponse.bytes(response, "signature")
        userHandle = try RegistrationResponse.bytes(response, "userHandle")
        clientData = try CollectedClientData(clientDataJSON)
        authData = try AuthenticatorData(rawAuthData)
    }

    /// The stored side of the credential being asserted.
    struct Stored: Sendable {
        var publicKey: [UInt8]
        var signCount: UInt32
        var backupEligible: Bool
    }

    /// The outcome: the sign count to store (unchanged on a regression, which go-webauthn's
    /// `Authenticator.UpdateCounter` only flags as a possible clone without failing the
    /// ceremony, as §7.2 step 22 leaves to the relying party) and the new backup state.
    struct Outcome: Sendable, Equatable {
        var signCount: UInt32
        var cloneWarning: Bool
        var backedUp: Bool
    }

    /// `validateLogin` after the credential was found: client data, RP id hash, UP always and UV
    /// when required, the signature over authData || SHA-256(clientDataJSON), the backup flags'
    /// consistency, then the counter rule.
    func verify(session: WebAuthnSession, relyingParty: RelyingParty, credential: Stored) throws(WebAuthnFailure) -> Outcome {
        try clientData.verify(ceremony: "webauthn.get", challenge: session.challenge, origins: relyingParty.origins)
        try authData.verify(rpID: relyingParty.id, userPresenceRequired: true,
                            userVerificationRequired: session.userVerification == "required")
        let key = try COSEKey(cbor: credential.publicKey)
        guard key.isValidSignature(signature, for: rawAuthData + WebAuthn.sha256(clientDataJSON)) else {
            throw .verify("assertion signature does not verify")
        }
        guard credential.backupEligible == authData.flags.contains(.backupEligible) else {
            throw .verify("backup eligible flag inconsistency")
        }
        if !authData.flags.contains(.backupEligible) && authData.flags.contains(.backupState) {
            throw .verify("backup state set without backup eligible")
        }
        let count = authData.signCount
        let clone = count <= credential.signCount && (count != 0 || credential.signCount != 0)
        return Outcome(signCount: clone ? credential.signCount : count, cloneWarning: clone,
                       backedUp: authData.flags.contains(.backupState))
    }
}

import AuthCrypto
import AuthFormats
import AuthJSON

// WebAuthn Level 3 relying-party verification (https://www.w3.org/TR/webauthn-3/) as the real
// server runs it through go-webauthn v0.16.5: `CredentialCreationResponse.Parse` and
// `ParsedCredentialCreationData.Verify` for registration (§7.1), `CredentialAssertionResponse.Parse`
// and `validateLogin` for authentication (§7.2). Every failure is a `WebAuthnFailure`
// (AuthFormats, with the binary formats read here).

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
        try RegistrationResponse.checkMemberTypes(o, response: response, registration: true)
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

    /// go-webauthn decodes the whole credential into typed structs before parsing it, so a
    /// member of the wrong JSON type fails it even when nothing reads the value:
    /// `authenticatorAttachment` a string, `clientExtensionResults` an object, `transports` a
    /// list of strings, `publicKeyAlgorithm` an int64, `URLEncodedBase64` members base64url
    /// (`null` fits each).
    static func checkMemberTypes(_ o: JSONObject, response: JSONObject, registration: Bool) throws(WebAuthnFailure) {
        func fits(_ value: JSON?, _ test: (JSON) -> Bool) -> Bool {
            guard let value, value != .null else { return true }
            return test(value)
        }
        func strings(_ value: JSON) -> Bool { value.arrayValue?.allSatisfy { $0.stringValue != nil } ?? false }
        guard fits(o["authenticatorAttachment"], { $0.stringValue != nil }) else { throw .parse("authenticatorAttachment is not a string") }
        guard fits(o["clientExtensionResults"], { $0.objectValue != nil }) else { throw .parse("clientExtensionResults is not an object") }
        guard registration else { return }
        guard fits(o["transports"], strings), fits(response["transports"], strings) else { throw .parse("transports is not a list of strings") }
        guard fits(response["publicKeyAlgorithm"], { value in
            guard case .number(let n) = value else { return false }
            return n.rounded() == n && abs(n) < 9.2e18
        }) else { throw .parse("publicKeyAlgorithm is not an int64") }
        for key in ["authenticatorData", "publicKey"] where response[key] != nil && response[key] != .null {
            _ = try bytes(response, key)
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
        try RegistrationResponse.checkMemberTypes(o, response: response, registration: false)
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
    /// ceremony, as §7.2 step 22 leaves to the relying party) and whether it looks cloned. The
    /// backup state is checked, not kept: GoTrue stores only the count and the time of use.
    struct Outcome: Sendable, Equatable {
        var signCount: UInt32
        var cloneWarning: Bool
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
        return Outcome(signCount: clone ? credential.signCount : count, cloneWarning: clone)
    }
}

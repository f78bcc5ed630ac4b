import AuthCrypto
import AuthFormats
import AuthHTTP
import AuthJSON
import AuthStore
import GoTrue

/// The software authenticator (service_role): what a browser and a platform authenticator do
/// between an options response and a verify request, so a headless test completes a WebAuthn
/// ceremony without a browser.
///
/// - `POST /emulator/v1/webauthn/attestation` takes the options a client received (the
///   registration options response as is, its `options`, or just its `challenge_id`), creates a
///   P-256 credential (ES256), keeps its private key in `emulator_authenticator_keys` and returns
///   the `PublicKeyCredential` JSON `navigator.credentials.create()` yields (WebAuthn §5.1.3 and
///   §6.5: client data, authenticator data with attested credential data, attestation object in
///   format `none`, or `packed` self attestation when asked).
/// - `POST /emulator/v1/webauthn/assertion` takes authentication options the same way and signs
///   them with a kept credential (§5.1.4, §6.3.3), as `navigator.credentials.get()` would.
///
/// Optional fields: `origin` (default: the first configured RP origin), `user_verified` and
/// `user_present` (the UV and UP flags, default true), `format` (`none` or `packed`), and for
/// assertions `user_id` / `credential_id` to pick a credential when several match and
/// `sign_count` to send a chosen counter (the kept counter is left alone then).
struct SoftwareAuthenticatorEndpoints: EndpointGroup {
    let api: Core

    static let attestationPath = GoTrueAPI.emulatorPrefix + "/webauthn/attestation"
    static let assertionPath = GoTrueAPI.emulatorPrefix + "/webauthn/assertion"

    static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("POST", attestationPath, operation: "emulator.webauthn.attestation") { g, c in try g.attestation(c) },
            Endpoint("POST", assertionPath, operation: "emulator.webauthn.assertion") { g, c in try g.assertion(c) },
        ]
    }

    private var environment: Environment { api.project.environment }
    private var relyingParty: RelyingParty { api.snapshot.configuration.webAuthn.relyingParty(siteURL: api.snapshot.configuration.siteURL) }

    /// What a ceremony needs from its options.
    private struct Ceremony {
        var challenge: String
        var rpID: String
        var userHandle: [UInt8] = []
        var allowed: [[UInt8]] = []
        var excluded: [[UInt8]] = []
        /// Whether the RP asked for a discoverable credential (`residentKey` required or
        /// preferred, or `requireResidentKey`).
        var discoverable = true
    }

    private static let commonKeys: Set<String> = ["challenge_id", "options", "expires_at", "origin", "user_verified", "user_present"]

    /// The options from the body: `options` (a `publicKey` wrapper is unwrapped too) or the
    /// stored ceremony of `challenge_id`.
    private func ceremony(_ fields: ControlFields, type: String) throws(AuthError) -> Ceremony {
        if var options = try fields.object("options") {
            if let inner = options["publicKey"]?.objectValue { options = inner }
            guard let challenge = options["challenge"]?.stringValue, !challenge.isEmpty else {
                throw ControlRequest.invalid("options.challenge is required")
            }
            func ids(_ key: String) -> [[UInt8]] {
                (options[key]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue.flatMap(WebAuthn.decodeBase64URL) }
            }
            if type == "registration" {
                guard let handle = options["user"]?["id"]?.stringValue.flatMap(WebAuthn.decodeBase64URL), !handle.isEmpty else {
                    throw ControlRequest.invalid("options.user.id is required")
                }
                let selection = options["authenticatorSelection"]
                let resident = ["required", "preferred"].contains(selection?["residentKey"]?.stringValue ?? "")
                    || selection?["requireResidentKey"]?.boolValue == true
                return Ceremony(challenge: challenge, rpID: options["rp"]?["id"]?.stringValue ?? relyingParty.id,
                                userHandle: handle, excluded: ids("excludeCredentials"), discoverable: resident)
            }
            return Ceremony(challenge: challenge, rpID: options["rpId"]?.stringValue ?? relyingParty.id, allowed: ids("allowCredentials"))
        }
        guard let id = try fields.nonEmptyString("challenge_id") else {
            throw ControlRequest.invalid("give the options a client received (\"options\") or their \"challenge_id\"")
        }
        guard let canonical = AdminEndpoints.canonicalUUID(id) else {
            throw AuthError(404, .webauthnChallengeNotFound, "Challenge not found or already used")
        }
        // A passkey ceremony's challenge, else an MFA WebAuthn factor's (`mfa_challenges`).
        let (record, mfaSession) = try api.read { conn in
            (try conn.webAuthnChallenge(id: canonical), try conn.challengeWebAuthnSessionData(challengeID: canonical))
        }
        if let record {
            guard let json = try? JSON(parsing: record.sessionData), let session = WebAuthnSession(json: json) else {
                throw AuthError(500, .unexpectedFailure, "stored challenge is unreadable")
            }
            guard record.challengeType == type else {
                throw ControlRequest.invalid("challenge \(canonical) is a \(record.challengeType) challenge")
            }
            return Ceremony(challenge: session.challenge, rpID: session.rpID, userHandle: session.userID,
                            allowed: session.allowedCredentialIDs)
        }
        guard let mfaSession, let json = try? JSON(parsing: mfaSession), let session = WebAuthnSession(json: json) else {
            throw AuthError(404, .webauthnChallengeNotFound, "Challenge not found or already used")
        }
        // MFA registration sessions carry the algorithms offered; sign-in sessions do not.
        let isRegistration = !session.credParams.isEmpty
        guard isRegistration == (type == "registration") else {
            throw ControlRequest.invalid("challenge \(canonical) is a WebAuthn factor \(isRegistration ? "create" : "request") challenge")
        }
        return Ceremony(challenge: session.challenge, rpID: session.rpID, userHandle: session.userID,
                        allowed: session.allowedCredentialIDs, discoverable: false)
    }

    private func clientData(_ type: String, _ ceremony: Ceremony, _ fields: ControlFields) throws(AuthError) -> [UInt8] {
        let origin = try fields.nonEmptyString("origin") ?? relyingParty.origins.first ?? "http://localhost"
        let json: JSON = ["type": .string(type), "challenge": .string(ceremony.challenge), "origin": .string(origin), "crossOrigin": false]
        return Array(json.serialized().utf8)
    }

    private func flags(_ fields: ControlFields, attested: Bool) throws(AuthError) -> UInt8 {
        var flags: UInt8 = 0
        if try fields.bool("user_present") ?? true { flags |= AuthenticatorData.Flags.userPresent.rawValue }
        if try fields.bool("user_verified") ?? true { flags |= AuthenticatorData.Flags.userVerified.rawValue }
        if attested { flags |= AuthenticatorData.Flags.attestedCredentialData.rawValue }
        return flags
    }

    /// A `PublicKeyCredential` as `toJSON()` gives it (WebAuthn L3 §5.1.8), the shape browsers'
    /// and supabase-js's helpers send back; `response` is the attestation or assertion.
    private static func credential(_ credentialID: [UInt8], response: JSONObject) -> HTTPResponse {
        let id = Base64URL.encode(credentialID)
        return .json([
            "id": .string(id), "rawId": .string(id), "type": "public-key", "authenticatorAttachment": "platform",
            "clientExtensionResults": .object([:]), "response": .object(response),
        ])
    }

    private static func counterBytes(_ n: UInt32) -> [UInt8] { [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] }

    func attestation(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let fields = try ControlFields(context.request, allowed: Self.commonKeys.union(["format"]))
        let ceremony = try ceremony(fields, type: "registration")
        let format = try fields.nonEmptyString("format") ?? "none"
        guard format == "none" || format == "packed" else { throw ControlRequest.invalid("format must be \"none\" or \"packed\"") }
        guard let userID = String(validating: ceremony.userHandle, as: UTF8.self) else {
            throw ControlRequest.invalid("options.user.id does not name a user")
        }
        let existing = try api.read { conn in try conn.softwareAuthenticatorKeys(userID: userID, rpID: ceremony.rpID) }
        if existing.contains(where: { ceremony.excluded.contains($0.credentialID) }) {
            // §6.3.2 step 3: an excluded credential on this authenticator ends the ceremony
            // (the browser reports InvalidStateError).
            throw AuthError(409, .webauthnCredentialExists, "The authenticator already holds an excluded credential (InvalidStateError)")
        }
        let key = P256PrivateKey.generate(random: environment.random)
        let credentialID = environment.randomBytes(16)
        let clientDataJSON = try clientData("webauthn.create", ceremony, fields)
        let cose = COSEKey.encodeP256(key.publicKey)
        let authData = WebAuthn.sha256(Array(ceremony.rpID.utf8)) + [try flags(fields, attested: true)] + Self.counterBytes(0)
            + [UInt8](repeating: 0, count: 16) + [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)] + credentialID + cose
        var statement: [CBOR.Pair] = []
        if format == "packed" {
            let signature = DERSignature.encode(raw: key.signature(for: authData + WebAuthn.sha256(clientDataJSON)))
            statement = [.init(.text("alg"), .int(WebAuthn.es256)), .init(.text("sig"), .bytes(signature))]
        }
        let object = CBOR.map([
            .init(.text("fmt"), .text(format)), .init(.text("attStmt"), .map(statement)), .init(.text("authData"), .bytes(authData)),
        ]).encoded
        let record = SoftwareAuthenticatorKeyRecord(
            credentialID: credentialID, userID: userID, rpID: ceremony.rpID, userHandle: ceremony.userHandle,
            privateKey: key.scalar, signCount: 0, discoverable: ceremony.discoverable, createdAt: environment.now().microseconds)
        try api.write { conn in try conn.insertSoftwareAuthenticatorKey(record) }
        return Self.credential(credentialID, response: [
            "clientDataJSON": .string(Base64URL.encode(clientDataJSON)),
            "attestationObject": .string(Base64URL.encode(object)),
            "transports": ["internal"],
        ])
    }

    func assertion(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let fields = try ControlFields(context.request, allowed: Self.commonKeys.union(["user_id", "credential_id", "sign_count"]))
        let ceremony = try ceremony(fields, type: "authentication")
        let userID = try fields.nonEmptyString("user_id")
        let wanted = try fields.nonEmptyString("credential_id").map { text throws(AuthError) -> [UInt8] in
            guard let bytes = WebAuthn.decodeBase64URL(text) else { throw ControlRequest.invalid("credential_id must be base64url") }
            return bytes
        }
        var keys = try api.read { conn in try conn.softwareAuthenticatorKeys(userID: userID, rpID: ceremony.rpID) }
        // With an allow list, those credentials; without one, only discoverable ones (§6.3.3 step 7).
        keys = ceremony.allowed.isEmpty ? keys.filter(\.discoverable) : keys.filter { ceremony.allowed.contains($0.credentialID) }
        if let wanted { keys = keys.filter { $0.credentialID == wanted } }
        guard let key = keys.last else {
            throw AuthError(404, .webauthnCredentialNotFound, "The software authenticator holds no matching credential for RP \(ceremony.rpID)")
        }
        guard keys.count == 1 else {
            throw ControlRequest.invalid("\(keys.count) credentials match: give \"user_id\" or \"credential_id\"")
        }
        var count: UInt32
        if let fixed = fields["sign_count"] {
            guard let n = fixed.int64Value, n >= 0, n <= Int64(UInt32.max) else { throw ControlRequest.invalid("sign_count must be a 32-bit unsigned integer") }
            count = UInt32(n)
        } else {
            count = UInt32(truncatingIfNeeded: try api.write { conn in try conn.bumpSoftwareAuthenticatorCounter(credentialID: key.credentialID) })
        }
        let clientDataJSON = try clientData("webauthn.get", ceremony, fields)
        let authData = WebAuthn.sha256(Array(ceremony.rpID.utf8)) + [try flags(fields, attested: false)] + Self.counterBytes(count)
        let privateKey: P256PrivateKey
        do { privateKey = try P256PrivateKey(scalar: key.privateKey) } catch {
            throw AuthError(500, .unexpectedFailure, "stored authenticator key is invalid")
        }
        let signature = DERSignature.encode(raw: privateKey.signature(for: authData + WebAuthn.sha256(clientDataJSON)))
        return Self.credential(key.credentialID, response: [
            "clientDataJSON": .string(Base64URL.encode(clientDataJSON)),
            "authenticatorData": .string(Base64URL.encode(authData)),
            "signature": .string(Base64URL.encode(signature)),
            "userHandle": .string(Base64URL.encode(key.userHandle)),
        ])
    }
}

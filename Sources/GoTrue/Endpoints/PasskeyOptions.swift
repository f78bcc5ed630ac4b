import AuthCrypto
import AuthFormats
import AuthHTTP
import AuthJSON
import AuthStore
import GoFormats

/// The options JSON go-webauthn builds (protocol/options.go field names and `omitempty`s) with
/// the real server's passkey configuration (`getPasskeyWebAuthn`): attestation "none",
/// resident key required, user verification preferred, the default algorithm list and timeout.
enum PasskeyOptions {
    static let userVerification = "preferred"

    /// `BeginRegistration`: `PublicKeyCredentialCreationOptions` for the passkey adapter
    /// (`webAuthnUser`: name the email, else the phone; display name `user_metadata.name`, else
    /// the name).
    static func creation(user: UserRecord, rp: RelyingParty, exclude: [[UInt8]], challenge: [UInt8]) -> (JSON, WebAuthnSession) {
        let name = (user.email ?? "").isEmpty ? (user.phone ?? "") : (user.email ?? "")
        let metaName = (try? JSON(parsing: user.userMetadata))?["name"]?.stringValue ?? ""
        return creation(userHandle: Array(user.id.utf8), name: name, displayName: metaName.isEmpty ? name : metaName, rp: rp,
                        exclude: exclude.map { ($0, []) }, challenge: challenge, userVerification: userVerification,
                        residentKey: "required", attestation: "none")
    }

    /// The general shape: `authenticatorSelection` is always present (Go's `omitempty` never
    /// drops a struct), its members and `attestation` only when set; `excludeCredentials` only
    /// when there is one; `timeout` 120 s when user verification is "discouraged", else 300 s.
    static func creation(userHandle: [UInt8], name: String, displayName: String, rp: RelyingParty,
                         exclude: [([UInt8], [String])], challenge: [UInt8], userVerification: String,
                         residentKey: String?, attestation: String?) -> (JSON, WebAuthnSession) {
        var o = JSONObject()
        o["rp"] = ["name": .string(rp.name), "id": .string(rp.id)]
        o["user"] = ["name": .string(name), "displayName": .string(displayName), "id": .string(Base64URL.encode(userHandle))]
        o["challenge"] = .string(Base64URL.encode(challenge))
        o["pubKeyCredParams"] = .array(WebAuthn.offeredAlgorithms.map { ["type": "public-key", "alg": .number(Double($0))] })
        o["timeout"] = .number(Double(userVerification == "discouraged" ? 120_000 : WebAuthn.defaultTimeoutMilliseconds))
        if !exclude.isEmpty {
            o["excludeCredentials"] = .array(exclude.map { id, transports in
                var d: JSONObject = ["type": "public-key", "id": .string(Base64URL.encode(id))]
                if !transports.isEmpty { d["transports"] = .array(transports.map { .string($0) }) }
                return .object(d)
            })
        }
        var selection = JSONObject()
        if let residentKey { selection["residentKey"] = .string(residentKey) }
        if !userVerification.isEmpty { selection["userVerification"] = .string(userVerification) }
        o["authenticatorSelection"] = .object(selection)
        if let attestation { o["attestation"] = .string(attestation) }
        let session = WebAuthnSession(challenge: Base64URL.encode(challenge), rpID: rp.id, userID: userHandle,
                                      userVerification: userVerification, credParams: WebAuthn.offeredAlgorithms)
        return (.object(o), session)
    }

    /// `BeginDiscoverableLogin` / `BeginLogin`: `PublicKeyCredentialRequestOptions`.
    static func request(rp: RelyingParty, challenge: [UInt8], userID: [UInt8] = [], allow: [([UInt8], [String])] = [],
                        userVerification: String = PasskeyOptions.userVerification) -> (JSON, WebAuthnSession) {
        var o = JSONObject()
        o["challenge"] = .string(Base64URL.encode(challenge))
        o["timeout"] = .number(Double(userVerification == "discouraged" ? 120_000 : WebAuthn.defaultTimeoutMilliseconds))
        o["rpId"] = .string(rp.id)
        if !allow.isEmpty {
            o["allowCredentials"] = .array(allow.map { id, transports in
                var d: JSONObject = ["type": "public-key", "id": .string(Base64URL.encode(id))]
                if !transports.isEmpty { d["transports"] = .array(transports.map { .string($0) }) }
                return .object(d)
            })
        }
        if !userVerification.isEmpty { o["userVerification"] = .string(userVerification) }
        let session = WebAuthnSession(challenge: Base64URL.encode(challenge), rpID: rp.id, userID: userID,
                                      allowedCredentialIDs: allow.map(\.0), userVerification: userVerification)
        return (.object(o), session)
    }

    /// The AAGUID as a UUID string (nil when absent); the all-zero AAGUID is kept, as GoTrue does.
    static func uuidString(_ bytes: [UInt8]) -> String? {
        bytes.count == 16 ? UUIDText.format(bytes) : nil
    }

    /// `utilities.PasskeyFriendlyName`: the authenticator's name from its AAGUID, else
    /// "Passkey". GoTrue embeds the community AAGUID list (passkey-authenticator-aaguids); the
    /// emulator knows the most common providers only.
    static func friendlyName(aaguid: String?) -> String {
        guard let aaguid, aaguid != "00000000-0000-0000-0000-000000000000" else { return "Passkey" }
        return knownAuthenticators[aaguid] ?? "Passkey"
    }

    static let knownAuthenticators: [String: String] = [
        "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4": "Google Password Manager",
        "adce0002-35bc-c60a-648b-0b25f1f05503": "Chrome on Mac",
        "fbfc3007-154e-4ecc-8c0b-6e020557d7bd": "Apple Passwords",
        "dd4ec289-e01d-41c9-bb89-70fa845d4bf2": "iCloud Keychain (Managed)",
        "08987058-cadc-4b81-b6e1-30de50dcbe96": "Windows Hello",
        "9ddd1817-af5a-4672-a2b9-3e3dd95000a9": "Windows Hello",
        "6028b017-b1d4-4c02-b4b3-afcdafc96bb2": "Windows Hello",
        "53414d53-554e-4700-0000-000000000000": "Samsung Pass",
        "bada5566-a7aa-401f-bd96-45619a55120d": "1Password",
        "d548826e-79b4-db40-a3d8-11116f7e8349": "Bitwarden",
        "531126d6-e717-415c-9320-3d9aa6981239": "Dashlane",
        "50726f74-6f6e-5061-7373-50726f746f6e": "Proton Pass",
        "d3452668-01fd-4c12-926c-83a4204853aa": "Microsoft Password Manager",
    ]
}

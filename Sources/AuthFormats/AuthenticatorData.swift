import AuthCrypto
import AuthJSON

// MARK: - Authenticator data (WebAuthn §6.1)

package struct AuthenticatorData: Sendable {
    package struct Flags: OptionSet, Sendable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        package static let userPresent = Flags(rawValue: 0x01)
        package static let userVerified = Flags(rawValue: 0x04)
        package static let backupEligible = Flags(rawValue: 0x08)
        package static let backupState = Flags(rawValue: 0x10)
        package static let attestedCredentialData = Flags(rawValue: 0x40)
        package static let extensionData = Flags(rawValue: 0x80)
    }
    package let rpIDHash: [UInt8]
    package let flags: Flags
    package let signCount: UInt32
    package var aaguid: [UInt8] = []
    package var credentialID: [UInt8] = []
    package var credentialPublicKey: [UInt8] = []

    /// `maxCredentialIDLength` (WebAuthn §5.8.3: at most 1023 bytes).
    package static let maximumCredentialIDLength = 1023

    /// `AuthenticatorData.Unmarshal`: at least 37 bytes; attested credential data when its flag
    /// says so; extension data only with the ED flag; no leftover bytes.
    package init(_ raw: [UInt8]) throws(WebAuthnFailure) {
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
    package func verify(rpID: String, userPresenceRequired: Bool, userVerificationRequired: Bool) throws(WebAuthnFailure) {
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

package struct CollectedClientData: Sendable {
    package let type: String
    package let challenge: String
    package let origin: String
    package let tokenBindingStatus: String?
    package let hasTokenBinding: Bool

    /// `json.Unmarshal` into `CollectedClientData`.
    package init(_ raw: [UInt8]) throws(WebAuthnFailure) {
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
    package func verify(ceremony: String, challenge stored: String, origins: [String]) throws(WebAuthnFailure) {
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
    package static func originMatches(_ origin: String, _ allowed: [String]) -> Bool {
        guard let needle = parts(origin) else { return allowed.contains(origin) }
        return allowed.contains { parts($0) == needle }
    }

    private static func parts(_ text: String) -> [String]? {
        guard let (scheme, authority) = URLAuthority.split(text), !scheme.isEmpty else { return nil }
        let s = scheme.lowercased()
        var host = String(authority), port = ""
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            host = String(authority[..<colon]); port = String(authority[authority.index(after: colon)...])
        }
        if port.isEmpty { port = s == "https" ? "443" : s == "http" ? "80" : "" }
        guard !host.isEmpty else { return nil }
        return [s, host.lowercased(), port]
    }
}

import AuthCrypto

/// Why a WebAuthn response was refused, at parsing or at verification: `reason` names the rule
/// (for the log and tests). GoTrue's endpoints answer every one of them with the real server's
/// single 400 `webauthn_verification_failed`.
package struct WebAuthnFailure: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Stage: Sendable { case parse, verify }
    package let stage: Stage
    package let reason: String
    package var description: String { reason }
    package static func parse(_ reason: String) -> WebAuthnFailure { WebAuthnFailure(stage: .parse, reason: reason) }
    package static func verify(_ reason: String) -> WebAuthnFailure { WebAuthnFailure(stage: .verify, reason: reason) }
}

/// WebAuthn's constants and encodings as go-webauthn v0.16.5 uses them.
package enum WebAuthn {
    /// COSE algorithm identifiers (RFC 9053 §2.1, RFC 8812 §2): the ones verified here.
    package static let es256: Int64 = -7
    package static let rs256: Int64 = -257
    package static let edDSA: Int64 = -8
    /// `webauthn.CredentialParametersDefault()`: what the real server offers in
    /// `pubKeyCredParams`, in its order (ES256, ES384, ES512, RS256, RS384, RS512, PS256, PS384,
    /// PS512, EdDSA). Only ES256, RS256 and EdDSA keys can be verified by this emulator; a
    /// credential with another algorithm fails verification (no authenticator in practice
    /// picks one of the others before ES256).
    package static let offeredAlgorithms: [Int64] = [-7, -35, -36, -257, -258, -259, -37, -38, -39, -8]

    /// `protocol.DefaultChallengeLength`: 32 random bytes.
    package static let challengeLength = 32
    /// webauthn/const.go: `defaultTimeout` (300 s) and `defaultTimeoutUVD` (120 s, when user
    /// verification is "discouraged"), sent as `timeout` in milliseconds.
    package static let defaultTimeoutMilliseconds = 300_000

    /// Go's `URLEncodedBase64.UnmarshalJSON`: trailing `=` trimmed, then unpadded base64url.
    package static func decodeBase64URL(_ text: String) -> [UInt8]? {
        var t = Substring(text)
        while t.hasSuffix("=") { t = t.dropLast() }
        return try? Base64URL.decode(t)
    }

    package static func sha256(_ bytes: [UInt8]) -> [UInt8] { SHA256.hash(data: bytes) }
}

import AuthJSON
import AuthCrypto

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
        /// HMAC mismatch ("signature is invalid").
        case signatureMismatch
        /// An asymmetric signature that does not verify, with the Go crypto package's error
        /// text ("crypto/rsa: verification error", ...).
        case verificationFailed(String)
        /// The selected key is not of the token algorithm's type (golang-jwt's
        /// `ErrInvalidKeyType` with the method's message).
        case invalidKeyType(String)
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
            case .verificationFailed(let text): return "token signature is invalid: " + text
            case .invalidKeyType(let text): return "token signature is invalid: key is of invalid type: " + text
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

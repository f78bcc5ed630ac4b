import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthScenarios
import AuthStore
import EmulatorConfiguration
import EmulatorTools
import GoFormats
import GoTrue
import Synchronization

/// Every project signs and checks tokens with keys of its own, so a token or API key of one
/// project is refused by every other, as two Supabase projects refuse each other's.
///
/// What the project's settings leave as the server's is derived from the server's JWT secret
/// and the ref (HMAC-SHA256 in counter mode): stable across restarts, so a project reopened
/// from its file keeps its keys and the sessions it issued.
enum ProjectKeys {
    static func separate(_ config: inout Configuration, from base: Configuration, ref: String, signingKeyAlgorithm: JWTAlgorithm?) {
        let stream = DerivedBytes(secret: Array(base.jwt.secret.utf8), label: "auth-emulator project " + ref)
        if config.jwt.secret == base.jwt.secret {
            config.jwt.secret = Base64URL.encode(stream.bytes(count: 32))
        }
        if config.apiKeys == base.apiKeys {
            var keys = APIKeys.standard(secret: config.jwt.secret)
            keys.publishable = "sb_publishable_" + Base64URL.encode(stream.bytes(count: 23))
            keys.secret = "sb_secret_" + Base64URL.encode(stream.bytes(count: 23))
            config.apiKeys = keys
        }
        guard config.jwt.keys.map(\.key.kid) == base.jwt.keys.map(\.key.kid),
              let signer = config.jwt.keys.first(where: \.canSign) else { return }
        // The CLI's built-in key (or one the server was given) would make one project's user
        // tokens valid in all: each project gets a key of the same kind. Under `--signing-key`
        // the anon and service_role keys are signed with it too, as the server's are.
        let kid = UUIDText.format(stream.bytes(count: 16), versionFour: true)
        let key = JWK(generating: signer.key.algorithm, kid: kid, random: stream)
        if signingKeyAlgorithm != nil {
            _ = config.adoptSigningKeys([key])
        } else {
            config.jwt.keys = [key]
        }
    }
}

/// HMAC-SHA256(secret, label || counter) blocks, read in sequence: a deterministic byte stream
/// for key derivation (the counter construction of NIST SP 800-108 §4.1).
final class DerivedBytes: RandomSource {
    private let key: SymmetricKey
    private let label: [UInt8]
    private let state = Mutex<(counter: UInt32, buffer: [UInt8])>((0, []))

    init(secret: [UInt8], label: String) {
        key = SymmetricKey(data: secret)
        self.label = Array(label.utf8)
    }

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        state.withLock { state in
            for index in 0..<buffer.count {
                if state.buffer.isEmpty {
                    state.counter += 1
                    let c = state.counter
                    let block = label + [UInt8(c >> 24), UInt8(truncatingIfNeeded: c >> 16), UInt8(truncatingIfNeeded: c >> 8), UInt8(truncatingIfNeeded: c)]
                    state.buffer = HMAC<SHA256>.authenticationCode(for: block, using: key).reversed()
                }
                buffer[index] = state.buffer.removeLast()
            }
        }
    }
}

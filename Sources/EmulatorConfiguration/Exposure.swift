import AuthCrypto
import AuthJWT
import GoTrue

/// What changes when the emulator listens beyond loopback (`--host 0.0.0.0`, a LAN address):
/// the one place the exposure policy lives (docs/beyond-loopback.md).
///
/// On loopback the emulator is `supabase start`: the well-known demo JWT secret and keys, an open
/// dashboard, a test identity provider that signs anyone in. Those secrets are printed in every
/// Supabase README, so on an address other machines reach they would open `/admin`, the
/// `/emulator/v1` side door and the dashboard to anyone on the network. So beyond loopback:
/// - a JWT secret, `service_role` key or `sb_secret_` / `sb_publishable_` key that is still the
///   public demo value is replaced by a fresh random one at start (printed with the others), unless
///   `--allow-demo-keys` says the demo keys are wanted anyway;
/// - the dashboard and the test provider's consent page ask for the `service_role` (or
///   `sb_secret_`) key, and the id_token grant accepts only tokens the test providers signed;
/// - links in mails use an address other machines can open, not `0.0.0.0`.
/// Whatever the bind, the dashboard and `/emulator/v1` answer only to loopback names, IP
/// addresses and the configured external hosts (DNS rebinding), and share their responses only
/// with such origins (CORS).
package enum Exposure {
    /// `127.0.0.0/8`, `::1` and `localhost`: addresses only this machine reaches.
    package static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased()
        return host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    /// `0.0.0.0` and `::`: every interface, none of which is an address to put in a link.
    package static func isUnspecified(_ host: String) -> Bool {
        host == "0.0.0.0" || host == "::" || host == "[::]"
    }

    /// Replaces every secret that is still a public demo value with a fresh random one; returns
    /// the settings replaced, in the words the warning uses.
    package static func replacePublicSecrets(_ config: inout Configuration, random: any RandomSource = SystemRandom()) -> [String] {
        var replaced: [String] = []
        let demo = APIKeys.standard(secret: JWTSettings.defaultSecret)
        let demoKeys = config.apiKeys
        if config.jwt.secret == JWTSettings.defaultSecret {
            // 32 random bytes, as `openssl rand -base64 32` would give a real project.
            config.jwt.secret = Base64URL.encode(random.bytes(count: 32))
            replaced.append("JWT secret")
        }
        let fresh = APIKeys.standard(secret: config.jwt.secret)
        if demoKeys.anon == demo.anon {
            config.apiKeys.anon = fresh.anon
            replaced.append("anon key")
        }
        if demoKeys.serviceRole == demo.serviceRole {
            config.apiKeys.serviceRole = fresh.serviceRole
            replaced.append("service_role key")
        }
        // The opaque keys: a prefix and 31 base64url characters, the shape `supabase start` prints.
        if demoKeys.secret == APIKeys.localSecret {
            config.apiKeys.secret = "sb_secret_" + Base64URL.encode(random.bytes(count: 23))
            replaced.append("sb_secret_ key")
        }
        if demoKeys.publishable == APIKeys.localPublishable {
            config.apiKeys.publishable = "sb_publishable_" + Base64URL.encode(random.bytes(count: 23))
            replaced.append("sb_publishable_ key")
        }
        // The CLI's built-in ES256 key is published in its source: whoever holds it mints user
        // tokens. A fresh key of the same kind takes its place (the anon and service_role keys
        // are not signed by it, so they stay as replaced above).
        if let index = config.jwt.keys.firstIndex(where: { $0.key.kid == JWTSettings.cliDefaultKeyID && $0.canSign }) {
            config.jwt.keys[index] = JWK(generating: .es256, kid: Environment().uuid(), random: random)
            replaced.append("signing key")
        }
        return replaced
    }

    /// An address of this machine that other machines can reach (the first IPv4 address of an
    /// interface that is up and not loopback), for links when the server listens on every
    /// interface; nil when there is none.
    package static func reachableAddress() -> String? {
        Platform.firstExternalIPv4Address()
    }
}

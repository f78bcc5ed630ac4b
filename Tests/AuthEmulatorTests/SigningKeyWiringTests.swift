import AuthCrypto
@testable import AuthEmulator
import AuthHTTP
import AuthJSON
import AuthJWT
@testable import EmulatorConfiguration
import EmulatorTools
import Foundation
import GoTrue
import Testing
@testable import auth_emulator

/// Signing keys through the emulator's own surfaces: `keys --generate`, `serve --signing-key`
/// (kept in the database across restarts) and key rotation through `PATCH /emulator/v1/config`.
@Suite struct SigningKeyWiringTests {
    func run(_ arguments: [String], environment: [String: String] = [:]) -> (status: Int32, output: String, error: String) {
        let captured = CapturedConsole()
        let status = CLI.run(arguments, environment: environment, console: captured.console)
        return (status, captured.standardOutput, captured.standardError)
    }

    @Test(arguments: [("rs256", "RSA", "RS256"), ("es256", "EC", "ES256"), ("eddsa", "OKP", "EdDSA")])
    func keysGenerateWritesTheCLIFormat(_ name: String, _ kty: String, _ alg: String) throws {
        let result = run(["keys", "--generate", name])
        #expect(result.status == 0, "\(result.error)")
        // Go's indented encoder: two spaces, one member per line.
        #expect(result.output.hasPrefix("[\n  {\n    \"kty\": \"\(kty)\",\n    \"kid\": \""))
        let parsed = try JSON(parsing: Array(result.output.utf8))
        let object = try #require(parsed.arrayValue?.first?.objectValue)
        #expect(object.map(\.key).prefix(6) == ["kty", "kid", "use", "key_ops", "alg", "ext"])
        #expect(object["key_ops"] == ["sign", "verify"])
        #expect(object["alg"]?.stringValue == alg)
        let jwk = try JWK(object)
        #expect(jwk.canSign && jwk.key.canSign)
        // Ready for signing_keys_path / GOTRUE_JWT_KEYS.
        var options = EmulatorOptions()
        try EnvironmentConfiguration.apply(["GOTRUE_JWT_KEYS": result.output], to: &options)
        #expect(options.configuration.jwt.signingKey.algorithm.rawValue == alg)
    }

    @Test func keysGenerateRejectsUnknownAlgorithms() {
        let result = run(["keys", "--generate", "hs512"])
        #expect(result.status == 64)
        #expect(result.error.contains("--generate must be rs256, es256 or eddsa"))
    }

    @Test func signingKeyIsKeptAcrossRestarts() throws {
        let folder = NSTemporaryDirectory() + "signing-key-\(UInt32.random(in: 0...UInt32.max))"
        defer { removeFile(folder) }
        var options = EmulatorOptions.testing()
        options.databasePath = folder + "/auth.db"
        options.signingKeyAlgorithm = .es256

        let first = try Emulator.start(options)
        let keys = first.project.configuration.apiKeys
        let session = first.api.call("POST", "/signup", ["email": "restart@example.com", "password": "password1"]).json
        let token = try #require(session["access_token"]?.stringValue)
        let jwks = first.api.call("GET", "/.well-known/jwks.json").json
        first.stop()

        let second = try Emulator.start(options)
        defer { second.stop() }
        #expect(second.api.call("GET", "/user", bearer: token).status == 200)
        #expect(second.api.call("GET", "/.well-known/jwks.json").json == jwks)
        // The same anon and service_role keys, so apps configured with them keep working.
        #expect(second.project.configuration.apiKeys == keys)
        // The derived API keys verify with the same key (their exp is derived from the clock).
        let verified = try JWT.verify(keys.serviceRole, keys: second.project.configuration.jwt.verificationKeys, now: 1_900_000_000)
        #expect(verified.header["alg"] == "ES256")
        #expect(second.api.call("GET", "/admin/users", bearer: keys.serviceRole).status == 200)
    }

    @Test func rotationThroughTheConfigRoute() throws {
        var options = EmulatorOptions.testing()
        options.configuration.jwt.keys = try signingKeys("rsa.json")
        let emulator = try Emulator(options: options)
        let admin = emulator.project.configuration.apiKeys.serviceRole
        let before = emulator.api.call("POST", "/signup", ["email": "rotate@example.com", "password": "password1"]).json
        let oldToken = try #require(before["access_token"]?.stringValue)

        // The new EC key signs; the RSA key stays, verify-only.
        var rsa = try #require(try JSON(parsing: Array(try signingKeysFixture("rsa.json").utf8)).arrayValue?.first?.objectValue)
        rsa["key_ops"] = ["verify"]
        let ec = try #require(try JSON(parsing: Array(try signingKeysFixture("ec.json").utf8)).arrayValue?.first?.objectValue)
        let patch = emulator.api.call("PATCH", "/emulator/v1/config", ["jwt_keys": [.object(ec), .object(rsa)]], bearer: admin)
        #expect(patch.status == 200, "\(patch.text)")
        #expect(patch.json["jwt_signing_algorithm"] == "ES256")
        #expect(patch.json["jwt_keys"]?.arrayValue?.count == 2)
        #expect(!patch.text.contains(ec["d"]?.stringValue ?? "?"))

        #expect(emulator.api.call("GET", "/user", bearer: oldToken).status == 200)
        let after = emulator.api.call("POST", "/token?grant_type=password", ["email": "rotate@example.com", "password": "password1"]).json
        let newToken = try #require(after["access_token"]?.stringValue)
        #expect(claims(of: newToken)["email"] == "rotate@example.com")
        #expect(emulator.api.call("GET", "/user", bearer: newToken).status == 200)
        #expect(emulator.api.call("GET", "/.well-known/jwks.json").json["keys"]?.arrayValue?.count == 2)

        // Two signing keys are refused, and nothing changes.
        rsa["key_ops"] = ["sign", "verify"]
        let refused = emulator.api.call("PATCH", "/emulator/v1/config", ["jwt_keys": [.object(ec), .object(rsa)]], bearer: admin)
        #expect(refused.status == 400)
        #expect(refused.json["msg"]?.stringValue?.contains("multiple signing keys detected") == true)
        #expect(emulator.project.configuration.jwt.keys.count == 2)
        #expect(emulator.project.configuration.jwt.signingKey.algorithm == .es256)

        // The old token was verified (and cached) above; once its key is gone it is refused at
        // once, and the new one still works.
        #expect(emulator.api.call("GET", "/user", bearer: oldToken).status == 200)
        let dropped = emulator.api.call("PATCH", "/emulator/v1/config", ["jwt_keys": [.object(ec)]], bearer: admin)
        #expect(dropped.status == 200, "\(dropped.text)")
        let stale = emulator.api.call("GET", "/user", bearer: oldToken)
        #expect(stale.status == 403)
        #expect(stale.json["error_code"] == "bad_jwt")
        #expect(emulator.api.call("GET", "/user", bearer: newToken).status == 200)
    }

    // MARK: The CLI's built-in key (supabase start's GOTRUE_JWT_KEYS)

    /// The header of a compact JWS, unverified.
    func header(of token: String) -> JSONObject {
        let part = token.split(separator: ".")[0]
        return (try? JSON(parsing: (try? Base64URL.decode(String(part))) ?? []))?.objectValue ?? JSONObject()
    }

    @Test func theCLIProfileSignsUserTokensWithTheCLIsBuiltInKey() throws {
        let emulator = try Emulator(options: .testing())
        let config = emulator.project.configuration
        #expect(config.jwt.keys.map(\.key.kid) == [JWTSettings.cliDefaultKeyID])
        #expect(config.jwt.acceptedMethods == ["HS256", "RS256", "ES256"])
        // The anon and service_role keys stay the demo keys supabase start prints.
        #expect(config.apiKeys == APIKeys.standard(secret: JWTSettings.defaultSecret))
        let token = try #require(emulator.api.signUp("cli-key@example.com")["access_token"]?.stringValue)
        #expect(header(of: token) == ["alg": "ES256", "kid": .string(JWTSettings.cliDefaultKeyID), "typ": "JWT"])
        _ = try JWT.verify(token, keys: config.jwt.verificationKeys, now: Int64(claims(of: token)["iat"]?.doubleValue ?? 0))
        let jwks = emulator.api.call("GET", "/.well-known/jwks.json").json
        #expect(jwks["keys"]?.arrayValue?.compactMap { $0["kid"]?.stringValue } == [JWTSettings.cliDefaultKeyID])
        #expect(jwks["keys"]?.arrayValue?.first?["d"] == nil)
        // The kid-less HS256 service_role key still opens the admin API.
        #expect(emulator.api.call("GET", "/admin/users", bearer: config.apiKeys.serviceRole).status == 200)
    }

    @Test func aBareGoTrueContainerSignsWithItsSecret() throws {
        var options = EmulatorOptions(defaults: .gotrue)
        options.port = 0
        options.databasePath = EmulatorOptions.inMemory
        let emulator = try Emulator(options: options)
        #expect(emulator.project.configuration.jwt.keys.isEmpty)
        #expect(emulator.api.call("GET", "/.well-known/jwks.json").json == ["keys": []])

        // An empty GOTRUE_JWT_KEYS is a source too: no built-in key under cli either.
        var empty = EmulatorOptions.testing()
        try EnvironmentConfiguration.apply(["GOTRUE_JWT_KEYS": "[]"], to: &empty)
        let plain = try Emulator(options: empty)
        #expect(plain.project.configuration.jwt.keys.isEmpty)
        let token = try #require(plain.api.signUp("plain@example.com")["access_token"]?.stringValue)
        #expect(header(of: token) == ["alg": "HS256", "typ": "JWT"])
    }

    @Test func switchingProfilesMovesOnlyTheBuiltInKey() throws {
        var config = Configuration()
        config.applyCLISigningKey()
        #expect(config.jwt.keys.count == 1)
        config.adoptDefaults(.gotrue)
        #expect(config.jwt.keys.isEmpty && config.jwt.validMethods == nil)
        config.adoptDefaults(.cli)
        #expect(config.jwt.keys.map(\.key.kid) == [JWTSettings.cliDefaultKeyID])
        // A key a source set is kept whichever profile applies.
        config.jwt.keys = try signingKeys("rsa.json")
        config.settingSources["jwt_keys"] = .env
        config.adoptDefaults(.gotrue)
        #expect(config.jwt.keys.count == 1 && config.jwt.signingKey.algorithm == .rs256)
    }

    @Test func aNullKeyListGoesBackToTheBuiltInKey() throws {
        let emulator = try Emulator(options: .testing())
        let admin = emulator.project.configuration.apiKeys.serviceRole
        let rsa = try #require(try JSON(parsing: Array(try signingKeysFixture("rsa.json").utf8)).arrayValue?.first?.objectValue)
        #expect(emulator.api.call("PATCH", "/emulator/v1/config", ["jwt_keys": [.object(rsa)]], bearer: admin).status == 200)
        #expect(emulator.project.configuration.jwt.signingKey.algorithm == .rs256)
        let reset = emulator.api.call("PATCH", "/emulator/v1/config", ["jwt_keys": .null], bearer: admin)
        #expect(reset.status == 200, "\(reset.text)")
        #expect(emulator.project.configuration.jwt.keys.map(\.key.kid) == [JWTSettings.cliDefaultKeyID])
        #expect(reset.json["jwt_keys"]?.arrayValue?.first?["kid"]?.stringValue == JWTSettings.cliDefaultKeyID)
    }

    @Test func beyondLoopbackTheBuiltInKeyIsReplaced() {
        var config = Configuration()
        config.applyCLISigningKey()
        let replaced = Exposure.replacePublicSecrets(&config)
        #expect(replaced.contains("signing key"))
        #expect(config.jwt.keys.count == 1)
        #expect(config.jwt.keys[0].key.kid != JWTSettings.cliDefaultKeyID)
        #expect(config.jwt.keys[0].canSign && config.jwt.signingKey.algorithm == .es256)
        // Keys the project chose are its own: nothing to replace.
        var chosen = Configuration()
        chosen.jwt.keys = [JWK(generating: .es256, kid: "mine", random: SystemRandom())]
        #expect(!Exposure.replacePublicSecrets(&chosen).contains("signing key"))
    }
}

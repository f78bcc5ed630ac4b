import AuthCrypto
@testable import AuthEmulator
import AuthJSON
@testable import EmulatorConfiguration
import EmulatorTools
import GoTrue
import Testing
@testable import auth_emulator

// The exposure policy (`Exposure`): beyond loopback the public demo secrets are replaced, unless
// asked to keep them; on loopback nothing changes.
@Suite struct ExposureTests {
    private func options(host: String, _ change: (inout EmulatorOptions) -> Void = { _ in }) -> EmulatorOptions {
        var options = EmulatorOptions.testing()
        options.host = host
        change(&options)
        return options
    }

    @Test func loopbackKeepsTheDemoKeys() throws {
        for host in ["127.0.0.1", "localhost", "::1"] {
            let emulator = try Emulator(options: options(host: host))
            #expect(emulator.replacedSecrets.isEmpty)
            #expect(emulator.project.configuration.jwt.secret == JWTSettings.defaultSecret)
            #expect(emulator.project.configuration.apiKeys == APIKeys.standard(secret: JWTSettings.defaultSecret))
            #expect(emulator.project.dashboard.requiresKey == false)
        }
    }

    @Test func beyondLoopbackTheDemoSecretsAreReplaced() throws {
        let demo = APIKeys.standard(secret: JWTSettings.defaultSecret)
        for host in ["0.0.0.0", "::", "192.168.1.20"] {
            let emulator = try Emulator(options: options(host: host))
            let config = emulator.project.configuration
            #expect(emulator.replacedSecrets == ["JWT secret", "anon key", "service_role key", "sb_secret_ key", "sb_publishable_ key", "signing key"])
            #expect(config.jwt.signingJWK?.key.kid != JWTSettings.cliDefaultKeyID)
            #expect(config.jwt.secret != JWTSettings.defaultSecret)
            #expect(config.jwt.secret.utf8.count >= 32)
            // The keys are the ones the new secret signs, so clients configured with them work.
            #expect(config.apiKeys.anon == APIKeys.standard(secret: config.jwt.secret).anon)
            #expect(config.apiKeys.serviceRole == APIKeys.standard(secret: config.jwt.secret).serviceRole)
            for (key, old) in [(config.apiKeys.anon, demo.anon), (config.apiKeys.serviceRole, demo.serviceRole),
                               (config.apiKeys.secret, demo.secret), (config.apiKeys.publishable, demo.publishable)] {
                #expect(key != old)
            }
            #expect(config.apiKeys.secret?.hasPrefix("sb_secret_") == true)
            #expect(config.apiKeys.publishable?.hasPrefix("sb_publishable_") == true)
            #expect(emulator.project.dashboard.requiresKey)
        }
        // Two starts never share secrets.
        let a = try Emulator(options: options(host: "0.0.0.0")).project.configuration
        let b = try Emulator(options: options(host: "0.0.0.0")).project.configuration
        #expect(a.jwt.secret != b.jwt.secret)
        #expect(a.apiKeys.secret != b.apiKeys.secret)
    }

    // However a project is made (config_toml or a --project file), beyond loopback it
    // does not keep the public demo secret: the README's service_role key opens nothing.
    /// A labelled test wallet's key follows from its label on loopback (stable addresses for
    /// tests); beyond loopback it is derived under a random secret of each start, so knowing the
    /// label gives no key, unless `--allow-demo-keys`.
    @Test func beyondLoopbackWalletLabelsDoNotGiveTheKey() throws {
        func address(_ emulator: Emulator, _ label: String = "alice") -> String? {
            let made = ScenarioWiringTests().call(emulator, "POST", "/emulator/v1/web3/wallets",
                                                  body: #"{"chain": "solana", "label": "\#(label)"}"#, service: true)
            return (try? JSON(parsing: made.body))?["address"]?.stringValue
        }
        let onLoopback = try #require(address(try Emulator(options: options(host: "127.0.0.1"))))
        #expect(address(try Emulator(options: options(host: "127.0.0.1"))) == onLoopback)
        #expect(address(try Emulator(options: options(host: "0.0.0.0") { $0.allowDemoKeys = true })) == onLoopback)
        let exposed = try Emulator(options: options(host: "0.0.0.0"))
        let first = try #require(address(exposed))
        #expect(first != onLoopback)
        // Stable within the start (a test still finds its wallet again by label)...
        #expect(address(exposed) == first)
        // ...but not across starts.
        #expect(address(try Emulator(options: options(host: "0.0.0.0"))) != first)
    }

    @Test func everyProjectFollowsThePolicy() throws {
        let demoTOML = "[auth]\njwt_secret = \"\(JWTSettings.defaultSecret)\"\n"
        let demo = APIKeys.standard(secret: JWTSettings.defaultSecret)
        let emulator = try Emulator.start(options(host: "0.0.0.0"))
        defer { emulator.stop() }
        // (A --project file is read as the same config_toml; settings cannot name the secret.)
        for spec in [ProjectSpec(ref: "toml", configTOML: demoTOML)] {
            let config = try emulator.projects.create(spec).hosted().project.configuration
            #expect(config.jwt.secret != JWTSettings.defaultSecret, "\(spec.ref)")
            #expect(config.apiKeys.serviceRole != demo.serviceRole && config.apiKeys.anon != demo.anon, "\(spec.ref)")
            #expect(config.apiKeys.serviceRole == APIKeys.standard(secret: config.jwt.secret).serviceRole)
        }
        // On loopback, or with the opt-out, a project keeps the secret its file chose (here the
        // demo one, while the server has a secret of its own).
        let own = { (o: inout EmulatorOptions) in
            o.configuration.jwt.secret = "a-secret-of-our-own-with-at-least-32-characters"
            o.configuration.deriveAPIKeys()
        }
        for (host, allow, kept) in [("127.0.0.1", false, true), ("0.0.0.0", true, true), ("0.0.0.0", false, false)] {
            let server = try Emulator.start(options(host: host) { own(&$0); $0.allowDemoKeys = allow })
            defer { server.stop() }
            let config = try server.projects.create(ProjectSpec(ref: "toml", configTOML: demoTOML)).hosted().project.configuration
            #expect((config.jwt.secret == JWTSettings.defaultSecret) == kept, "\(host) \(allow)")
        }
    }

    @Test func chosenSecretsAreKeptAndTheOptOutKeepsTheDemoOnes() throws {
        let chosen = try Emulator(options: options(host: "0.0.0.0") {
            $0.configuration.jwt.secret = "a-secret-of-our-own-with-at-least-32-characters"
            $0.configuration.deriveAPIKeys()
            $0.configuration.apiKeys.secret = "sb_secret_our-own"
        })
        // The CLI's built-in signing key was not chosen either.
        #expect(chosen.replacedSecrets == ["sb_publishable_ key", "signing key"])
        #expect(chosen.project.configuration.jwt.secret == "a-secret-of-our-own-with-at-least-32-characters")
        #expect(chosen.project.configuration.apiKeys.secret == "sb_secret_our-own")

        let demo = try Emulator(options: options(host: "0.0.0.0") { $0.allowDemoKeys = true })
        #expect(demo.replacedSecrets.isEmpty)
        #expect(demo.project.configuration.apiKeys == APIKeys.standard(secret: JWTSettings.defaultSecret))
        // The dashboard and the consent page still ask for the key.
        #expect(demo.project.dashboard.requiresKey)
    }

    @Test func theFlagParses() throws {
        let flags = try CLI.parseOptions(["--host", "0.0.0.0", "--allow-demo-keys"], values: CLI.serveValueOptions,
                                         switches: CLI.serveSwitches)
        #expect(flags.switches["allow-demo-keys"] == true)
    }
}

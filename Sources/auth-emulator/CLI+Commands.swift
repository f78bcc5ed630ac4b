import AuthCrypto
import AuthEmulator
import AuthJSON
import AuthJWT
import AuthPlatform
import AuthScenarios
import EmulatorConfiguration
import EmulatorTools
import GoTrue
import ScenarioControl
import Synchronization

extension CLI {
    /// A scenario file, parsed and validated; problems name the file, rule and field.
    static func loadScenario(_ path: String) throws(ScenarioError) -> Scenario {
        let bytes: [UInt8]
        do {
            bytes = try Platform.readFile(path, limit: 1 << 20)
        } catch {
            throw ScenarioError(issues: [ScenarioIssue(file: path, rule: nil, field: "(file)", message: error.description)])
        }
        return try Scenario(json: bytes, source: path)
    }

    static func scenario(_ arguments: [String], context: Context) throws -> Int32 {
        guard let action = arguments.first else { throw UsageError(message: "missing subcommand (validate)") }
        guard action == "validate" else { throw UsageError(message: "unknown scenario subcommand '\(action)' (expected validate)") }
        let files = Array(arguments.dropFirst())
        guard !files.isEmpty else { throw UsageError(message: "validate needs at least one file") }
        if let option = files.first(where: { $0.hasPrefix("-") }) { throw UsageError(message: "unknown option '\(option)'") }
        var failed = false
        for file in files {
            do {
                let scenario = try loadScenario(file)
                context.print("\(file): ok (\(scenario.name), \(scenario.rules.count) rule\(scenario.rules.count == 1 ? "" : "s"))")
            } catch {
                failed = true
                context.console.error(error.description + "\n")
            }
        }
        return failed ? exitFailure : 0
    }

    static func token(_ arguments: [String], context: Context) throws -> Int32 {
        let flags = try parseOptions(arguments, values: tokenValueOptions)
        guard let role = try nonEmpty(flags, "role") else {
            throw UsageError(message: "--role is required (anon, service_role or authenticated)")
        }
        let configuration = try options(from: flags, context: context).configuration
        let expiresIn = try number(flags, "expires-in", in: 1...315_360_000).map(Int64.init)
        let email = try nonEmpty(flags, "email")
        let now = SystemClock().now()
        if let userID = try nonEmpty(flags, "user-id") {
            guard userID.utf8.count == 36, userID.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12],
                  userID.allSatisfy({ $0 == "-" || $0.isHexDigit }) else {
                throw UsageError(message: "--user-id must be a UUID, not '\(userID)'")
            }
            context.print(TestTokens.userToken(userID: userID.lowercased(), email: email, role: role,
                                               configuration: configuration, now: now, expiresIn: expiresIn))
            return 0
        }
        if role == "authenticated" || email != nil {
            throw UsageError(message: "a user token needs --user-id (the sub claim)")
        }
        context.print(TestTokens.keyToken(role: role, configuration: configuration, now: now, expiresIn: expiresIn))
        return 0
    }

    /// `rs256`, `es256` or `eddsa` (any case) as an algorithm for a new key.
    static func signingAlgorithm(_ text: String, option: String) throws -> JWTAlgorithm {
        switch text.lowercased() {
        case "rs256": return .rs256
        case "es256": return .es256
        case "eddsa", "ed25519": return .edDSA
        default: throw UsageError(message: "--\(option) must be rs256, es256 or eddsa, not '\(text)'")
        }
    }

    static func keys(_ arguments: [String], context: Context) throws -> Int32 {
        let flags = try parseOptions(arguments, values: keysValueOptions)
        if let text = try nonEmpty(flags, "generate") {
            let algorithm = try signingAlgorithm(text, option: "generate")
            let jwk = JWK(generating: algorithm, kid: Environment().uuid(), random: SystemRandom())
            // The CLI writes signing_keys.json with Go's encoder indented by two spaces.
            context.print(indentedJSON(.array([.object(jwk.privateJSON)])))
            return 0
        }
        let keys = try options(from: flags, context: context).configuration.apiKeys
        context.print("ANON_KEY=\(keys.anon)")
        context.print("SERVICE_ROLE_KEY=\(keys.serviceRole)")
        if let publishable = keys.publishable { context.print("PUBLISHABLE_KEY=\(publishable)") }
        if let secret = keys.secret { context.print("SECRET_KEY=\(secret)") }
        return 0
    }
}

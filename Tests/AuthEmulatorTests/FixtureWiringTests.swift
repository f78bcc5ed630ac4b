@testable import AuthEmulator
import AuthJSON
import AuthJWT
import AuthStore
@testable import EmulatorConfiguration
import EmulatorTools
import Foundation
import GoTrue
import Testing
@testable import auth_emulator

@Suite struct FixtureWiringTests {
    static let fixturesDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures").path
    static var seedFile: String { fixturesDirectory + "/seed.json" }

    func run(_ arguments: [String]) -> (status: Int32, output: String, error: String) {
        let captured = CapturedConsole()
        let status = CLI.run(arguments, environment: [:], console: captured.console)
        return (status, captured.standardOutput, captured.standardError)
    }

    func payload(_ token: String) -> [String: Any] {
        var segment = String(token.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        while segment.count % 4 != 0 { segment += "=" }
        let data = Data(base64Encoded: segment) ?? Data()
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }

    @Test func theEmulatorRunsOnAVirtualClock() throws {
        let emulator = try Emulator(options: .testing())
        defer { emulator.stop() }
        #expect(emulator.project.environment.clock is VirtualClock)
    }

    @Test func seedsTheExampleFixtureFileAndExportsOnStop() throws {
        let exportPath = NSTemporaryDirectory() + "fixture-export-\(UUID().uuidString).json"
        defer { removeFile(exportPath) }
        let emulator = try Emulator.start(.testing())
        try emulator.seed(file: Self.seedFile)
        let users = try emulator.project.database.read { conn in try conn.dumpTable("users") }
        #expect(users.rows.count == 4)
        #expect(emulator.project.fixtures.lastApplied?.users.first?.userID == "11111111-2222-4333-8444-555555555555")
        emulator.onStop { stopped in try? stopped.exportSnapshot(to: exportPath) }
        emulator.stop()
        let data = try Data(contentsOf: URL(fileURLWithPath: exportPath))
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(document["format"] as? String == "supabase-auth-emulator.snapshot")
        let tables = try #require(document["tables"] as? [String: Any])
        #expect((tables["users"] as? [Any])?.count == 4)
        #expect((tables["identities"] as? [Any])?.count == 5)
    }

    @Test func anInvalidFixtureFileNamesTheEntry() throws {
        let path = NSTemporaryDirectory() + "fixture-bad-\(UUID().uuidString).json"
        defer { removeFile(path) }
        try writeFile(path, #"{"users": [{"email": "a@example.com"}, {"email": "a@example.com", "phone": "x1"}]}"#)
        let emulator = try Emulator(options: .testing())
        defer { emulator.stop() }
        #expect {
            try emulator.seed(file: path)
        } throws: { error in
            String(describing: error).contains("users[1].phone") && String(describing: error).hasPrefix(path)
        }
        #expect(try emulator.project.database.read { conn in try conn.dumpTable("users") }.rows.isEmpty)
        #expect(throws: EmulatorError.self) { try emulator.seed(file: path + ".missing") }
    }

    @Test func serveRefusesAnInvalidSeedFile() throws {
        let path = NSTemporaryDirectory() + "fixture-bad-\(UUID().uuidString).json"
        defer { removeFile(path) }
        try writeFile(path, #"{"users": [{"email": "nope"}]}"#)
        let result = run(["serve", "--port", "0", "--db", ":memory:", "--seed", path])
        #expect(result.status == CLI.exitConfiguration)
        #expect(result.error.contains("users[0].email"))
        #expect(!result.output.contains("listening on"))
    }

    @Test func tokenCommandPrintsKeysAndUserTokens() throws {
        let keys = Configuration().apiKeys
        #expect(run(["token", "--role", "anon"]).output == keys.anon + "\n")
        #expect(run(["token", "--role", "service_role"]).output == keys.serviceRole + "\n")
        let expiring = run(["token", "--role", "anon", "--expires-in", "60"])
        let keyClaims = payload(expiring.output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(keyClaims["role"] as? String == "anon")
        #expect((keyClaims["exp"] as? Int ?? 0) - (keyClaims["iat"] as? Int ?? 0) == 60)

        let user = run(["token", "--role", "authenticated", "--user-id", "11111111-2222-4333-8444-555555555555",
                        "--email", "ada@example.com", "--jwt-secret", "another-secret-of-at-least-32-characters"])
        #expect(user.status == 0)
        let token = user.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let claims = payload(token)
        #expect(claims["sub"] as? String == "11111111-2222-4333-8444-555555555555")
        #expect(claims["email"] as? String == "ada@example.com")
        #expect(claims["role"] as? String == "authenticated")
        #expect(claims["session_id"] == nil)
        // User tokens are signed as the server signs them: with the CLI's built-in ES256 key.
        let verified = try JWT.verify(token, keys: JWTKeySet(keys: [JWTSettings.cliDefaultKey.key.publicOnly]),
                                      now: Int64(Date().timeIntervalSince1970))
        #expect(verified.claims["aud"]?.stringValue == "authenticated")
        #expect(run(["help", "token"]).output.contains("no session"))
    }

    @Test(arguments: [
        ["token"], ["token", "--role", "authenticated"], ["token", "--role", "anon", "--email", "a@example.com"],
        ["token", "--role", "authenticated", "--user-id", "nope"], ["token", "--role", "anon", "--expires-in", "0"],
        ["token", "--role", ""], ["serve", "--seed", ""], ["serve", "--export-on-exit", ""],
    ])
    func tokenAndFixtureUsageErrorsExit64(arguments: [String]) {
        #expect(run(arguments).status == CLI.exitUsage)
    }
}

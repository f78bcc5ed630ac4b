// Signing keys for tests, made once with Python's `cryptography` and kept as data in
// Tests/Fixtures/signing_keys (test-only keys: never use them for anything real).
import AuthJSON
import AuthJWT
import Foundation

/// The repository root, found from this file's path.
public let testRepositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<4 { url.deleteLastPathComponent() }
    return url.path
}()

/// The path of a file under Tests/Fixtures/signing_keys.
public func signingKeysFixturePath(_ name: String) -> String {
    testRepositoryRoot + "/Tests/Fixtures/signing_keys/" + name
}

/// The text of a fixture key array (`rsa.json`, `ec.json`, `ed25519.json`, `rsa-and-oct.json`).
public func signingKeysFixture(_ name: String) throws -> String {
    try String(contentsOfFile: signingKeysFixturePath(name), encoding: .utf8)
}

/// The keys of a fixture key array.
public func signingKeys(_ name: String) throws -> [JWK] {
    let text = try signingKeysFixture(name)
    guard let array = try JSON(parsing: Array(text.utf8)).arrayValue else { return [] }
    return try array.map { element in try JWK(element.objectValue ?? [:]) }
}

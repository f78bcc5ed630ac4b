/// The project's own signing keys made by `serve --signing-key <alg>` (one per algorithm; table
/// created by migration `0007_project_signing_keys`): configuration rather than project data, so
/// reset, export and import leave it alone (see `dataTables`).
enum ProjectSigningKeysSchema {
    static let table = "project_signing_keys"
}

extension Connection {
    /// The stored private JWK (JSON text) for `algorithm`, if one was made before.
    public func projectSigningKey(algorithm: String) throws(StoreError) -> String? {
        if let postgres { return try postgres.store { try $0.projectSigningKey(algorithm: algorithm) } }
        return try queryFirst("SELECT private_jwk FROM project_signing_keys WHERE algorithm = ?", .text(algorithm))?
            .string("private_jwk")
    }

    /// Stores `privateJWK` for `algorithm` unless one exists, and returns the key in force. Run
    /// inside `write`: its IMMEDIATE transaction serializes processes sharing the file, so when
    /// two of them generate a key at once the first to commit wins and the other adopts it.
    public func insertProjectSigningKeyIfNone(algorithm: String, privateJWK: String, at time: Int64) throws(StoreError) -> String {
        if let postgres {
            return try postgres.store {
                try $0.insertProjectSigningKeyIfNone(algorithm: algorithm, privateJWK: privateJWK, at: time)
            }
        }
        if let existing = try projectSigningKey(algorithm: algorithm) { return existing }
        try execute("INSERT INTO project_signing_keys (algorithm, private_jwk, created_at) VALUES (?, ?, ?)",
                    .text(algorithm), .text(privateJWK), .integer(time))
        return privateJWK
    }
}

/// The project's own signing keys made by `serve --signing-key <alg>` (one per algorithm): kept
/// in the database so a restart on the same file signs and verifies with the same key, and the
/// anon and service_role keys derived from it stay the same. Configuration rather than project
/// data: reset, export and import leave it alone (see `dataTables`).
enum ProjectSigningKeysSchema {
    static let sql = """
        CREATE TABLE project_signing_keys (
            algorithm TEXT PRIMARY KEY NOT NULL,
            private_jwk TEXT NOT NULL CHECK (json_valid(private_jwk)),
            created_at INTEGER NOT NULL
        ) STRICT;
        """

    static let table = "project_signing_keys"
}

extension Connection {
    /// The stored private JWK (JSON text) for `algorithm`, if one was made before.
    public func projectSigningKey(algorithm: String) throws(StoreError) -> String? {
        try queryFirst("SELECT private_jwk FROM project_signing_keys WHERE algorithm = ?", .text(algorithm))?
            .string("private_jwk")
    }

    /// Stores `privateJWK` for `algorithm` unless one exists, and returns the key in force. Run
    /// inside `write`: its IMMEDIATE transaction serializes processes sharing the file, so when
    /// two of them generate a key at once the first to commit wins and the other adopts it.
    public func insertProjectSigningKeyIfNone(algorithm: String, privateJWK: String, at time: Int64) throws(StoreError) -> String {
        if let existing = try projectSigningKey(algorithm: algorithm) { return existing }
        try execute("INSERT INTO project_signing_keys (algorithm, private_jwk, created_at) VALUES (?, ?, ?)",
                    .text(algorithm), .text(privateJWK), .integer(time))
        return privateJWK
    }
}

import AuthCrypto
import Testing
@testable import AuthStore

/// Shipped migrations never change (`Migrations`): each one's SQL text is pinned here by its
/// SHA-256. A failure means a shipped migration was edited; append a new migration instead.
/// A new migration gets its row when it ships.
@Suite struct MigrationFingerprintTests {
    static let shipped: [(id: String, sha256: String)] = [
        ("0001_auth_schema", "1560d5d7f0d53b1fa8d3d40cdbb07169ae06321fc95554af4e11ade9e222216f"),
        ("0002_outbox", "a22c641810160a057912bf64847df7639c31c6dc7343014de2352090d6bd7421"),
        ("0003_drop_unused_refresh_token_indexes", "b17b6f8cd81d453cb233d61f630013256464cdde4744a0cb2ab176a6dd291380"),
        ("0004_idp_signing_keys", "c60bf994e8bb130848bf30008ce4a75eaeb31c602484ea1695c3f1f64a63b6b8"),
        ("0005_audit_log_entries_without_id_index", "b2a3bbcafebc12591a37cbf51657a73c2ed1149179c58a1efe2270a3b79b62e7"),
        ("0006_flow_state_oauth_columns", "e52d947081448b532d7a05c0b70c6cf8cdccbfd82751c874487baabc62e6b4fe"),
        ("0007_project_signing_keys", "adb97d2c90aa8c5599231da1513e5ee688afb70f216ea3e8914f720575ba7062"),
        ("0008_oauth_server", "b42312586959f90574c323baa27abb9874afc0570c3e0f3c7843bd342e0f7ade"),
        ("0009_webauthn_credentials", "8b813d4392f9e04043225222f496343f1b5bd8bbee89ae0deda58672636779ab"),
        ("0010_session_refresh_token_columns", "0ded052e46d80d52a3e6051c8a703e8caded2d106dadffa4b984458d9cc3770e"),
        ("0011_identities_user_id_created_at_idx", "3af88c3249a73a44ada8af681e0360ac0b53eebaf5c1f90af828cba9a6561353"),
        ("0012_refresh_tokens_rowid", "4ad0cc8fe32bd1df0f96b571af11496ba557ae26f1ef76e7e02c7c0aa162c02f"),
        ("0013_custom_oauth_providers", "9864beef98f6b501415d47710c47fc880381e829ba7839c6745c4142a9dee94b"),
        ("0014_users_email_unique_across_audiences", "757e6edbd4fa2d24d9f33984bbc3bb059f8df293b35237458d9810d06121bcc8"),
    ]

    @Test func shippedMigrationsAreUnchanged() {
        let all = Migrations.all
        #expect(all.count >= Self.shipped.count)
        for (index, pinned) in Self.shipped.enumerated() where index < all.count {
            #expect(all[index].id == pinned.id)
            let digest = SHA256.hash(data: Array(all[index].sql.utf8)).map { byte in
                let hex = String(byte, radix: 16)
                return byte < 16 ? "0" + hex : hex
            }.joined()
            #expect(digest == pinned.sha256, "\(pinned.id)")
        }
    }

    @Test func namesAreUniqueAndNumbered() {
        var seen = Set<String>()
        var numbers = Set<Substring>()
        for migration in Migrations.all {
            for name in migration.names { #expect(seen.insert(name).inserted, "\(name)") }
            let number = migration.id.prefix { $0 != "_" }
            #expect(number.count == 4 && numbers.insert(number).inserted, "\(migration.id)")
        }
    }

    /// A database written before the renumbering (every migration recorded under its old name)
    /// opens and upgrades without running anything again; a database written now still opens in
    /// a build that knows only the old names.
    @Test func renumberedMigrationsKeepOldAndNewDatabasesOpen() throws {
        let old = Migrations.all.map { Migration(id: $0.formerIDs.first ?? $0.id, sql: $0.sql) }
        let dir = try TemporaryDirectory()
        let before = dir.path("before.db")
        let written = try Database(path: before, migrations: old)
        try written.write { try $0.insertUser(id: "u1") }
        written.close()
        let upgraded = try Database(path: before)
        #expect(Set(try upgraded.appliedMigrations) == Set(Migrations.all.flatMap(\.names)))
        #expect(try upgraded.read { try $0.count("users") } == 1)
        upgraded.close()

        let after = dir.path("after.db")
        try Database(path: after).close()
        let olderBuild = try Database(path: after, migrations: old)
        defer { olderBuild.close() }
        #expect(Set(try olderBuild.appliedMigrations) == Set(Migrations.all.flatMap(\.names)))
    }
}

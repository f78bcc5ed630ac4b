import AuthCrypto
import AuthJSON
import AuthStore
import Dispatch
import GoFormats
import GoTrue
import Synchronization

/// A fixture document, `{"users": [...]}`, whose entries take the fields of `POST /admin/users`
/// (`id`, `aud`, `email`, `phone`, `password` or `password_hash`, `email_confirm`,
/// `phone_confirm`, `user_metadata`, `app_metadata`, `ban_duration`, `role`) plus `identities`:
/// `[{"provider": "github", "id": "<provider subject>", "identity_data": {...}}]`, and `factors`:
/// `[{"factor_type": "totp", "secret": "<base32>", "friendly_name": "app"}, {"factor_type": "phone",
/// "phone": "+15550001111"}]` (`status` `verified` unless `"unverified"`; a TOTP factor without a
/// secret gets a random one, readable through `GET /emulator/v1/mfa/totp`). In Postgres mode a
/// document may also have `"sql"`, the app's own SQL run after the users (`sql`).
///
/// Seeding is an upsert: an entry updates the user with its `id`, else the one with its email
/// (or phone) in the audience, else creates one, and the fixture then defines that user's
/// state (metadata replaced, not merged; undeclared identities removed). A password that the
/// stored hash already matches keeps that hash, so seeding the same document twice leaves the
/// same rows. Every entry is checked before anything is written, and everything is written in
/// one transaction: a bad entry changes nothing.
public struct Fixture: Sendable {
    public struct User: Sendable {
        /// Position in the document, for error messages.
        var index: Int
        var id: String?
        var aud: String?
        var email: String?
        var phone: String?
        /// Cleared once hashed (`prepare`), so a stored fixture holds no plain passwords.
        var password: String?
        var passwordHash: String?
        var emailConfirm = false
        var phoneConfirm = false
        var userMetadata = JSONObject()
        var appMetadata: JSONObject?
        /// `ban_duration` in microseconds; 0 is `none`.
        var ban: Int64?
        var role: String?
        var identities: [Identity] = []
        /// nil: the entry does not mention factors, and the stored ones stay.
        var factors: [Factor]?

        public var userID: String? { id }
    }

    public struct Factor: Sendable {
        var id: String?
        var type: String
        var friendlyName: String?
        /// Base32, for TOTP factors.
        var secret: String?
        /// E.164 digits, for phone factors.
        var phone: String?
        var status: String
    }

    public struct Identity: Sendable {
        var provider: String
        var providerID: String
        var data: JSONObject
        /// The row id (`identity_id`), kept once assigned so a re-seed reuses it.
        var id: String?
    }

    public var users: [User]
    /// The fixture's `sql` step (Postgres mode only): SQL of the app's own, run after the users
    /// in the same transaction, as the database login (`Connection.runAppScript`), so the app's
    /// rows that point at the users are seeded, and come back on `reset?keep_seed=true`, with
    /// them. A string, or an array of strings joined by newlines (JSON has no multi-line string).
    public var sql: String?

    static let userFields: Set<String> = [
        "id", "aud", "email", "phone", "password", "password_hash", "email_confirm", "phone_confirm",
        "user_metadata", "app_metadata", "ban_duration", "role", "identities", "factors",
    ]
    static let factorFields: Set<String> = ["id", "factor_type", "friendly_name", "secret", "phone", "status"]
    static let identityFields: Set<String> = ["provider", "id", "provider_id", "identity_data", "identity_id"]

    /// Parses and checks a document. Errors are 400 `validation_failed` naming the entry and
    /// field, e.g. `invalid fixture: users[2].email: Unable to validate email address: invalid format`.
    public init(json value: JSON) throws(AuthError) {
        guard let root = value.objectValue else { throw Fixture.invalid("the document must be an object {\"users\": [...]}") }
        for (key, _) in root where key != "users" && key != "sql" {
            throw Fixture.invalid("unknown top-level field \"\(key)\" (expected \"users\" and, in Postgres mode, \"sql\")")
        }
        sql = try Fixture.parseSQL(root["sql"])
        guard let list = root["users"] else { throw Fixture.invalid("missing \"users\" (an array of users)") }
        guard let entries = list.arrayValue else { throw Fixture.invalid("\"users\" must be an array") }
        var users: [User] = []
        users.reserveCapacity(entries.count)
        var seenIDs: [String: Int] = [:]
        // Most entries have an email: sized once, not regrown (and rehashed) ~20 times for a
        // million users.
        var seenEmails: [String: Int] = Dictionary(minimumCapacity: entries.count)
        var seenPhones: [String: Int] = [:]
        var seenIdentities: [String: Int] = [:]
        for (index, entry) in entries.enumerated() {
            let user = try Fixture.parseUser(entry, index: index)
            func duplicate(_ key: String?, _ seen: inout [String: Int], field: String) throws(AuthError) {
                guard let key else { return }
                if let first = seen[key] {
                    throw Fixture.invalid("users[\(index)].\(field): the same \(field) as users[\(first)]")
                }
                seen[key] = index
            }
            try duplicate(user.id, &seenIDs, field: "id")
            try duplicate(user.email.map { (user.aud ?? "") + "\u{0}" + $0 }, &seenEmails, field: "email")
            try duplicate(user.phone.map { (user.aud ?? "") + "\u{0}" + $0 }, &seenPhones, field: "phone")
            for (position, identity) in user.identities.enumerated() where identity.provider != "email" && identity.provider != "phone" {
                let key = identity.provider + "\u{0}" + identity.providerID
                if let first = seenIdentities[key] {
                    throw Fixture.invalid("users[\(index)].identities[\(position)]: \(identity.provider) id \"\(identity.providerID)\" is also given by users[\(first)]")
                }
                seenIdentities[key] = index
            }
            users.append(user)
        }
        self.users = users
    }

    /// Parses a document from its JSON text.
    public init(bytes: [UInt8]) throws(AuthError) {
        let value: JSON
        do {
            value = try JSON(parsing: bytes)
        } catch {
            throw Fixture.invalid("not valid JSON (\(RequestBody.goSyntaxError(bytes, error)))")
        }
        try self.init(json: value)
    }

    static func invalid(_ message: String) -> AuthError {
        AuthError(400, .validationFailed, "invalid fixture: " + message)
    }

    /// `"sql"`: a string or an array of strings (lines); null or absent is none.
    private static func parseSQL(_ value: JSON?) throws(AuthError) -> String? {
        guard let value, !value.isNull else { return nil }
        if let text = value.stringValue { return text.isEmpty ? nil : text }
        guard let lines = value.arrayValue else { throw invalid("sql: must be a string or an array of strings") }
        var texts: [String] = []
        for (index, line) in lines.enumerated() {
            guard let text = line.stringValue else { throw invalid("sql[\(index)]: must be a string") }
            texts.append(text)
        }
        let script = texts.joined(separator: "\n")
        return script.isEmpty ? nil : script
    }

    /// What a fixture with a `sql` step answers where there is no app database to run it in.
    static let sqlNeedsPostgres = invalid(
        "sql: runs only in Postgres mode (serve --db postgres://...), where the app's tables live; SQLite mode has only the emulator's own")

    /// The object a fixture entry at `at` must be, with none but the `allowed` fields.
    private static func entry(_ value: JSON, at: String, allowed: Set<String>) throws(AuthError) -> JSONObject {
        guard let o = value.objectValue else { throw invalid("\(at): must be an object") }
        for (key, _) in o where !allowed.contains(key) {
            throw invalid("\(at).\(key): unknown field (expected one of: \(allowed.sorted().joined(separator: ", ")))")
        }
        return o
    }

    /// An entry's optional string field: absent or null is nil, any other non-string an error.
    private static func optionalString(_ o: JSONObject, _ key: String, at: String) throws(AuthError) -> String? {
        guard let v = o[key], !v.isNull else { return nil }
        guard let s = v.stringValue else { throw invalid("\(at).\(key): must be a string") }
        return s
    }

    private static func parseUser(_ value: JSON, index: Int) throws(AuthError) -> User {
        let at = "users[\(index)]"
        let o = try entry(value, at: at, allowed: userFields)
        func string(_ key: String) throws(AuthError) -> String? { try optionalString(o, key, at: at) }
        func bool(_ key: String) throws(AuthError) -> Bool {
            guard let v = o[key], !v.isNull else { return false }
            guard let b = v.boolValue else { throw invalid("\(at).\(key): must be true or false") }
            return b
        }
        func object(_ key: String) throws(AuthError) -> JSONObject? {
            guard let v = o[key], !v.isNull else { return nil }
            guard let m = v.objectValue else { throw invalid("\(at).\(key): must be an object") }
            return m
        }
        func checked(_ key: String, _ body: (String) throws(AuthError) -> String) throws(AuthError) -> String? {
            guard let text = try string(key), !text.isEmpty else { return nil }
            do {
                return try body(text)
            } catch {
                throw invalid("\(at).\(key): \(error.message)")
            }
        }

        var user = User(index: index)
        user.id = try checked("id") { text throws(AuthError) in
            guard let id = AdminEndpoints.canonicalUUID(text) else { throw AuthError(400, .validationFailed, "must be a UUID") }
            guard id != Validation.nilUUID else { throw AuthError(400, .validationFailed, "cannot be the nil UUID") }
            return id
        }
        user.aud = try string("aud").flatMap { $0.isEmpty ? nil : $0 }
        user.email = try checked("email") { text throws(AuthError) in try Validation.email(text) }
        user.phone = try checked("phone") { text throws(AuthError) in try Validation.phone(text) }
        user.password = try string("password").flatMap { $0.isEmpty ? nil : $0 }
        if let password = user.password, password.utf8.count > Passwords.maximumLength {
            throw invalid("\(at).password: longer than \(Passwords.maximumLength) bytes (bcrypt's limit, kept by GoTrue)")
        }
        user.passwordHash = try checked("password_hash") { text throws(AuthError) in
            do throws(AuthError) {
                try AdminEndpoints.checkImportedHash(text)
            } catch {
                // The admin API's 500 for a hash of no known format is a plain input error here.
                if error.status == 500 {
                    let reason = (ImportedPasswordHashes.problem(text) ?? AdminEndpoints.goBcryptCostError(text)).map { ": " + $0 } ?? ""
                    throw AuthError(400, .validationFailed, "not a supported hash (bcrypt $2a$/$2b$/$2y$, $argon2i$, $argon2id$, "
                                        + "$fbscrypt$ or $pbkdf2-sha256$)" + reason)
                }
                throw error
            }
            return text
        }
        if user.password != nil && user.passwordHash != nil {
            throw invalid("\(at).password_hash: give either password or password_hash, not both")
        }
        user.emailConfirm = try bool("email_confirm")
        user.phoneConfirm = try bool("phone_confirm")
        user.userMetadata = try object("user_metadata") ?? JSONObject()
        user.appMetadata = try object("app_metadata")
        if let text = try string("ban_duration"), !text.isEmpty {
            if text == "none" {
                user.ban = 0
            } else {
                switch GoTime.parseDuration(text) {
                case .success(let nanoseconds) where nanoseconds >= 0: user.ban = nanoseconds / 1_000
                case .success: throw invalid("\(at).ban_duration: must not be negative")
                case .failure(let error): throw invalid("\(at).ban_duration: \(error.message)")
                }
            }
        }
        user.role = try string("role").map { GoStrings.trimSpace($0) }.flatMap { $0.isEmpty ? nil : $0 }
        if let list = o["identities"], !list.isNull {
            guard let items = list.arrayValue else { throw invalid("\(at).identities: must be an array") }
            for (position, item) in items.enumerated() {
                user.identities.append(try parseIdentity(item, at: "\(at).identities[\(position)]"))
            }
        }
        if let list = o["factors"], !list.isNull {
            guard let items = list.arrayValue else { throw invalid("\(at).factors: must be an array") }
            var factors: [Factor] = []
            for (position, item) in items.enumerated() {
                let factor = try parseFactor(item, at: "\(at).factors[\(position)]")
                if let name = factor.friendlyName, factors.contains(where: { $0.friendlyName == name }) {
                    throw invalid("\(at).factors[\(position)].friendly_name: \(GoStrconv.quote(name)) is used twice")
                }
                if let phone = factor.phone, factors.contains(where: { $0.phone == phone }) {
                    throw invalid("\(at).factors[\(position)].phone: \(phone) is used twice")
                }
                factors.append(factor)
            }
            user.factors = factors
        }
        if user.email == nil && user.phone == nil {
            throw invalid("\(at): a user needs an email or a phone (as POST /admin/users)")
        }
        for identity in user.identities {
            if identity.provider == "email" && user.email == nil {
                throw invalid("\(at).identities: an email identity needs the user's email")
            }
            if identity.provider == "phone" && user.phone == nil {
                throw invalid("\(at).identities: a phone identity needs the user's phone")
            }
        }
        return user
    }

    private static func parseFactor(_ value: JSON, at: String) throws(AuthError) -> Factor {
        let o = try entry(value, at: at, allowed: factorFields)
        func text(_ key: String) throws(AuthError) -> String? { try optionalString(o, key, at: at) }
        var factor = Factor(type: try text("factor_type") ?? "", status: try text("status") ?? "verified")
        guard factor.type == "totp" || factor.type == "phone" else {
            throw invalid("\(at).factor_type: must be \"totp\" or \"phone\"")
        }
        guard factor.status == "verified" || factor.status == "unverified" else {
            throw invalid("\(at).status: must be \"verified\" or \"unverified\"")
        }
        if let id = try text("id") {
            guard let canonical = AdminEndpoints.canonicalUUID(id) else { throw invalid("\(at).id: must be a UUID") }
            factor.id = canonical
        }
        factor.friendlyName = try text("friendly_name").flatMap { $0.isEmpty ? nil : $0 }
        if factor.type == "totp" {
            if try text("phone") != nil { throw invalid("\(at).phone: only for phone factors") }
            if let secret = try text("secret") {
                guard let bytes = try? Base32.decode(secret), bytes.count >= 10 else {
                    throw invalid("\(at).secret: must be base32 (RFC 4648) of at least 10 bytes, e.g. \"JBSWY3DPEHPK3PXP\"")
                }
                factor.secret = secret.uppercased().filter { $0 != "=" }
            }
        } else {
            if try text("secret") != nil { throw invalid("\(at).secret: only for TOTP factors") }
            guard let phone = try text("phone") else { throw invalid("\(at).phone: required for a phone factor") }
            do {
                factor.phone = try Validation.phone(phone)
            } catch {
                throw invalid("\(at).phone: \(error.message)")
            }
        }
        return factor
    }

    private static func parseIdentity(_ value: JSON, at: String) throws(AuthError) -> Identity {
        let o = try entry(value, at: at, allowed: identityFields)
        guard let provider = o["provider"]?.stringValue, !provider.isEmpty else {
            throw invalid("\(at).provider: required (e.g. \"github\", \"google\")")
        }
        var providerID = ""
        for key in ["provider_id", "id"] {
            guard let v = o[key], !v.isNull else { continue }
            // Provider subjects are strings in GoTrue; numeric ids (GitHub's) are accepted as such.
            if let s = v.stringValue {
                providerID = s
            } else if let n = v.int64Value {
                providerID = String(n)
            } else {
                throw invalid("\(at).\(key): must be a string")
            }
            break
        }
        if providerID.isEmpty && provider != "email" && provider != "phone" {
            throw invalid("\(at).id: required (the provider's user id, \"provider_id\" is accepted too)")
        }
        var data = JSONObject()
        if let v = o["identity_data"], !v.isNull {
            guard let m = v.objectValue else { throw invalid("\(at).identity_data: must be an object") }
            data = m
        }
        var id: String?
        if let v = o["identity_id"], !v.isNull {
            guard let text = v.stringValue, let canonical = AdminEndpoints.canonicalUUID(text) else {
                throw invalid("\(at).identity_id: must be a UUID")
            }
            id = canonical
        }
        return Identity(provider: provider, providerID: providerID, data: data, id: id)
    }
}

/// The last fixture applied to a project, so `POST /emulator/v1/reset?keep_seed=true` can
/// return to it. Shared by every copy of the project.
public final class FixtureMemory: Sendable {
    private let last = Mutex<Fixture?>(nil)

    public init() {}

    public var lastApplied: Fixture? { last.withLock { $0 } }

    func remember(_ fixture: Fixture?) { last.withLock { $0 = fixture } }
}

/// Applies fixtures to a project's database.
public struct Seeder: Sendable {
    public let project: Project
    let config: Configuration

    /// - Parameter configuration: the configuration to seed under; by default a snapshot of the
    ///   project's live one, taken once.
    public init(project: Project, configuration: Configuration? = nil) {
        self.project = project
        self.config = configuration ?? project.configuration
    }

    /// Hashes the passwords, then upserts every user in one write transaction and remembers the
    /// fixture (ids and hashes resolved) for `reset?keep_seed`. Returns the seeded users with
    /// their identities when `collect` (the default) asks for them.
    ///
    /// A large fixture (`FixturePasswords.overlapThreshold` chunks or more) is written while its
    /// last passwords are still being hashed: the write lock is taken once half of them are
    /// ready, when the rest is expected to be ready before the writer reaches it, so the writer
    /// (which hashes nothing itself) holds the lock about as long as it would have anyway, and a
    /// million users take ~10 s less on two cores. A smaller one is hashed completely first.
    ///
    /// `progress`, when given, is kept up to date as passwords are hashed and users written.
    @discardableResult
    public func seed(_ fixture: Fixture, collect: Bool = true,
                     progress: SeedProgress? = nil) throws(AuthError) -> [(UserRecord, [IdentityRecord])] {
        if fixture.sql != nil && !project.database.isPostgres { throw Fixture.sqlNeedsPostgres }
        progress?.begin(total: fixture.users.count)
        let passwords = try hashPasswords(fixture, progress: progress)
        defer { passwords?.stop() }
        passwords?.waitForHeadStart()
        // About 1 KiB of table and index pages per user (a million users make a 963 MiB file):
        // a cache of that size, up to 256 MiB, keeps the transaction's pages in memory.
        let cache = min(fixture.users.count, Self.bulkCacheLimitKiB)
        if progress?.isCancelled == true { throw Self.interrupted }
        let resolved: Fixture
        let users: [(UserRecord, [IdentityRecord])]
        do {
            (resolved, users) = try Core(project: project).write { conn in
                try conn.withPageCache(kibibytes: cache) { () throws -> (Fixture, [(UserRecord, [IdentityRecord])]) in
                    try apply(fixture, conn, collect: collect, passwords: passwords, progress: progress)
                }
            }
        } catch {
            throw progress?.isCancelled == true ? Self.interrupted : error
        }
        progress?.setWritten(fixture.users.count)
        project.fixtures.remember(resolved)
        return users
    }

    /// What a cancelled seed (`SeedProgress.cancel`) throws; its transaction was rolled back.
    public static let interrupted = AuthError(500, .unexpectedFailure, "the seed was interrupted: nothing of the fixture was kept")

    /// Measured with a million users (bench/results/HISTORY.md): 256 MiB seeds as fast as 512 MiB or
    /// 1 GiB, and the cache is freed when the transaction ends.
    static let bulkCacheLimitKiB = 256 << 10

    /// Starts hashing the fixture's passwords on every core. A password the stored user's hash
    /// already verifies keeps that hash (an idempotent re-seed rewrites nothing and hashes
    /// nothing new). nil when no entry has a password.
    func hashPasswords(_ fixture: Fixture, progress: SeedProgress? = nil) throws(AuthError) -> FixturePasswords? {
        let audience = config.jwt.audience
        let withPasswords = fixture.users.indices.filter { fixture.users[$0].password != nil }
        guard !withPasswords.isEmpty else { return nil }
        progress?.beginHashing(withPasswords.count)
        let entries = fixture.users
        let stored: [Int: String] = try Core(project: project).read { conn in
            var found: [Int: String] = [:]
            guard try conn.hasUsers() else { return found }
            for i in withPasswords {
                if let hash = try existing(entries[i], conn, audience: audience)?.encryptedPassword { found[i] = hash }
            }
            return found
        }
        return FixturePasswords(entries: withPasswords, count: fixture.users.count,
                                plaintexts: withPasswords.map { fixture.users[$0].password ?? "" },
                                stored: withPasswords.map { stored[$0] },
                                passwords: Passwords(configuration: config, environment: project.environment),
                                progress: progress)
    }

    /// The fixture's `sql` step, after its users and in their transaction: a failure is the
    /// fixture's (400, nothing kept), told with all Postgres says, DETAIL included (the SQL and
    /// its values are the caller's own, in the caller's database).
    private func runSQL(_ sql: String, _ conn: Connection) throws {
        guard project.database.isPostgres else { throw Fixture.sqlNeedsPostgres }
        do {
            try conn.runAppScript(sql)
        } catch {
            guard let failure = error.postgres else { throw Fixture.invalid("sql: " + error.message) }
            var text = "sql: \(failure.message) (SQLSTATE \(failure.sqlstate))"
            for (label, field) in [("DETAIL", failure.detail), ("HINT", failure.hint), ("CONTEXT", failure.context)] {
                if let field { text += " \(label): " + field.split(separator: "\n").joined(separator: " / ") }
            }
            throw Fixture.invalid(text)
        }
    }

    /// The users a transaction inserted into a table that was empty when it began, as hashes of
    /// their keys: a fixture entry none of whose keys is here designates nobody, and can hold no
    /// email or phone another user holds, so its lookups are skipped (a million users loaded
    /// into a fresh database do no lookups at all). A hash collision, or an email that differs
    /// only in case, just means the lookups run. Emails are folded with `lowercased()`, which
    /// folds everything SQLite's `lower()` folds (ASCII), so "not here" is never wrong.
    private struct InsertedKeys {
        private var keys: Set<Int>

        init(capacity: Int) { keys = Set(minimumCapacity: 3 * capacity) }

        func mayHold(_ entry: Fixture.User, aud: String) -> Bool {
            if let id = entry.id, keys.contains(Self.key("id", id)) { return true }
            if let email = entry.email, keys.contains(Self.key(aud, "email", email.lowercased())) { return true }
            if let phone = entry.phone, keys.contains(Self.key(aud, "phone", phone)) { return true }
            return false
        }

        mutating func insert(_ user: UserRecord) {
            keys.insert(Self.key("id", user.id))
            if let email = user.email { keys.insert(Self.key(user.aud, "email", email.lowercased())) }
            if let phone = user.phone { keys.insert(Self.key(user.aud, "phone", phone)) }
        }

        private static func key(_ parts: String...) -> Int {
            var hasher = Hasher()
            for part in parts { hasher.combine(part) }
            return hasher.finalize()
        }
    }

    /// The stored user an entry designates: by id when it has one, else by email, else phone.
    private func existing(_ entry: Fixture.User, _ conn: Connection, audience: String) throws -> UserRecord? {
        if let id = entry.id { return try conn.user(id: id) }
        let aud = entry.aud ?? audience
        if let email = entry.email, let user = try conn.user(email: email, aud: aud) { return user }
        if let phone = entry.phone { return try conn.user(phone: phone, aud: aud) }
        return nil
    }

    /// Upserts the (prepared) fixture's users inside the caller's write transaction. Returns the
    /// fixture with every id filled in, and the users as stored.
    ///
    /// - Parameter collect: whether to return the stored users (only `POST /emulator/v1/seed`
    ///   answers with them); without it nothing is read back.
    /// - Parameter passwords: the hashes of the entries' passwords (nil for a fixture already
    ///   resolved, whose entries carry `passwordHash` only).
    func apply(_ fixture: Fixture, _ conn: Connection, collect: Bool,
               passwords: FixturePasswords?, progress: SeedProgress? = nil) throws -> (Fixture, [(UserRecord, [IdentityRecord])]) {
        var resolved = fixture
        var out: [(UserRecord, [IdentityRecord])] = []
        let now = project.environment.now().microseconds
        var ids = UUIDBatch(environment: project.environment)
        var inserted = try conn.hasUsers() ? nil : InsertedKeys(capacity: fixture.users.count)
        for (position, entry) in fixture.users.enumerated() {
            // Every 1,024 rows: an atomic store, against the ~50 µs a row costs.
            if position & 1023 == 0, let progress {
                progress.setWritten(position)
                // Thrown out of the write: its one transaction rolls back.
                if progress.isCancelled { throw Self.interrupted }
            }
            var at: String { "users[\(entry.index)]" }
            let aud = entry.aud ?? config.jwt.audience
            let mayBeStored = inserted?.mayHold(entry, aud: aud) ?? true
            let found = mayBeStored ? try existing(entry, conn, audience: config.jwt.audience) : nil
            let userID = found?.id ?? entry.id ?? ids.next()
            // A new user without a declared id was just looked up by this email and audience
            // (`existing`), so nobody holds the email: the second query is skipped.
            let emailChecked = !mayBeStored || (found == nil && entry.id == nil)
            if let email = entry.email, !emailChecked, try conn.userExists(email: email, aud: aud, excluding: userID) {
                throw Fixture.invalid("\(at).email: \(email) already belongs to another user")
            }
            if let phone = entry.phone, mayBeStored, try conn.userExists(phone: phone, aud: aud, excluding: userID) {
                throw Fixture.invalid("\(at).phone: \(phone) already belongs to another user")
            }

            var user = found ?? UserRecord(id: userID, createdAt: now)
            user.aud = aud
            user.email = entry.email
            user.phone = entry.phone
            if entry.password != nil, let hash = passwords?.hash(forEntry: position) {
                user.encryptedPassword = hash
                resolved.users[position].passwordHash = hash
                resolved.users[position].password = nil
            } else if let hash = entry.passwordHash {
                user.encryptedPassword = hash
            } else if found == nil {
                user.encryptedPassword = nil
            }
            user.role = entry.role ?? config.jwt.defaultGroupName
            var providers: [String] = []
            if entry.email != nil { providers.append("email") }
            if entry.phone != nil { providers.append("phone") }
            for identity in entry.identities where !providers.contains(identity.provider) { providers.append(identity.provider) }
            var appMetadata: JSONObject = ["provider": .string(providers[0]), "providers": .array(providers.map { .string($0) })]
            for (key, value) in entry.appMetadata ?? [:] { appMetadata[key] = value }
            user.appMetadata = Models.text(appMetadata)
            var userMetadata = entry.userMetadata
            // `User.Confirm` records the verification in user_metadata, as the admin API's
            // `email_confirm` does.
            if entry.emailConfirm { userMetadata["email_verified"] = true }
            user.userMetadata = Models.text(userMetadata)
            // A confirmation already on record keeps its time, so a re-seed changes nothing.
            user.emailConfirmedAt = entry.emailConfirm ? (found?.emailConfirmedAt ?? now) : nil
            user.phoneConfirmedAt = entry.phoneConfirm ? (found?.phoneConfirmedAt ?? now) : nil
            if entry.emailConfirm || entry.phoneConfirm { user.confirmationToken = nil }
            if let duration = entry.ban, duration > 0 { user.bannedUntil = now + duration } else { user.bannedUntil = nil }
            user.deletedAt = nil
            user.refreshConfirmedAt()
            if let found {
                // Rewritten (and `updated_at` moved) only when the fixture changes something.
                // Metadata is compared as JSON: Postgres' jsonb gives it back with its own
                // spacing and key order, which is no change.
                var unchanged = found
                if Models.object(found.appMetadata) == appMetadata { unchanged.appMetadata = user.appMetadata }
                if Models.object(found.userMetadata) == userMetadata { unchanged.userMetadata = user.userMetadata }
                if user != unchanged {
                    user.updatedAt = now
                    try conn.updateUser(user)
                    inserted?.insert(user)
                }
            } else {
                do {
                    try conn.insertUser(user)
                    inserted?.insert(user)
                } catch {
                    throw Fixture.invalid("\(at): cannot create the user (\(error))")
                }
            }
            // A new user has no tokens, identities or factors yet (foreign keys with ON DELETE
            // CASCADE leave no orphans behind), so only a stored user's are looked up.
            let isNew = found == nil
            if !isNew && (entry.emailConfirm || entry.phoneConfirm) { try OneTimeTokens.clearAll(conn, userID: user.id) }

            // Identities: email/phone ones keyed by the user id (as GoTrue's), then the declared
            // social ones; anything else the user had is removed.
            var wanted: [Fixture.Identity] = []
            if let email = entry.email {
                var data = AdminEndpoints.identityData(userID: user.id, email: email, emailVerified: entry.emailConfirm)
                for (key, value) in entry.identities.first(where: { $0.provider == "email" })?.data ?? [:] { data[key] = value }
                wanted.append(Fixture.Identity(provider: "email", providerID: user.id, data: data, id: nil))
            }
            if let phone = entry.phone {
                var data = AdminEndpoints.identityData(userID: user.id, phone: phone, phoneVerified: entry.phoneConfirm)
                for (key, value) in entry.identities.first(where: { $0.provider == "phone" })?.data ?? [:] { data[key] = value }
                wanted.append(Fixture.Identity(provider: "phone", providerID: user.id, data: data, id: nil))
            }
            for identity in entry.identities where identity.provider != "email" && identity.provider != "phone" {
                var data = identity.data
                if data["sub"] == nil { data["sub"] = .string(identity.providerID) }
                if data["provider_id"] == nil { data["provider_id"] = .string(identity.providerID) }
                wanted.append(Fixture.Identity(provider: identity.provider, providerID: identity.providerID, data: data, id: identity.id))
            }
            var kept: Set<String> = []
            var newIdentities: [IdentityRecord] = []
            for (j, identity) in wanted.enumerated() {
                // The email and phone identities of a new user are keyed by its new id; only a
                // declared id (`entry.id`) could already name another user's identity.
                let fresh = isNew && entry.id == nil && (identity.provider == "email" || identity.provider == "phone")
                if !fresh, var stored = try conn.identity(providerID: identity.providerID, provider: identity.provider) {
                    guard stored.userID == user.id else {
                        throw Fixture.invalid("\(at).identities: \(identity.provider) id \"\(identity.providerID)\" is already linked to another user")
                    }
                    let text = Models.text(identity.data)
                    if Models.object(stored.identityData) != identity.data {
                        stored.identityData = text
                        stored.updatedAt = now
                        try conn.updateIdentity(stored)
                    }
                    kept.insert(stored.id)
                    wanted[j].id = stored.id
                } else {
                    let id = identity.id ?? ids.next()
                    let record = IdentityRecord(id: id, providerID: identity.providerID, userID: user.id,
                                                identityData: Models.text(identity.data), provider: identity.provider, at: now)
                    do {
                        try conn.insertIdentity(record)
                        newIdentities.append(record)
                    } catch {
                        throw Fixture.invalid("\(at).identities: cannot create the \(identity.provider) identity (\(error))")
                    }
                    kept.insert(id)
                    wanted[j].id = id
                }
            }
            if !isNew {
                for identity in try conn.identities(userID: user.id) where !kept.contains(identity.id) {
                    try conn.deleteIdentity(id: identity.id)
                }
            }
            // Declared factors replace the stored ones; ids (and generated secrets) are kept in
            // the resolved fixture so a re-seed or `reset?keep_seed` recreates the same factors.
            if var factors = entry.factors {
                // A declared factor without an id is the stored one with its name, else its
                // phone number, else its secret: seeding the same document twice keeps the ids.
                var stored = isNew ? [] : try conn.factors(userID: user.id)
                if !isNew { try conn.deleteFactors(userID: user.id) }
                for (j, declared) in factors.enumerated() {
                    let match = stored.firstIndex { old in
                        guard old.factorType == declared.type else { return false }
                        if let id = declared.id { return old.id == id }
                        if let name = declared.friendlyName { return old.friendlyName == name }
                        if let phone = declared.phone { return old.phone == phone }
                        return declared.secret != nil && old.secret == declared.secret
                    }
                    let previous = match.map { stored.remove(at: $0) }
                    let id = declared.id ?? previous?.id ?? project.environment.uuid()
                    var record = FactorRecord(id: id, userID: user.id, factorType: declared.type, status: declared.status,
                                              at: previous?.createdAt ?? now)
                    record.friendlyName = declared.friendlyName
                    record.phone = declared.phone
                    if declared.type == "totp" {
                        record.secret = declared.secret ?? previous?.secret
                            ?? Base32.encode(project.environment.randomBytes(20), padding: false)
                    }
                    do {
                        try conn.insertFactor(record)
                    } catch {
                        throw Fixture.invalid("\(at).factors[\(j)]: cannot create the factor (\(error))")
                    }
                    factors[j].id = id
                    factors[j].secret = record.secret
                }
                resolved.users[position].factors = factors
            }

            resolved.users[position].id = user.id
            resolved.users[position].aud = aud
            resolved.users[position].identities = entry.identities.filter { $0.provider == "email" || $0.provider == "phone" }
                + wanted.filter { $0.provider != "email" && $0.provider != "phone" }
            guard collect else { continue }
            let stored = try conn.user(id: user.id) ?? user
            out.append((stored, isNew ? newIdentities : try conn.identities(userID: user.id)))
        }
        if let sql = fixture.sql { try runSQL(sql, conn) }
        return (resolved, out)
    }
}

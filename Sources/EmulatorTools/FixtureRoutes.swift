import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore
import GoTrue

/// Fixtures and whole-state control:
/// - `POST /emulator/v1/seed`: applies a fixture document (`Fixture`); answers
///   `{"users": [<user JSON as the admin API writes it>]}`.
/// - `POST /emulator/v1/reset`: deletes every row of every table and sets the virtual clock back
///   to the wall clock; with `?keep_seed=true` the last seeded fixture is applied again in the
///   same transaction (same user ids). Answers `{"users": <users left>, "kept_seed": bool}`.
/// - `GET /emulator/v1/export`: a snapshot of every table (`Snapshot`); the emulator's own
///   private keys only with `?include_secrets=true`.
/// - `POST /emulator/v1/import`: replaces everything with a snapshot, in one transaction.
struct FixtureEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        let prefix = GoTrueAPI.emulatorPrefix
        return [
            Endpoint("POST", prefix + "/seed", operation: "emulator.seed") { g, context in try g.seed(context) },
            Endpoint("POST", prefix + "/reset", operation: "emulator.reset") { g, context in try g.reset(context) },
            Endpoint("GET", prefix + "/export", operation: "emulator.export") { g, context in try g.export(context) },
            Endpoint("POST", prefix + "/import", operation: "emulator.import") { g, context in try g.importSnapshot(context) },
        ]
    }

    private var project: Project { api.project }

    func seed(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let fixture = try Fixture(json: .object(try ControlRequest.body(context.request)))
        let users = try Seeder(project: project, configuration: api.snapshot.configuration).seed(fixture)
        let factors = try api.read { conn in try users.map { try conn.factors(userID: $0.0.id) } }
        return .json(["users": .array(zip(users, factors).map { Models.user($0.0.0, identities: $0.0.1, factors: $0.1) })])
    }

    /// A query switch: absent is false; `true`, `1` or bare (`?keep_seed`) is true.
    private func flag(_ context: RequestContext, _ name: String) throws(AuthError) -> Bool {
        guard let text = context.request.queryValue(name) else { return false }
        switch text.lowercased() {
        case "true", "1", "": return true
        case "false", "0": return false
        default: throw ControlRequest.invalid("\(name) must be true or false")
        }
    }

    func reset(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let keepSeed = try flag(context, "keep_seed")
        let count = try Reset(project: project).run(keepSeed: keepSeed)
        return .json(["users": .number(count), "kept_seed": .bool(keepSeed)])
    }

    func export(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let snapshot = try Snapshot.take(project, includeSecrets: try flag(context, "include_secrets"))
        return .json(snapshot.json)
    }

    func importSnapshot(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let snapshot = try Snapshot(json: .object(try ControlRequest.body(context.request)))
        let counts = try snapshot.restore(into: project)
        var tables = JSONObject()
        for (name, count) in counts { tables[name] = .number(count) }
        return .json(["imported": .object(tables)])
    }
}

/// `reset`: one write transaction that empties every table and, when asked, re-applies the
/// last fixture. The virtual clock returns to the wall clock first, so the re-seeded rows carry
/// real times.
public struct Reset: Sendable {
    public let project: Project

    public init(project: Project) { self.project = project }

    /// Returns how many users remain.
    @discardableResult
    public func run(keepSeed: Bool) throws(AuthError) -> Int {
        (project.environment.clock as? VirtualClock)?.reset()
        // In-memory limits count requests against the old state: a reset forgets them too.
        project.rateLimiter.reset()
        project.outbox.resetLimits()
        // The fake providers' pending codes and first-authorization memory belong to the old state.
        project.identityProviderStore.reset()
        let fixture = keepSeed ? project.fixtures.lastApplied : nil
        let seeder = Seeder(project: project)
        return try Core(project: project).write { conn in
            try Reset.deleteAllData(conn)
            guard let fixture else { return 0 }
            _ = try seeder.apply(fixture, conn, collect: false, passwords: nil)
            return fixture.users.count
        }
    }
}

extension Reset {
    /// Empties the store. In Postgres mode an app's foreign key to `auth.users(id)` without
    /// ON DELETE CASCADE refuses it: the caller, whose schema it is, gets a 409 naming the
    /// constraint (nothing was deleted), not a 500.
    static func deleteAllData(_ conn: Connection) throws {
        do {
            try conn.deleteAllData()
        } catch {
            if let refusal = error.postgres, refusal.step == "reset" { throw AuthError(409, .conflict, refusal.message) }
            throw error
        }
    }
}

/// A JSON snapshot of the whole database:
///
/// ```json
/// {"format": "supabase-auth-emulator.snapshot", "version": 1, "exported_at": "2026-01-01T00:00:00Z",
///  "tables": {"users": [{"id": "...", "email": "...", "created_at": 1767225600000000, ...}], ...}}
/// ```
///
/// Every table is included (users, identities, sessions, refresh_tokens, mfa_factors,
/// one_time_tokens, audit_log_entries, emulator_outbox, ...), rows in insertion order, columns as
/// stored: timestamps are unix microseconds, booleans 0/1, metadata JSON text. Generated columns
/// are left out (the database recomputes them). Import replaces everything; a table missing from
/// the snapshot ends up empty.
public struct Snapshot: Sendable {
    public static let format = "supabase-auth-emulator.snapshot"
    public static let version = 1

    public var exportedAt: Timestamp
    public var tables: [TableDump]

    /// Every data table; the emulator's own private keys (`TableDump.secretTables`) only when
    /// `includeSecrets`, so a snapshot shared with a bug report or committed as a fixture
    /// carries none.
    public static func take(_ project: Project, includeSecrets: Bool = false) throws(AuthError) -> Snapshot {
        let tables = try Core(project: project).read { conn in
            try conn.dataTables().filter { includeSecrets || !TableDump.secretTables.contains($0) }
                .map { name in try conn.dumpTable(name) }
        }
        return Snapshot(exportedAt: project.environment.now(), tables: tables)
    }

    public init(exportedAt: Timestamp, tables: [TableDump]) {
        self.exportedAt = exportedAt
        self.tables = tables
    }

    public var json: JSON {
        var tables = JSONObject()
        for table in self.tables {
            tables[table.name] = .array(table.rows.map { row in
                var o = JSONObject()
                for (column, value) in zip(table.columns, row) { o[column] = Snapshot.json(value) }
                return .object(o)
            })
        }
        return [
            "format": .string(Snapshot.format),
            "version": .number(Snapshot.version),
            "exported_at": .string(exportedAt.rfc3339),
            "tables": .object(tables),
        ]
    }

    static func json(_ value: SQLValue) -> JSON {
        switch value {
        case .null: return .null
        case .integer(let n): return .number(n)
        case .real(let d): return .number(d)
        case .text(let s): return .string(s)
        case .blob(let bytes): return .string(Base64URL.encode(bytes))
        }
    }

    static func invalid(_ message: String) -> AuthError {
        AuthError(400, .validationFailed, "invalid snapshot: " + message)
    }

    /// Parses an exported document; column names are checked against the schema on restore.
    public init(json value: JSON) throws(AuthError) {
        guard let root = value.objectValue else { throw Snapshot.invalid("the document must be an object") }
        if let format = root["format"], format.stringValue != Snapshot.format {
            throw Snapshot.invalid("\"format\" must be \"\(Snapshot.format)\"")
        }
        if let version = root["version"], version.intValue != Snapshot.version {
            throw Snapshot.invalid("unsupported \"version\" (this emulator reads version \(Snapshot.version))")
        }
        exportedAt = root["exported_at"]?.stringValue.flatMap { Timestamp(rfc3339: $0) } ?? Timestamp(microseconds: 0)
        guard let tablesValue = root["tables"] else { throw Snapshot.invalid("missing \"tables\"") }
        guard let tables = tablesValue.objectValue else { throw Snapshot.invalid("\"tables\" must be an object") }
        var dumps: [TableDump] = []
        for (name, rowsValue) in tables {
            guard let rows = rowsValue.arrayValue else { throw Snapshot.invalid("tables.\(name) must be an array of rows") }
            // The union of the rows' keys, in first-seen order; a row without a key gets NULL there
            // only when the column allows it (the database decides).
            var columns: [String] = []
            var seen: Set<String> = []
            for (index, row) in rows.enumerated() {
                guard let object = row.objectValue else { throw Snapshot.invalid("tables.\(name)[\(index)] must be an object") }
                for (key, _) in object where seen.insert(key).inserted { columns.append(key) }
            }
            var values: [[SQLValue]] = []
            for (index, row) in rows.enumerated() {
                let object = row.objectValue ?? JSONObject()
                var out: [SQLValue] = []
                for column in columns {
                    switch object[column] ?? .null {
                    case .null: out.append(.null)
                    case .bool(let b): out.append(.integer(b ? 1 : 0))
                    case .string(let s): out.append(.text(s))
                    case .number(let d):
                        if let n = JSON.number(d).int64Value { out.append(.integer(n)) } else { out.append(.real(d)) }
                    case .array, .object:
                        throw Snapshot.invalid("tables.\(name)[\(index)].\(column) must be a string, number, boolean or null")
                    }
                }
                values.append(out)
            }
            dumps.append(TableDump(name: name, columns: columns, rows: values))
        }
        self.tables = dumps
    }

    /// Replaces the database's content with the snapshot's, in one write transaction (run again
    /// alone if Postgres ends it as a deadlock victim: the closure keeps nothing between runs).
    /// Returns the number of rows per table restored.
    public func restore(into project: Project) throws(AuthError) -> [(String, Int)] {
        let byName = Dictionary(tables.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        do {
            return try project.writeRerunningConflicts { conn in
                let known = try conn.dataTables()
                for name in byName.keys where !known.contains(name) {
                    throw Snapshot.invalid("unknown table \"\(name)\" (this emulator has: \(known.joined(separator: ", ")))")
                }
                try Reset.deleteAllData(conn)
                var counts: [(String, Int)] = []
                for name in known {
                    guard let dump = byName[name] else { continue }
                    do {
                        try conn.restoreTable(dump)
                    } catch let error as StoreError where !error.isTransactionConflict {
                        // The snapshot's rows did not fit; a conflict is no fault of theirs.
                        throw Snapshot.invalid("tables.\(name): \(error.message)")
                    }
                    counts.append((name, dump.rows.count))
                }
                return counts
            }
        } catch let error as AuthError {
            throw error
        } catch {
            throw Core(project: project).storeFailure(error)
        }
    }
}

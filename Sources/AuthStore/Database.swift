import CSQLite

public struct DatabaseOptions: Sendable {
    /// Reader connections for a file database, opened on first use. `0` makes reads share the
    /// writer connection (as `:memory:` always does).
    public var readerCount: Int
    /// How long a connection waits for a lock held by another connection or process before the
    /// call fails with `StoreError.isBusy`.
    public var busyTimeoutMilliseconds: Int32

    public init(readerCount: Int = 4, busyTimeoutMilliseconds: Int32 = 5000) {
        self.readerCount = readerCount
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
    }
}

/// The emulator's SQLite database: one writer connection and a small pool of readers.
///
/// File databases run in WAL mode, so readers never block the writer nor each other
/// (https://sqlite.org/wal.html). Several `Database` instances, in one process or several, may
/// open the same file, much as several GoTrue servers share one Postgres: nothing but prepared
/// statements is cached, and cross-instance write ordering is SQLite's file locking, waited for
/// by the busy timeout.
///
/// `:memory:` is one private database per instance, reached through a single connection that
/// serves both reads and writes (serialized), because every SQLite connection to `:memory:`
/// would otherwise open a different, empty database.
///
/// Nesting on the same thread:
/// - `write` inside `write` runs in a SAVEPOINT of the outer transaction; a throw undoes only the
///   nested part and is rethrown.
/// - `read` inside `write` runs on the writer connection, inside the open transaction, and so
///   sees its uncommitted changes.
/// - `read` inside `read` reuses the outer snapshot.
/// - `write` inside `read` takes the writer as usual (file) or, with a shared connection, runs
///   in a SAVEPOINT that the outer `read` commits.
/// - `close()` inside a closure is a programming error and stops the process.
public final class Database: Sendable {
    /// The path as given: a file path or ":memory:".
    public let path: String
    public let options: DatabaseOptions
    private let pool: ConnectionPool

    /// Opens (creating if needed) the database, applies the per-connection pragmas and runs the
    /// pending migrations of `Migrations.all`.
    ///
    /// The file's directory must exist: creating directories is the caller's decision.
    public convenience init(path: String, options: DatabaseOptions = .init()) throws(StoreError) {
        try self.init(path: path, options: options, migrations: Migrations.all)
    }

    /// Opens the database and runs `migrations` (an ordered, append-only list).
    public init(path: String, options: DatabaseOptions = .init(), migrations: [Migration]) throws(StoreError) {
        guard !path.isEmpty else {
            // SQLite would open a private temporary file per connection, so the writer and the
            // readers would each see a different database.
            throw StoreError(code: SQLITE_CANTOPEN, message: "open: empty database path")
        }
        self.path = path
        self.options = options
        pool = try ConnectionPool(path: path, options: options)
        do {
            try Migrator(migrations).migrate(pool)
        } catch {
            pool.close()
            throw error
        }
    }

    deinit {
        pool.close()
    }

    public var isInMemory: Bool { path == ConnectionPool.memoryPath }

    /// Runs `body` in a read transaction (BEGIN DEFERRED … COMMIT), so every statement in it
    /// sees one consistent snapshot. Statements that write are refused with SQLITE_READONLY.
    public func read<T>(_ body: (Connection) throws -> T) throws -> T {
        try pool.read(body)
    }

    /// Runs `body` in the write transaction (BEGIN IMMEDIATE … COMMIT). IMMEDIATE takes the
    /// database's write lock up front, so a transaction never fails half-way with SQLITE_BUSY
    /// when upgrading from reading to writing; waiting for that lock is covered by the busy
    /// timeout. When `body` throws, the transaction is rolled back and the error rethrown.
    public func write<T>(_ body: (Connection) throws -> T) throws -> T {
        try pool.write(body)
    }

    /// Waits for closures in flight, checkpoints the WAL into the main file (TRUNCATE, so the
    /// `-wal` file shrinks to zero) and closes every connection. Idempotent; later `read` and
    /// `write` calls throw `StoreError.isClosed`.
    public func close() {
        pool.close()
    }

    /// Ids of recorded migrations in the order they were applied. May include ids this build
    /// does not know (written by a newer build sharing the file).
    public var appliedMigrations: [String] {
        get throws {
            try read { connection in
                try connection.query("SELECT id FROM schema_migrations ORDER BY rowid").compactMap { $0.string("id") }
            }
        }
    }
}

/// Owns the connections and hands them out. All mutable state is guarded by `monitor`; the
/// non-Sendable connections never leave it except for the duration of one closure on the
/// thread recorded as their owner, which is why the class can be `@unchecked Sendable`.
final class ConnectionPool: @unchecked Sendable {
    static let memoryPath = ":memory:"

    private let monitor = Monitor()
    private let path: String
    private let options: DatabaseOptions
    /// Reads use the writer connection (`:memory:`, or `readerCount < 1`).
    private let sharesWriter: Bool

    // Guarded by `monitor`.
    private var writer: Connection?
    private var writerOwner: UInt?
    private var idleReaders: [Connection] = []
    private var busyReaders: [UInt: Connection] = [:]
    private var openedReaders = 0
    private var closed = false

    init(path: String, options: DatabaseOptions) throws(StoreError) {
        self.path = path
        self.options = options
        let isMemory = path == Self.memoryPath
        sharesWriter = isMemory || options.readerCount < 1
        writer = try Self.open(path: path, options: options, role: isMemory ? .memory : .writer)
    }

    private enum Role { case memory, writer, reader }

    private static func open(path: String, options: DatabaseOptions, role: Role) throws(StoreError) -> Connection {
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
        if role != .reader { flags |= SQLITE_OPEN_CREATE }
        let connection = try Connection(path: path, flags: flags)
        // SQLite's built-in busy handler, installed by busy_timeout, is also consulted while
        // BEGIN IMMEDIATE waits for the write lock, and while a reader waits out a WAL recovery.
        sqlite3_busy_timeout(connection.handle, options.busyTimeoutMilliseconds)
        // Per-connection settings: SQLite enforces foreign keys only on connections that ask
        // (https://sqlite.org/foreignkeys.html §2), and GoTrue's ON DELETE CASCADE relies on it.
        try connection.execute("PRAGMA foreign_keys = ON")
        guard role != .memory else { return connection }
        if role == .writer {
            let mode = try enableWAL(connection, timeoutMilliseconds: options.busyTimeoutMilliseconds)
            guard mode == "wal" else {
                throw StoreError(code: SQLITE_CANTOPEN, message: "open \"\(path)\": WAL journal mode unavailable (got \(mode ?? "nothing"))")
            }
        } else {
            try connection.execute("PRAGMA query_only = ON")
        }
        // Pages are re-read cheaply from the OS cache, so a small page cache per connection
        // (SQLite's default is 2 MiB each) keeps the server's resident memory low after load.
        try connection.execute("PRAGMA cache_size = -1024")
        // In WAL mode NORMAL is durable against application crashes and consistent across power
        // loss (https://sqlite.org/pragma.html#pragma_synchronous); the emulator needs no more.
        try connection.execute("PRAGMA synchronous = NORMAL")
        return connection
    }

    /// Switches the file to WAL (a persistent property of the file) and returns the new mode.
    ///
    /// Switching needs a moment of exclusive access. When several connections open a new file
    /// at once, each holds a shared lock while asking for the exclusive one; SQLite detects that
    /// deadlock and returns SQLITE_BUSY at once without calling the busy handler
    /// (https://sqlite.org/c3ref/busy_handler.html), so the retry up to the busy timeout is ours.
    private static func enableWAL(_ connection: Connection, timeoutMilliseconds: Int32) throws(StoreError) -> String? {
        if try connection.scalar("PRAGMA journal_mode").stringValue?.lowercased() == "wal" {
            return "wal"
        }
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int(max(timeoutMilliseconds, 0)))
        while true {
            do {
                return try connection.scalar("PRAGMA journal_mode = WAL").stringValue?.lowercased()
            } catch let error where error.isBusy && clock.now < deadline {
                sleepCurrentThread(milliseconds: 2)
            }
        }
    }

    // MARK: Writes

    func write<T>(_ body: (Connection) throws -> T) throws -> T {
        let me = currentThreadIdentity()
        let (connection, nested) = try acquireWriter(me)
        if nested {
            return try connection.withReadOnly(false) { try connection.inSavepoint(body) }
        }
        defer { releaseWriter() }
        return try connection.inTransaction("BEGIN IMMEDIATE", body)
    }

    // MARK: Reads

    func read<T>(_ body: (Connection) throws -> T) throws -> T {
        let me = currentThreadIdentity()
        if sharesWriter {
            let (connection, nested) = try acquireWriter(me)
            if nested {
                return try connection.withReadOnly(true) { try body(connection) }
            }
            defer { releaseWriter() }
            return try connection.withReadOnly(true) { try connection.inTransaction("BEGIN DEFERRED", body) }
        }

        let lease = try monitor.withLock { () throws(StoreError) -> ReaderLease in
            guard !closed else { throw StoreError.closed }
            if writerOwner == me, let writer { return .insideWrite(writer) }
            if let reader = busyReaders[me] { return .nested(reader) }
            while true {
                guard !closed else { throw StoreError.closed }
                if let reader = idleReaders.popLast() {
                    busyReaders[me] = reader
                    return .pooled(reader)
                }
                if openedReaders < options.readerCount {
                    // Opened under the lock: it takes well under a millisecond, happens at most
                    // `readerCount` times, and keeps `close()` from missing a connection.
                    let reader = try Self.open(path: path, options: options, role: .reader)
                    openedReaders += 1
                    busyReaders[me] = reader
                    return .pooled(reader)
                }
                monitor.wait()
            }
        }

        switch lease {
        case .insideWrite(let connection):
            return try connection.withReadOnly(true) { try body(connection) }
        case .nested(let connection):
            return try body(connection)
        case .pooled(let connection):
            defer {
                monitor.withLock {
                    busyReaders[me] = nil
                    idleReaders.append(connection)
                    monitor.broadcast()
                }
            }
            connection.readOnly = true
            return try connection.inTransaction("BEGIN DEFERRED", body)
        }
    }

    private enum ReaderLease {
        case insideWrite(Connection)
        case nested(Connection)
        case pooled(Connection)
    }

    // MARK: Writer ownership

    /// Waits for the writer; `nested` when this thread already owns it.
    private func acquireWriter(_ me: UInt) throws(StoreError) -> (Connection, nested: Bool) {
        try monitor.withLock { () throws(StoreError) -> (Connection, nested: Bool) in
            while true {
                guard !closed, let writer else { throw StoreError.closed }
                if writerOwner == me { return (writer, true) }
                if writerOwner == nil {
                    writerOwner = me
                    return (writer, false)
                }
                monitor.wait()
            }
        }
    }

    private func releaseWriter() {
        monitor.withLock {
            writerOwner = nil
            monitor.broadcast()
        }
    }

    // MARK: Close

    func close() {
        let me = currentThreadIdentity()
        let (writer, readers) = monitor.withLock { () -> (Connection?, [Connection]) in
            precondition(writerOwner != me && busyReaders[me] == nil,
                         "Database.close() called inside a read or write closure of the same database")
            closed = true
            monitor.broadcast()  // waiters see `closed` and throw
            while writerOwner != nil || !busyReaders.isEmpty {
                monitor.wait()
            }
            defer {
                self.writer = nil
                idleReaders.removeAll()
            }
            return (self.writer, idleReaders)
        }
        for reader in readers {
            reader.close()
        }
        guard let writer else { return }
        if path != Self.memoryPath {
            // Readers of other processes may still pin the WAL; the checkpoint is then partial
            // and SQLite finishes it later, so its result is deliberately not an error.
            sqlite3_wal_checkpoint_v2(writer.handle, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
        }
        writer.close()
    }
}

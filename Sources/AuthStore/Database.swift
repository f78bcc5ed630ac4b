import AuthPlatform
import CSQLite

/// The emulator's SQLite database: one writer connection and a small pool of readers. In
/// Postgres mode (`init(postgres:options:postgres:)`, `Postgres/Database+Postgres.swift`) the
/// same pool holds Postgres connections, with the same `read` / `write` semantics.
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
    let pool: ConnectionPool
    /// Whether this `:memory:` database began as a copy of an already migrated one (tests).
    let startedFromImage: Bool
    /// Postgres mode: what was found of GoTrue's schema (after creating it when it was absent)
    /// and the session's warnings. nil for SQLite.
    public let postgresSetup: PostgresSetup?

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
        postgresSetup = nil
        pool = try ConnectionPool(path: path, options: options)
        // A database in memory starts as a copy of the first one this process migrated: running
        // the migrations parses and re-parses the schema after each statement (about 10 ms in
        // a release build), copying the migrated image about 1.
        let isMemory = path == ConnectionPool.memoryPath
        startedFromImage = isMemory && MigratedImages.image(for: migrations).map(pool.startFromImage) == true
        do {
            try Migrator(migrations).migrate(pool)
            if isMemory && !startedFromImage, let image = pool.serializedImage() { MigratedImages.store(image, for: migrations) }
        } catch {
            pool.close()
            throw error
        }
    }

    /// Postgres mode (`init(postgres:options:postgres:)`): the pool is open and the schema ready.
    init(pool: ConnectionPool, options: DatabaseOptions, setup: PostgresSetup) {
        path = pool.label
        self.options = options
        self.pool = pool
        startedFromImage = false
        postgresSetup = setup
    }

    deinit {
        pool.close()
    }

    public var isInMemory: Bool { path == ConnectionPool.memoryPath }

    /// Whether this is a Postgres-mode database.
    public var isPostgres: Bool { postgresSetup != nil }
    /// Whether a read never waits: a SQLite file, whose readers have connections of their own
    /// (WAL). In memory, reads share the writer; on Postgres, each is a network round trip.
    public var readsWithoutWaiting: Bool { !isInMemory && !isPostgres }

    /// Runs `body` in a read transaction (BEGIN DEFERRED … COMMIT), so every statement in it
    /// sees one consistent snapshot. Statements that write are refused with SQLITE_READONLY.
    public func read<T>(_ body: (Connection) throws -> T) throws -> T {
        try pool.read(body)
    }

    /// Runs `body` in the write transaction (BEGIN IMMEDIATE … COMMIT). IMMEDIATE takes the
    /// database's write lock up front, so a transaction never fails half-way with SQLITE_BUSY
    /// when upgrading from reading to writing; waiting for that lock is covered by the busy
    /// timeout. When `body` throws, its changes are rolled back and the error rethrown.
    ///
    /// Group commit: `write` calls made at the same time from different threads share one
    /// transaction, so one COMMIT (one set of WAL frames for the pages they all touch, such as
    /// index roots) serves them all. The thread that finds the writer free leads: it runs its
    /// own closure and then those queued meanwhile (at most 64, for at most ~4 ms), each after
    /// the first in its own SAVEPOINT, then commits. So:
    /// - a closure that throws undoes only its own changes and its caller alone gets the error;
    /// - `write` returns only after the COMMIT containing its changes succeeded: by then any new
    ///   reader, of this instance or another, sees them. If COMMIT fails, every caller of the
    ///   group gets that error;
    /// - closures of one group run one after another, in arrival order, as if each were its own
    ///   transaction; a later closure sees the earlier ones' changes;
    /// - **`body` may run on another thread** (the leader's) while the calling thread sleeps
    ///   until it has run. SQLite does not mind (the connection is used by one thread at a time)
    ///   and nested `read` / `write` calls inside `body` work as documented, but `body` must not
    ///   depend on thread identity (thread-locals) nor wait for work of its calling thread.
    ///
    /// `alone`: this write's transaction carries no other (it neither joins a group nor lets
    /// others join its own), as each request's transaction is in GoTrue. For a write run again
    /// after Postgres ended it as a deadlock victim (`StoreError.isTransactionConflict`): the
    /// locks its group-mates held are what let it close a cycle with another process.
    public func write<T>(alone: Bool = false, _ body: (Connection) throws -> T) throws -> T {
        try pool.write(alone: alone, body)
    }

    /// Waits for closures in flight, checkpoints the WAL into the main file (TRUNCATE, so the
    /// `-wal` file shrinks to zero) and closes every connection. Idempotent; later `read` and
    /// `write` calls throw `StoreError.isClosed`. Returns what became of the WAL.
    @discardableResult
    public func close() -> CloseOutcome {
        pool.close()
    }

    /// Ids of recorded migrations in the order they were applied. May include ids this build
    /// does not know (written by a newer build sharing the file).
    ///
    /// In Postgres mode, the steps of the emulator's own schema (`auth_emulator.migrations`);
    /// GoTrue's are in `postgresSetup.schema`.
    public var appliedMigrations: [String] {
        get throws {
            try read { connection in
                if let postgres = connection.postgres {
                    return try postgres.store { try $0.query("SELECT id FROM auth_emulator.migrations ORDER BY applied_at, id") }
                        .compactMap { $0.string("id") }
                }
                return try connection.query("SELECT id FROM schema_migrations ORDER BY rowid").compactMap { $0.string("id") }
            }
        }
    }
}

/// Empty databases as the migrations leave them, one SQLite file image per list of migrations,
/// for `:memory:` databases to start from (tests and projects make many). The migrator still
/// runs on the copy and finds nothing to do; `schema_migrations.applied_at` is the time the
/// first copy was migrated.
enum MigratedImages {
    private static let images = Lock<[[Migration]: [UInt8]]>([:])

    static func image(for migrations: [Migration]) -> [UInt8]? { images.withLock { $0[migrations] } }

    static func store(_ image: [UInt8], for migrations: [Migration]) {
        images.withLock { $0[migrations] = image }
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
    /// Where readers connect in Postgres mode; nil for SQLite.
    private let postgres: PostgresTarget?
    /// `Database.path`: the file, `:memory:`, or Postgres mode's `PostgresTarget.label`.
    var label: String { path }
    /// Reads use the writer connection (`:memory:`, or `readerCount < 1`).
    private let sharesWriter: Bool

    // Guarded by `monitor`.
    private var writer: Connection?
    private var writerOwner: UInt?
    private var idleReaders: [Connection] = []
    private var busyReaders: [UInt: Connection] = [:]
    /// Writes waiting for a leader, oldest first.
    private var pendingWrites: [WriteRequest] = []
    private var openedReaders = 0
    /// Threads sleeping in `read` until a reader connection is free.
    private var readerWaiters = 0
    private var closed = false
    /// Checkpoints a file database's WAL off the write path; nil for `:memory:`.
    private let checkpointer: Checkpointer?

    init(path: String, options: DatabaseOptions) throws(StoreError) {
        self.path = path
        self.options = options
        postgres = nil
        let isMemory = path == Self.memoryPath
        sharesWriter = isMemory || options.readerCount < 1
        let writer = try Self.open(path: path, options: options, role: isMemory ? .memory : .writer)
        if isMemory {
            checkpointer = nil
        } else {
            let idle = options.idleCheckpointMilliseconds.map { UInt64(max(1, $0)) * 1_000_000 }
            let checkpointer = Checkpointer(idleNanoseconds: idle) { () throws(StoreError) in
                try Self.open(path: path, options: options, role: .checkpointer)
            }
            checkpointer.install(on: writer)
            self.checkpointer = checkpointer
        }
        self.writer = writer
    }

    /// Postgres mode: `writer` is open and its schema ready; readers connect to `target` on
    /// first use. Group commit, savepoint nesting and the reader pool work as for a file.
    init(postgres target: PostgresTarget, writer: PostgresConnection, options: DatabaseOptions) {
        path = target.label
        self.options = options
        postgres = target
        sharesWriter = options.readerCount < 1
        checkpointer = nil
        self.writer = Connection(postgres: writer)
    }

    /// A reader connection: SQLite's (query_only, mapped) or a Postgres session like the writer's.
    private func openReader() throws(StoreError) -> Connection {
        guard let postgres else { return try Self.open(path: path, options: options, role: .reader) }
        do {
            let connection = Connection(postgres: try PostgresConnection(postgres.conninfo, options: postgres.session))
            connection.readOnly = true
            return connection
        } catch {
            throw StoreError(error)
        }
    }

    /// Replaces a new `:memory:` database, before any other use, with a copy of `image`
    /// (`MigratedImages`); false when SQLite refuses it, and the database is then as it was.
    func startFromImage(_ image: [UInt8]) -> Bool {
        monitor.withLock { writer?.deserialize(image) ?? false }
    }

    /// The database as a SQLite file image, taken from the writer (nil when SQLite cannot).
    func serializedImage() -> [UInt8]? {
        monitor.withLock { writer?.serialized() }
    }

    /// Background, writer and idle checkpoint passes so far, and WAL rewinds (tests).
    var checkpointPasses: (background: Int, writer: Int, idle: Int, rewinds: Int)? {
        checkpointer?.passCounts
    }

    /// Commits so far and those whose frames a checkpoint pass copied in full (tests).
    var copyProgress: (commits: Int, copiedThrough: Int)? {
        checkpointer?.copyProgress
    }

    private enum Role { case memory, writer, reader, checkpointer }

    /// Process-wide SQLite settings, applied once before the first connection initializes the
    /// library. Memory statistics are off: with them on (the default) every allocation and
    /// free inside SQLite takes a global mutex to keep counters nothing here reads
    /// (`sqlite3_memory_used`), ~8 % of a bulk fixture insert's CPU in `pthread_mutex_*`.
    private static let libraryConfigured: Void = {
        _ = auth_sqlite3_config_memstatus(0)
    }()

    /// `PRAGMA mmap_size` of reader connections: 1 GiB, a million users and more.
    static let readerMapBytes = 1 << 30

    private static func open(path: String, options: DatabaseOptions, role: Role) throws(StoreError) -> Connection {
        Self.libraryConfigured
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
        if role == .writer || role == .memory { flags |= SQLITE_OPEN_CREATE }
        let connection = try Connection(path: path, flags: flags)
        // SQLite's built-in busy handler, installed by busy_timeout, is also consulted while
        // BEGIN IMMEDIATE waits for the write lock, and while a reader waits out a WAL recovery.
        sqlite3_busy_timeout(connection.handle, options.busyTimeoutMilliseconds)
        // Per-connection settings: SQLite enforces foreign keys only on connections that ask
        // (https://sqlite.org/foreignkeys.html §2), and GoTrue's ON DELETE CASCADE relies on it.
        try connection.execute("PRAGMA foreign_keys = ON")
        if role == .writer || role == .memory {
            // Group commit and nested writes use SAVEPOINTs, whose undo records ("statement
            // journal") spill to a temporary file past 64 KiB by default: one create, ~12
            // writes and an unlink per group for a sign-in, measured with strace. In memory they
            // cost a transient copy of the pages one closure changes, freed at RELEASE
            // (https://sqlite.org/tempfiles.html §2.6, §5).
            try connection.execute("PRAGMA temp_store = MEMORY")
        }
        guard role != .memory else { return connection }
        if role == .writer {
            let mode = try enableWAL(connection, timeoutMilliseconds: options.busyTimeoutMilliseconds)
            guard mode == "wal" else {
                throw StoreError(code: SQLITE_CANTOPEN, message: "open \"\(path)\": WAL journal mode unavailable (got \(mode ?? "nothing"))")
            }
            // Checkpoints are the `Checkpointer`'s (installed by the pool, replacing SQLite's
            // automatic one). `close()` still truncates the WAL to zero.
        } else if role == .checkpointer {
            // Its only statement is the checkpoint, whose syncs follow `synchronous` below.
        } else {
            try connection.execute("PRAGMA query_only = ON")
            // Readers map the file (https://sqlite.org/mmap.html): with the small page cache
            // below, a lookup in a large database (a million users) otherwise reads its B-tree
            // pages with one pread each, ~+40 % on `GET /user`; mapped, it touches them in the
            // OS page cache. Resident memory grows only by the pages actually read. WAL frames
            // are still read from the WAL.
            try connection.execute("PRAGMA mmap_size = \(Self.readerMapBytes)")
        }
        try connection.execute("PRAGMA cache_size = -\(Connection.pageCacheKiB)")
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

    // MARK: Writes (group commit)

    /// At most this many closures share one transaction, so one caller's wait for the COMMIT
    /// that carries its change stays bounded however long the queue grows.
    static let maxGroupSize = 64
    /// A leader stops taking queued closures once its group has run this long; the rest wait
    /// for the next group, whose leader is one of them.
    static let maxGroupDuration: Duration = .milliseconds(4)

    /// What members of a group get when a batch-mate's failure rolled back the whole
    /// transaction: SQLITE_ABORT_ROLLBACK (https://sqlite.org/rescode.html#abort_rollback).
    static var groupRolledBack: StoreError {
        StoreError(code: SQLITE_ABORT | (2 << 8), message: "commit: the transaction was rolled back by an error in a write sharing it")
    }

    func write<T>(alone: Bool = false, _ body: (Connection) throws -> T) throws -> T {
        let me = currentThreadIdentity()
        if let connection = try nestedWriter(me) {
            return try connection.withReadOnly(false) { try connection.inSavepoint(body) }
        }
        // The queued request must hold the closure beyond this call frame's static scope, but
        // it never outlives the call: the leader drops it (`WriteRequest.invoke`) before it
        // marks the request done, and this thread blocks in `commit` until then.
        return try withoutActuallyEscaping(body) { body in
            var value: T?
            let request = WriteRequest(alone: alone) { connection in value = try body(connection) }
            try commit(request, me)
            guard let value else {
                // `commit` returns only after the closure returned normally and its group committed.
                preconditionFailure("group commit finished a write without its result")
            }
            return value
        }
    }

    /// Writes queued for the next group (for tests that line callers up behind a leader).
    var pendingWriteCount: Int {
        monitor.withLock { pendingWrites.count }
    }

    /// The writer connection when this thread already owns it (a `write` or shared-connection
    /// `read` further up its stack, or a batch this thread leads).
    private func nestedWriter(_ me: UInt) throws(StoreError) -> Connection? {
        try monitor.withLock { () throws(StoreError) -> Connection? in
            guard !closed, let writer else { throw StoreError.closed }
            return writerOwner == me ? writer : nil
        }
    }

    /// Queues `request` and returns once a group containing it has committed (or rethrows what
    /// failed it). When the writer is free, this thread becomes the leader and runs the group
    /// itself; otherwise it sleeps until the current leader has finished it, or until the
    /// writer is free again with the request still queued, and then leads the next group.
    private func commit(_ request: WriteRequest, _ me: UInt) throws {
        let leads = try monitor.withLock { () throws(StoreError) -> Bool in
            guard !closed, writer != nil else { throw StoreError.closed }
            pendingWrites.append(request)
            while true {
                switch request.state {
                case .done:
                    return false
                case .taken:
                    monitor.wait()
                case .pending:
                    if closed || writer == nil {
                        pendingWrites.removeAll { $0 === request }
                        throw StoreError.closed
                    }
                    if writerOwner == nil {
                        writerOwner = me
                        pendingWrites.removeAll { $0 === request }
                        request.state = .taken
                        return true
                    }
                    monitor.wait()
                }
            }
        }
        if leads {
            lead(request)
        }
        if let failure = request.failure {
            throw failure
        }
    }

    /// Runs `own` and whatever other writes are queued, sharing transactions, then releases the
    /// writer. Called with `writerOwner` set to this thread, so the closures it runs see their
    /// nested `read` / `write` calls as nested (they use this connection, this transaction).
    ///
    /// Every transaction is BEGIN IMMEDIATE … COMMIT. Its first closure runs directly (when
    /// nothing else joins, the statements are exactly those of a lone `write`); each later one
    /// runs in a SAVEPOINT, so its throw is undone with ROLLBACK TO + RELEASE and leaves the
    /// others' changes in place (https://sqlite.org/lang_savepoint.html). A throw from the first
    /// closure rolls back the whole, still single-member transaction, and the group carries on
    /// in a new one.
    private func lead(_ own: WriteRequest) {
        // Not nil: `commit` made this thread the owner only while the writer was open, and
        // `close()` waits for the owner to let go before dropping the connection.
        let connection = monitor.withLock { writer }!
        let clock = ContinuousClock()
        let deadline = clock.now + Self.maxGroupDuration
        var taken = 1
        var finished: [WriteRequest] = []

        /// The next queued request that may share a transaction, if the group still has room
        /// and time. A request that must run alone stays queued: it leads a group of its own.
        func next() -> WriteRequest? {
            guard taken < Self.maxGroupSize, clock.now < deadline else { return nil }
            return monitor.withLock { () -> WriteRequest? in
                guard !closed, let index = pendingWrites.firstIndex(where: { !$0.alone }) else { return nil }
                let request = pendingWrites.remove(at: index)
                request.state = .taken
                taken += 1
                return request
            }
        }

        connection.withReadOnly(false) {
            var first: WriteRequest? = own
            while let opener = first {
                first = nil
                do {
                    try connection.execute("BEGIN IMMEDIATE")
                } catch {
                    // Typically SQLITE_BUSY past the busy timeout: another process holds the
                    // lock. Later requests stay queued and their own leader tries again.
                    opener.failure = error
                    finished.append(opener)
                    break
                }
                do {
                    try opener.invoke(connection)
                    // A closure that swallowed an error which ended the transaction (see below)
                    // must not be reported as committed.
                    guard connection.isInTransaction else { throw Self.groupRolledBack }
                } catch {
                    opener.failure = error
                    finished.append(opener)
                    connection.rollbackIfNeeded()
                    first = next()
                    continue
                }
                var members = [opener]
                while !opener.alone, let request = next() {
                    do {
                        try connection.execute("SAVEPOINT group_write")
                        try request.invoke(connection)
                        try connection.execute("RELEASE group_write")
                        members.append(request)
                        continue
                    } catch {
                        request.failure = error
                        finished.append(request)
                    }
                    if connection.isInTransaction,
                       (try? connection.execute("ROLLBACK TO group_write")) != nil,
                       (try? connection.execute("RELEASE group_write")) != nil {
                        continue
                    }
                    // SQLITE_FULL, SQLITE_IOERR or SQLITE_NOMEM may roll back the whole
                    // transaction (https://sqlite.org/lang_transaction.html, "Response To
                    // Errors Within A Transaction"): the earlier members' changes are gone too.
                    connection.rollbackIfNeeded()
                    let lost = (request.failure as? StoreError) ?? Self.groupRolledBack
                    for member in members { member.failure = lost }
                    finished += members
                    members = []
                    first = next()
                    break
                }
                guard !members.isEmpty else { continue }
                do {
                    try connection.execute("COMMIT")
                } catch {
                    // No member may report success for changes that are not durable.
                    connection.rollbackIfNeeded()
                    for member in members { member.failure = error }
                }
                finished += members
            }
        }

        monitor.withLock {
            for request in finished { request.state = .done }
            writerOwner = nil
            monitor.broadcast()
        }
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
                    // Opened under the lock: it takes well under a millisecond (a Postgres
                    // reader: a connection and its session set-up, a few), happens at most
                    // `readerCount` times, and keeps `close()` from missing a connection.
                    let reader = try openReader()
                    openedReaders += 1
                    busyReaders[me] = reader
                    return .pooled(reader)
                }
                readerWaiters += 1
                monitor.wait()
                readerWaiters -= 1
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
                    // Wake only for someone who waits for this: a reader, or `close()`. The
                    // monitor is shared with the group commit, whose followers would all wake
                    // for nothing on every read (with a reader per worker, nobody waits).
                    if readerWaiters > 0 || closed { monitor.broadcast() }
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

    @discardableResult
    func close() -> CloseOutcome {
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
        guard let writer else { return .alreadyClosed }
        if let checkpointer {
            checkpointer.uninstall(from: writer)
            checkpointer.stop()
        }
        var outcome = postgres == nil ? CloseOutcome.inMemory : .disconnected
        if path != Self.memoryPath && postgres == nil {
            // Readers of other processes may still pin the WAL; the checkpoint is then partial
            // and SQLite finishes it later, so its result is reported, not thrown.
            var logFrames: Int32 = 0
            var copiedFrames: Int32 = 0
            let code = sqlite3_wal_checkpoint_v2(writer.handle, nil, SQLITE_CHECKPOINT_TRUNCATE, &logFrames, &copiedFrames)
            if code == SQLITE_OK {
                outcome = .checkpointed
            } else if code == SQLITE_BUSY || code == SQLITE_LOCKED {
                outcome = .partial(framesLeft: logFrames >= copiedFrames ? Int(logFrames - copiedFrames) : nil)
            } else {
                outcome = .failed(code: code)
            }
        }
        writer.close()
        return outcome
    }
}

/// One caller's `write` on its way through a group commit. Its fields are handed between the
/// caller and the leader under the pool's monitor: the caller reads `failure` only after it has
/// seen `state == .done`, which the leader sets after its last use of the request.
private final class WriteRequest {
    enum State { case pending, taken, done }

    /// The caller's closure, wrapped so its result lands in the caller's frame.
    private var run: ((Connection) throws -> Void)?
    /// Runs in a transaction of its own (`Database.write(alone:)`).
    let alone: Bool
    var state = State.pending
    /// Why the write did not commit: its own closure threw, or BEGIN / COMMIT failed for its group.
    var failure: (any Error)?

    init(alone: Bool, _ run: @escaping (Connection) throws -> Void) {
        self.alone = alone
        self.run = run
    }

    /// Runs the closure once and drops it at once, so the caller's `withoutActuallyEscaping`
    /// finds it unreferenced when the caller wakes.
    func invoke(_ connection: Connection) throws {
        guard let run else { return }
        self.run = nil
        try run(connection)
    }
}

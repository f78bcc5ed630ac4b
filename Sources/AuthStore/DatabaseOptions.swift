/// How a `Database` opens and keeps its connections.
public struct DatabaseOptions: Sendable {
    /// Reader connections for a file database, opened on first use. `0` makes reads share the
    /// writer connection (as `:memory:` always does).
    public var readerCount: Int
    /// How long a connection waits for a lock held by another connection or process before the
    /// call fails with `StoreError.isBusy`.
    public var busyTimeoutMilliseconds: Int32
    /// After this long without a commit, a file database's checkpoint thread (once started by a
    /// WAL of 1,000 frames) copies the frames left in the WAL, so reads stop looking pages up
    /// in it; nil leaves them for the next pass under load (`Checkpointer`).
    public var idleCheckpointMilliseconds: Int?

    public init(readerCount: Int = 4, busyTimeoutMilliseconds: Int32 = 5000, idleCheckpointMilliseconds: Int? = 1000) {
        self.readerCount = readerCount
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.idleCheckpointMilliseconds = idleCheckpointMilliseconds
    }
}

/// What `Database.close()` did with a file database's write-ahead log.
public enum CloseOutcome: Sendable, Equatable {
    /// Every frame copied into the main file and the WAL truncated to zero bytes.
    case checkpointed
    /// Another connection (a process sharing the file) kept part of the WAL in use; SQLite
    /// copies the rest when the file is next opened or checkpointed. Frames left when known.
    case partial(framesLeft: Int?)
    /// The checkpoint failed with this SQLite result code; the WAL is intact and is replayed
    /// when the file is next opened, so nothing committed is lost.
    case failed(code: Int32)
    /// `:memory:`: there is no file to checkpoint.
    case inMemory
    /// Postgres mode: every commit is the server's; the connections were closed.
    case disconnected
    /// An earlier `close()` did the work.
    case alreadyClosed
}

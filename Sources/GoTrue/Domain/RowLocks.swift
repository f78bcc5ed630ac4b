import AuthHTTP
import AuthStore

/// Writes that read rows `FOR UPDATE SKIP LOCKED` (`StoreError.isRowLocked`, Postgres mode),
/// as several GoTrue replicas do on one database.
///
/// `RefreshTokenGrant` (tokens/service.go) reads the presented token's row and its session's
/// (and, with one session per user, the user's) that way inside its transaction. A row another
/// replica holds reads as "not found": the transaction is rolled back and the whole grant runs
/// again 10-30 ms later, so requests wait at the API level rather than on database connections,
/// for at most `retryLoopDuration` (5 s); then the grant answers 409 `conflict`. Here the write
/// round is rolled back the same way (its own locks go with it) and the wait happens with the
/// writer released: other writes of this process go on meanwhile, and the worker thread is
/// counted as waiting on something outside the process (`BlockingIO`).
///
/// With one process (and always on SQLite, whose writer is exclusive) no row is ever found
/// held, so this is a single write.
enum RowLocks {
    /// `retryLoopDuration`: how long GoTrue keeps retrying a grant whose rows are held.
    static let retryLoop: Duration = .seconds(5)

    /// What a round that met a held row ends with: an `AuthError` so that `Core.write` (and its
    /// hook rounds) hands it back as it is; recognised by this internal note.
    private static let heldNote = "a row this write reads FOR UPDATE is held by another transaction"

    private static var held: AuthError {
        var error = AuthError(409, .conflict, "row held by another transaction")
        error.internalError = heldNote
        return error
    }

    /// Runs `body` in a write; while a `forUpdate` read in it finds a row another transaction
    /// holds, the round is rolled back and run again after 10-30 ms (GoTrue's
    /// `10 + rand.Intn(20)` milliseconds) outside the writer, until `retryLoop` has passed since
    /// the first; then `exhausted` is thrown.
    static func write<T>(_ api: Core, exhausted: AuthError, _ body: @Sendable (Connection) throws -> T) throws(AuthError) -> T {
        let clock = ContinuousClock()
        let started = clock.now
        while true {
            do {
                return try api.write { conn in
                    do {
                        return try body(conn)
                    } catch let error as StoreError where error.isRowLocked {
                        throw held
                    }
                }
            } catch where error.internalError == heldNote {
                let pause = 10 + Int(api.project.environment.randomBytes(1)[0] % 20)
                BlockingIO.perform { sleepThread(seconds: Double(pause) / 1000) }
                if started.duration(to: clock.now) >= retryLoop { throw exhausted }
            }
        }
    }

    /// GoTrue's `...ForUpdate` finders outside the refresh grant: a row another transaction
    /// holds reads as not found (nil), and the caller answers what it answers for a missing one.
    static func skippingHeld<T>(_ find: () throws -> T?) throws -> T? {
        do {
            return try find()
        } catch let error as StoreError where error.isRowLocked {
            return nil
        }
    }
}

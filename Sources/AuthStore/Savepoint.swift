/// A nested transaction in the words both engines share (https://sqlite.org/lang_savepoint.html,
/// https://www.postgresql.org/docs/current/sql-savepoint.html): a throw from `body` undoes only
/// what `body` wrote and leaves the outer transaction usable. `ROLLBACK TO` keeps the savepoint
/// on the stack (in Postgres it also clears the aborted state) and `RELEASE` then removes it.
/// When the engine already ended the whole transaction (SQLite's SQLITE_FULL, SQLITE_IOERR),
/// there is nothing left to undo and the error goes up as it is.
func inSavepoint<T, Failure: Error>(named name: String, execute: (String) throws(Failure) -> Void,
                                    isInTransaction: () -> Bool, _ body: () throws -> T) throws -> T {
    try execute("SAVEPOINT \(name)")
    let result: T
    do {
        result = try body()
    } catch {
        if isInTransaction() {
            try? execute("ROLLBACK TO SAVEPOINT \(name)")
            try? execute("RELEASE SAVEPOINT \(name)")
        }
        throw error
    }
    try execute("RELEASE SAVEPOINT \(name)")
    return result
}

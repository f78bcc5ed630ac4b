import CSQLite

/// GoTrue's `forUpdate` finders (`FindSessionByID(tx, id, true)`, `FindUserWithRefreshToken`,
/// `FindAllSessionsForUser`, `FindFlowStateByIDForUpdate`,
/// `FindOAuthServerAuthorizationByIDForUpdate`) read a row with `SELECT ... FOR UPDATE SKIP
/// LOCKED`: the row stays locked until the transaction ends, and a row another transaction holds
/// is passed over instead of waited for. Several GoTrue replicas on one database rely on it; so
/// do several emulators in Postgres mode.
///
/// The store's finders with `forUpdate: true` do the same in Postgres mode, and tell a row that
/// is there but locked (`StoreError.isRowLocked`) from one that is not there (nil): the caller
/// decides, as GoTrue's callers do, whether that means "retry the whole write later" (a refresh)
/// or "not found" (a flow state, an OAuth authorization). SQLite ignores the flag: its writer is
/// exclusive, so a write never meets a row another one holds.
extension StoreError {
    private static let rowLockedPrefix = "row locked: "

    /// `table`'s row exists but another transaction holds it locked.
    static func rowLocked(_ table: String) -> StoreError {
        StoreError(code: SQLITE_LOCKED, message: "\(rowLockedPrefix)\(table) is held by another transaction (FOR UPDATE SKIP LOCKED)")
    }

    /// A `forUpdate` finder passed over a row another transaction holds (Postgres mode).
    public var isRowLocked: Bool {
        postgres == nil && code == SQLITE_LOCKED && message.hasPrefix(Self.rowLockedPrefix)
    }
}

extension PostgresConnection {
    /// The first row of `select` (a query without a locking clause), locked for the rest of the
    /// transaction: `FOR UPDATE SKIP LOCKED` (of `alias` when the query joins other tables, as
    /// the nullable side of an outer join cannot be locked). When the locked read finds nothing,
    /// the same query without the lock says whether the row is there but held
    /// (`StoreError.rowLocked`) or absent (nil): one more round trip, only on that path.
    func firstForUpdate(_ select: String, of alias: String? = nil, table: String, _ arguments: SQLValue...) throws(StoreError) -> Row? {
        let lock = alias.map { " FOR UPDATE OF \($0) SKIP LOCKED" } ?? " FOR UPDATE SKIP LOCKED"
        let (row, exists) = try store { connection in
            if let row = try connection.queryFirst(select + lock, arguments) { return (Optional(row), true) }
            return (nil, try connection.scalar("SELECT EXISTS (\(select))", arguments).int64Value == 1)
        }
        if row == nil && exists { throw StoreError.rowLocked(table) }
        return row
    }
}

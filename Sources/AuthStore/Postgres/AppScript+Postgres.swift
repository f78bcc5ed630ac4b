/// SQL of the app's own, run by the emulator inside one of its write transactions: a fixture's
/// `sql` step, which creates the app's rows next to the users the fixture just wrote, so a seed
/// (and `reset?keep_seed=true`) is all or nothing.
extension Connection {
    /// Runs `sql` (any number of `;`-separated statements, no arguments) in the open write
    /// transaction, as the connection's login role with that login's own `search_path`, as
    /// `psql` with the same connection string would, and as `supabase db reset` runs the app's
    /// seed file as `postgres`: not as GoTrue's `supabase_auth_admin` (which may not write the
    /// app's tables) with `search_path = auth`. The writer's role and search path are restored
    /// afterwards; when the transaction rolls back, so is everything the script did.
    ///
    /// The script must leave the transaction open: a COMMIT or ROLLBACK in it is reported as a
    /// failure (after a COMMIT, what ran before it is already kept). Postgres mode only.
    public func runAppScript(_ sql: String) throws(StoreError) {
        guard let postgres else {
            throw StoreError(code: 1, message: "app SQL runs only in Postgres mode (serve --db postgres://...)")
        }
        try postgres.store { (pg) throws -> Void in
            guard pg.isInTransaction else {
                throw PostgresError(sqlstate: "25P01", step: "app script", message: "app SQL runs only inside a write transaction")
            }
            guard let writer = try pg.queryFirst("SELECT current_user::text AS role, current_setting('search_path') AS path") else { return }
            // SET LOCAL: whatever happens next, the transaction's end brings the writer's back.
            try pg.executeScript("SET LOCAL ROLE NONE; SET LOCAL search_path TO DEFAULT")
            try pg.executeScript(sql)
            guard pg.isInTransaction else {
                throw PostgresError(
                    sqlstate: "25000", step: "app script",
                    message: "the SQL ended the emulator's transaction (COMMIT or ROLLBACK): leave transaction control to the emulator, "
                        + "which runs the SQL in the same transaction as the users")
            }
            // Session-level, as the writer set them up (`PostgresConnection.setUpSession`), in
            // case the script itself ran a plain SET ROLE or SET search_path.
            try pg.execute("SELECT set_config('role', $1, false), set_config('search_path', $2, false)",
                           .text(writer.string("role") ?? ""), .text(writer.string("path") ?? ""))
        }
    }
}

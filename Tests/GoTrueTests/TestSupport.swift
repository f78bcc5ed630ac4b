// The GoTrue tests use AuthTestSupport's harness (ManualClock, makeAPI, request helpers).
@_exported import AuthTestSupport

import Testing

extension Trait where Self == ConditionTrait {
    /// For a test that reads or writes the store with SQLite SQL of its own: in the Postgres pass
    /// (AUTH_EMULATOR_TEST_DB=postgres) the store has no SQLite connection to give it.
    static var runsSQLiteSQL: Self {
        .disabled(if: TestStore.isPostgres, "runs SQLite SQL on the store, which a Postgres database does not take")
    }
}

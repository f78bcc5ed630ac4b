import Foundation
import Testing
@testable import AuthStore

/// The trace bench/cost replays: every statement with its arguments, in a form the C replayer
/// (bench/cost/floor.c) decodes. Tracing is process-wide, so other suites' statements may appear
/// in the file while this test runs; it looks only for its own.
@Suite(.serialized) struct StatementTraceTests {
    @Test func recordsStatementsAndTypedArguments() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("trace-\(UUID().uuidString).txt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try StatementTrace.start(path: path)
        let db = try Database(path: ":memory:", migrations: [])
        try db.write { c in
            try c.execute("CREATE TABLE traced_t (i INTEGER, r REAL, s TEXT, b BLOB, n TEXT)")
            try c.execute("INSERT INTO traced_t VALUES (?, ?, ?, ?, ?)", .integer(-42), .real(0.5), "é\tx", .blob([0, 255]), nil)
            try c.execute("INSERT INTO traced_t VALUES (?, ?, ?, ?, ?)", .integer(7), .real(1), "", .blob([]), nil)
        }
        StatementTrace.stop()
        // After stop nothing more is written.
        try db.write { c in try c.execute("INSERT INTO traced_t VALUES (1, 1, 'late', NULL, NULL)") }

        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        let insert = "INSERT INTO traced_t VALUES (?, ?, ?, ?, ?)"
        let hexSQL = insert.utf8.map { String(format: "%02x", $0) }.joined()
        let definition = try #require(lines.first { $0.hasPrefix("P\t") && $0.hasSuffix("\t" + hexSQL) })
        let fields = definition.split(separator: "\t", omittingEmptySubsequences: false)
        let (connection, statement) = (fields[1], fields[2])
        let executions = lines.filter { $0.hasPrefix("X\t\(connection)\t\(statement)\t") }
        #expect(executions.count == 2)
        let half = String(0.5.bitPattern, radix: 16)
        #expect(executions.first == "X\t\(connection)\t\(statement)\ti-42\td\(half)\tt" + "c3a90978" + "\tb00ff\tn")
        #expect(executions.last == "X\t\(connection)\t\(statement)\ti7\td\(String(1.0.bitPattern, radix: 16))\tt\tb\tn")
        #expect(!lines.contains { $0.contains(Array("late".utf8).map { String(format: "%02x", $0) }.joined()) })
    }
}

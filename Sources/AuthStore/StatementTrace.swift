import CSQLite
import Synchronization

/// Records every statement `Connection` runs, with its arguments, so `bench/cost` can replay
/// exactly the same SQL in a tight loop and measure the SQLite floor of an operation (what the
/// statements cost on their own, against the server's CPU per operation).
///
/// A benchmark instrument, off unless `start(path:)` was called (`AUTH_EMULATOR_SQL_TRACE`): the
/// disabled check is one relaxed atomic load per statement. The file holds argument values, so it
/// carries secrets (password hashes, token hashes): it is written with mode 0600 and meant for
/// throwaway benchmark databases only.
///
/// Format, one record per line, fields separated by a tab:
/// - `P <conn> <stmt> <hex SQL>`: the first time a statement text is seen;
/// - `X <conn> <stmt> <arg>...`: one execution, each argument as `n` (NULL), `i<decimal>`,
///   `d<16 hex digits of the IEEE-754 bits>`, `t<hex UTF-8>` or `b<hex bytes>`.
/// - `S <conn> <hex SQL>`: Postgres mode only, a script run unprepared (transaction control,
///   session settings); its statements' arguments are `t`/`n`, the text libpq sent.
/// `conn` numbers connections in the order they were opened, so a replay can give each traced
/// connection its own connection (a reader's BEGIN may interleave with the writer's).
public enum StatementTrace {
    static let enabled = Atomic<Bool>(false)
    private static let nextConnection = Atomic<Int>(0)
    private static let sink = Mutex(Sink())

    private struct Sink {
        var fd: Int32 = -1
        var statementIDs: [String: Int] = [:]
    }

    /// Starts tracing into `path` (created or truncated). Throws when the file cannot be opened.
    public static func start(path: String) throws(StoreError) {
        let fd = openTruncatedForAppend(path)
        guard fd >= 0 else {
            throw StoreError(code: SQLITE_CANTOPEN, message: "statement trace \"\(path)\": cannot open (errno \(lastErrno()))")
        }
        sink.withLock { state in
            if state.fd >= 0 { closeFile(state.fd) }
            state = Sink(fd: fd)
        }
        enabled.store(true, ordering: .releasing)
    }

    /// Stops tracing and closes the file; connections opened while it ran record nothing more.
    public static func stop() {
        enabled.store(false, ordering: .releasing)
        sink.withLock { state in
            if state.fd >= 0 { closeFile(state.fd) }
            state = Sink()
        }
    }

    static func connectionNumber() -> Int {
        nextConnection.add(1, ordering: .relaxed).newValue
    }

    static func record(connection: Int, sql: String, arguments: [SQLValue]) {
        write(connection: connection, sql: sql) { line in
            for argument in arguments {
                line += "\t"
                switch argument {
                case .null: line += "n"
                case .integer(let value): line += "i\(value)"
                case .real(let value): line += "d" + String(value.bitPattern, radix: 16)
                case .text(let value): line += "t" + hex(Array(value.utf8))
                case .blob(let value): line += "b" + hex(value)
                }
            }
        }
    }

    /// A Postgres statement's execution: its arguments as the text libpq sent (`n` for NULL).
    static func record(connection: Int, sql: String, texts: [String?]) {
        write(connection: connection, sql: sql) { line in
            for text in texts { line += text.map { "\tt" + hex(Array($0.utf8)) } ?? "\tn" }
        }
    }

    /// `S <conn> <hex SQL>`: a Postgres script run with the simple query protocol, unprepared
    /// (transaction control, session settings).
    static func recordScript(connection: Int, sql: String) {
        sink.withLock { state in
            guard state.fd >= 0 else { return }
            writeAll(state.fd, Array("S\t\(connection)\t\(hex(Array(sql.utf8)))\n".utf8))
        }
    }

    private static func write(connection: Int, sql: String, arguments: (inout String) -> Void) {
        sink.withLock { state in
            guard state.fd >= 0 else { return }
            var line = ""
            let id: Int
            if let known = state.statementIDs[sql] {
                id = known
            } else {
                id = state.statementIDs.count + 1
                state.statementIDs[sql] = id
                line = "P\t\(connection)\t\(id)\t\(hex(Array(sql.utf8)))\n"
            }
            line += "X\t\(connection)\t\(id)"
            arguments(&line)
            line += "\n"
            // One write per record under the lock: records from concurrent connections never
            // interleave, and the file is in execution order.
            writeAll(state.fd, Array(line.utf8))
        }
    }

    private static let digits = Array("0123456789abcdef".utf8)

    private static func hex(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

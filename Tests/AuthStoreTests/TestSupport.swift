import Foundation
import Synchronization
@testable import AuthStore

/// A fresh directory per test, removed afterwards.
struct TemporaryDirectory: ~Copyable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("authstore-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Runs `body(index)` on `count` OS threads at once and waits for all of them; returns the
/// errors they threw.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) -> [any Error] {
    let errors = Mutex<[any Error]>([])
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            do { try body(index) } catch { errors.withLock { $0.append(error) } }
            group.leave()
        }
        thread.start()
    }
    group.wait()
    return errors.withLock { $0 }
}

/// Microseconds used as fixed timestamps in rows (the store never reads a clock).
let t0: Int64 = 1_700_000_000_000_000

extension Connection {
    /// Inserts a minimal user row.
    func insertUser(id: String, email: String? = nil, aud: String = "authenticated", phone: String? = nil) throws {
        try execute(
            "INSERT INTO users (id, aud, role, email, phone, created_at, updated_at) VALUES (?, ?, 'authenticated', ?, ?, ?, ?)",
            .text(id), .text(aud), SQLValue(email), SQLValue(phone), .integer(t0), .integer(t0))
    }

    func count(_ table: String) throws -> Int64 {
        try scalar("SELECT count(*) FROM \(table)").int64Value ?? -1
    }
}

struct ExpectedFailure: Error {}

/// Polls `condition` until it holds or `seconds` have passed; says whether it held. For a state
/// the code under test gives no signal for: the deadline only guards against a hang, so it is
/// generous (a busy machine may take seconds to get there).
func waitUntil(seconds: Double = 30, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while try !condition() {
        if Date() > deadline { return false }
        usleep(2_000)
    }
    return true
}

import AuthPlatform
import Foundation
import Synchronization
import Testing

@Suite struct ThreadNameTests {
    /// The name a thread reports from inside, read once it has run.
    private func nameSeen(spawning name: String) throws -> String {
        let seen = Mutex("")
        let handle = try Threads.spawn(name: name, stackSize: 64 * 1024) {
            let current = Threads.currentName()
            seen.withLock { $0 = current }
        }
        handle.join()
        return seen.withLock { $0 }
    }

    @Test func spawnedThreadsCarryTheirNames() throws {
        #expect(try nameSeen(spawning: "http-worker-7") == "http-worker-7")
        #if canImport(Darwin)
        #expect(try nameSeen(spawning: "a-name-longer-than-fifteen") == "a-name-longer-than-fifteen")
        #else
        // Linux keeps 15 bytes of a thread's name.
        #expect(try nameSeen(spawning: "a-name-longer-than-fifteen") == "a-name-longer-t")
        #endif
    }

    #if os(Linux)
    /// `top -H`, `perf --sort comm` and bench/cost.sh tell the server's threads apart by these
    /// names (the process's other threads, the test runner's, keep theirs).
    @Test func serverThreadsAreNamedByRole() throws {
        let expected: Set = ["http-loop-0", "http-loop-1", "http-worker-0", "http-worker-3"]
        func threadNames() throws -> Set<String> {
            let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
            return Set(tasks.compactMap { task in
                (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .newlines)
            })
        }
        try withServer { _ in
            // Each thread names itself when it first runs, which may come after `start` returns.
            var names: Set<String> = []
            _ = try waitUntil {
                names = try threadNames()
                return expected.isSubset(of: names)
            }
            #expect(expected.isSubset(of: names), "missing \(expected.subtracting(names).sorted()) among \(names.sorted())")
        }
    }
    #endif
}

import AuthPlatform
import Foundation
import Synchronization
import Testing

@Suite struct ThreadLocalTests {
    /// Each thread sees its own value, made on first use; a thread's writes never reach another.
    @Test func eachThreadHasItsOwnValue() {
        let made = Atomic<Int>(0)
        let local = ThreadLocal<[Int]> {
            made.add(1, ordering: .relaxed)
            return []
        }
        local.withValue { $0.append(-1) }
        let results = Mutex<[[Int]]>([])
        let done = DispatchGroup()
        for t in 0..<4 {
            done.enter()
            Thread.detachNewThread {
                for i in 0..<100 { local.withValue { $0.append(t * 1000 + i) } }
                let mine = local.withValue { $0 }
                results.withLock { $0.append(mine) }
                done.leave()
            }
        }
        done.wait()
        let all = results.withLock { $0 }
        #expect(all.count == 4)
        for values in all {
            #expect(values.count == 100)
            let thread = values[0] / 1000
            #expect(values == (0..<100).map { thread * 1000 + $0 })
        }
        #expect(Set(all.map { $0[0] / 1000 }) == [0, 1, 2, 3])
        #expect(local.withValue { $0 } == [-1])
        #expect(made.load(ordering: .relaxed) == 5)
    }

    final class Probe: @unchecked Sendable {
        static let released = Atomic<Int>(0)
        deinit { Self.released.add(1, ordering: .relaxed) }
    }

    /// A thread's value is released when the thread exits.
    @Test func valuesAreReleasedWithTheirThread() {
        let local = ThreadLocal<Probe?> { Probe() }
        let before = Probe.released.load(ordering: .relaxed)
        let exited = DispatchSemaphore(value: 0)
        let thread = Thread {
            _ = local.withValue { $0 }
        }
        thread.start()
        // The destructor runs during thread exit, after the closure returns.
        var released = false
        for _ in 0..<500 where !released {
            released = Probe.released.load(ordering: .relaxed) > before
            if !released { _ = exited.wait(timeout: .now() + .milliseconds(10)) }
        }
        #expect(released)
    }
}

import AuthPlatform
import Foundation
import Testing

@Suite struct LockTests {
    /// Threads incrementing through the lock lose no update (a read-modify-write spread over
    /// two statements, so an unguarded version would interleave).
    @Test func updatesAreMutuallyExclusive() {
        let counter = Lock(0)
        let done = DispatchGroup()
        for _ in 0..<4 {
            done.enter()
            Thread.detachNewThread {
                for _ in 0..<20_000 {
                    counter.withLock { value in
                        let seen = value
                        value = seen + 1
                    }
                }
                done.leave()
            }
        }
        done.wait()
        #expect(counter.withLock { $0 } == 80_000)
    }

    @Test func aThrowLeavesTheLockFree() {
        struct Refused: Error {}
        let lock = Lock(1)
        #expect(throws: Refused.self) { try lock.withLock { (_: inout Int) throws(Refused) in throw Refused() } }
        #expect(lock.withLock { $0 } == 1)
    }

    /// A timed wait without a signal returns false after about its time; one signalled from
    /// another thread returns true long before its (much longer) time is up.
    @Test func aTimedWaitEndsOnItsTimeOrOnASignal() {
        let monitor = ConditionLock(false)
        let start = DispatchTime.now().uptimeNanoseconds
        monitor.lock()
        let signalled = monitor.wait(nanoseconds: 30_000_000)
        monitor.unlock()
        let waited = DispatchTime.now().uptimeNanoseconds - start
        #expect(!signalled)
        #expect(waited >= 30_000_000)

        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.02)
            monitor.withLock { ready in
                ready = true
                monitor.signal()
            }
        }
        let before = DispatchTime.now().uptimeNanoseconds
        monitor.lock()
        var woken = true
        while !monitor.state && woken { woken = monitor.wait(nanoseconds: 60_000_000_000) }
        let ready = monitor.state
        monitor.unlock()
        #expect(woken && ready)
        #expect(DispatchTime.now().uptimeNanoseconds - before < 30_000_000_000)
    }
}

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
}

import AuthPlatform
import Dispatch
import Testing
@testable import EmulatorTools
@testable import GoTrue

// Every request, the event loop's `/health` among them, takes the live configuration's lock for
// its snapshot, so a change (a PATCH that parses and escapes email templates) is made outside it.
@Suite struct LiveConfigurationTests {
    @Test func readersGoOnWhileAChangeIsBeingMade() throws {
        let live = LiveConfiguration(Configuration())
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let changer = try Threads.spawn(name: "change", stackSize: 1 << 20) {
            live.update { config in
                entered.signal()
                _ = release.wait(timeout: .now() + 60)
                config.disableSignup = true
            }
        }
        #expect(entered.wait(timeout: .now() + 30) == .success)
        let read = DispatchSemaphore(value: 0)
        let reader = try Threads.spawn(name: "read", stackSize: 1 << 20) {
            _ = live.current
            read.signal()
        }
        // The read ends while the change is still held open (the bound only guards a hang).
        #expect(read.wait(timeout: .now() + 30) == .success)
        #expect(live.current.disableSignup == false)
        release.signal()
        changer.join()
        reader.join()
        #expect(live.current.disableSignup)
    }

    @Test func changesMadeAtOnceAreAllKept() throws {
        var start = Configuration()
        start.uriAllowList = []
        let live = LiveConfiguration(start)
        let threads = try (0..<8).map { index in
            try Threads.spawn(name: "change", stackSize: 1 << 20) {
                for step in 0..<50 {
                    live.update { $0.uriAllowList.append("https://t\(index)-\(step).example") }
                }
            }
        }
        for thread in threads { thread.join() }
        #expect(live.current.uriAllowList.count == 400)
        #expect(Set(live.current.uriAllowList).count == 400)
    }
}

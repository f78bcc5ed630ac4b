#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization
import Testing
@testable import AuthHTTP

/// Worker-queue lanes (`HTTPResponder.dispatch`): lanes take turns, so one lane's backlog does
/// not hold up another's requests.
@Suite struct LaneTests {
    func job(_ lane: Int, _ tag: Int) -> Job {
        var job = Job(request: HTTPRequest(method: "GET", target: "/\(tag)"), token: UInt64(tag), loop: 0, keepAlive: true, enqueuedAt: 0)
        job.lane = lane
        return job
    }

    @Test func lanesTakeTurnsAndEachKeepsItsOrder() {
        var queue = LaneQueue()
        for (lane, tag) in [(1, 1), (1, 2), (1, 3), (1, 4), (2, 5), (0, 6), (2, 7), (0, 8)] { queue.push(job(lane, tag)) }
        #expect(queue.count == 8)
        #expect(queue.first?.token == 1)
        var order: [UInt64] = []
        while let next = queue.pop() { order.append(next.token) }
        // Lane 1 arrived first, then 2, then 0; each gives one job per turn.
        #expect(order == [1, 5, 6, 2, 7, 8, 3, 4])
        #expect(queue.isEmpty && queue.count == 0 && queue.first == nil)
        // An emptied lane joins the turns again at the back when it gets a job.
        queue.push(job(2, 9))
        queue.push(job(1, 10))
        queue.push(job(2, 11))
        #expect([queue.pop(), queue.pop(), queue.pop()].map { $0?.token } == [9, 10, 11])
    }

    @Test func oneLaneIsFirstInFirstOut() {
        var queue = LaneQueue()
        for tag in 0..<100 { queue.push(job(0, tag)) }
        var order: [UInt64] = []
        while let next = queue.pop() { order.append(next.token) }
        #expect(order == (0..<100).map(UInt64.init))
    }

    /// One worker; twelve slow requests in lane 1, then one in lane 2. First in, first out, the
    /// lane 2 request would wait for all twelve; with lanes it waits for the one running and at
    /// most one more.
    @Test func aFloodInOneLaneDelaysAnotherByAboutOneJob() throws {
        final class Recorder: HTTPResponder {
            let busyDone = Atomic<Int>(0)
            let doneWhenQuietRan = Atomic<Int>(-1)
            /// Requests the loop has parsed and handed on (`dispatch` runs on the loop).
            let dispatched = Atomic<Int>(0)
            let started = DispatchSemaphore(value: 0)
            /// Holds the first busy request (and with it the only worker) until all are queued.
            let firstGate = DispatchSemaphore(value: 0)
            func respond(to request: HTTPRequest) -> HTTPResponse {
                if request.path == "/busy" {
                    if busyDone.load(ordering: .relaxed) == 0 {
                        started.signal()
                        _ = firstGate.wait(timeout: .now() + 60)
                    }
                    usleep(30_000)
                    busyDone.add(1, ordering: .relaxed)
                } else {
                    doneWhenQuietRan.store(busyDone.load(ordering: .relaxed), ordering: .relaxed)
                }
                return HTTPResponse(status: 200, body: Array("ok".utf8))
            }
            func dispatch(_ request: HTTPRequest) -> HTTPDispatch {
                dispatched.add(1, ordering: .relaxed)
                return .queued(lane: request.path == "/busy" ? 1 : 2)
            }
        }
        let recorder = Recorder()
        let server = HTTPServer(configuration: HTTPServerConfiguration(port: 0, loopThreads: 1, workerThreads: 1), responder: recorder)
        try server.start()
        defer {
            recorder.firstGate.signal()
            server.shutdown()
        }
        let busy = try (0..<12).map { _ in try TestClient(port: server.port) }
        for client in busy { try client.send("GET /busy HTTP/1.1\r\nHost: h\r\n\r\n") }
        // The first busy request holds the worker while the loop queues the others and the quiet
        // one: the order they then run in is the queue's doing, not the machine's speed.
        #expect(recorder.started.wait(timeout: .now() + 30) == .success)
        let quiet = try TestClient(port: server.port)
        try quiet.send("GET /quiet HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(waitUntil { recorder.dispatched.load(ordering: .relaxed) == 13 })
        recorder.firstGate.signal()
        #expect(try quiet.readResponse().status == 200)
        let done = recorder.doneWhenQuietRan.load(ordering: .relaxed)
        #expect(done >= 0 && done <= 3, "\(done) busy requests finished before the quiet one ran")
        for client in busy { #expect(try client.readResponse().status == 200) }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AuthHTTP
import AuthJSON
import AuthStore
import Synchronization
import Testing
@testable import EmulatorTools
@testable import GoTrue

/// `GET /user` on a file database is answered by the event loop (`respondsInline`): a token
/// check and one read on a reader connection of the loop's own, without the two wake-ups of a
/// worker's hand-off.
@Suite struct QuickReadTests {
    /// A fresh file database under /tmp, removed by `remove()`.
    struct FileDatabase {
        let directory = "/tmp/auth-quick-read-\(getpid())-\(Int.random(in: 0..<1_000_000_000))"
        var path: String { directory + "/auth.db" }

        func open() throws -> Database {
            mkdir(directory, 0o700)
            return try Database(path: path)
        }

        func remove() {
            for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
            rmdir(directory)
        }
    }

    @Test func onlyGetUserOnAFileDatabaseJoinsTheConfigurationRoutes() throws {
        let file = FileDatabase()
        defer { file.remove() }
        let onFile = GoTrueAPI(emulating: Project(configuration: testConfiguration(), database: try file.open(),
                                                environment: Environment(clock: ManualClock())))
        let inMemory = try makeAPI()
        func inline(_ api: GoTrueAPI, _ method: String, _ target: String) -> Bool {
            api.respondsInline(to: request(method, target))
        }
        #expect(inline(onFile, "GET", "/user"))
        #expect(inline(onFile, "GET", "/auth/v1/user"))
        #expect(inline(onFile, "GET", "/user?x=1"))
        #expect(inline(onFile, "GET", "/health"))
        #expect(inline(onFile, "HEAD", "/health"))
        // HEAD is not a route of /user; writes, the admin API and the factors list stay with workers.
        for (method, target) in [("HEAD", "/user"), ("PUT", "/user"), ("GET", "/admin/users"), ("GET", "/user/identities"),
                                  ("GET", "/factors"), ("GET", "/userx"), ("GET", "/auth/v1/user/identities")] {
            #expect(!inline(onFile, method, target), "\(method) \(target)")
        }
        // In memory every read shares the writer's connection, so it could wait for a group commit.
        #expect(!inline(inMemory, "GET", "/user"))
        #expect(inline(inMemory, "GET", "/health"))
    }

    /// With the one worker held by a slow request, `GET /user` is still answered: by the loop.
    /// Handed to the pool, it would wait behind the held request and the read would time out.
    @Test func getUserIsAnsweredWhileTheOnlyWorkerIsHeld() throws {
        let file = FileDatabase()
        defer { file.remove() }
        let project = Project(configuration: testConfiguration(), database: try file.open(),
                              environment: Environment(clock: ManualClock()))
        final class Flags: Sendable {
            let entered = Atomic<Bool>(false)
            let released = Atomic<Bool>(false)
        }
        let flags = Flags()
        let hold = Route("GET", "/test/hold", operation: "test.hold") { _ in
            flags.entered.store(true, ordering: .releasing)
            // Until the test releases it; the minute only guards against a hang.
            _ = waitUntil(seconds: 60) { flags.released.load(ordering: .acquiring) }
            return .json(["held": true])
        }
        let api = GoTrueAPI(emulating: project, extensions: [hold])
        let session = api.signUp("loop@example.com")
        let token = try #require(session["access_token"]?.stringValue)

        let server = HTTPServer(
            configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, loopThreads: 1, workerThreads: 1),
            responder: api
        )
        try server.start()
        defer {
            flags.released.store(true, ordering: .releasing)
            server.shutdown(timeout: .seconds(5))
        }

        let holder = try TestClient(port: server.port, receiveTimeout: 90)
        try holder.send("GET /test/hold HTTP/1.1\r\nHost: h\r\n\r\n")
        let holding = waitUntil { flags.entered.load(ordering: .acquiring) }
        #expect(holding)

        // Well under the hold (which lasts until released): a read queued behind it would time
        // out, however busy the machine.
        let reader = try TestClient(port: server.port, receiveTimeout: 20)
        for target in ["/user", "/auth/v1/user"] {
            try reader.send("GET \(target) HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer \(token)\r\n\r\n")
            let response = try reader.readResponse()
            #expect(response.status == 200)
            let user = try JSON(parsing: response.body)
            #expect(user["email"]?.stringValue == "loop@example.com")
        }
        // An unknown token is refused as before, also on the loop.
        try reader.send("GET /user HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer not-a-jwt\r\n\r\n")
        #expect(try reader.readResponse().status == 403)
        let stillHeld = !flags.released.load(ordering: .acquiring)
        #expect(stillHeld)

        flags.released.store(true, ordering: .releasing)
        let held = try holder.readResponse()
        #expect(held.status == 200)
        #expect(try JSON(parsing: held.body)["held"] == true)
    }
}

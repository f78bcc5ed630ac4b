@testable import AuthEmulator
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthStore
@testable import EmulatorConfiguration
import EmulatorTools
import Foundation
import GoTrue
import Synchronization
import Testing
@testable import auth_emulator

/// Several projects in one emulator: how a request finds its project, how a project's keys are
/// made its own, and what the registry refuses.
@Suite struct ProjectTests {
    @Test func refsAreDNSLabels() {
        for ref in ["a", "abc", "my-app-2", "abcdefghijklmnopqrst", String(repeating: "x", count: 63)] {
            #expect(ProjectRegistry.isValidRef(ref), "\(ref)")
        }
        for ref in ["", "-a", "a-", "A", "a_b", "a.b", "a/b", "ü", String(repeating: "x", count: 64)] {
            #expect(!ProjectRegistry.isValidRef(ref), "\(ref)")
        }
    }

    @Test func hostNamesUnderLocalhostNameAProject() {
        #expect(ProjectRouter.hostRef("abc.localhost") == "abc")
        #expect(ProjectRouter.hostRef("abc.localhost:9999") == "abc")
        #expect(ProjectRouter.hostRef("ABC.LocalHost.:54321") == "abc")
        for host in [nil, "localhost", "localhost:9999", "127.0.0.1:9999", "a.b.localhost", ".localhost", "abc.example.com", "[::1]:9999"] {
            #expect(ProjectRouter.hostRef(host) == nil, "\(host ?? "nil")")
        }
    }

    @Test func aProjectsExternalURLKeepsTheGatewaySuffixLast() {
        #expect(ProjectRegistry.externalURL(defaultURL: "http://127.0.0.1:9999", ref: "a") == "http://127.0.0.1:9999/project/a")
        #expect(ProjectRegistry.externalURL(defaultURL: "http://127.0.0.1:54321/auth/v1/", ref: "a")
            == "http://127.0.0.1:54321/project/a/auth/v1")
    }

    @Test func derivedBytesAreStablePerSecretAndLabel() {
        let one = DerivedBytes(secret: Array("s".utf8), label: "auth-emulator project a")
        let again = DerivedBytes(secret: Array("s".utf8), label: "auth-emulator project a")
        // Read in different chunkings, the stream is the same.
        let first = one.bytes(count: 40)
        let second = again.bytes(count: 7) + again.bytes(count: 33)
        #expect(first == second)
        #expect(first != DerivedBytes(secret: Array("s".utf8), label: "auth-emulator project b").bytes(count: 40))
        #expect(first != DerivedBytes(secret: Array("t".utf8), label: "auth-emulator project a").bytes(count: 40))
        #expect(Set(first).count > 20)
    }

    /// Requests go through the server's router in-process, as the HTTP server hands them over.
    func request(_ emulator: Emulator, _ method: String, _ target: String, host: String = "127.0.0.1",
                 headers: HTTPHeaders = [:], body: String = "") -> HTTPResponse {
        var all = headers
        all["Host"] = host
        let router = ProjectRouter(registry: emulator.projects, primary: emulator.api)
        return router.respond(to: HTTPRequest(method: method, target: target, headers: all, body: Array(body.utf8)))
    }

    func json(_ response: HTTPResponse) throws -> JSONObject {
        guard case .object(let object) = try JSON(parsing: response.body) else { throw JSONTestError() }
        return object
    }

    struct JSONTestError: Error {}

    @Test func eachProjectHasItsOwnKeysAndStateButTheSameStartingSettings() throws {
        var options = EmulatorOptions.testing()
        options.configuration.mailer.autoconfirm = false
        let emulator = try Emulator.start(options)
        defer { emulator.stop() }
        let a = try emulator.projects.create(ProjectSpec(ref: "a")).hosted()
        let b = try emulator.projects.create(ProjectSpec(ref: "b", settings: ["mailer_autoconfirm": true])).hosted()
        let (ca, cb, base) = (a.project.configuration, b.project.configuration, emulator.project.configuration)

        #expect(Set([ca.jwt.secret, cb.jwt.secret, base.jwt.secret]).count == 3)
        #expect(Set([ca.apiKeys.anon, cb.apiKeys.anon, base.apiKeys.anon]).count == 3)
        #expect(Set([ca.apiKeys.publishable, cb.apiKeys.publishable, base.apiKeys.publishable]).count == 3)
        // User tokens: a key of the CLI's kind (ES256), a different one per project.
        #expect(ca.jwt.signingKey.algorithm == .es256)
        #expect(Set([ca.jwt.signingKey.kid, cb.jwt.signingKey.kid, base.jwt.signingKey.kid]).count == 3)
        // Starting settings are the server's, then the project's own.
        #expect(!ca.mailer.autoconfirm && cb.mailer.autoconfirm)
        #expect(ca.externalURL == emulator.url + "/project/a")
        #expect(ca.jwt.issuer == emulator.url + "/project/a/auth/v1")
        #expect(ca.mailer.urlPaths.confirmation == "/project/a/auth/v1/verify")

        // The same ref in another server with the same secret derives the same keys (a
        // reopened project keeps its sessions valid).
        let other = try Emulator.start(options)
        defer { other.stop() }
        let again = try other.projects.create(ProjectSpec(ref: "a")).hosted()
        #expect(again.project.configuration.apiKeys == ca.apiKeys)
        #expect(again.project.configuration.jwt.signingKey.kid == ca.jwt.signingKey.kid)

        // Isolation through the router: a sign-up in a is not in b nor in the default project.
        let signup = request(emulator, "POST", "/project/a/auth/v1/signup", headers: ["apikey": ca.apiKeys.anon],
                             body: #"{"email": "x@example.com", "password": "password1"}"#)
        #expect(signup.status == 200)
        #expect(try a.project.database.read { try $0.query("SELECT count(*) AS n FROM users") }.first?.int("n") == 1)
        #expect(try b.project.database.read { try $0.query("SELECT count(*) AS n FROM users") }.first?.int("n") == 0)
        #expect(try emulator.project.database.read { try $0.query("SELECT count(*) AS n FROM users") }.first?.int("n") == 0)
        // The mail's link stays in the project.
        let mail = request(emulator, "GET", "/emulator/v1/outbox", host: "a.localhost:1",
                           headers: ["Authorization": "Bearer " + ca.apiKeys.serviceRole])
        #expect(mail.status == 200)
        #expect(String(decoding: mail.body, as: UTF8.self).contains(emulator.url + "/project/a/auth/v1/verify?token="))
        // b's service_role key opens nothing in a.
        let crossed = request(emulator, "GET", "/project/a/auth/v1/admin/users",
                              headers: ["Authorization": "Bearer " + cb.apiKeys.serviceRole])
        #expect(crossed.status == 403)
    }

    // Two processes serving one database folder: a drop would delete files the other one still
    // acknowledges writes into, so it is refused (409) while the other one runs, and allowed
    // once it has stopped. (flock locks belong to the open file: two servers in one process
    // stand for two processes.)
    @Test func aSharedFolderRefusesDrops() throws {
        let directory = NSTemporaryDirectory() + "shared-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = EmulatorOptions.testing()
        options.databasePath = directory + "/auth.db"
        let first = try Emulator.start(options)
        defer { first.stop() }
        try first.projects.create(ProjectSpec(ref: "shared"))
        let second = try Emulator.start(options)
        #expect(try second.projects.project("shared") != nil)  // reopened from the folder
        #expect {
            try first.projects.remove("shared")
        } throws: { error in
            (error as? AuthError)?.status == 409 && (error as? AuthError)?.message.contains("another auth-emulator process") == true
        }
        #expect(try first.projects.project("shared") != nil)
        #expect(FileManager.default.fileExists(atPath: directory + "/projects/shared.db"))
        second.stop()
        #expect(try first.projects.remove("shared"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/projects/shared.db"))
        // Projects in memory are the process's own: dropped whatever else serves the folder.
        let third = try Emulator.start(options)
        defer { third.stop() }
        try first.projects.create(ProjectSpec(ref: "mine", inMemory: true))
        #expect(try first.projects.remove("mine"))
    }

    @Test func theRegistryRefusesWithoutChangingAnything() throws {
        let emulator = try Emulator.start(.testing())
        defer { emulator.stop() }
        try emulator.projects.create(ProjectSpec(ref: "a"))
        #expect(throws: AuthError.self) { try emulator.projects.create(ProjectSpec(ref: "a")) }
        #expect(throws: AuthError.self) { try emulator.projects.create(ProjectSpec(ref: "Bad")) }
        #expect(throws: AuthError.self) { try emulator.projects.create(ProjectSpec(ref: "default")) }
        #expect(throws: AuthError.self) {
            try emulator.projects.create(ProjectSpec(ref: "c", settings: ["password_min_length": .string("many")]))
        }
        #expect(throws: AuthError.self) { try emulator.projects.create(ProjectSpec(ref: "d", configTOML: "[auth]\nno_such_key = 1\n")) }
        #expect(throws: AuthError.self) { try emulator.projects.remove("default") }
        #expect(emulator.projects.all.map(\.ref) == ["default", "a"])

        #expect(try emulator.projects.remove("a"))
        #expect(try !emulator.projects.remove("a"))
        let gone = request(emulator, "GET", "/project/a/health")
        #expect(gone.status == 404)
        #expect(try json(gone)["msg"] == .string(#"No project "a" on this emulator: create it with POST /emulator/v1/projects"#))
        // The default project is there under its name too, and unaffected.
        #expect(request(emulator, "GET", "/project/default/health").status == 200)
        #expect(request(emulator, "GET", "/health", host: "default.localhost").status == 200)
    }

    @Test func pathMountsStripTheirPrefixBeforeTheProjectSeesTheRequest() throws {
        let emulator = try Emulator.start(.testing())
        defer { emulator.stop() }
        let a = try emulator.projects.create(ProjectSpec(ref: "a")).hosted()
        let router = ProjectRouter(registry: emulator.projects, primary: emulator.api)
        for (target, path, rewritten) in [("/project/a", "/", "/"), ("/project/a?x=1", "/", "/?x=1"),
                                          ("/project/a/auth/v1/settings?x=1", "/auth/v1/settings", "/auth/v1/settings?x=1")] {
            guard case .project(let api, let inner, let mount, let lane) = router.route(HTTPRequest(method: "GET", target: target), opening: true) else {
                Issue.record("\(target) was not routed")
                continue
            }
            #expect(api === a.api && lane == a.lane && lane != 0)
            #expect(inner.path == path && inner.target == rewritten && mount == "/project/a")
        }
        // Quick reads stay on the event loop for a mounted project as for the default one.
        #expect(router.respondsInline(to: HTTPRequest(method: "GET", target: "/project/a/auth/v1/health")))
        #expect(!router.respondsInline(to: HTTPRequest(method: "POST", target: "/project/a/auth/v1/signup")))
        // `/projectx` is an ordinary (unknown) GoTrue path of the default project.
        #expect(router.dispatch(HTTPRequest(method: "POST", target: "/project/a/auth/v1/signup")) == .queued(lane: a.lane))
        #expect(router.dispatch(HTTPRequest(method: "POST", target: "/auth/v1/signup")) == .queued(lane: 0))
        guard case .project(let api, _, let mount, _) = router.route(HTTPRequest(method: "GET", target: "/projects"), opening: true) else {
            Issue.record("not routed")
            return
        }
        #expect(api === emulator.api && mount == "")
    }

    @Test func aProjectInMemoryOpensOnItsFirstRequest() throws {
        let emulator = try Emulator.start(.testing())
        defer { emulator.stop() }
        let entry = try emulator.projects.create(ProjectSpec(ref: "lazy"))
        // Made, keyed and listed, but no database nor API yet.
        #expect(entry.openProject == nil)
        #expect(entry.configuration.apiKeys != emulator.project.configuration.apiKeys)
        #expect(emulator.projects.all.map(\.ref) == ["default", "lazy"])
        // The event loop asks first: it never opens a database, it hands the request to a worker.
        let router = ProjectRouter(registry: emulator.projects, primary: emulator.api)
        let health = HTTPRequest(method: "GET", target: "/project/lazy/health")
        #expect(router.dispatch(health) == .queued(lane: entry.lane))
        #expect(entry.openProject == nil)
        #expect(request(emulator, "GET", "/project/lazy/health").status == 200)
        let opened = try #require(entry.openProject)
        #expect(opened.project.configuration.apiKeys == entry.initial.apiKeys)
        #expect(try entry.hosted() === opened)
        // Open, its quick reads are the loop's again.
        #expect(router.dispatch(health) == .inline)
        // Dropped, its database closes...
        #expect(try emulator.projects.remove("lazy"))
        #expect(throws: (any Error).self) { try opened.project.database.read { try $0.query("SELECT 1") } }
        // ...and one dropped before it opened cannot be opened by a request that found it just before.
        let never = try emulator.projects.create(ProjectSpec(ref: "never"))
        #expect(try emulator.projects.remove("never"))
        #expect(throws: AuthError.self) { try never.hosted() }
    }

    @Test func autoCreationMakesAProjectOnItsFirstRequest() throws {
        var options = EmulatorOptions.testing()
        options.autoCreateProjects = true
        let emulator = try Emulator.start(options)
        defer { emulator.stop() }
        // On the event loop an unknown ref is only handed to a worker, which makes it.
        let router = ProjectRouter(registry: emulator.projects, primary: emulator.api)
        #expect(router.dispatch(HTTPRequest(method: "GET", target: "/project/fresh/health")) == .queued(lane: 0))
        #expect(emulator.projects.all.map(\.ref) == ["default"])
        #expect(request(emulator, "GET", "/health", host: "fresh.localhost:1").status == 200)
        #expect(request(emulator, "GET", "/project/other/health").status == 200)
        #expect(request(emulator, "GET", "/project/Not_Valid/health").status == 404)
        #expect(emulator.projects.all.map(\.ref) == ["default", "fresh", "other"])
    }

    /// Auto-creation needs no key: it stops at `--max-projects` (the next unknown ref gets the
    /// unknown project's 404, saying why), and what it makes lives in memory unless asked, so
    /// key-less requests leave no files in the database's folder.
    @Test func autoCreationIsCappedAndInMemory() throws {
        let directory = NSTemporaryDirectory() + "auto-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = EmulatorOptions.testing()
        options.databasePath = directory + "/auth.db"
        options.autoCreateProjects = true
        options.maxProjects = 2
        let emulator = try Emulator.start(options)
        defer { emulator.stop() }
        #expect(request(emulator, "GET", "/project/one/health").status == 200)
        #expect(request(emulator, "GET", "/health", host: "two.localhost").status == 200)
        let refused = request(emulator, "GET", "/project/three/health")
        #expect(refused.status == 404)
        #expect(try json(refused)["msg"]?.stringValue?.contains("--max-projects 2") == true)
        #expect(emulator.projects.all.map(\.ref) == ["default", "one", "two"])
        // Known projects still answer, and a key holder may still make more.
        #expect(request(emulator, "GET", "/project/one/health").status == 200)
        try emulator.projects.create(ProjectSpec(ref: "made"))
        #expect(emulator.projects.entry("one")?.databasePath == EmulatorOptions.inMemory)
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/projects")) ?? []
        #expect(!files.contains { $0.hasPrefix("one.") || $0.hasPrefix("two.") })
        #expect(files.contains("made.json"))

        // Asked to persist: kept on the folder like the others.
        var persisting = EmulatorOptions.testing()
        persisting.databasePath = directory + "/second/auth.db"
        persisting.autoCreateProjects = true
        persisting.persistAutoCreatedProjects = true
        let second = try Emulator.start(persisting)
        defer { second.stop() }
        #expect(request(second, "GET", "/project/kept/health").status == 200)
        #expect(FileManager.default.fileExists(atPath: directory + "/second/projects/kept.json"))
    }
}

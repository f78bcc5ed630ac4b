import AuthHTTP
import Testing
@testable import GoTrue

@Suite struct RouterTests {
    let router = Router([
        Route("GET", "/health", operation: "health") { _ in HTTPResponse(status: 200) },
        Route("GET", "/admin/users/{user_id}", operation: "admin.users.get") { _ in HTTPResponse(status: 200) },
        Route("PUT", "/admin/users/{user_id}", operation: "admin.users.update") { _ in HTTPResponse(status: 200) },
    ])

    @Test func exactAndParameterMatches() throws {
        guard case .found(let route, let params) = router.match(method: "GET", path: "/admin/users/abc") else {
            Issue.record("no match")
            return
        }
        #expect(route.operation == "admin.users.get")
        #expect(params == ["user_id": "abc"])
        guard case .found(let put, _) = router.match(method: "PUT", path: "/admin/users/abc") else {
            Issue.record("no match")
            return
        }
        #expect(put.operation == "admin.users.update")
    }

    @Test func notFoundCases() {
        for path in ["/nope", "/health/", "/health/x", "//health", "/admin/users", "/admin/users/", "health", ""] {
            guard case .notFound = router.match(method: "GET", path: path) else {
                Issue.record("expected 404 for \(path)")
                continue
            }
        }
    }

    @Test func methodNotAllowedListsMethods() {
        guard case .methodNotAllowed(let allowed) = router.match(method: "DELETE", path: "/admin/users/1") else {
            Issue.record("expected 405")
            return
        }
        #expect(allowed == ["GET", "PUT"])
        guard case .methodNotAllowed = router.match(method: "HEAD", path: "/health") else {
            Issue.record("HEAD is not routed to GET, as chi")
            return
        }
    }
}

import AuthHTTP
import Testing
@testable import EmulatorTools
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

    /// chi splits on the byte `/`: a segment that starts with a combining mark, an emoji
    /// modifier, a variation selector or a tag character is a segment like any other, and a
    /// literal matches only its own bytes (not a canonically equivalent spelling).
    @Test(arguments: ["\u{301}", "\u{1F3FB}", "\u{FE0F}", "\u{E0041}", "\u{200D}x", "e\u{301}"])
    func segmentsAreSplitOnBytes(segment: String) {
        guard case .found(let route, let parameters) = router.match(method: "GET", path: "/admin/users/" + segment) else {
            Issue.record("no route for a segment starting with \(segment.unicodeScalars.first!.properties.name ?? "?")")
            return
        }
        #expect(route.operation == "admin.users.get")
        #expect(parameters["user_id"].map { Array($0.utf8) } == Array(segment.utf8))
        #expect(Self.describe(router.match(method: "GET", path: "/health/" + segment)) == "404")
    }

    @Test func literalsMatchTheirBytesOnly() {
        let accented = Router([Route("GET", "/caf\u{E9}", operation: "composed") { _ in HTTPResponse(status: 200) }])
        #expect(Self.describe(accented.match(method: "GET", path: "/caf\u{E9}")) == "found GET composed []")
        // The same text decomposed: equal as Swift Strings, other bytes to Go.
        #expect(Self.describe(accented.match(method: "GET", path: "/cafe\u{301}")) == "404")
        // U+212A KELVIN SIGN is canonically equivalent to K.
        let kelvin = Router([Route("GET", "/K", operation: "k") { _ in HTTPResponse(status: 200) }])
        #expect(Self.describe(kelvin.match(method: "GET", path: "/\u{212A}")) == "404")
    }

    static func describe(_ match: Router.Match) -> String {
        switch match {
        case .found(let route, let parameters):
            "found \(route.method) \(route.operation) \(parameters.sorted { $0.key < $1.key })"
        case .methodNotAllowed(let allowed): "405 \(allowed)"
        case .notFound: "404"
        }
    }

    /// The literal-path table answers exactly as the scan over every route would, for every
    /// literal path of the server's real route table and any method, including a literal path
    /// that a parameter route of another method also matches.
    @Test func literalPathTableAnswersAsTheScan() throws {
        let overlapping = Router([
            Route("GET", "/admin/users/{user_id}", operation: "get") { _ in HTTPResponse(status: 200) },
            Route("POST", "/admin/users/bulk", operation: "bulk") { _ in HTTPResponse(status: 200) },
            Route("GET", "/admin/users/bulk", operation: "shadowed") { _ in HTTPResponse(status: 200) },
        ])
        #expect(Self.describe(overlapping.match(method: "GET", path: "/admin/users/bulk")) == #"found GET get [(key: "user_id", value: "bulk")]"#)
        #expect(Self.describe(overlapping.match(method: "POST", path: "/admin/users/bulk")) == "found POST bulk []")
        #expect(Self.describe(overlapping.match(method: "PUT", path: "/admin/users/bulk")) == #"405 ["GET", "POST"]"#)

        let api = try makeAPI()
        var literalPaths = 0
        for router in [api.router, overlapping] {
            for route in router.routes where !route.segments.contains(where: { if case .parameter = $0 { true } else { false } }) {
                let path = "/" + route.segments.map { if case .literal(let text) = $0 { text } else { "" } }.joined(separator: "/")
                literalPaths += 1
                for method in ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "get", ""] {
                    #expect(Self.describe(router.match(method: method, path: path)) == Self.describe(router.scan(method: method, path: path)),
                            "\(method) \(path)")
                }
            }
        }
        #expect(literalPaths > 40)
    }
}

@testable import AuthEmulator
@testable import EmulatorConfiguration
import AuthHTTP
import EmulatorTools
import GoTrue
import Testing

/// The hook transport (libcurl, loaded on first use) against a loopback server of our own.
@Suite struct HookTransportTests {
    /// Answers as a hook endpoint would, with a few routes that misbehave on purpose.
    struct HookEndpoint: HTTPResponder {
        func respond(to request: HTTPRequest) -> HTTPResponse {
            let json: HTTPHeaders = ["Content-Type": "application/json"]
            switch request.path {
            case "/echo":
                // What arrived, as lines the test reads back.
                var lines = ["method=\(request.method)", "length=\(request.body.count)"]
                if request.body.count < 1024 { lines.append("body=\(String(decoding: request.body, as: UTF8.self))") }
                for name in ["webhook-id", "Content-Type", "Expect", "Accept-Encoding", "Referer"] {
                    lines.append("\(name)=\(request.headers[name] ?? "-")")
                }
                var headers = json
                headers["X-Padded"] = "  spaced value\t"
                return HTTPResponse(status: 200, headers: headers, body: Array(lines.joined(separator: "\n").utf8))
            case "/temporary":
                return HTTPResponse(status: 307, headers: ["Location": "/echo"])
            case "/found":
                return HTTPResponse(status: 302, headers: ["Location": "/echo"])
            case "/loop":
                return HTTPResponse(status: 302, headers: ["Location": "/loop"])
            case "/see-other-then-temporary":
                return HTTPResponse(status: 303, headers: ["Location": "/temporary"])
            case "/multiple":
                return HTTPResponse(status: 300, headers: ["Location": "/echo"])
            case "/nowhere":
                return HTTPResponse(status: 307)
            case "/chain":
                // /chain?n=N: N more redirects, then the echo.
                let left = Int(request.queryValue("n") ?? "") ?? 0
                return HTTPResponse(status: 302, headers: ["Location": left > 1 ? "/chain?n=\(left - 1)" : "/echo"])
            case "/away":
                // /away?to=URL: a redirect to anywhere.
                return HTTPResponse(status: 307, headers: ["Location": request.queryValue("to") ?? "/echo"])
            case "/large":
                return HTTPResponse(status: 200, headers: json, body: [UInt8](repeating: 0x61, count: 3 << 20))
            case "/slow":
                // Held far longer than any deadline under test (cut off when the endpoint stops).
                return HTTPResponse(status: 204, directive: ResponseDirective(delay: .seconds(60)))
            case "/reset":
                return HTTPResponse(status: 200, directive: ResponseDirective(reset: true))
            default:
                return HTTPResponse(status: 404, headers: json, body: Array(#"{"error":"no such hook"}"#.utf8))
            }
        }
    }

    func withEndpoint(host: String = "127.0.0.1", _ body: (String) throws -> Void) throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: host, port: 0, loopThreads: 1, workerThreads: 2,
                                                                          maxBodyBytes: 4 << 20),
                                responder: HookEndpoint())
        try server.start()
        defer { server.shutdown(timeout: .seconds(2)) }
        try body("http://\(host):\(server.port)")
    }

    let transport = CurlHookTransport(environment: [:])
    let headers = [("Content-Type", "application/json"), ("webhook-id", "msg_1"), ("Accept-Encoding", "identity")]

    func lines(_ reply: HookReply) -> [String: String] {
        guard case .response(_, _, let body) = reply else { return [:] }
        var fields: [String: String] = [:]
        for line in String(decoding: body, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            fields[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return fields
    }

    @Test func postsTheBodyAndHeadersAndReadsTheAnswer() throws {
        try withEndpoint { base in
            let reply = transport.post(base + "/echo", headers: headers, body: Array(#"{"a":1}"#.utf8), timeout: 5)
            guard case .response(let status, let responseHeaders, _) = reply else {
                Issue.record("no response: \(reply)")
                return
            }
            #expect(status == 200)
            let seen = lines(reply)
            #expect(seen["method"] == "POST")
            #expect(seen["body"] == #"{"a":1}"#)
            #expect(seen["webhook-id"] == "msg_1")
            #expect(seen["Content-Type"] == "application/json")
            #expect(seen["Accept-Encoding"] == "identity")
            #expect(seen["Expect"] == "-")
            #expect(responseHeaders.contains { $0.0 == "Content-Type" && $0.1 == "application/json" })
            #expect(responseHeaders.contains { $0.0 == "X-Padded" && $0.1 == "spaced value" })
        }
    }

    /// libcurl asks `Expect: 100-continue` for bodies over 1 MiB; Go's client never does.
    @Test func aLargeBodyIsSentWithoutExpectContinue() throws {
        try withEndpoint { base in
            let body = [UInt8](repeating: 0x62, count: 3 << 19)
            let seen = lines(transport.post(base + "/echo", headers: headers, body: body, timeout: 5))
            #expect(seen["length"] == String(body.count))
            #expect(seen["Expect"] == "-")
        }
    }

    /// Go's client: 307/308 repeat the POST with its body; 301/302/303 continue as a GET.
    @Test func redirectsAreFollowedAsGoDoes() throws {
        try withEndpoint { base in
            let kept = lines(transport.post(base + "/temporary", headers: headers, body: Array("x".utf8), timeout: 5))
            #expect(kept["method"] == "POST")
            #expect(kept["body"] == "x")
            let changed = lines(transport.post(base + "/found", headers: headers, body: Array("x".utf8), timeout: 5))
            #expect(changed["method"] == "GET")
            #expect(changed["length"] == "0")
            // Past 10 redirects Go's client gives up with an error.
            guard case .failed = transport.post(base + "/loop", headers: headers, body: [], timeout: 5) else {
                Issue.record("a redirect loop was not refused")
                return
            }
        }
    }

    /// Go's defaultCheckRedirect: 10 redirects are followed, the 11th is an error.
    @Test func tenRedirectsAreFollowedAndNoMore() throws {
        try withEndpoint { base in
            #expect(lines(transport.post(base + "/chain?n=10", headers: headers, body: [], timeout: 5))["method"] == "GET")
            guard case .failed(let reason) = transport.post(base + "/chain?n=11", headers: headers, body: [], timeout: 5) else {
                Issue.record("an 11th redirect was followed")
                return
            }
            #expect(reason.contains("10 redirects"))
        }
    }

    /// Go's redirectBehavior follows 301, 302, 303, 307 and 308 only, and a redirect without a
    /// Location is the answer itself.
    @Test func otherRedirectStatusesAreTheAnswer() throws {
        try withEndpoint { base in
            #expect(answer(base + "/multiple")?.status == 300)
            #expect(answer(base + "/nowhere")?.status == 307)
        }
    }

    /// Every hop carries the first request's headers, and Go's Referer: the previous URL.
    @Test func redirectedCallsKeepTheHeadersAndNameTheReferer() throws {
        try withEndpoint { base in
            let seen = lines(transport.post(base + "/temporary", headers: headers, body: Array("x".utf8), timeout: 5))
            #expect(seen["webhook-id"] == "msg_1")
            #expect(seen["Referer"] == base + "/temporary")
            #expect(lines(transport.post(base + "/echo", headers: headers, body: [], timeout: 5))["Referer"] == "-")
            // After a 303 the method stays GET; a 307 then attaches the first body, as in Go.
            let mixed = lines(transport.post(base + "/see-other-then-temporary", headers: headers, body: Array("x".utf8), timeout: 5))
            #expect(mixed["method"] == "GET")
            #expect(mixed["body"] == "x")
            #expect(mixed["Content-Type"] == "application/json")
        }
    }

    #if os(Linux)
    /// The hook URI rule is the configuration's only (GoTrue's ValidateExtensibilityPoint): a
    /// redirect is followed to a host the rule refuses, here the loopback address 127.0.0.2,
    /// which `http:` hook URIs may not name. Linux routes all of 127.0.0.0/8 to the loopback.
    @Test func aRedirectReachesAHostTheURIRuleRefuses() throws {
        try withEndpoint(host: "127.0.0.2") { elsewhere in
            var point = HookSettings.Point()
            point.uri = elsewhere + "/echo"
            #expect(point.problem() == "only localhost, 127.0.0.1, and ::1 are supported with http")
            try withEndpoint { base in
                let seen = lines(transport.post(base + "/away?to=" + elsewhere + "/echo", headers: headers,
                                                body: Array("x".utf8), timeout: 5))
                #expect(seen["method"] == "POST")
                #expect(seen["body"] == "x")
                #expect(seen["webhook-id"] == "msg_1")
            }
        }
    }
    #endif

    /// The status and body of an empty POST to `url`; nil (and a recorded issue) without one.
    func answer(_ url: String) -> (status: Int, body: [UInt8])? {
        guard case .response(let status, _, let body) = transport.post(url, headers: headers, body: [], timeout: 5) else {
            Issue.record("no response from \(url)")
            return nil
        }
        return (status, body)
    }

    @Test func anErrorStatusIsAnAnswerNotAFailure() throws {
        try withEndpoint { base in
            guard let (status, body) = answer(base + "/missing") else { return }
            #expect(status == 404)
            #expect(String(decoding: body, as: UTF8.self) == #"{"error":"no such hook"}"#)
        }
    }

    /// Only the first MiB is read: enough for GoTrue's 200 KiB check to say "too large".
    @Test func theAnswerIsReadUpToTheLimit() throws {
        try withEndpoint { base in
            guard let (status, body) = answer(base + "/large") else { return }
            #expect(status == 200)
            #expect(body.count == CurlHookTransport.bodyLimit)
        }
    }

    @Test func theDeadlineCoversTheWholeCall() throws {
        try withEndpoint { base in
            let started = ContinuousClock.now
            guard case .timedOut = transport.post(base + "/slow", headers: headers, body: [], timeout: 0.3) else {
                Issue.record("the call did not time out")
                return
            }
            // The call waited out its deadline, and gave up on an answer still a minute away.
            let waited = ContinuousClock.now - started
            #expect(waited >= .milliseconds(290))
            #expect(waited < .seconds(60))
        }
    }

    @Test func noAnswerIsAFailure() throws {
        try withEndpoint { base in
            guard case .failed = transport.post(base + "/reset", headers: headers, body: [], timeout: 5) else {
                Issue.record("a reset connection was not a failure")
                return
            }
        }
        // Nothing listens on the discard port of the loopback.
        guard case .failed(let reason) = transport.post("http://127.0.0.1:9/hook", headers: headers, body: [], timeout: 5) else {
            Issue.record("a refused connection was not a failure")
            return
        }
        #expect(!reason.isEmpty)
    }

    @Test func headerBlocksAreSplitIntoFields() {
        let block = Array("HTTP/1.1 200 OK\r\nContent-Type:  application/json \r\nRetry-After:\t5\r\nbroken line\r\n\r\n".utf8)
        let fields = CurlHookTransport.headerFields(block)
        #expect(fields.map(\.0) == ["Content-Type", "Retry-After"])
        #expect(fields.map(\.1) == ["application/json", "5"])
    }

    @Test func trustRootsComeFromTheEnvironmentAsInGo() {
        let configured = CurlHookTransport(environment: ["SSL_CERT_FILE": "/tmp/ca.pem", "SSL_CERT_DIR": "/etc/a:/etc/b"])
        #expect(configured.caFile == "/tmp/ca.pem")
        #expect(configured.caDirectory == "/etc/a")
        let plain = CurlHookTransport(environment: ["SSL_CERT_FILE": ""])
        #expect(plain.caFile == nil)
        #expect(plain.caDirectory == nil)
    }
}

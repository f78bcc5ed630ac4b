import Testing
@testable import AuthHTTP

@Suite("HTTP values")
struct HTTPTypesTests {
    @Test func headersAreCaseInsensitiveAndOrdered() {
        var headers: HTTPHeaders = ["Content-Type": "text/plain", "Set-Cookie": "a=1"]
        headers.add(name: "set-cookie", value: "b=2")
        #expect(headers["content-type"] == "text/plain")
        #expect(headers.values(for: "SET-COOKIE") == ["a=1", "b=2"])
        #expect(headers.contains(name: "Set-cookie"))
        #expect(headers.map { $0.name } == ["Content-Type", "Set-Cookie", "set-cookie"])

        headers["SET-COOKIE"] = "c=3"
        #expect(headers.values(for: "set-cookie") == ["c=3"])
        #expect(headers.count == 2)
        headers["Content-Type"] = nil
        #expect(!headers.contains(name: "content-type"))
        headers.remove(name: "set-cookie")
        #expect(headers.isEmpty)
        #expect(headers == HTTPHeaders())
    }

    @Test func queryDecoding() {
        let request = HTTPRequest(method: "GET", target: "/verify/a%20b?token=abc%2Bdef&redirect_to=http%3A%2F%2Fx.test%2Fp&q=a+b&flag&=v&&type=signup&type=second#frag")
        #expect(request.path == "/verify/a b")
        #expect(request.queryValue("token") == "abc+def")
        #expect(request.queryValue("redirect_to") == "http://x.test/p")
        #expect(request.queryValue("q") == "a b")
        #expect(request.queryValue("flag") == "")
        #expect(request.queryValue("type") == "signup")
        #expect(request.query.filter { $0.name == "type" }.count == 2)
        #expect(request.query.contains(QueryItem(name: "", value: "v")))
        // Malformed escapes stay literal; '+' in a path is not a space.
        let odd = HTTPRequest(method: "GET", target: "/a+b%zz%4?x=%E2%9C%93")
        #expect(odd.path == "/a+b%zz%4")
        #expect(odd.queryValue("x") == "✓")
    }

    @Test func httpDateKnownAnswers() {
        // RFC 9110 §5.6.7 example, plus the epoch and leap days (checked against Python's
        // email.utils.formatdate(usegmt=True)).
        #expect(HTTPDate.format(epochSeconds: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(epochSeconds: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(epochSeconds: 951_782_400) == "Tue, 29 Feb 2000 00:00:00 GMT")
        #expect(HTTPDate.format(epochSeconds: 1_709_251_199) == "Thu, 29 Feb 2024 23:59:59 GMT")
        #expect(HTTPDate.format(epochSeconds: 4_102_444_799) == "Thu, 31 Dec 2099 23:59:59 GMT")
    }

    private func serialize(
        _ response: HTTPResponse, head: Bool = false, http10: Bool = false, keepAlive: Bool = true
    ) -> (String, Bool) {
        let context = ResponseSerializer.Context(isHead: head, isHTTP10: http10, keepAlive: keepAlive, date: nil, server: nil)
        let (bytes, keeps) = ResponseSerializer.serialize(response, context)
        return (String(decoding: bytes, as: UTF8.self), keeps)
    }

    @Test func serializesHeadAndBodyTogether() {
        let response = HTTPResponse(status: 201, headers: ["Content-Type": "application/json", "Content-Length": "999"], body: Array("{}".utf8))
        let (text, keepAlive) = serialize(response)
        #expect(text == "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        #expect(keepAlive)
    }

    @Test func headResponsesKeepTheLengthButNoBody() {
        let (text, _) = serialize(HTTPResponse(status: 200, body: Array("hello".utf8)), head: true)
        #expect(text == "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")
    }

    @Test func bodylessStatusesHaveNoContentLength() {
        #expect(serialize(HTTPResponse(status: 204, body: Array("x".utf8))).0 == "HTTP/1.1 204 No Content\r\n\r\n")
        #expect(serialize(HTTPResponse(status: 304)).0 == "HTTP/1.1 304 Not Modified\r\n\r\n")
        #expect(serialize(HTTPResponse(status: 200)).0 == "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    }

    @Test func connectionHeaders() {
        #expect(serialize(HTTPResponse(status: 200), keepAlive: false).0.contains("Connection: close\r\n"))
        #expect(serialize(HTTPResponse(status: 200), http10: true).0.contains("Connection: keep-alive\r\n"))
        let (text, keepAlive) = serialize(HTTPResponse(status: 200, headers: ["Connection": "close"]))
        #expect(!keepAlive)
        #expect(text.components(separatedBy: "Connection").count == 2)
    }

    @Test func headerValuesCannotSplitTheResponse() {
        var response = HTTPResponse(status: 302, headers: ["Location": "/x\r\nSet-Cookie: evil=1"])
        response.reason = "Found\r\nX: y"
        let (text, _) = serialize(response)
        #expect(text == "HTTP/1.1 302 Found  X: y\r\nLocation: /x  Set-Cookie: evil=1\r\nContent-Length: 0\r\n\r\n")
    }

    /// Go's `net/http.StatusText` (src/net/http/status.go), which GoTrue's status lines carry:
    /// the older names where RFC 9110 renamed a status, and "status code N" for a code Go does not
    /// know (`writeStatusLine`, src/net/http/server.go).
    @Test func statusLinesCarryGoReasonPhrases() {
        let go: [Int: String] = [
            103: "Early Hints", 226: "IM Used", 302: "Found", 303: "See Other", 308: "Permanent Redirect",
            401: "Unauthorized", 407: "Proxy Authentication Required", 413: "Request Entity Too Large",
            414: "Request URI Too Long", 416: "Requested Range Not Satisfiable", 418: "I'm a teapot",
            421: "Misdirected Request", 422: "Unprocessable Entity", 425: "Too Early", 428: "Precondition Required",
            429: "Too Many Requests", 431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
            500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
            504: "Gateway Timeout", 505: "HTTP Version Not Supported", 511: "Network Authentication Required",
            299: "status code 299", 419: "status code 419", 599: "status code 599",
        ]
        for (status, reason) in go {
            #expect(HTTPResponse.standardReason(for: status) == reason, "\(status)")
        }
        #expect(serialize(HTTPResponse(status: 422)).0.hasPrefix("HTTP/1.1 422 Unprocessable Entity\r\n"))
        #expect(serialize(HTTPResponse(status: 413)).0.hasPrefix("HTTP/1.1 413 Request Entity Too Large\r\n"))
    }

    @Test func protocolFailureStatuses() {
        #expect(HTTPProtocolFailure.badRequest("x").status == 400)
        #expect(HTTPProtocolFailure.headersTooLarge.status == 431)
        #expect(HTTPProtocolFailure.bodyTooLarge(limit: 1).status == 413)
        #expect(HTTPProtocolFailure.connectionLimit.status == 503)
        let response = HTTPProtocolFailure.defaultResponse(.headersTooLarge, nil)
        #expect(response.status == 431)
        #expect(response.headers["content-type"] == "text/plain; charset=utf-8")
        #expect(HTTPResponse.standardReason(for: 431) == "Request Header Fields Too Large")
    }

    @Test func socketErrorDescription() {
        #expect(SocketError(operation: "bind", errno: 98).description.hasPrefix("bind: "))
    }
}

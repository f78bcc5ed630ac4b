import AuthHTTP
import Testing
@testable import EmulatorTools
@testable import GoTrue

@Suite struct GoTrueAPITests {
    @Test func healthAtRootAndUnderGatewayPrefix() throws {
        let api = try makeAPI()
        let root = api.respond(to: request("GET", "/health"))
        #expect(root.status == 200)
        #expect(root.text
            == #"{"version":"\#(Configuration.emulatorVersion)","name":"GoTrue","description":"GoTrue is a user registration and authentication API"}"#)
        #expect(root.headers["Content-Type"] == "application/json")

        let anon = api.project.configuration.apiKeys.anon
        let viaGateway = api.respond(to: request("GET", "/auth/v1/health", headers: ["apikey": anon]))
        #expect(viaGateway.status == 200)
        #expect(viaGateway.body == root.body)
    }

    @Test func gatewayKeyCheck() throws {
        let api = try makeAPI { $0.requireAPIKey = true }
        let missing = api.respond(to: request("GET", "/auth/v1/health"))
        #expect(missing.status == 401)
        #expect(missing.text == #"{"message":"No API key found in request"}"#)
        let wrong = api.respond(to: request("GET", "/auth/v1/health", headers: ["apikey": "x"]))
        #expect(wrong.status == 401)
        #expect(wrong.text == #"{"message":"Invalid authentication credentials"}"#)
        let service = api.project.configuration.apiKeys.serviceRole
        #expect(api.respond(to: request("GET", "/auth/v1/health?apikey=\(service)")).status == 200)
        // The root is GoTrue itself, which never checks apikey.
        #expect(api.respond(to: request("GET", "/health")).status == 200)
    }

    @Test func unknownPathAndMethod() throws {
        let api = try makeAPI()
        let notFound = api.respond(to: request("GET", "/signin"))
        #expect(notFound.status == 404)
        #expect(notFound.text == "404 page not found\n")
        #expect(notFound.headers["Content-Type"] == "text/plain; charset=utf-8")
        let wrongMethod = api.respond(to: request("DELETE", "/health"))
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.body.isEmpty)
        #expect(wrongMethod.headers["Allow"] == "GET")
    }

    @Test func wellKnownLocalKeysWithDefaultSecret() {
        // The keys every `supabase start` project prints; clients ship them in local configs.
        let keys = APIKeys.standard(secret: JWTSettings.defaultSecret)
        #expect(keys.anon == "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9.CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0")
        #expect(keys.serviceRole == "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImV4cCI6MTk4MzgxMjk5Nn0.EGIM96RAZx35lJzdJsyH-qQwv8Hdp7fsn3W0YpN81IU")
        #expect(APIKeys.standard(secret: "another-secret-that-is-at-least-32-chars") != keys)
    }

    struct Recorder: Middleware {
        func respond(to context: RequestContext, next: (RequestContext) -> HTTPResponse) -> HTTPResponse {
            var response = next(context)
            response.headers["X-Operation"] = context.operation ?? "-"
            return response
        }
    }

    struct Failing: Middleware {
        func respond(to context: RequestContext, next: (RequestContext) -> HTTPResponse) -> HTTPResponse {
            AuthError(429, .overRequestRateLimit, "Request rate limit reached")
                .response(apiVersion: context.apiVersion, requestID: context.requestID)
        }
    }

    @Test func middlewareSeesOperationAndCanAnswer() throws {
        let database = try makeAPI().project.database
        let project = Project(configuration: Configuration(), database: database)
        let recorded = GoTrueAPI(emulating: project, middleware: [Recorder()])
        #expect(recorded.respond(to: request("GET", "/health")).headers["X-Operation"] == "health")
        #expect(recorded.respond(to: request("GET", "/nope")).headers["X-Operation"] == "-")

        let failing = GoTrueAPI(emulating: project, middleware: [Failing()])
        let response = failing.respond(to: request("GET", "/health", headers: ["X-Supabase-Api-Version": "2024-01-01"]))
        #expect(response.status == 429)
        #expect(response.text == #"{"code":"over_request_rate_limit","message":"Request rate limit reached"}"#)
    }

    @Test func requestIDsAreUniqueUUIDs() {
        let a = RequestID(prefix: [1, 2, 3, 4, 5, 6, 7, 8], serial: 1).formatted
        let b = RequestID(prefix: [1, 2, 3, 4, 5, 6, 7, 8], serial: 2).formatted
        #expect(a != b)
        #expect(a == "01020304-0506-4708-8000-000000000001")
    }

    @Test func protocolFailures() {
        let tooLarge = GoTrueAPI.renderProtocolFailure(.bodyTooLarge(limit: 1_048_576), headers: nil)
        #expect(tooLarge.status == 413)
        #expect(tooLarge.text == #"{"code":413,"error_code":"request_entity_too_large","msg":"Request body too large (max 1048576 bytes)"}"#)
        let dated = GoTrueAPI.renderProtocolFailure(.bodyTooLarge(limit: 1_048_576), headers: ["X-Supabase-Api-Version": "2024-01-01"])
        #expect(dated.text == #"{"code":"request_entity_too_large","message":"Request body too large (max 1048576 bytes)"}"#)
        #expect(GoTrueAPI.renderProtocolFailure(.headersTooLarge, headers: nil).status == 431)
        #expect(GoTrueAPI.renderProtocolFailure(.connectionLimit, headers: nil).status == 503)
    }
}

// Go's http.Redirect, which every GoTrue redirect goes through (net/http server.go).
@Suite struct GoRedirectTests {
    static let bare = HTTPResponse(status: 302, headers: ["Location": "https://app.example/caf\u{E9}?q=<a>&x='1'\""])

    func shaped(_ response: HTTPResponse, _ method: String) -> HTTPResponse {
        var response = response
        response.shapeAsGoRedirect(method: method)
        return response
    }

    @Test func aGETGetsALinkToTheTarget() {
        let redirect = shaped(Self.bare, "GET")
        #expect(redirect.headers["Location"] == "https://app.example/caf%c3%a9?q=<a>&x='1'\"")
        #expect(redirect.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(String(decoding: redirect.body, as: UTF8.self)
            == "<a href=\"https://app.example/caf\u{E9}?q=&lt;a&gt;&amp;x=&#39;1&#39;&#34;\">Found</a>.\n\n")
    }

    @Test func headGetsTheContentTypeOnlyAndPostNeither() {
        let head = shaped(Self.bare, "HEAD")
        #expect(head.headers["Content-Type"] == "text/html; charset=utf-8" && head.body.isEmpty)
        let post = shaped(Self.bare, "POST")
        #expect(post.headers["Content-Type"] == nil && post.body.isEmpty)
        #expect(post.headers["Location"] == "https://app.example/caf%c3%a9?q=<a>&x='1'\"")
    }

    @Test func aResponseWithItsOwnContentTypeOrBodyIsLeftAlone() {
        var typed = Self.bare
        typed.headers["Content-Type"] = "application/json"
        #expect(shaped(typed, "GET").body.isEmpty)
        let ok = HTTPResponse(status: 200, headers: ["Location": "x"])
        #expect(shaped(ok, "GET").headers["Content-Type"] == nil)
    }
}

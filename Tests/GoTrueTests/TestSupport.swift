import AuthHTTP
import AuthStore
@testable import GoTrue

/// A GoTrue API over a fresh in-memory database, answering in-process.
func makeAPI(configure: (inout Configuration) -> Void = { _ in }) throws -> GoTrueAPI {
    var configuration = Configuration()
    configure(&configuration)
    let database = try Database(path: ":memory:")
    return GoTrueAPI(project: Project(configuration: configuration, database: database))
}

extension HTTPResponse {
    var text: String { String(decoding: body, as: UTF8.self) }
}

func request(_ method: String, _ target: String, headers: HTTPHeaders = [:], body: String = "") -> HTTPRequest {
    var headers = headers
    if headers["Host"] == nil { headers["Host"] = "127.0.0.1" }
    return HTTPRequest(method: method, target: target, headers: headers, body: Array(body.utf8))
}

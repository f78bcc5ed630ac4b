import AuthHTTP
import AuthJSON

extension HTTPResponse {
    /// A JSON response as GoTrue's `sendJSON` writes it: `Content-Type: application/json` and the
    /// body from Go's `json.Marshal` (compact, HTML-escaped, no trailing newline).
    public static func json(status: Int = 200, _ value: JSON, headers: HTTPHeaders = [:]) -> HTTPResponse {
        var headers = headers
        headers["Content-Type"] = "application/json"
        return HTTPResponse(status: status, headers: headers, body: value.goJSONBytes)
    }

    /// The same response around bytes already written (`JSONByteWriter`), for the hot answers
    /// that skip the `JSON` tree.
    static func json(status: Int = 200, writer: JSONByteWriter, headers: HTTPHeaders = [:]) -> HTTPResponse {
        var headers = headers
        headers["Content-Type"] = "application/json"
        return HTTPResponse(status: status, headers: headers, body: writer.bytes)
    }

    /// Go's `http.Error`, used by the router for unknown paths (`404 page not found`).
    static func plainText(status: Int, _ text: String) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers["Content-Type"] = "text/plain; charset=utf-8"
        headers["X-Content-Type-Options"] = "nosniff"
        return HTTPResponse(status: status, headers: headers, body: Array((text + "\n").utf8))
    }
}

extension JSON {
    /// The bytes Go's `encoding/json` would write for this value. Response bodies are mostly
    /// users (~1 KB) and sessions (~2 KB): the buffer starts at that size.
    public var goJSONBytes: [UInt8] { serializedBytes(reservingCapacity: Self.goJSONCapacity) }

    static let goJSONCapacity = 2048
}

import AuthHTTP
import AuthJSON
import GoFormats

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
    package static func plainText(status: Int, _ text: String) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers["Content-Type"] = "text/plain; charset=utf-8"
        headers["X-Content-Type-Options"] = "nosniff"
        return HTTPResponse(status: status, headers: headers, body: Array((text + "\n").utf8))
    }
}

extension HTTPResponse {
    /// What Go's `http.Redirect`, through which every GoTrue redirect goes, makes of a
    /// redirect a handler returns as status and Location alone: the Location with every byte
    /// past ASCII hex-escaped (`hexEscapeNonASCII`: `%` and lowercase hex) and, when no
    /// Content-Type was set, `text/html; charset=utf-8` on a GET or HEAD and, on a GET, the
    /// short HTML body RFC 7231 §6.4 suggests for older user agents: a link to the target with
    /// the status text, then a blank line (`fmt.Fprintln` of a text ending in a newline). Its
    /// `htmlEscape` is `html.EscapeString`'s.
    ///
    /// In place, and at once for a response that is no redirect (nearly all of them): a copy
    /// in and out of every response cost ~200 instructions per request.
    mutating func shapeAsGoRedirect(method: String) {
        guard (300..<400).contains(status), body.isEmpty, let location = headers["Location"] else { return }
        if location.utf8.contains(where: { $0 >= 0x80 }) {
            var escaped = ""
            for byte in location.utf8 {
                if byte >= 0x80 {
                    escaped += "%" + String(byte, radix: 16)
                } else {
                    escaped.unicodeScalars.append(Unicode.Scalar(byte))
                }
            }
            headers["Location"] = escaped
        }
        guard headers["Content-Type"] == nil, method == "GET" || method == "HEAD" else { return }
        headers["Content-Type"] = "text/html; charset=utf-8"
        if method == "GET" {
            let link = "<a href=\"" + GoHTML.escapeString(location) + "\">" + HTTPResponse.standardReason(for: status) + "</a>.\n"
            body = Array((link + "\n").utf8)
        }
    }
}

extension JSON {
    /// The bytes Go's `encoding/json` would write for this value. Response bodies are mostly
    /// users (~1 KB) and sessions (~2 KB): the buffer starts at that size.
    public var goJSONBytes: [UInt8] { serializedBytes(reservingCapacity: Self.goJSONCapacity) }

    static let goJSONCapacity = 2048
}

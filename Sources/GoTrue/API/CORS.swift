import AuthHTTP
import GoFormats

/// Cross-origin handling. At the root it follows GoTrue's `rs/cors` setup (api.go): methods GET,
/// POST, PUT, PATCH, DELETE; a fixed header allow-list plus `GOTRUE_CORS_ALLOWED_HEADERS`;
/// exposed `X-Total-Count, Link, X-Supabase-Api-Version`; credentials allowed; any origin.
/// Under `/auth/v1` the Supabase gateway's CORS plugin answers preflights itself and allows what
/// the browser asks for (supabase-js sends `apikey`, which GoTrue's own list lacks).
struct CORS {
    /// `GOTRUE_CORS_ALLOWED_HEADERS`.
    let allowedHeaders: [String]
    /// Which origins may read responses: every one on GoTrue's routes, fewer on the emulator's
    /// own (`LocalOrigins`).
    var sharesWith: (String) -> Bool = { _ in true }

    static let allowedMethods: Set<String> = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    static let builtInHeaders = [
        "Accept", "Authorization", "Content-Type", "X-Client-IP", "X-Client-Info", "X-JWT-AUD", "x-use-cookie",
        "X-Supabase-Api-Version",
    ]
    static let exposedHeaders = "X-Total-Count, Link, X-Supabase-Api-Version"
    static let gatewayMethods = "GET,HEAD,PUT,PATCH,POST,DELETE,OPTIONS,TRACE,CONNECT"

    /// The answer to a preflight (`OPTIONS` with `Access-Control-Request-Method`), or nil when the
    /// request is not one.
    func preflight(_ request: HTTPRequest, viaGateway: Bool) -> HTTPResponse? {
        guard request.method == "OPTIONS", let requested = request.headers["Access-Control-Request-Method"] else { return nil }
        let origin = request.headers["Origin"] ?? ""
        let requestedHeaders = request.headers["Access-Control-Request-Headers"] ?? ""
        var headers = HTTPHeaders()
        guard sharesWith(origin) else {
            // No allow headers: the browser refuses to send the request.
            headers["Vary"] = "Origin"
            return HTTPResponse(status: 204, headers: headers)
        }
        if viaGateway {
            headers["Access-Control-Allow-Origin"] = "*"
            headers["Access-Control-Allow-Methods"] = CORS.gatewayMethods
            if !requestedHeaders.isEmpty { headers["Access-Control-Allow-Headers"] = requestedHeaders }
            return HTTPResponse(status: 200, headers: headers)
        }
        headers["Vary"] = "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"
        // rs/cors answers 204 either way; the allow headers appear only when everything passes.
        let method = requested.uppercased()
        guard !origin.isEmpty, CORS.allowedMethods.contains(method), headersAllowed(requestedHeaders) else {
            return HTTPResponse(status: 204, headers: headers)
        }
        headers["Access-Control-Allow-Origin"] = "*"
        headers["Access-Control-Allow-Methods"] = method
        if !requestedHeaders.isEmpty { headers["Access-Control-Allow-Headers"] = requestedHeaders }
        headers["Access-Control-Allow-Credentials"] = "true"
        return HTTPResponse(status: 204, headers: headers)
    }

    /// Headers added to an actual cross-origin response: rs/cors's, under `/auth/v1` too. The
    /// gateway's CORS plugin (`kong.yml`, no options) only sets `Access-Control-Allow-Origin: *`
    /// on the way back and removes nothing, so GoTrue's `Vary`, credentials and exposed headers
    /// reach the browser there as well; supabase-js reads the echoed `X-Supabase-Api-Version`
    /// through them, and without it no error's `code` (`lib/fetch.ts`, `handleError`).
    func decorate(_ response: inout HTTPResponse, request: HTTPRequest) {
        response.headers.add(name: "Vary", value: "Origin")
        guard let origin = request.headers["Origin"], !origin.isEmpty, sharesWith(origin) else { return }
        response.headers["Access-Control-Allow-Origin"] = "*"
        response.headers["Access-Control-Allow-Credentials"] = "true"
        response.headers["Access-Control-Expose-Headers"] = CORS.exposedHeaders
    }

    private func headersAllowed(_ requested: String) -> Bool {
        let allowed = Set((CORS.builtInHeaders + allowedHeaders + ["Origin"]).map { $0.lowercased() })
        for name in requested.split(separator: ",") {
            let trimmed = GoStrings.trim(name, " \t").lowercased()
            if !trimmed.isEmpty && !allowed.contains(trimmed) { return false }
        }
        return true
    }
}

import AuthHTTP
import AuthJSON
import GoTrue

/// One line per request on stderr, so a newcomer sees what their app sends: method, path (never
/// the query, which can carry tokens and codes), status, GoTrue's error code, milliseconds.
/// `--log-format json` writes the same fields as one JSON object per line for log collectors.
public struct AccessLog: Sendable {
    public enum Format: String, Sendable { case text, json }

    public var format: Format
    /// Where each line goes (stderr for `serve`).
    public var write: @Sendable (String) -> Void

    public init(format: Format, write: @escaping @Sendable (String) -> Void) {
        self.format = format
        self.write = write
    }

    func line(method: String, path: String, status: Int, errorCode: String?, milliseconds: Double, requestID: String) -> String {
        let ms = (milliseconds * 10).rounded() / 10
        switch format {
        case .text:
            return "\(method) \(path) \(status)" + (errorCode.map { " " + $0 } ?? "") + " \(ms)ms\n"
        case .json:
            var o: JSONObject = ["method": .string(method), "path": .string(path), "status": .number(status)]
            if let errorCode { o["error_code"] = .string(errorCode) }
            o["ms"] = .number(ms)
            o["request_id"] = .string(requestID)
            return JSON.object(o).serialized() + "\n"
        }
    }
}

/// The access log as the outermost middleware: it times everything, scenarios included.
struct AccessLogMiddleware: Middleware {
    let log: AccessLog

    func respond(to context: RequestContext, next: (RequestContext) -> HTTPResponse) -> HTTPResponse {
        // The dashboard's pages and its 2 s live polling would drown the app's requests.
        let dashboard = context.path == "/emulator" || (context.path.hasPrefix("/emulator/")
            && !context.path.hasPrefix(GoTrueAPI.emulatorPrefix + "/"))
        if dashboard { return next(context) }
        let clock = ContinuousClock()
        let started = clock.now
        let response = next(context)
        let elapsed = started.duration(to: clock.now)
        let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        let path = (context.viaGateway ? GoTrueAPI.gatewayPrefix : "") + context.path
        // A broken transport (scenario hang/reset) still logs the status the handler chose.
        log.write(log.line(method: context.request.method, path: path, status: response.status,
                           errorCode: response.headers["x-sb-error-code"], milliseconds: ms, requestID: context.requestID))
        return response
    }
}

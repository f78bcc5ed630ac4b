import AuthHTTP
import AuthJSON
import GoTrue

/// One line per request on stderr, so a newcomer sees what their app sends: method, path (never
/// the query, which can carry tokens and codes), the status the client saw, GoTrue's error code,
/// the scenario fault and rule that shaped the answer, milliseconds. These are the journal's facts
/// (`Delivery`), so a reset shows as `- reset`, never as the 200 the handler built.
/// `--log-format json` writes the same fields as one JSON object per line for log collectors.
public struct AccessLog: Sendable {
    public enum Format: String, Sendable, CaseIterable { case text, json }

    public var format: Format
    /// Where each line goes (stderr for `serve`).
    public var write: @Sendable (String) -> Void

    public init(format: Format, write: @escaping @Sendable (String) -> Void) {
        self.format = format
        self.write = write
    }

    /// `METHOD PATH STATUS [ERROR_CODE] [FAULT] [rule=SCENARIO#INDEX] MSms`, STATUS `-` when no
    /// status line reached the client; in JSON the absent ones are left out, `status` null.
    func line(method: String, path: String, delivery: Delivery, milliseconds: Double, requestID: String,
              project: String? = nil) -> String {
        let ms = (milliseconds * 10).rounded() / 10
        switch format {
        case .text:
            var text = (project.map { "[\($0)] " } ?? "") + "\(method) \(path) " + (delivery.status.map { String($0) } ?? "-")
            for word in [delivery.errorCode, delivery.fault, delivery.rule.map { "rule=" + $0 }] {
                if let word { text += " " + word }
            }
            return text + " \(ms)ms\n"
        case .json:
            var o: JSONObject = ["method": .string(method), "path": .string(path),
                                 "status": delivery.status.map { .number($0) } ?? .null]
            if let errorCode = delivery.errorCode { o["error_code"] = .string(errorCode) }
            if let fault = delivery.fault { o["fault"] = .string(fault) }
            if let rule = delivery.rule { o["rule"] = .string(rule) }
            o["ms"] = .number(ms)
            o["request_id"] = .string(requestID)
            if let project { o["project"] = .string(project) }
            return JSON.object(o).serialized() + "\n"
        }
    }
}

/// The access log as the outermost middleware: it times everything, scenarios included.
package struct AccessLogMiddleware: Middleware {
    let log: AccessLog
    /// The project's ref, named on each line; nil for the default project.
    var project: String? = nil

    package init(log: AccessLog, project: String? = nil) {
        self.log = log
        self.project = project
    }

    package func respond(to context: RequestContext, next: (RequestContext) -> HTTPResponse) -> HTTPResponse {
        // The dashboard's page loads and its 2 s live polling would drown the app's requests,
        // so its GETs (and HEADs) stay out. Its actions (create, ban, revoke, delete, settings)
        // are POSTs that change state as an API call would, so they are logged like one.
        let dashboard = context.path == "/emulator" || (context.path.hasPrefix("/emulator/")
            && !context.path.hasPrefix(GoTrueAPI.emulatorPrefix + "/"))
        let readOnly = context.request.method == "GET" || context.request.method == "HEAD"
        if dashboard && readOnly { return next(context) }
        let started = HTTPResponse.deliveryClock()
        var response = next(context)
        let path = (context.viaGateway ? GoTrueAPI.gatewayPrefix : "") + context.path
        let planned = Delivery(of: response)
        let (log, project, method, requestID) = (self.log, self.project, context.request.method, context.requestID)
        @Sendable func write(_ delivery: Delivery) {
            let ms = Double(HTTPResponse.deliveryClock() &- started) / 1e6
            log.write(log.line(method: method, path: path, delivery: delivery, milliseconds: ms, requestID: requestID, project: project))
        }
        guard context.request.reportsDelivery else {
            // Made in-process (a test, the embedding API): no transport to ask. An injected
            // delay would be waited out after this returns; count it as the journal does.
            let delay = response.directive.delay.map { Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15 } ?? 0
            let ms = Double(HTTPResponse.deliveryClock() &- started) / 1e6 + delay
            log.write(log.line(method: method, path: path, delivery: planned, milliseconds: ms, requestID: requestID, project: project))
            return response
        }
        // Over a socket the line is written once the transport knows what the client got: a
        // response cut off at shutdown, or answered 503 in its place, is logged as such, with
        // the time it took until then (injected delays included).
        let earlier = response.onDelivery
        response.onDelivery = { delivered in
            earlier?(delivered)
            switch delivered {
            case .written: write(planned)
            case .cutOff: write(planned.cutOff)
            case .replaced(let status): write(Delivery(status: status))
            }
        }
        return response
    }
}

extension Delivery {
    /// The same response, cut off before it was out: no status reached the client. A fault that
    /// already answers no status (reset, hang) is logged as it is.
    var cutOff: Delivery {
        guard status != nil else { return self }
        return Delivery(status: nil, rule: rule, fault: [fault, "cut_off"].compactMap { $0 }.joined(separator: " "))
    }
}

import AuthHTTP

/// What the client really received for one request: the facts the journal records and the
/// access log prints, derived once here so the two never disagree. A fault rule can answer 200 to
/// the server while the client gets a reset; only this view tells the truth.
public struct Delivery: Sendable, Equatable {
    /// The status the client saw; nil when no status line reached it (hang, reset, empty
    /// response, or a cut before the status code).
    public var status: Int?
    /// `scenario#index` of the rule that fired.
    public var rule: String?
    /// The fault applied, in the journal's words (`reset`, `hang`, `close_after_bytes`, ...).
    public var fault: String?
    /// The `x-sb-error-code` the client received, if a status reached it.
    public var errorCode: String?

    public init(status: Int?, rule: String? = nil, fault: String? = nil, errorCode: String? = nil) {
        self.status = status
        self.rule = rule
        self.fault = fault
        self.errorCode = errorCode
    }

    /// `HTTP/1.1 200`: a cut before these bytes leaves the client without a status code.
    static let statusLineBytes = 12

    /// The delivery of `response` when `firing` (if any) shaped it.
    init(_ response: HTTPResponse, firing: Firing?) {
        var status: Int? = response.status
        var fault: String?
        if let effect = firing?.effect {
            if effect.hang { fault = "hang"; status = nil }
            else if effect.reset { fault = "reset"; status = nil }
            else if effect.emptyResponse { fault = "empty_response"; status = nil }
            else if let bytes = effect.closeAfterBytes {
                fault = "close_after_bytes"
                if bytes < Delivery.statusLineBytes { status = nil }
            }
            else if effect.malformedJSON { fault = "malformed_json" }
            else if effect.drip != nil { fault = "drip" }
            else if effect.delay != nil { fault = "delay" }
            else if let hook = effect.hook { fault = "hook_" + hook }
        }
        self.init(status: status, rule: firing?.label, fault: fault,
                  errorCode: status == nil ? nil : response.headers["x-sb-error-code"])
    }

    private static let ruleKey = "scenario.rule"
    private static let faultKey = "scenario.fault"
    private static let noStatusKey = "scenario.no_status"

    /// Carries these facts on the response for the middleware outside the scenario engine.
    func annotate(_ response: inout HTTPResponse) {
        if let rule { response.annotations[Delivery.ruleKey] = rule }
        if let fault { response.annotations[Delivery.faultKey] = fault }
        if status == nil { response.annotations[Delivery.noStatusKey] = "1" }
    }

    /// The delivery of a response as the scenario middleware left it; a response no rule touched
    /// (or one that never passed the engine, such as a dashboard page) reached the client as is.
    public init(of response: HTTPResponse) {
        let status: Int? = response.annotations[Delivery.noStatusKey] == nil ? response.status : nil
        self.init(status: status, rule: response.annotations[Delivery.ruleKey],
                  fault: response.annotations[Delivery.faultKey],
                  errorCode: status == nil ? nil : response.headers["x-sb-error-code"])
    }
}

import AuthHTTP
import AuthJSON
import GoTrue

/// `GET /emulator/v1/clock` and `POST /emulator/v1/clock`: read and move the project's
/// `VirtualClock`.
///
/// The reading is `{"now": RFC 3339, "offset_seconds": n, "frozen": bool}`, where
/// `offset_seconds` is the virtual time minus the host's wall clock. A POST takes any of
/// `{"set": "<RFC 3339>"}`, `{"advance_seconds": N}` (may be negative or fractional) and
/// `{"freeze": true|false}`, applied in that order, and answers with the new reading. Bad input
/// is a 400 `validation_failed` and changes nothing.
struct ClockEndpoints: EndpointGroup {
    let api: Core

    static let path = GoTrueAPI.emulatorPrefix + "/clock"

    static var endpoints: [Endpoint<Self>] {
        [
            Endpoint("GET", ClockEndpoints.path, operation: "emulator.clock.get") { g, _ in try g.get() },
            Endpoint("POST", ClockEndpoints.path, operation: "emulator.clock.update") { g, context in try g.update(context) },
        ]
    }

    /// The project's clock when it can be moved.
    private var clock: VirtualClock? { api.project.environment.clock as? VirtualClock }

    static func json(_ reading: VirtualClock.Reading) -> JSON {
        [
            "now": .string(reading.now.rfc3339),
            "offset_seconds": .number(Double(reading.offsetMicroseconds) / 1_000_000),
            "frozen": .bool(reading.frozen),
        ]
    }

    func get() throws(AuthError) -> HTTPResponse {
        if let clock { return .json(ClockEndpoints.json(clock.reading)) }
        // A project built with a fixed clock (an embedding test's own) still reports its time.
        let now = api.project.environment.now()
        return .json(["now": .string(now.rfc3339), "offset_seconds": 0, "frozen": false])
    }

    /// Largest jump accepted: 100 years either way, far beyond any expiry, well inside Int64 µs.
    static let maximumAdvance: Double = 100 * 366 * 86_400

    func update(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let body = try ControlRequest.body(context.request)
        try ControlRequest.checkKeys(body, allowed: ["set", "advance_seconds", "freeze"])
        guard !body.isEmpty else {
            throw ControlRequest.invalid("expected at least one of \"set\", \"advance_seconds\", \"freeze\"")
        }
        // Everything is validated before the clock is touched.
        var instant: Timestamp?
        if let value = body["set"] {
            guard let text = value.stringValue, let parsed = Timestamp(rfc3339: text) else {
                throw ControlRequest.invalid("\"set\" must be an RFC 3339 date-time such as \"2030-01-01T00:00:00Z\"")
            }
            instant = parsed
        }
        var advance: Int64?
        if let value = body["advance_seconds"] {
            guard let seconds = value.doubleValue, seconds.isFinite, abs(seconds) <= ClockEndpoints.maximumAdvance else {
                throw ControlRequest.invalid("\"advance_seconds\" must be a number of seconds (at most 100 years either way)")
            }
            advance = Int64((seconds * 1_000_000).rounded())
        }
        var freeze: Bool?
        if let value = body["freeze"] {
            guard let flag = value.boolValue else { throw ControlRequest.invalid("\"freeze\" must be true or false") }
            freeze = flag
        }
        guard let clock else {
            throw AuthError(400, .validationFailed, "this project's clock is not adjustable (it was not built with a VirtualClock)")
        }
        if let instant { clock.set(instant) }
        if let advance { clock.advance(microseconds: advance) }
        if let freeze { freeze ? clock.freeze() : clock.unfreeze() }
        return .json(ClockEndpoints.json(clock.reading))
    }
}

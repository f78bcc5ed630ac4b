import AuthHTTP
import AuthJSON
import AuthStore
import GoTrue
import Synchronization

/// The outbox control routes (emulator-only; the service_role check is done for the whole
/// `/emulator/v1` prefix by `GoTrueAPI`).
struct OutboxEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        let prefix = GoTrueAPI.emulatorPrefix
        return [
            Endpoint("GET", prefix + "/outbox", operation: "emulator.outbox.list") { g, context in try g.list(context) },
            Endpoint("GET", prefix + "/outbox/latest", operation: "emulator.outbox.latest") { g, context in try g.latest(context) },
            Endpoint("DELETE", prefix + "/outbox", operation: "emulator.outbox.clear") { g, context in try g.clear(context) },
        ]
    }

    private func filter(_ context: RequestContext, name: String) -> String? {
        guard let value = context.request.queryValue(name), !value.isEmpty else { return nil }
        return name == "to" ? OutboxEndpoints.normalizedRecipient(value) : value
    }

    /// Phones are stored as GoTrue stores them (digits, no `+`); emails lowercased.
    static func normalizedRecipient(_ to: String) -> String {
        to.contains("@") ? to.lowercased() : Validation.formatPhone(to)
    }

    func list(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        var limit: Int?
        if let text = context.request.queryValue("limit"), !text.isEmpty {
            guard let value = Int(text), value >= 0 else {
                throw AuthError(400, .validationFailed, "limit must be a non-negative integer")
            }
            limit = value
        }
        let to = filter(context, name: "to")
        let type = filter(context, name: "type")
        let messages = try api.read { conn in try conn.outboxMessages(recipient: to, type: type, limit: limit) }
        return .json(.array(messages.map(Outbox.json)))
    }

    func latest(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let to = filter(context, name: "to")
        let type = filter(context, name: "type")
        let messages = try api.read { conn in try conn.outboxMessages(recipient: to, type: type, limit: 1) }
        guard let message = messages.first else {
            throw AuthError(404, ErrorCode("not_found"), "No message captured" + (to.map { " for \($0)" } ?? ""))
        }
        return .json(Outbox.json(message))
    }

    func clear(_ context: RequestContext) throws(AuthError) -> HTTPResponse {
        let deleted = try api.write { conn in try conn.clearOutbox() }
        return .json(["deleted": .number(Int64(deleted))])
    }
}

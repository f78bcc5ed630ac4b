import AuthHTTP

/// A route group of the real server's `internal/api` (`signup.go`, `token.go`, ...). A group is
/// a value bound to one request: `api` carries the project and the configuration snapshot taken
/// once for that request, so a handler can never see two configurations, and nothing has to lock
/// the live configuration again while the request runs.
package protocol EndpointGroup: Sendable {
    init(api: Core)
    /// The group's routes, in the order the real server registers them.
    static var endpoints: [Endpoint<Self>] { get }
    /// The group's routes for `project`; the default builds the group per request.
    static func routes(_ project: Project) -> [Route]
    /// The operation names of the group's routes.
    static var operations: [String] { get }
}

/// One route of a group: method, chi pattern, the operation name scenarios and the journal use,
/// and the handler, called on the group bound to the request.
package struct Endpoint<Group: EndpointGroup>: Sendable {
    let method: String
    let pattern: String
    let operation: String
    let handler: @Sendable (Group, RequestContext) throws -> HTTPResponse

    package init(_ method: String, _ pattern: String, operation: String,
         _ handler: @escaping @Sendable (Group, RequestContext) throws -> HTTPResponse) {
        self.method = method
        self.pattern = pattern
        self.operation = operation
        self.handler = handler
    }
}

extension EndpointGroup {
    package static var operations: [String] { endpoints.map(\.operation) }

    /// The group's routes for `project`: each request builds the group anew around its own
    /// configuration snapshot (a reference; no lock).
    package static func routes(_ project: Project) -> [Route] {
        endpoints.map { endpoint in
            let handler = endpoint.handler
            return Route(endpoint.method, endpoint.pattern, operation: endpoint.operation) { context in
                try handler(Self(api: Core(project: project, snapshot: context.snapshot)), context)
            }
        }
    }
}

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
/// the guards api.go mounts in front of it (`r.With(...)`, `r.Use(...)`), in the order they run,
/// and the handler, called on the group bound to the request once every guard has passed.
package struct Endpoint<Group: EndpointGroup>: Sendable {
    let method: String
    let pattern: String
    let operation: String
    package let guards: [RouteGuard]
    let handler: @Sendable (Group, RequestContext) throws -> HTTPResponse

    package init(_ method: String, _ pattern: String, operation: String, guards: [RouteGuard] = [],
         _ handler: @escaping @Sendable (Group, RequestContext) throws -> HTTPResponse) {
        self.method = method
        self.pattern = pattern
        self.operation = operation
        self.guards = guards
        self.handler = handler
    }
}

/// One row of the route table as api.go would print it: method, pattern and guards by name.
package struct RouteDeclaration: Sendable {
    package let method: String
    package let pattern: String
    package let operation: String
    package let guards: [RouteGuard]
}

extension EndpointGroup {
    package static var operations: [String] { endpoints.map(\.operation) }

    /// The group's rows of the route table, guards included.
    package static var declarations: [RouteDeclaration] {
        endpoints.map { RouteDeclaration(method: $0.method, pattern: $0.pattern, operation: $0.operation, guards: $0.guards) }
    }

    /// The group's routes for `project`: each request builds the group anew around its own
    /// configuration snapshot (a reference; no lock). The guards are composed into the route's
    /// handler here, once, so a request runs one closure and walks no list.
    package static func routes(_ project: Project) -> [Route] {
        endpoints.map { endpoint in
            let handler = endpoint.handler
            let name = endpoint.operation
            guard let check = RouteGuard.composed(endpoint.guards) else {
                return Route(endpoint.method, endpoint.pattern, operation: name) { context in
                    try handler(Self(api: Core(project: project, snapshot: context.snapshot)), context)
                }
            }
            return Route(endpoint.method, endpoint.pattern, operation: name) { context in
                let core = Core(project: project, snapshot: context.snapshot)
                var guarded = context
                try check(core, &guarded)
                return try handler(Self(api: core), guarded)
            }
        }
    }
}

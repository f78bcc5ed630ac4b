import AuthHTTP

/// `GET /health` (reference §3.6, §5.1).
struct HealthEndpoints: EndpointGroup {
    let api: Core

    static var endpoints: [Endpoint<Self>] {
        [Endpoint("GET", "/health", operation: "health") { g, _ in g.health }]
    }

    /// The body never changes for a running project (the version is no runtime setting), so it
    /// is rendered once: health checks are the most frequent request of all.
    static func routes(_ project: Project) -> [Route] {
        let response = HealthEndpoints(api: Core(project: project)).health
        return endpoints.map { endpoint in
            Route(endpoint.method, endpoint.pattern, operation: endpoint.operation) { _ in response }
        }
    }

    var health: HTTPResponse {
        .json([
            "version": .string(api.snapshot.configuration.version),
            "name": "GoTrue",
            "description": "GoTrue is a user registration and authentication API",
        ])
    }
}

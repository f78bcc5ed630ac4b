import AuthHTTP

/// `GET /health` (reference §3.6, §5.1).
struct HealthEndpoints {
    let project: Project

    var routes: [Route] {
        // The body never changes for a running project: render it once.
        let response = HTTPResponse.json([
            "version": .string(project.configuration.version),
            "name": "GoTrue",
            "description": "GoTrue is a user registration and authentication API",
        ])
        return [Route("GET", "/health", operation: "health") { _ in response }]
    }
}

import AuthHTTP
import AuthJSON
import EmulatorConfiguration
import EmulatorTools
import GoTrue

/// The project registry's control routes, on the default project only (its service_role key
/// manages the server; a project's own key manages only that project):
///
/// - `GET /emulator/v1/projects`: every project with its addresses and keys
/// - `POST /emulator/v1/projects`: `{"ref", "settings", "config_toml", "database"}`, or a
///   `config.toml` itself (`Content-Type: application/toml`, `?ref=`) → 201
/// - `GET /emulator/v1/projects/{ref}`, `DELETE /emulator/v1/projects/{ref}`
enum ProjectRoutes {
    static func routes(registry: ProjectRegistry) -> [Route] {
        let path = GoTrueAPI.emulatorPrefix + "/projects"
        return [
            Route("GET", path, operation: "emulator.projects.list") { _ in
                .json(["projects": .array(registry.all.map { describe($0, registry: registry) })])
            },
            Route("POST", path, operation: "emulator.projects.create") { context in
                let spec = try spec(context.request)
                // Opening the database and running the migrations touch the disk.
                let made = try BlockingIO.perform { () throws(AuthError) -> ProjectEntry in try registry.create(spec) }
                return .json(status: 201, describe(made, registry: registry))
            },
            Route("GET", path + "/{ref}", operation: "emulator.projects.get") { context in
                let ref = context.pathParameters["ref"] ?? ""
                guard let found = registry.entry(ref) else { throw notFound(ref) }
                return .json(describe(found, registry: registry))
            },
            Route("DELETE", path + "/{ref}", operation: "emulator.projects.delete") { context in
                let ref = context.pathParameters["ref"] ?? ""
                guard try registry.remove(ref) else { throw notFound(ref) }
                return HTTPResponse(status: 204)
            },
        ]
    }

    static func notFound(_ ref: String) -> AuthError {
        AuthError(404, nil, "No project \"\(ref)\" on this emulator")
    }

    /// A JSON spec, or a `config.toml` body named by `?ref=`.
    static func spec(_ request: HTTPRequest) throws(AuthError) -> ProjectSpec {
        let type = request.headers["Content-Type"]?.lowercased() ?? ""
        if type.contains("toml") {
            guard let ref = request.queryValue("ref") else {
                throw AuthError(400, .validationFailed, "ref: name the project with ?ref= when the body is a config.toml")
            }
            // The other fields come from the query (`?database=`, `?database_bootstrap=`), checked
            // as the JSON body's are.
            var fields: JSONObject = ["ref": .string(ref)]
            if let database = request.queryValue("database") { fields["database"] = .string(database) }
            if let bootstrap = request.queryValue("database_bootstrap") {
                guard let flag = ["true": true, "false": false][bootstrap] else {
                    throw AuthError(400, .validationFailed, "database_bootstrap: expected true or false")
                }
                fields["database_bootstrap"] = .bool(flag)
            }
            var spec = try ProjectSpec(json: fields)
            spec.configTOML = String(decoding: request.body, as: UTF8.self)
            return spec
        }
        return try ProjectSpec(json: ControlRequest.body(request))
    }

    /// A project's addresses and keys, as a test suite needs them to point a client at it.
    static func describe(_ hosted: ProjectEntry, registry: ProjectRegistry) -> JSON {
        let (server, port) = registry.serverAddress.withLock { $0 }
        let config = hosted.configuration
        let url = hosted.url(server: server)
        var object: JSONObject = [
            "ref": .string(hosted.ref),
            "default": .bool(hosted.isDefault),
            "url": .string(url),
            "auth_url": .string(url + GoTrueAPI.gatewayPrefix),
            "host_url": hosted.hostURL(port: port).map(JSON.string) ?? .null,
            "dashboard": registry.dashboardEnabled ? .string(url + Dashboard.path) : .null,
            "anon_key": .string(config.apiKeys.anon),
            "service_role_key": .string(config.apiKeys.serviceRole),
        ]
        object["publishable_key"] = config.apiKeys.publishable.map(JSON.string) ?? .null
        object["secret_key"] = config.apiKeys.secret.map(JSON.string) ?? .null
        object["jwt_signing_algorithm"] = .string(config.jwt.signingKey.algorithm.rawValue)
        object["external_url"] = .string(config.externalURL)
        object["database"] = .string(hosted.databaseLabel)
        return .object(object)
    }
}

import AuthJSON
import GoTrue

/// What a new project is made of: a name, and optionally a `config.toml` (its `[auth]` section)
/// and control-API settings (as `PATCH /emulator/v1/config` takes them), applied in that order on
/// top of the settings the server started with.
public struct ProjectSpec: Sendable {
    public var ref: String
    public var configTOML: String?
    public var settings: JSONObject?
    /// `true`: a throwaway in-memory database even when the default project has a file.
    public var inMemory: Bool
    /// A Postgres database of its own (a `postgres://` URL or libpq's `key=value` pairs): the
    /// project's users live in that database's `auth` schema, as the default project's do in
    /// Postgres mode. Nil: SQLite (a file beside the default database, or memory).
    public var postgres: String?
    /// With `postgres`: first create what a Supabase Postgres has (roles, grants, schema `auth`)
    /// on a bare server, as `--db-bootstrap` does for the default project.
    public var postgresBootstrap: Bool

    public init(ref: String, configTOML: String? = nil, settings: JSONObject? = nil, inMemory: Bool = false,
                postgres: String? = nil, postgresBootstrap: Bool = false) {
        self.ref = ref
        self.configTOML = configTOML
        self.settings = settings
        self.inMemory = inMemory
        self.postgres = postgres
        self.postgresBootstrap = postgresBootstrap
    }

    /// The spec as `projects/<ref>.json` keeps it, so a restart reopens the project as made.
    package var json: JSON {
        var object: JSONObject = ["ref": .string(ref)]
        if let configTOML { object["config_toml"] = .string(configTOML) }
        if let settings { object["settings"] = .object(settings) }
        // The bootstrap is not kept: it ran when the project was made, and a restart adopts.
        if let postgres { object["database"] = .string(postgres) }
        return .object(object)
    }

    /// A `POST /emulator/v1/projects` body (or a stored spec).
    package init(json object: JSONObject) throws(AuthError) {
        guard case .string(let ref)? = object["ref"] else {
            throw AuthError(400, .validationFailed, "ref: a project needs a name (lowercase letters, digits and hyphens)")
        }
        self.ref = ref
        switch object["config_toml"] {
        case nil, .null?: configTOML = nil
        case .string(let text)?: configTOML = text
        default: throw AuthError(400, .validationFailed, "config_toml: expected the text of a config.toml")
        }
        switch object["settings"] {
        case nil, .null?: settings = nil
        case .object(let patch)?: settings = patch
        default: throw AuthError(400, .validationFailed, "settings: expected an object of settings")
        }
        inMemory = false
        postgres = nil
        switch object["database"] {
        case nil, .null?: break
        case .string(let name)? where name == EmulatorOptions.inMemory || name == "memory": inMemory = true
        case .string(let name)? where name == "file": break
        case .string(let name)? where EmulatorOptions.isPostgresConnectionString(name): postgres = name
        default:
            throw AuthError(400, .validationFailed,
                            "database: expected \"file\", \":memory:\" or a Postgres connection string (postgres://...)")
        }
        switch object["database_bootstrap"] {
        case nil, .null?: postgresBootstrap = false
        case .bool(let flag)? where postgres != nil || !flag: postgresBootstrap = flag
        case .bool?: throw AuthError(400, .validationFailed, "database_bootstrap: only for a Postgres database")
        default: throw AuthError(400, .validationFailed, "database_bootstrap: expected true or false")
        }
        let fields = ["ref", "config_toml", "settings", "database", "database_bootstrap"]
        for key in object.keys where !fields.contains(key) {
            throw AuthError(400, .validationFailed, "\(key): unknown field (expected \(fields.joined(separator: ", ")))")
        }
    }
}

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

    public init(ref: String, configTOML: String? = nil, settings: JSONObject? = nil, inMemory: Bool = false) {
        self.ref = ref
        self.configTOML = configTOML
        self.settings = settings
        self.inMemory = inMemory
    }

    /// The spec as `projects/<ref>.json` keeps it, so a restart reopens the project as made.
    package var json: JSON {
        var object: JSONObject = ["ref": .string(ref)]
        if let configTOML { object["config_toml"] = .string(configTOML) }
        if let settings { object["settings"] = .object(settings) }
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
        switch object["database"] {
        case nil, .null?: inMemory = false
        case .string(let name)? where name == EmulatorOptions.inMemory || name == "memory": inMemory = true
        case .string(let name)? where name == "file": inMemory = false
        default: throw AuthError(400, .validationFailed, "database: expected \"file\" or \":memory:\"")
        }
        for key in object.keys where !["ref", "config_toml", "settings", "database"].contains(key) {
            throw AuthError(400, .validationFailed, "\(key): unknown field (expected ref, config_toml, settings, database)")
        }
    }
}

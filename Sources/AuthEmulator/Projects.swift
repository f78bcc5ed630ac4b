import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthScenarios
import AuthStore
import EmulatorTools
import GoTrue
import Synchronization

/// One project the emulator serves, open: its GoTrue API with everything that hangs off it
/// (database, settings and keys, outbox, rate-limit buckets, virtual clock, scenarios, journal).
/// Nothing is shared between two projects but the HTTP server and the worker threads.
public final class HostedProject: Sendable {
    /// `default` for the project at the server's root, else the name it was created with.
    public let ref: String
    public let project: Project
    public let api: GoTrueAPI
    public let scenarios: ScenarioEngine
    public let journal: Journal
    /// The database file, or `:memory:`.
    public let databasePath: String
    /// Its lane in the worker queue (`HTTPResponder.dispatch`): 0 for the default project.
    let lane: Int

    init(ref: String, project: Project, api: GoTrueAPI, scenarios: ScenarioEngine, journal: Journal, databasePath: String,
         lane: Int) {
        self.ref = ref
        self.project = project
        self.api = api
        self.scenarios = scenarios
        self.journal = journal
        self.databasePath = databasePath
        self.lane = lane
    }
}

/// A project the registry knows. One on a file is opened when made; one in memory is assembled
/// on its first request, so projects made and never used (a pool prepared for parallel test
/// workers) cost only their settings: bench/projects.py measures both.
public final class ProjectEntry: Sendable {
    public let ref: String
    /// The database file, or `:memory:`.
    public let databasePath: String
    /// The settings it was made with (its keys included); once open, the live ones count.
    let initial: Configuration
    let lane: Int
    private let opened = AtomicLazyReference<HostedProject>()
    /// Held while the project opens or closes; true once it is dropped (`close`).
    private let opening = Mutex<Bool>(false)
    private let assemble: @Sendable (ProjectEntry) throws(AuthError) -> HostedProject

    init(ref: String, databasePath: String, initial: Configuration, lane: Int,
         assemble: @escaping @Sendable (ProjectEntry) throws(AuthError) -> HostedProject) {
        self.ref = ref
        self.databasePath = databasePath
        self.initial = initial
        self.lane = lane
        self.assemble = assemble
    }

    init(open project: HostedProject) {
        ref = project.ref
        databasePath = project.databasePath
        initial = project.project.configuration
        lane = project.lane
        assemble = { _ in project }
        _ = opened.storeIfNil(project)
    }

    public var isDefault: Bool { ref == ProjectRegistry.defaultRef }

    /// The open project, assembling it first if needed (one thread assembles, others wait).
    public func hosted() throws(AuthError) -> HostedProject {
        if let project = opened.load() { return project }
        return try opening.withLock { (dropped: inout Bool) throws(AuthError) -> HostedProject in
            if let project = opened.load() { return project }
            if dropped { throw AuthError(404, nil, "No project \"\(ref)\" on this emulator") }
            return opened.storeIfNil(try assemble(self))
        }
    }

    /// Drops it: its database closes if open, and a request that finds it later cannot open it
    /// again (it would keep a database nobody closes).
    func close() {
        opening.withLock { dropped in
            dropped = true
            opened.load()?.project.database.close()
        }
    }

    /// The project if it has been opened, without opening it.
    public var openProject: HostedProject? { opened.load() }

    /// Its settings now: the live ones once open.
    public var configuration: Configuration { openProject?.project.configuration ?? initial }

    /// Where a client reaches it on this server: `http://HOST:PORT` for the default project,
    /// `http://HOST:PORT/project/<ref>` for the others (`url + "/auth/v1"` is the auth URL).
    public func url(server: String) -> String {
        isDefault ? server : server + ProjectRegistry.pathPrefix + ref
    }

    /// The same project by host name, `http://<ref>.localhost:PORT`, which browsers (and
    /// systemd-resolved) map to loopback; nil for the default project.
    public func hostURL(port: Int) -> String? {
        isDefault ? nil : "http://\(ref).localhost:\(port)"
    }
}

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
    var json: JSON {
        var object: JSONObject = ["ref": .string(ref)]
        if let configTOML { object["config_toml"] = .string(configTOML) }
        if let settings { object["settings"] = .object(settings) }
        return .object(object)
    }

    /// A `POST /emulator/v1/projects` body (or a stored spec).
    init(json object: JSONObject) throws(AuthError) {
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

/// The projects one emulator serves, by ref. The default project is always there; others are
/// made through `POST /emulator/v1/projects`, `serve --project`, or on first request when
/// `autoCreate` is on, and reopened at the next start when their database is a file.
public final class ProjectRegistry: Sendable {
    public static let defaultRef = "default"
    /// `/project/<ref>/...` addresses a project by path.
    public static let pathPrefix = "/project/"

    /// Everything about the server a new project is assembled from.
    struct Blueprint: Sendable {
        var options: EmulatorOptions
        /// The default project's configuration as assembled at start (after the profile's rules
        /// and the exposure policy): what a new project's settings start from.
        var configuration: Configuration
        var transport: CurlHookTransport
        var readerCount: Int
        var beyondLoopback: Bool
        /// `<database directory>/projects`, or nil when the default database is in memory.
        var directory: String?
    }

    private let blueprint: Blueprint
    private let entries = Mutex<[String: ProjectEntry]>([:])
    /// Creations and drops one at a time, so two requests for one new ref make it once; lookups
    /// take only `entries`' lock, never this one.
    private let changes = Mutex<Void>(())
    /// Unknown refs become projects on their first request (`--auto-create-projects`).
    public let autoCreate: Bool
    /// The server's root URL and port once it listens (the projects' addresses derive from them).
    let serverAddress = Mutex<(url: String, port: Int)>(("", 0))
    /// The last worker-queue lane given to a project (the default project's is 0).
    private let lastLane = Atomic<Int>(0)
    /// Projects besides the default one. While there are none (and nothing is made on demand),
    /// host names are not looked at: every request is the default project's, as before projects
    /// existed, whatever name an app's local setup gives the server (`myapp.localhost`).
    private let others = Atomic<Int>(0)

    /// Whether `Host: <ref>.localhost` picks a project.
    var routesByHost: Bool { autoCreate || others.load(ordering: .relaxed) > 0 }

    /// Held shared by every process serving the projects folder (`<folder>/.lock`): a project is
    /// dropped only while no other process holds it, since that process would go on
    /// acknowledging writes into the deleted files (docs/projects.md).
    private let folderLock: Mutex<FolderLock?>

    init(blueprint: Blueprint, autoCreate: Bool) {
        self.blueprint = blueprint
        self.autoCreate = autoCreate
        if let directory = blueprint.directory {
            try? Platform.makeDirectories(directory)
            folderLock = Mutex(FolderLock(path: directory + "/.lock"))
        } else {
            folderLock = Mutex(nil)
        }
    }

    func addDefault(_ project: HostedProject) {
        entries.withLock { $0[project.ref] = ProjectEntry(open: project) }
    }

    /// The project named `ref` (the default one for `default`), nil when there is none.
    public func entry(_ ref: String) -> ProjectEntry? {
        entries.withLock { $0[ref] }
    }

    /// The project named `ref`, opened if it was not yet; nil when there is none.
    public func project(_ ref: String) throws(AuthError) -> HostedProject? {
        try entry(ref)?.hosted()
    }

    /// Every project, the default first, then by ref.
    public var all: [ProjectEntry] {
        let list = entries.withLock { Array($0.values) }
        return list.sorted { ($0.isDefault ? 0 : 1, $0.ref) < ($1.isDefault ? 0 : 1, $1.ref) }
    }

    var dashboardEnabled: Bool { blueprint.options.dashboard }

    var defaultProject: ProjectEntry {
        guard let entry = entry(Self.defaultRef) else { preconditionFailure("the default project is added at start") }
        return entry
    }

    /// A DNS label, so the ref also works as `<ref>.localhost`: lowercase letters, digits and
    /// inner hyphens, at most 63 characters (RFC 1035 §2.3.1). Supabase's own refs (20 lowercase
    /// letters) qualify.
    public static func isValidRef(_ ref: String) -> Bool {
        let bytes = Array(ref.utf8)
        guard (1...63).contains(bytes.count), bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-") else { return false }
        return bytes.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-") }
    }

    /// Makes and registers a project; 409 when the ref is taken, 400 for a bad ref or settings
    /// (nothing is made then). One on a file is opened now and its spec stored beside it
    /// (`persist`); one in memory opens on first use. With `limit`, nothing is made (404) when
    /// the server already has that many projects besides the default one.
    @discardableResult
    public func create(_ spec: ProjectSpec, persist: Bool = true, limit: Int? = nil) throws(AuthError) -> ProjectEntry {
        try changes.withLock { (_: inout Void) throws(AuthError) -> ProjectEntry in
            guard Self.isValidRef(spec.ref) else {
                throw AuthError(400, .validationFailed, "ref: \"\(spec.ref)\" is not a project name: use 1 to 63 lowercase letters, digits and inner hyphens")
            }
            if entry(spec.ref) != nil {
                throw AuthError(409, .conflict, "A project named \"\(spec.ref)\" already exists")
            }
            // Counted under `changes`, so racing first requests cannot overshoot the cap.
            if let limit, others.load(ordering: .relaxed) >= limit {
                throw AuthError(404, nil, "No project \"\(spec.ref)\" on this emulator: --auto-create-projects stops at --max-projects \(limit) projects besides the default one; create it with POST /emulator/v1/projects")
            }
            let config = try configure(spec)
            let path = (spec.inMemory || blueprint.directory == nil)
                ? EmulatorOptions.inMemory : blueprint.directory! + "/" + spec.ref + ".db"
            let lane = lastLane.add(1, ordering: .relaxed).newValue
            let made = ProjectEntry(ref: spec.ref, databasePath: path, initial: config, lane: lane) { [blueprint, weak self] entry throws(AuthError) in
                guard let self else { throw AuthError(500, .unexpectedFailure, "the emulator is stopping") }
                return try self.open(entry, blueprint: blueprint)
            }
            if path != EmulatorOptions.inMemory {
                let opened = try made.hosted()
                if persist, let directory = blueprint.directory {
                    do {
                        try Platform.writeFile(directory + "/" + spec.ref + ".json", Array(spec.json.serialized().utf8))
                    } catch {
                        opened.project.database.close()
                        throw AuthError(500, .unexpectedFailure, "cannot store the project's settings: \(error)")
                    }
                }
            }
            entries.withLock { $0[spec.ref] = made }
            others.add(1, ordering: .relaxed)
            return made
        }
    }

    /// The project for a request's ref, made on the spot when `autoCreate` is on, and opened;
    /// nil when there is none, the refusal when auto-creation is at `--max-projects`.
    /// Auto-created projects are in memory unless `--persist-auto-created-projects`: anyone who
    /// can reach the server may make them, so by default they leave nothing on disk.
    func resolve(_ ref: String) throws(AuthError) -> HostedProject? {
        var found = entry(ref)
        if found == nil, autoCreate, Self.isValidRef(ref) {
            let options = blueprint.options
            do {
                found = try create(ProjectSpec(ref: ref, inMemory: !options.persistAutoCreatedProjects), limit: options.maxProjects)
            } catch {
                // Two first requests may race: the loser finds the winner's.
                found = entry(ref)
                if found == nil, error.status == 404 { throw error }
            }
        }
        guard let found else { return nil }
        do {
            return try found.hosted()
        } catch {
            Platform.writeStandardError("auth-emulator: project \(ref) could not be opened: \(error.message)\n")
            return nil
        }
    }

    /// Drops a project: it stops answering, its database closes and, for a file, is deleted with
    /// its stored spec. False when there is no such project; the default one cannot be dropped.
    @discardableResult
    public func remove(_ ref: String) throws(AuthError) -> Bool {
        guard ref != Self.defaultRef else {
            throw AuthError(400, .validationFailed, "The default project cannot be deleted (reset it with POST /emulator/v1/reset)")
        }
        return try changes.withLock { (_: inout Void) throws(AuthError) -> Bool in
            guard let found = entry(ref) else { return false }
            let drop = { () -> Bool in
                guard let gone = self.entries.withLock({ $0.removeValue(forKey: ref) }) else { return false }
                self.others.subtract(1, ordering: .relaxed)
                gone.close()
                if gone.databasePath != EmulatorOptions.inMemory {
                    for suffix in ["", "-wal", "-shm"] { Platform.removeFile(gone.databasePath + suffix) }
                    if let directory = self.blueprint.directory { Platform.removeFile(directory + "/" + ref + ".json") }
                }
                return true
            }
            // A project in memory is this process's alone; one on a file may be open in another
            // process serving the same folder too.
            guard found.databasePath != EmulatorOptions.inMemory, let folderLock = folderLock.withLock({ $0 }) else { return drop() }
            guard let dropped = folderLock.whileAlone(drop) else {
                throw AuthError(409, .conflict, "Project \"\(ref)\" is stored in \(blueprint.directory ?? "a folder") that another auth-emulator process also serves: stop that process first, or use a database folder of its own for each")
            }
            return dropped
        }
    }

    /// Reopens the projects a previous run stored beside the database (`projects/*.json`);
    /// returns a line for each that could not be.
    func reopenStored(except declared: Set<String>) -> [String] {
        guard let directory = blueprint.directory else { return [] }
        var problems: [String] = []
        for name in Platform.files(in: directory, suffix: ".json") {
            let ref = String(name.dropLast(".json".count))
            guard !declared.contains(ref), entry(ref) == nil else { continue }
            do {
                let bytes = try Platform.readFile(directory + "/" + name, limit: 1 << 20)
                guard case .object(let object) = try JSON(parsing: bytes) else { throw EmulatorError("not a JSON object") }
                try create(try ProjectSpec(json: object), persist: false)
            } catch {
                problems.append("project \(ref) (\(directory)/\(name)) was not reopened: \(error)")
            }
        }
        return problems
    }

    /// Closes every open project's database but the default one's (the emulator closes that last).
    func closeOthers() {
        for entry in all where !entry.isDefault { entry.close() }
        // A stopped server no longer serves the folder: another may drop its projects.
        folderLock.withLock { $0 = nil }
    }

    // MARK: - assembly

    /// A new project's settings: the server's, its config.toml, its settings, its own keys and
    /// address; checked as at start-up.
    private func configure(_ spec: ProjectSpec) throws(AuthError) -> Configuration {
        let base = blueprint.configuration
        var config = base
        if let text = spec.configTOML {
            var options = blueprint.options
            options.configuration = config
            do {
                _ = try SupabaseConfigFile.apply(text, file: "config_toml", environment: Platform.environment(), to: &options)
            } catch {
                throw AuthError(400, .validationFailed, "config_toml: \(error.description)")
            }
            config = options.configuration
            let templates = TemplateSources.load(config, transport: blueprint.transport)
            config.mailer.templates = templates.templates
        }
        if let patch = spec.settings {
            try ConfigRoutes.apply(patch, to: &config)
        }
        // Links and the issuer point at the project's own address (path form: it needs no name
        // resolution), unless its settings chose an external URL of their own.
        if config.externalURL == base.externalURL {
            config.externalURL = Self.externalURL(defaultURL: defaultProject.configuration.externalURL, ref: spec.ref)
            // Under the `cli` profile an issuer no source set follows the auth URL.
            config.applyCLIIssuer()
            // A mail link's path is resolved against the external URL as a URL reference
            // (`ResolveReference`), so an absolute one (`/auth/v1/verify` under `supabase start`,
            // `/verify` in GoTrue) would drop `/project/<ref>` and land on the default project.
            for path in [\MailerURLPaths.invite, \.confirmation, \.recovery, \.emailChange]
            where config.mailer.urlPaths[keyPath: path] == base.mailer.urlPaths[keyPath: path]
                && config.mailer.urlPaths[keyPath: path].hasPrefix("/") {
                config.mailer.urlPaths[keyPath: path] = Self.pathPrefix + spec.ref + config.mailer.urlPaths[keyPath: path]
            }
        }
        ProjectKeys.separate(&config, from: base, ref: spec.ref, signingKeyAlgorithm: blueprint.options.signingKeyAlgorithm)
        // The exposure policy holds for every project, however it is made: beyond loopback a
        // `config_toml`, a `--project` file or settings that bring back the public demo secret
        // (or keys) get fresh random ones, as the default project does at start.
        if blueprint.beyondLoopback && !blueprint.options.allowDemoKeys {
            let replaced = Exposure.replacePublicSecrets(&config)
            if !replaced.isEmpty {
                Platform.writeStandardError("auth-emulator: project \(spec.ref): the public demo "
                    + replaced.joined(separator: ", ") + " replaced by random ones (listening beyond loopback; --allow-demo-keys keeps them)\n")
            }
        }
        config.applyDefaults()
        do {
            try Validation.check(config)
        } catch {
            throw AuthError(400, .validationFailed, "\(error)")
        }
        return config
    }

    /// Opens a project's database and assembles its API.
    private func open(_ entry: ProjectEntry, blueprint: Blueprint) throws(AuthError) -> HostedProject {
        let path = entry.databasePath
        let database: Database
        do {
            if let directory = blueprint.directory, path != EmulatorOptions.inMemory { try Platform.makeDirectories(directory) }
            database = try Database(path: path, options: DatabaseOptions(readerCount: blueprint.readerCount))
        } catch {
            throw AuthError(500, .unexpectedFailure, "cannot open the project's database \(path): \(error)")
        }
        var project = Project(configuration: entry.initial, database: database, environment: Environment(clock: VirtualClock()))
        project.hookTransport = blueprint.transport
        return Emulator.host(ref: entry.ref, project: project, databasePath: path, options: blueprint.options,
                             scenarios: [], transport: blueprint.transport, beyondLoopback: blueprint.beyondLoopback,
                             registry: self, extensions: [], lane: entry.lane)
    }

    /// The default project's external URL with `/project/<ref>` added, before `/auth/v1` when
    /// the URL ends with it (as `supabase start`'s `API_EXTERNAL_URL` does).
    static func externalURL(defaultURL: String, ref: String) -> String {
        var url = defaultURL
        while url.hasSuffix("/") { url.removeLast() }
        let gateway = url.hasSuffix(GoTrueAPI.gatewayPrefix)
        if gateway { url.removeLast(GoTrueAPI.gatewayPrefix.count) }
        return url + pathPrefix + ref + (gateway ? GoTrueAPI.gatewayPrefix : "")
    }
}

/// Every project signs and checks tokens with keys of its own, so a token or API key of one
/// project is refused by every other, as two Supabase projects refuse each other's.
///
/// What the project's settings leave as the server's is derived from the server's JWT secret
/// and the ref (HMAC-SHA256 in counter mode): stable across restarts, so a project reopened
/// from its file keeps its keys and the sessions it issued.
enum ProjectKeys {
    static func separate(_ config: inout Configuration, from base: Configuration, ref: String, signingKeyAlgorithm: JWTAlgorithm?) {
        let stream = DerivedBytes(secret: Array(base.jwt.secret.utf8), label: "auth-emulator project " + ref)
        if config.jwt.secret == base.jwt.secret {
            config.jwt.secret = Base64URL.encode(stream.bytes(count: 32))
        }
        if config.apiKeys == base.apiKeys {
            var keys = APIKeys.standard(secret: config.jwt.secret)
            keys.publishable = "sb_publishable_" + Base64URL.encode(stream.bytes(count: 23))
            keys.secret = "sb_secret_" + Base64URL.encode(stream.bytes(count: 23))
            config.apiKeys = keys
        }
        guard config.jwt.keys.map(\.key.kid) == base.jwt.keys.map(\.key.kid),
              let signer = config.jwt.keys.first(where: \.canSign) else { return }
        // The CLI's built-in key (or one the server was given) would make one project's user
        // tokens valid in all: each project gets a key of the same kind. Under `--signing-key`
        // the anon and service_role keys are signed with it too, as the server's are.
        let kid = uuidString(stream.bytes(count: 16))
        let key = JWK(generating: signer.key.algorithm, kid: kid, random: stream)
        if signingKeyAlgorithm != nil {
            _ = config.adoptSigningKeys([key])
        } else {
            config.jwt.keys = [key]
        }
    }

    /// 16 bytes as a version 4 UUID (RFC 9562 §5.4), for a derived key's `kid`.
    static func uuidString(_ bytes: [UInt8]) -> String {
        var b = bytes
        b[6] = (b[6] & 0x0F) | 0x40
        b[8] = (b[8] & 0x3F) | 0x80
        let hex = b.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
    }
}

/// HMAC-SHA256(secret, label || counter) blocks, read in sequence: a deterministic byte stream
/// for key derivation (the counter construction of NIST SP 800-108 §4.1).
final class DerivedBytes: RandomSource {
    private let key: SymmetricKey
    private let label: [UInt8]
    private let state = Mutex<(counter: UInt32, buffer: [UInt8])>((0, []))

    init(secret: [UInt8], label: String) {
        key = SymmetricKey(data: secret)
        self.label = Array(label.utf8)
    }

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        state.withLock { state in
            for index in 0..<buffer.count {
                if state.buffer.isEmpty {
                    state.counter += 1
                    let c = state.counter
                    let block = label + [UInt8(c >> 24), UInt8(truncatingIfNeeded: c >> 16), UInt8(truncatingIfNeeded: c >> 8), UInt8(truncatingIfNeeded: c)]
                    state.buffer = HMAC<SHA256>.authenticationCode(for: block, using: key).reversed()
                }
                buffer[index] = state.buffer.removeLast()
            }
        }
    }
}

/// Sends each request to its project: `/project/<ref>/...` by path (the prefix is removed before
/// the project sees it), `Host: <ref>.localhost[:port]` by name, anything else to the default
/// project, so a server with no other project answers exactly as before.
final class ProjectRouter: HTTPResponder {
    let registry: ProjectRegistry
    let primary: GoTrueAPI

    init(registry: ProjectRegistry, primary: GoTrueAPI) {
        self.registry = registry
        self.primary = primary
    }

    enum Target {
        case project(GoTrueAPI, HTTPRequest, mountPath: String, lane: Int)
        /// A project not open yet (or one `--auto-create-projects` would make): asked on the
        /// event loop, which must not open databases, it goes to a worker, which opens it.
        case unopened(lane: Int)
        case unknown(String)
        /// Refused with this error (auto-creation at its cap).
        case refused(AuthError)
    }

    private static let prefixBytes = Array(ProjectRegistry.pathPrefix.utf8)
    private static let localhostSuffix = ".localhost"

    /// The request's project. `opening` (on a worker) opens or makes it as needed; without it
    /// (on the event loop) a project not open yet is only named, `.unopened`.
    func route(_ request: HTTPRequest, opening: Bool) -> Target {
        if request.path.utf8.starts(with: Self.prefixBytes) {
            let rest = request.path.dropFirst(ProjectRegistry.pathPrefix.count)
            let ref = String(rest.prefix { $0 != "/" })
            let remainder = String(rest.dropFirst(ref.count))
            let mount = ProjectRegistry.pathPrefix + ref
            var inner = request
            inner.path = remainder.isEmpty ? "/" : remainder
            if inner.target.hasPrefix(mount) {
                let tail = inner.target.dropFirst(mount.count)
                inner.target = tail.isEmpty || tail.first == "?" ? "/" + tail : String(tail)
            }
            if ref == ProjectRegistry.defaultRef { return .project(primary, inner, mountPath: mount, lane: 0) }
            return target(ref, inner, mountPath: mount, opening: opening)
        }
        if registry.routesByHost, let ref = Self.hostRef(request.headers["Host"]) {
            if ref == ProjectRegistry.defaultRef { return .project(primary, request, mountPath: "", lane: 0) }
            return target(ref, request, mountPath: "", opening: opening)
        }
        return .project(primary, request, mountPath: "", lane: 0)
    }

    private func target(_ ref: String, _ request: HTTPRequest, mountPath: String, opening: Bool) -> Target {
        if !opening {
            if let entry = registry.entry(ref) {
                guard let open = entry.openProject else { return .unopened(lane: entry.lane) }
                return .project(open.api, request, mountPath: mountPath, lane: open.lane)
            }
            return registry.autoCreate && ProjectRegistry.isValidRef(ref) ? .unopened(lane: 0) : .unknown(ref)
        }
        let hosted: HostedProject?
        do {
            hosted = try registry.resolve(ref)
        } catch {
            return .refused(error)
        }
        guard let hosted else { return .unknown(ref) }
        return .project(hosted.api, request, mountPath: mountPath, lane: hosted.lane)
    }

    /// `abc` from `abc.localhost` or `abc.localhost:9999` (any case, a final dot allowed); nil
    /// for any other host, `localhost` itself and deeper names. Asked of every request, so the
    /// common answer (an IP address or `localhost`) is found on the bytes, without allocating.
    static func hostRef(_ authority: String?) -> String? {
        guard var authority else { return nil }
        return authority.withUTF8 { bytes -> String? in
            var end = bytes.count
            // `name:port`: the port goes. (An IPv6 literal, `[::1]:port`, is left with no
            // `.localhost` ending whichever colon this finds.)
            if let colon = bytes.lastIndex(of: UInt8(ascii: ":")) { end = colon }
            if end > 0, bytes[end - 1] == UInt8(ascii: ".") { end -= 1 }
            let suffix = localhostSuffixBytes
            guard end > suffix.count else { return nil }
            let start = end - suffix.count
            for offset in 0..<suffix.count where bytes[start + offset] | 0x20 != suffix[offset] { return nil }
            let label = UnsafeBufferPointer(rebasing: bytes[0..<start])
            guard !label.contains(UInt8(ascii: ".")) else { return nil }
            return String(decoding: label, as: UTF8.self).lowercased()
        }
    }

    /// `.localhost` in lowercase; `| 0x20` lowercases the letters of a byte compared with it
    /// (and leaves `.` as it is).
    private static let localhostSuffixBytes = Array(localhostSuffix.utf8)

    /// Neither `/project/...` nor `Host: <name>.localhost`: the default project's, as every
    /// request of a server hosting one project is. Checked first, on the bytes, so those
    /// requests skip building a `Target` (a copy of the request) on the loop and again on the
    /// worker.
    func isForDefaultProject(_ request: HTTPRequest) -> Bool {
        var bytes = request.path.utf8.makeIterator()
        for expected in Self.prefixBytes where bytes.next() != expected {
            // Usually at the second byte: not `/project/`.
            return !registry.routesByHost || Self.hostRef(request.headers["Host"]) == nil
        }
        return false
    }

    func respondsInline(to request: HTTPRequest) -> Bool {
        dispatch(request) == .inline
    }

    /// Each project waits in a lane of its own, so a flood of requests to one project delays
    /// another's by about one request, not by the flood.
    func dispatch(_ request: HTTPRequest) -> HTTPDispatch {
        if isForDefaultProject(request) { return primary.respondsInline(to: request) ? .inline : .queued(lane: 0) }
        switch route(request, opening: false) {
        case .project(let api, let inner, _, let lane): return api.respondsInline(to: inner) ? .inline : .queued(lane: lane)
        case .unopened(let lane): return .queued(lane: lane)
        case .unknown, .refused: return .inline
        }
    }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        if isForDefaultProject(request) { return primary.respond(to: request) }
        switch route(request, opening: true) {
        case .project(let api, let inner, let mount, _):
            return api.respond(to: inner, mountPath: mount)
        case .unopened:
            preconditionFailure("route(opening: true) opens the project")
        case .unknown(let ref):
            let message = ProjectRegistry.isValidRef(ref)
                ? "No project \"\(ref)\" on this emulator: create it with POST /emulator/v1/projects"
                : "\"\(ref)\" is not a project name"
            return AuthError(404, nil, message)
                .response(apiVersion: APIVersion(headerValue: request.headers[APIVersion.headerName]), requestID: "")
        case .refused(let error):
            return error.response(apiVersion: APIVersion(headerValue: request.headers[APIVersion.headerName]), requestID: "")
        }
    }
}

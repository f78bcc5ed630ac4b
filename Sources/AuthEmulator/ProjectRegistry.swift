import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthScenarios
import AuthStore
import EmulatorConfiguration
import EmulatorTools
import GoTrue
import Synchronization

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
            let path = spec.postgres ?? ((spec.inMemory || blueprint.directory == nil)
                ? EmulatorOptions.inMemory : blueprint.directory! + "/" + spec.ref + ".db")
            let lane = lastLane.add(1, ordering: .relaxed).newValue
            let bootstrap = spec.postgresBootstrap
            let made = ProjectEntry(ref: spec.ref, databasePath: path, initial: config, lane: lane) { [blueprint, weak self] entry throws(AuthError) in
                guard let self else { throw AuthError(500, .unexpectedFailure, "the emulator is stopping") }
                return try self.open(entry, blueprint: blueprint, bootstrap: bootstrap)
            }
            if path != EmulatorOptions.inMemory {
                let opened = try made.hosted()
                if made.isOnPostgres, let other = sharingDatabase(with: opened) {
                    opened.project.database.close()
                    throw AuthError(409, .conflict, "database: project \"\(other)\" already keeps its users in that database "
                        + "(one auth schema per database): give each project a database of its own")
                }
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
                    // A Postgres database is the app's: its rows stay (docs/projects.md).
                    if !gone.isOnPostgres {
                        for suffix in ["", "-wal", "-shm"] { Platform.removeFile(gone.databasePath + suffix) }
                    }
                    if let directory = self.blueprint.directory { Platform.removeFile(directory + "/" + ref + ".json") }
                }
                return true
            }
            // A project in memory is this process's alone; one on a file may be open in another
            // process serving the same folder too. One on Postgres loses nothing when dropped.
            guard found.databasePath != EmulatorOptions.inMemory, !found.isOnPostgres,
                  let folderLock = folderLock.withLock({ $0 }) else { return drop() }
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
        var base = blueprint.configuration
        // A project's hashes follow its own store (`open`): PBKDF2 in SQLite, even beside a
        // Postgres default project.
        base.bcryptPasswordCost = nil
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
            try ConfigurationCheck.check(config)
        } catch {
            throw AuthError(400, .validationFailed, "\(error)")
        }
        return config
    }

    /// The project (the default one included) whose open Postgres database is the one `hosted`
    /// opened, however its connection string reached it.
    private func sharingDatabase(with hosted: HostedProject) -> String? {
        guard let identity = hosted.project.database.postgresSetup?.session.databaseIdentity, !identity.isEmpty else { return nil }
        return all.compactMap(\.openProject)
            .first { $0 !== hosted && $0.project.database.postgresSetup?.session.databaseIdentity == identity }?.ref
    }

    /// Opens a project's database and assembles its API.
    private func open(_ entry: ProjectEntry, blueprint: Blueprint, bootstrap: Bool) throws(AuthError) -> HostedProject {
        let path = entry.databasePath
        let database: Database
        var configuration = entry.initial
        if entry.isOnPostgres {
            // As the default project in Postgres mode: GoTrue's schema in that database, the
            // readers serving the workers only, bcrypt hashes (pgcrypto's `crypt()` checks them).
            do {
                database = try Database(postgres: path, options: DatabaseOptions(readerCount: blueprint.readerCount),
                                        postgres: PostgresOptions(bootstrap: bootstrap))
            } catch {
                // The caller's own connection string: a 400 naming it, nothing made.
                throw AuthError(400, .validationFailed, "database: cannot open the Postgres database \(entry.databaseLabel): \(error.message)")
            }
            configuration.bcryptPasswordCost = Configuration.bcryptCost(forIterations: configuration.passwordHashIterations)
            for warning in database.postgresSetup?.warnings ?? [] {
                Platform.writeStandardError("auth-emulator: project \(entry.ref): \(warning)\n")
            }
        } else {
            do {
                if let directory = blueprint.directory, path != EmulatorOptions.inMemory { try Platform.makeDirectories(directory) }
                database = try Database(path: path, options: DatabaseOptions(readerCount: blueprint.readerCount))
            } catch {
                throw AuthError(500, .unexpectedFailure, "cannot open the project's database \(path): \(error)")
            }
        }
        var project = Project(configuration: configuration, database: database, environment: Environment(clock: VirtualClock()))
        project.hookTransport = blueprint.transport
        return Emulator.host(ref: entry.ref, project: project, databasePath: entry.databaseLabel, options: blueprint.options,
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

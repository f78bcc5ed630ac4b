import AuthCrypto
import AuthHTTP
import AuthJSON
import AuthJWT
import AuthScenarios
import AuthStore
import Dispatch
import EmulatorConfiguration
import EmulatorTools
import GoTrue
import ScenarioControl
import Synchronization

/// One running emulated Supabase Auth project: its database, its GoTrue API and the HTTP server
/// in front of it. Usable in-process (a Swift test starts one on port 0 and stops it) and by the
/// `auth-emulator serve` command.
///
/// ```swift
/// let emulator = try Emulator.start(.testing())
/// defer { emulator.stop() }
/// // point a client at emulator.url (GoTrue routes) or emulator.url + "/auth/v1"
/// ```
public final class Emulator: Sendable {
    public let options: EmulatorOptions
    public let project: Project
    public let api: GoTrueAPI
    /// The active failure scenarios (also driven through `/emulator/v1/scenarios`).
    public let scenarios: ScenarioEngine
    /// Recent requests (also read through `/emulator/v1/journal`).
    public let journal: Journal
    /// Every project this server hosts, the default one (`project`, `api`, ...) included.
    public let projects: ProjectRegistry
    /// Stored or declared projects that could not be opened at start, one line each.
    public var projectWarnings: [String] { projectProblems.withLock { $0 } }
    private let projectProblems = Mutex<[String]>([])
    private let server: HTTPServer
    private let state = Mutex(State.created)
    /// The public demo secrets this run replaced because it listens beyond loopback (`Exposure`).
    public let replacedSecrets: [String]
    /// Custom email bodies that could not be read or parsed at start, one line each (the
    /// built-in body is used for them).
    public let templateWarnings: [String]
    /// The address links use when the server listens on every interface and no external URL
    /// was configured (nil otherwise).
    public var linkAddress: String? { link.withLock { $0 } }
    private let link = Mutex<String?>(nil)

    /// What opening a Postgres database found worth telling the developer (writing as a
    /// superuser, columns an adopted schema lacks); empty on SQLite.
    public let postgresWarnings: [String]
    /// Signalled once the stop has fully completed (server down, database closed).
    private let stopped = DispatchSemaphore(value: 0)
    private let report = Mutex<StopReport?>(nil)
    /// Run by `stop()` after the last request and before the database closes (`onStop`).
    let stopActions = Mutex<[@Sendable (Emulator) -> Void]>([])

    private enum State { case created, running, stopped }

    /// Opens (creating if needed) the database and assembles the server; does not listen yet.
    public init(options: EmulatorOptions) throws(EmulatorError) {
        // An embedder builds options in code, past the CLI's checks: the same rules apply.
        try options.validate()
        self.options = options
        var http = HTTPServerConfiguration()
        http.host = options.host
        http.port = options.port
        if let workers = options.workerThreads { http.workerThreads = workers }
        if let cap = options.maxConnections { http.maxConnections = cap }
        if let seconds = options.headerTimeoutSeconds { http.headerTimeout = .seconds(seconds) }
        if let seconds = options.bodyTimeoutSeconds { http.bodyTimeout = .seconds(seconds) }
        if let seconds = options.writeTimeoutSeconds { http.writeTimeout = .seconds(seconds) }
        let database: Database
        do {
            if let trace = options.statementTracePath { try StatementTrace.start(path: trace) }
            if options.usesPostgres {
                // Postgres calls block on the network: nothing is answered on an event loop in
                // this mode (`GoTrueAPI.respondsInline`), so readers serve the workers only.
                database = try Database(postgres: options.databasePath,
                                        options: DatabaseOptions(readerCount: http.workerThreads),
                                        postgres: PostgresOptions(bootstrap: options.postgresBootstrap))
            } else {
                if options.databasePath != EmulatorOptions.inMemory, let slash = options.databasePath.lastIndex(of: "/") {
                    let directory = String(options.databasePath[..<slash])
                    if !directory.isEmpty { try Platform.makeDirectories(directory) }
                }
                // A reader connection per worker thread and per event loop (which answers quick
                // reads itself: `GoTrueAPI.respondsInline`), so no thread ever queues for one: a loop
                // that did would hold up every connection it serves. Readers open on first use.
                database = try Database(path: options.databasePath,
                                        options: DatabaseOptions(readerCount: http.workerThreads + max(1, http.loopThreads)))
            }
        } catch let error as EmulatorError {
            throw error
        } catch let error as StoreError where error.postgres != nil || options.usesPostgres {
            throw EmulatorError("cannot open the Postgres database \(options.databaseDisplayName): \(error.message)")
        } catch {
            throw EmulatorError("cannot open database \(options.databasePath): \(error)")
        }
        postgresWarnings = database.postgresSetup?.warnings ?? []
        var configuration = options.configuration
        configuration.applyDefaults()
        if database.isPostgres {
            configuration.bcryptPasswordCost = Configuration.bcryptCost(forIterations: configuration.passwordHashIterations)
        }
        configuration.applyCLIIssuer()
        configuration.applyCLISigningKey()
        let beyondLoopback = !Exposure.isLoopback(options.host)
        replacedSecrets = beyondLoopback && !options.allowDemoKeys ? Exposure.replacePublicSecrets(&configuration) : []
        let hookTransport = CurlHookTransport(environment: Platform.environment())
        let templates = TemplateSources.load(configuration, transport: hookTransport)
        configuration.mailer.templates = templates.templates
        templateWarnings = templates.warnings
        if let algorithm = options.signingKeyAlgorithm {
            let key = try Emulator.projectSigningKey(algorithm, database: database)
            configuration.adoptSigningKeys([key])
            configuration.settingSources["jwt_keys"] = .flag
        }
        // The virtual clock (`/emulator/v1/clock`) drives every expiry; it reads the wall clock
        // until a test moves it.
        var project = Project(configuration: configuration, database: database,
                              environment: Environment(clock: VirtualClock()))
        project.hookTransport = hookTransport
        self.project = project
        let readers = http.workerThreads + max(1, http.loopThreads)
        var directory: String?
        // Postgres mode keeps the other projects in memory (each on a SQLite database of its
        // own, as auto-created ones are): their users are not in the app's database.
        if options.databasePath != EmulatorOptions.inMemory && !options.usesPostgres {
            let slash = options.databasePath.lastIndex(of: "/")
            directory = (slash.map { String(options.databasePath[..<$0]) } ?? ".") + "/projects"
        }
        let registry = ProjectRegistry(
            blueprint: .init(options: options, configuration: configuration, transport: hookTransport, readerCount: readers,
                             beyondLoopback: beyondLoopback, directory: directory),
            autoCreate: options.autoCreateProjects
        )
        projects = registry
        let primary = Emulator.host(ref: ProjectRegistry.defaultRef, project: project, databasePath: options.databaseDisplayName,
                                    options: options, scenarios: options.scenarios, transport: hookTransport,
                                    beyondLoopback: beyondLoopback, registry: registry,
                                    extensions: ProjectRoutes.routes(registry: registry))
        registry.addDefault(primary)
        self.scenarios = primary.scenarios
        self.journal = primary.journal
        self.api = primary.api

        // Go's `http.DefaultMaxHeaderBytes` (1 MiB): an access token carrying a user's large
        // metadata still fits. The read buffer grows only with the bytes a client really sends.
        http.maxHeaderBytes = 1 << 20
        http.protocolErrorRenderer = { failure, headers in
            GoTrueAPI.renderProtocolFailure(failure, headers: headers)
        }
        self.server = HTTPServer(configuration: http, responder: ProjectRouter(registry: registry, primary: primary.api))
    }

    /// Assembles one hosted project around its `Project`: failure scenarios, the journal, the
    /// control routes, the dashboard's switches. Used for the default project and every other.
    static func host(ref: String, project: Project, databasePath: String, options: EmulatorOptions, scenarios active: [Scenario],
                     transport: CurlHookTransport, beyondLoopback: Bool, registry: ProjectRegistry,
                     extensions: [Route], lane: Int = 0) -> HostedProject {
        let scenarios = ScenarioEngine(environment: project.environment)
        for scenario in active { scenarios.add(scenario) }
        let journal = Journal(capacity: options.journalCapacity)
        let tag = ref == ProjectRegistry.defaultRef ? nil : ref
        let api = GoTrueAPI(
            emulating: project,
            middleware: (options.accessLog.map { [AccessLogMiddleware(log: $0, project: tag)] } ?? [])
                + [ScenarioMiddleware(engine: scenarios, journal: journal, project: project)],
            extensions: ControlRoutes.routes(engine: scenarios, journal: journal)
                + ConfigRoutes.routes(project: project, transport: transport) + extensions
        )
        project.dashboard.configure(enabled: options.dashboard, requiresKey: beyondLoopback)
        // Beyond loopback a labelled test wallet's key must not follow from its label alone
        // (anyone who can reach the server could sign in as it): derive under a random secret
        // of this start, as the public demo secrets are replaced (Exposure).
        if beyondLoopback && !options.allowDemoKeys { project.wallets.deriveLabels(under: SystemRandom().bytes(count: 32)) }
        let catalogue = options.scenarioCatalogue
        project.dashboard.setCatalogue {
            Platform.files(in: catalogue, suffix: ".json").compactMap { name in
                (try? Platform.readFile(catalogue + "/" + name, limit: 1 << 20)).map { Dashboard.CatalogueEntry(name: name, contents: $0) }
            }
        }
        project.dashboard.setProjects { [weak registry] in
            (registry?.all ?? []).map { other in
                Dashboard.ProjectLink(ref: other.ref, path: ProjectRegistry.pathPrefix + other.ref + Dashboard.path, current: other.ref == ref)
            }
        }
        return HostedProject(ref: ref, project: api.project, api: api, scenarios: scenarios, journal: journal, databasePath: databasePath,
                             lane: lane)
    }

    /// The dashboard's address, or nil when it is off.
    public var dashboardURL: String? { options.dashboard ? url + Dashboard.path : nil }

    /// Starts listening. After it returns, `port` and `url` are final.
    public func start() throws(EmulatorError) {
        do {
            try server.start()
        } catch {
            project.database.close()
            state.withLock { $0 = .stopped }
            stopped.signal()
            throw EmulatorError("cannot listen on \(options.host):\(options.port): \(error)")
        }
        // Links and OAuth redirects must reach this server: unless a public URL was configured,
        // it is the address actually listened on (the port may have been chosen by the OS).
        // On every interface (`0.0.0.0`), that is an address of this machine other machines
        // can open, not `0.0.0.0` itself.
        if project.configuration.externalURL == Configuration.defaultExternalURL {
            var linkURL = url
            if Exposure.isUnspecified(options.host), let address = Exposure.reachableAddress() {
                linkURL = "http://\(address):\(port)"
                link.withLock { $0 = linkURL }
            }
            if linkURL != Configuration.defaultExternalURL {
                project.settings.update { config in
                    config.externalURL = linkURL
                    config.applyCLIIssuer()
                }
            }
        }
        projects.serverAddress.withLock { $0 = (url, port) }
        // Projects a previous run stored beside the database, then those declared at start
        // (`serve --project`), which replace a stored one of the same name.
        var problems = projects.reopenStored(except: Set(options.projects.map(\.ref)))
        for spec in options.projects {
            _ = try? projects.remove(spec.ref)
            do {
                try projects.create(spec)
            } catch {
                problems.append("project \(spec.ref): \(error.message)")
            }
        }
        projectProblems.withLock { $0 = problems }
        state.withLock { $0 = .running }
    }

    /// The database's key for `algorithm`, made (and stored) on first use. Processes sharing
    /// the file adopt whichever key was stored first.
    static func projectSigningKey(_ algorithm: JWTAlgorithm, database: Database) throws(EmulatorError) -> JWK {
        do {
            var text = try database.read { conn in try conn.projectSigningKey(algorithm: algorithm.rawValue) }
            if text == nil {
                // Made outside the write transaction: an RSA key takes a while, and processes
                // sharing the file must not wait on it. The first key stored wins.
                let fresh = JSON.object(JWK(generating: algorithm, kid: Environment().uuid(), random: SystemRandom()).privateJSON)
                text = try database.write { conn in
                    try conn.insertProjectSigningKeyIfNone(algorithm: algorithm.rawValue, privateJWK: fresh.serialized(),
                                                           at: SystemClock().now().microseconds)
                }
            }
            guard let text else { throw EmulatorError("no key stored") }
            guard case .object(let object) = try JSON(parsing: text) else { throw EmulatorError("not a JSON object") }
            return try JWK(object)
        } catch {
            throw EmulatorError("cannot load the \(algorithm.rawValue) signing key from the database: \(error)")
        }
    }

    /// Opens the database, assembles the server and starts it.
    public static func start(_ options: EmulatorOptions) throws(EmulatorError) -> Emulator {
        let emulator = try Emulator(options: options)
        try emulator.start()
        return emulator
    }

    public var host: String { server.host }
    public var port: Int { server.port }

    /// `http://HOST:PORT`, the root where GoTrue's routes live (`/health`, `/signup`, ...).
    /// Supabase clients take `url + "/auth/v1"` as the auth URL, or `url` as the project URL.
    public var url: String {
        let host = server.host.contains(":") ? "[\(server.host)]" : server.host
        return "http://\(host):\(server.port)"
    }

    /// `url + "/auth/v1"`: the auth URL as Supabase clients reach it through the gateway.
    public var authURL: String { url + "/auth/v1" }

    /// The anon key as the project holds it now (a runtime change of the JWT secret or keys
    /// through `/emulator/v1/config` shows here).
    public var anonKey: String { project.configuration.apiKeys.anon }

    /// The service_role key, which the admin API and the `/emulator/v1` routes require.
    public var serviceRoleKey: String { project.configuration.apiKeys.serviceRole }

    /// Graceful stop: no new connections, in-flight requests finish, then the database is
    /// checkpointed and closed. Idempotent; callable from any thread.
    public func stop(timeout: Duration? = nil) {
        let timeout = timeout ?? .milliseconds(Int64(options.shutdownTimeoutSeconds * 1000))
        let wasRunning = state.withLock { current -> Bool in
            defer { current = .stopped }
            return current != .stopped
        }
        guard wasRunning else { return }
        server.shutdown(timeout: timeout)
        for action in stopActions.withLock({ $0 }) { action(self) }
        projects.closeOthers()
        let database = project.database.close()
        let drain = server.drainReport ?? DrainReport(finished: 0, cutOff: 0)
        report.withLock { $0 = StopReport(requests: drain, database: database) }
        stopped.signal()
    }

    /// What the stop did, once `stop()` has completed (nil before): the requests in flight it
    /// let finish or cut off, and the database's final checkpoint (`serve` prints it).
    public var stopReport: StopReport? { report.withLock { $0 } }

    /// See `stopReport`.
    public struct StopReport: Sendable, Equatable {
        /// The requests in flight when the stop began: finished within the timeout, or cut off.
        public var requests: DrainReport
        /// What became of the database's write-ahead log.
        public var database: CloseOutcome
    }

    /// Blocks until `stop()` has completed, database included (for the CLI's main thread).
    public func waitUntilStopped() {
        stopped.wait()
        stopped.signal()  // let any other waiter through too
    }

    /// Stops the emulator when the process receives SIGINT or SIGTERM. Keep the returned value
    /// alive for as long as the handling should last.
    public func stopOnTerminationSignals(then action: @escaping @Sendable (Int32) -> Void = { _ in }) -> SignalHandling {
        SignalHandling(sources: Platform.onTerminationSignal { [self] signalNumber in
            self.stop()
            action(signalNumber)
        })
    }
}

/// Keeps the signal sources installed by `Emulator.stopOnTerminationSignals` alive.
public struct SignalHandling: @unchecked Sendable {
    // Dispatch sources are thread-safe; they are only retained here.
    let sources: [AnyObject]
}

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

/// A project the registry knows. One on a file is opened when made; one in memory is assembled
/// on its first request, so projects made and never used (a pool prepared for parallel test
/// workers) cost only their settings: bench/projects.py measures both.
public final class ProjectEntry: Sendable {
    public let ref: String
    /// The database file, `:memory:`, or a Postgres connection string (it may hold a password:
    /// show `databaseLabel`).
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

    /// Whether its users live in a Postgres database of its own.
    public var isOnPostgres: Bool { EmulatorOptions.isPostgresConnectionString(databasePath) }

    /// `databasePath` without a connection string's password.
    public var databaseLabel: String { EmulatorOptions.displayName(ofDatabase: databasePath) }

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


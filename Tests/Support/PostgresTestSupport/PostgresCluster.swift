import AuthStore
import Foundation
import Synchronization

/// A throw-away Postgres server for tests: `initdb` into a fresh folder under /tmp, `postgres`
/// listening only on a Unix socket in that folder (no TCP port, so nothing clashes with another
/// server or another test run), stopped by its PID and deleted at the end.
///
/// Postgres refuses to run as root; as root (CI containers) the server runs as the `postgres`
/// user that Debian's package creates, through `runuser`.
public final class PostgresCluster: Sendable {
    /// The folder holding the data directory, the socket and the log.
    public let directory: String
    /// The postmaster's PID (from postmaster.pid), for the stop.
    public let pid: Int32
    private let databases = Atomic<Int>(0)

    /// Where `initdb`, `pg_ctl` and `postgres` are: `AUTH_EMULATOR_PG_BIN`, Debian's
    /// /usr/lib/postgresql/<newest>/bin, Homebrew's and Postgres.app's folders, then PATH.
    public static let binDirectory: String? = {
        let environment = ProcessInfo.processInfo.environment
        var candidates: [String] = []
        if let explicit = environment["AUTH_EMULATOR_PG_BIN"], !explicit.isEmpty { candidates.append(explicit) }
        let debian = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: debian)) ?? []).compactMap(Int.init).sorted(by: >)
        candidates += versions.map { "\(debian)/\($0)/bin" }
        for prefix in ["/opt/homebrew/opt", "/usr/local/opt"] {
            candidates += stride(from: 18, through: 14, by: -1).map { "\(prefix)/postgresql@\($0)/bin" }
        }
        candidates.append("/Applications/Postgres.app/Contents/Versions/latest/bin")
        candidates += (environment["PATH"] ?? "").split(separator: ":").map(String.init)
        return candidates.first { directory in
            ["initdb", "pg_ctl", "postgres"].allSatisfy { FileManager.default.isExecutableFile(atPath: "\(directory)/\($0)") }
        }
    }()

    /// Whether the Postgres tests run: with the server binaries, and always under CI=true,
    /// where their absence must fail the run rather than skip it.
    public static let canRun = binDirectory != nil || ProcessInfo.processInfo.environment["CI"] == "true"

    /// One cluster shared by the tests that need no cluster-wide state of their own (each
    /// makes its own database); started on first use, stopped when the test process exits.
    public static let shared = started()

    /// The cluster of the stores that bootstrap (`PostgresOptions(bootstrap: true)`, the GoTrue
    /// harness under AUTH_EMULATOR_TEST_DB=postgres). The bootstrap's roles are cluster-wide:
    /// on `shared`, a store opened by the superuser on a new database would find
    /// `supabase_auth_admin` there without the grant on that database, and refuse to start.
    public static let bootstrapping = started()

    private static func started() -> Result<PostgresCluster, ClusterError> {
        let result = Result { () throws(ClusterError) in try PostgresCluster() }
        if case .success(let cluster) = result {
            stopAtExit.withLock { $0.append(cluster) }
            atexit { PostgresCluster.stopStarted() }
        }
        return result
    }

    private static let stopAtExit = Mutex<[PostgresCluster]>([])

    private static func stopStarted() {
        for cluster in stopAtExit.withLock({ clusters in defer { clusters.removeAll() }; return clusters }) { cluster.stop() }
    }

    public struct ClusterError: Error, CustomStringConvertible {
        public let description: String
    }

    public init() throws(ClusterError) {
        guard let bin = Self.binDirectory else {
            throw ClusterError(description: "PostgreSQL's server binaries (initdb, pg_ctl, postgres) were not found: "
                + "apt install postgresql (Debian/Ubuntu), brew install postgresql@17 (macOS), or set AUTH_EMULATOR_PG_BIN")
        }
        var template = Array("/tmp/ae-pg-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ClusterError(description: "mkdtemp failed: errno \(errno)") }
        directory = String(cString: made)
        let folder = directory
        let asRoot = geteuid() == 0
        if asRoot {
            // The server's user must own its folder; the socket stays reachable for root.
            guard let account = getpwnam("postgres") else {
                throw ClusterError(description: "running as root needs the postgres user (Debian's postgresql package creates it)")
            }
            chown(directory, account.pointee.pw_uid, account.pointee.pw_gid)
        }
        func run(_ tool: String, _ arguments: [String]) throws(ClusterError) {
            // Output to a file, not a pipe: the server pg_ctl starts could inherit a pipe's
            // write end and keep it open. posix_spawn and waitpid rather than Foundation's
            // Process, whose exit notification can be missed for a child started through
            // runuser, leaving the wait hanging.
            let outputPath = "\(folder)/\(tool).out"
            let command = asRoot ? ["/usr/sbin/runuser", "-u", "postgres", "--", "\(bin)/\(tool)"] : ["\(bin)/\(tool)"]
            let status = spawnAndWait(command + arguments, output: outputPath)
            guard status == 0 else {
                let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
                throw ClusterError(description: "\(tool) exited with \(status): \(text)")
            }
        }
        let data = "\(directory)/data"
        try run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"])
        // No TCP listener; durability off (a test cluster is thrown away); -w waits until it
        // accepts connections, -t bounds that wait.
        let options = "-k \(directory) -c listen_addresses= -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        try run("pg_ctl", ["-D", data, "-o", options, "-l", "\(directory)/log", "-w", "-t", "120", "start"])
        guard let pidFile = try? String(contentsOfFile: "\(data)/postmaster.pid", encoding: .utf8),
              let first = pidFile.split(separator: "\n").first, let pid = Int32(first) else {
            throw ClusterError(description: "no postmaster.pid after pg_ctl start")
        }
        self.pid = pid
    }

    /// A `key=value` connection string for `database` on this cluster's socket.
    public func connectionString(database: String = "postgres", user: String = "postgres") -> String {
        "host=\(directory) dbname=\(database) user=\(user)"
    }

    /// A new, empty database; its connection string.
    public func makeDatabase() throws -> String {
        let name = "test_\(databases.add(1, ordering: .relaxed).newValue)"
        let admin = try PostgresConnection(connectionString(), options: PostgresSessionOptions(searchPath: ["public"], role: nil))
        defer { admin.close() }
        try admin.execute("CREATE DATABASE \(name)")
        return connectionString(database: name)
    }

    /// Fast shutdown (SIGINT: no new connections, open ones are ended) of the postmaster by its
    /// PID, waiting until it is gone (bounded), then the folder is removed.
    public func stop() {
        if kill(pid, SIGINT) == 0 {
            let deadline = Date().addingTimeInterval(30)
            while kill(pid, 0) == 0 && Date() < deadline { usleep(20_000) }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The shared cluster, or the reason it could not start as a test failure.
    public static func sharedCluster() throws -> PostgresCluster {
        try shared.get()
    }

    /// The cluster of the stores that bootstrap (`bootstrapping`), or the reason it could not start.
    public static func bootstrappingCluster() throws -> PostgresCluster {
        try bootstrapping.get()
    }
}

/// Runs `command` (an absolute path and its arguments) with stdin from /dev/null and stdout and
/// stderr into the file `output`; its exit status, or -1 when it could not be started or was
/// killed by a signal.
private func spawnAndWait(_ command: [String], output: String) -> Int32 {
    #if canImport(Darwin)
    var actions: posix_spawn_file_actions_t?
    #else
    var actions = posix_spawn_file_actions_t()
    #endif
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
    let environment: [UnsafeMutablePointer<CChar>?] = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + environment { free(pointer) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, command[0], &actions, nil, argv, environment) == 0 else { return -1 }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 {
        if errno != EINTR { return -1 }
    }
    // WIFEXITED / WEXITSTATUS, which Swift does not import (macros).
    return status & 0x7F == 0 ? (status >> 8) & 0xFF : -1
}

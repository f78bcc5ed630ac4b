import AuthCrypto
import AuthEmulator
import AuthJSON
import AuthJWT
import AuthPlatform
import AuthScenarios
import EmulatorConfiguration
import EmulatorTools
import GoTrue
import Synchronization

extension CLI {
    static func serve(_ arguments: [String], context: Context) throws -> Int32 {
        let flags = try parseOptions(arguments, values: serveValueOptions, switches: serveSwitches)
        var options = try options(from: flags, context: context)
        // A harness that reads the start-up lines and then closes its end of the pipe must not
        // take the server down with the next access-log line: a write to a closed pipe or
        // socket fails with EPIPE (the line is dropped) instead of raising SIGPIPE.
        Platform.ignoreBrokenPipes()
        if options.databasePath != EmulatorOptions.inMemory, !options.usesPostgres, !options.databasePath.hasPrefix("/") {
            options.databasePath = Platform.currentDirectory() + "/" + options.databasePath
        }
        // Every GoTrue service of a compose file keeps its users in the one database its
        // environment names; an emulator keeps them where --db says, so services left on a
        // store of their own silently stop seeing each other's users. Said once, at start-up.
        if !options.usesPostgres, let variable = EnvironmentConfiguration.gotrueDatabaseVariable(in: context.environment) {
            context.warn("\(variable) names GoTrue's database, which the emulator does not read: its users stay in "
                + "\(options.databaseDisplayName), this process's own; give that URL to --db to keep them in the Postgres "
                + "every service shares (docs/postgres.md)")
        }
        let seedFile = try nonEmpty(flags, "seed")
        let exportFile = try nonEmpty(flags, "export-on-exit")
        // Checked against the row's names with the other flags (`options(from:)`).
        let logFormat = flags.values["log-format"].flatMap(AccessLog.Format.init(rawValue:)) ?? .text
        if flags.switches["quiet"] != true {
            let console = context.console
            options.accessLog = AccessLog(format: logFormat) { line in console.error(line) }
        }
        // The server listens only once a fixture is in: a CI job that waits for the first line
        // (or for /health) never starts against a half-seeded database.
        let emulator = try Emulator(options: options)
        if !emulator.replacedSecrets.isEmpty {
            context.warn("listening on \(options.host), beyond loopback, where the public demo secrets would open the admin API, the dashboard and /emulator/v1 to the network: this run uses a fresh random \(emulator.replacedSecrets.joined(separator: ", ")) (printed below; set GOTRUE_JWT_SECRET and the key flags to choose your own, or --allow-demo-keys to keep the demo ones)")
        }
        for warning in emulator.templateWarnings { context.warn(warning) }
        for warning in emulator.postgresWarnings { context.warn(warning) }
        var seedProgress: SeedProgress?
        if let seedFile {
            let progress = SeedProgress()
            seedProgress = progress
            // Until the server listens, SIGINT or SIGTERM cancels the seed: its transaction rolls
            // back and the process ends, instead of seeding for minutes and then serving.
            let interrupts = Platform.onTerminationSignal { _ in progress.cancel() }
            do {
                try seed(emulator, file: seedFile, console: context.console, progress: progress)
            } catch {
                emulator.stop()
                if progress.isCancelled { return seedInterrupted(seedFile, console: context.console) }
                throw ConfigurationError(message: "invalid fixture file \(error)")
            }
            withExtendedLifetime(interrupts) {}
        }
        try emulator.start()
        if let address = emulator.linkAddress {
            context.console.error("note: listening on every interface; links in mails and redirects use \(address) (set --external-url to choose another address)\n")
        }
        if let exportFile {
            let path = exportFile.hasPrefix("/") ? exportFile : Platform.currentDirectory() + "/" + exportFile
            let includeSecrets = flags.switches["export-secrets"] == true
            emulator.onStop { stopped in
                do {
                    try stopped.exportSnapshot(to: path, includeSecrets: includeSecrets)
                } catch {
                    context.console.error("Error: \(error)\n")
                }
            }
        }
        let signals = emulator.stopOnTerminationSignals()
        // A signal that came as the seed ended, before the handler above took over.
        if seedProgress?.isCancelled == true {
            emulator.stop()
            return seedInterrupted(seedFile ?? "", console: context.console)
        }
        // The project's keys: a signing key made at start-up signs them.
        let keys = emulator.project.configuration.apiKeys
        // The first line is a contract: scripts wait for it to learn the real port.
        context.print("listening on \(emulator.url)")
        context.print("auth url:         \(emulator.url)\(GoTrueAPI.gatewayPrefix)")
        context.print("anon key:         \(keys.anon)")
        context.print("service_role key: \(keys.serviceRole)")
        if let publishable = keys.publishable { context.print("publishable key:  \(publishable)") }
        if let secret = keys.secret { context.print("secret key:       \(secret)") }
        if let dashboard = emulator.dashboardURL { context.print("dashboard:        \(dashboard)") }
        for warning in emulator.projectWarnings { context.warn(warning) }
        let others = emulator.projects.all.filter { !$0.isDefault }
        if !others.isEmpty {
            // Their keys: GET /emulator/v1/projects.
            context.print("projects:         \(others.map { $0.url(server: emulator.url) }.joined(separator: ", "))")
        }
        let profile = emulator.project.configuration.defaultsProfile
        context.print("defaults:         \(profile.rawValue) (\(profile == .cli ? "as supabase start" : "as a bare GoTrue container"))")
        context.print("signing key:      \(ConsoleText.signingKey(emulator.project.configuration.jwt))")
        context.print("settings from:    \(ConsoleText.settingsSources(configFile: flags.values["config"], variables: context.notes.appliedVariables))")
        // The database line ends the banner (scripts wait for it).
        context.print("database:         \(ConsoleText.database(options, setup: emulator.project.database.postgresSetup))")
        Platform.flushStandardOutput()
        if flags.switches["open"] == true, let dashboard = emulator.dashboardURL {
            // One line either way the opening fails: no opener program, or one that ran and
            // found no browser (xdg-open on a server exits 3).
            let console = context.console
            let message = "warning: could not open a browser (no \(Platform.browserOpener) or no browser it could start); the dashboard is at \(dashboard)\n"
            if !Platform.openInBrowser(dashboard, failed: { console.error(message) }) { console.error(message) }
        }
        // One line per captured email/SMS, so the code or link can be copied from the terminal.
        emulator.project.outbox.onMessage { message in
            context.print("outbox: " + Outbox.summary(message))
            Platform.flushStandardOutput()
        }
        emulator.waitUntilStopped()
        withExtendedLifetime(signals) {}
        if let report = emulator.stopReport { context.console.error(ConsoleText.stopSummary(report) + "\n") }
        return 0
    }

    /// `serve --seed`: applies the file while telling the console how it goes. On a terminal a
    /// line is redrawn in place about four times a second (count, rate, time left), by a thread
    /// of its own that polls the seed's counters, so a slow terminal never holds the seed up;
    /// into a file or a pipe nothing is written per row, only the summary line at the end.
    /// The one line a seed stopped by a signal ends with; the process exits 130, as a shell
    /// reports a command ended by Ctrl-C.
    static func seedInterrupted(_ file: String, console: Console) -> Int32 {
        console.error("stopped: interrupted while seeding \(file); nothing of it was kept, and the server never listened\n")
        return 130
    }

    static func seed(_ emulator: Emulator, file: String, console: Console, progress: SeedProgress) throws(EmulatorError) {
        let started = Platform.monotonicSeconds()
        let finished = Flag()
        var ticker: ThreadHandle?
        // On a terminal a line redrawn in place four times a second; into a file or a pipe (a CI
        // log) a line as the seed starts and one every ten seconds, so a long seed is seen to
        // progress before the server listens.
        let terminal = console.errorIsTerminal
        if !terminal { console.error("seeding \(file)...\n") }
        let every = terminal ? 0.25 : 10
        ticker = try? Threads.spawn(name: "seed-progress", stackSize: 128 * 1024) {
            // The rate follows the phase shown (reading the file, hashing, writing), measured
            // from the first reading of that phase: the file's parse does not dilute the
            // hashing rate, and the writer's first chunk, done before it was seen, does not
            // inflate the writing one.
            var phase = (number: 0, since: started, base: 0)
            var lastDrawn = started
            while !finished.isSet {
                Platform.sleep(milliseconds: 50)
                let now = Platform.monotonicSeconds()
                guard now - lastDrawn >= every, !finished.isSet else { continue }
                lastDrawn = now
                let state = ConsoleText.SeedState(total: progress.total, passwords: progress.passwords,
                                                  hashed: progress.hashed, written: progress.written)
                if phase.number < 2, state.written > 0 {
                    phase = (2, now, state.written)
                } else if phase.number < 1, state.total > 0 {
                    phase = (1, now, state.hashed)
                }
                let elapsed = now - phase.since
                let done = (phase.number == 2 ? state.written : state.hashed) - phase.base
                // Below half a second, or with nothing done yet, a rate would be noise.
                let rate = elapsed >= 0.5 && done > 0 ? Double(done) / elapsed : nil
                let line = ConsoleText.seedProgress(state, rate: rate, file: file)
                console.error(terminal ? ConsoleText.redraw(line) : line + "\n")
            }
        }
        // The ticker has drawn its last line before anything else is written.
        func stopTicker() {
            finished.set()
            ticker?.join()
            ticker = nil
        }
        do {
            try emulator.seed(file: file, progress: progress)
        } catch {
            stopTicker()
            if console.errorIsTerminal { console.error(ConsoleText.redraw("")) }
            throw error
        }
        stopTicker()
        let summary = ConsoleText.seedSummary(users: progress.total, seconds: Platform.monotonicSeconds() - started)
        console.error((console.errorIsTerminal ? ConsoleText.redraw(summary) : summary) + "\n")
    }

    /// A flag one thread raises and another polls.
    final class Flag: Sendable {
        private let raised = Atomic<Bool>(false)
        var isSet: Bool { raised.load(ordering: .relaxed) }
        func set() { raised.store(true, ordering: .relaxed) }
    }
}
